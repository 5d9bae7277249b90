"""Drive one MCP Tasks session (2025-11-25) over stdio with raw JSON-RPC lines; print what was seen (JSON).

    python task_driver.py CMD [ARGS...]

The official Python SDK has the Tasks types but no client helper, so this speaks the wire itself:
``initialize`` declaring ``capabilities: {"tasks": {}}``, ``tools/call simulate-research-query`` with
``params.task``, ``tasks/get`` polls as the server asks (``pollInterval``, bounded) until a terminal
status, then ``tasks/result``. Every wait is bounded; the command is closed by closing its stdin.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from typing import Any

DEADLINE_S = 40.0  # the whole session
TERMINAL = ("completed", "failed", "cancelled")


class Peer:
    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.notifications: list[str] = []
        self.next_id = 1
        self.deadline = time.monotonic() + DEADLINE_S
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                self.lines.put(json.loads(line))
            except ValueError:
                continue
        self.lines.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, **({"params": params} if params is not None else {})})
        while True:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer to {method} (id {rid})")
            message = self.lines.get(timeout=left)
            if message is None:
                raise EOFError(f"the server ended before answering {method} (id {rid})")
            if "method" in message and "id" not in message:
                self.notifications.append(message["method"])
            elif "method" in message:  # a server request: this client offers nothing
                self.send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "not offered"}})
            elif message.get("id") == rid:
                return message

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        # as the SDK's stdio client does: stdin's end, 2 s of grace, then SIGTERM (server-everything keeps
        # a finished task's TTL timer running, so it does not leave by itself at once)
        for stop in (None, self.proc.terminate, self.proc.kill):
            if stop is not None:
                stop()
            try:
                return self.proc.wait(timeout=2 if stop is None else 10)
            except subprocess.TimeoutExpired:
                continue
        return self.proc.wait()


def main(argv: list[str]) -> dict[str, Any]:
    peer = Peer(argv)
    seen: dict[str, Any] = {"polls": 0, "statuses": []}
    try:
        init = peer.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {"tasks": {}},
                                           "clientInfo": {"name": "task-driver", "version": "1.0"}})
        seen["server_tasks"] = init["result"]["capabilities"].get("tasks")
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        created = peer.request("tools/call", {"name": "simulate-research-query", "arguments": {"topic": "tides"},
                                              "task": {"ttl": 60000}})
        task = created["result"]["task"]
        seen["task_id"] = task["taskId"]
        seen["statuses"].append(task["status"])
        status = task["status"]
        interval = task.get("pollInterval") or 500
        while status not in TERMINAL:
            time.sleep(min(max(interval, 100), 2000) / 1000)
            got = peer.request("tasks/get", {"taskId": task["taskId"]})
            seen["polls"] += 1
            status = got["result"]["status"]
            interval = got["result"].get("pollInterval") or interval
            seen["statuses"].append(status)
        result = peer.request("tasks/result", {"taskId": task["taskId"]})
        seen["result_is_error"] = bool(result.get("error") or result["result"].get("isError"))
        seen["result_text"] = result["result"]["content"][0]["text"][:40] if "result" in result else None
    finally:
        seen["notifications"] = peer.notifications
        seen["exit"] = peer.close()
    return seen


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:])))
