"""A raw JSON-RPC client of the 2025-11-25 Tasks utility over stdio (the SDK 2.3 has no client helper).

``python task_client.py POLLS INTERVAL_S -- CMD...`` starts ``CMD`` (a server, ``mcpreel record -- server``
or ``mcpreel serve reel``), initializes with ``capabilities.tasks``, calls server-everything's
``simulate-research-query`` as a task, polls ``tasks/get`` until a terminal status (at least ``POLLS`` times
when ``POLLS`` > 0: after a terminal status it polls again; ``POLLS`` = 0 polls until terminal only), then
asks ``tasks/result``, and prints what it got as JSON: the statuses seen, the result, and the rest.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any


class Lines:
    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, bufsize=1)
        self.next_id = 1
        self.notes: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"the server closed its stdout while {method} was waiting")
            msg = json.loads(line)
            if msg.get("id") == rid and "method" not in msg:
                return msg
            if "method" in msg and "id" not in msg:
                self.notes.append(msg)
            elif "method" in msg:  # a server request: refuse politely
                self.send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "not supported"}})

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def main() -> None:
    polls, interval = int(sys.argv[1]), float(sys.argv[2])
    argv = sys.argv[sys.argv.index("--") + 1:]
    c = Lines(argv)
    init = c.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {"tasks": {}},
                                    "clientInfo": {"name": "task-client", "version": "1.0"}})
    c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    created = c.request("tools/call", {"name": "simulate-research-query", "arguments": {"topic": "tides"},
                                       "task": {"ttl": 60000}})
    task = created["result"]["task"]
    statuses: list[str] = []
    n = 0
    while True:
        got = c.request("tasks/get", {"taskId": task["taskId"]})
        n += 1
        status = got.get("result", {}).get("status", "?")
        statuses.append(status)
        if status in ("completed", "failed", "cancelled") and n >= polls:
            break
        if n > 200:
            raise SystemExit("no terminal status after 200 polls")
        time.sleep(interval)
    result = c.request("tasks/result", {"taskId": task["taskId"]})
    c.close()
    print(json.dumps({"server": init["result"]["serverInfo"]["name"], "created": created["result"],
                      "statuses": statuses, "result": result.get("result"), "error": result.get("error"),
                      "notifications": [m["method"] for m in c.notes]}))


if __name__ == "__main__":
    main()
