"""Peak memory of the HTTP listeners (issue 12): a big POST to the proxy and to ``serve``, and one big
recorded answer served to many clients at once. Peak = the listener process's VmHWM (Linux).

Run: ``python bench/listener_memory.py [--post-mb 100] [--answer-mb 50] [--clients 20]``; each listener
runs with its default limits unless ``--max-body`` is given (passed on to it).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx2

PY = sys.executable
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "big", "arguments": {}}}


def start(args: list[str], says: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([PY, "-m", "mcpreel", *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for _ in range(5):
        line = proc.stderr.readline()
        m = re.search(says + r" (http://127\.0\.0\.1:\d+/mcp)", line)
        if m:
            return proc, m.group(1)
    raise SystemExit(f"{args[0]} did not start: {line}")


def mb(pid: int, key: str) -> int:
    line = next(ln for ln in Path(f"/proc/{pid}/status").read_text().splitlines() if ln.startswith(key))
    return int(line.split()[1]) >> 10


def cassette(path: Path, answer: int) -> None:
    from mcpreel.formats.reel import ReelWriter
    from mcpreel.model import Message, SessionInfo

    w = ReelWriter(path, SessionInfo(label="big", transport="stdio", command=["x"]))
    w.write(Message("in", INIT))
    w.write(Message("out", {"jsonrpc": "2.0", "id": 1, "result": {
        "protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}}))
    w.write(Message("in", CALL))
    w.write(Message("out", {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "x" * answer}]}}))
    w.close(0, "done")


def post(label: str, proc: subprocess.Popen[str], url: str, size: int) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                       "params": {"name": "echo", "arguments": {"text": "x" * size}}}).encode()
    before = mb(proc.pid, "VmRSS")
    r = httpx2.post(url, content=body, headers=HEADERS, timeout=300)
    print(f"| {label}: POST of {size >> 20} MB | {r.status_code} | {before} MB | {mb(proc.pid, 'VmHWM')} MB | "
          f"{mb(proc.pid, 'VmRSS')} MB |", flush=True)


def many(proc: subprocess.Popen[str], url: str, clients: int, answer: int) -> None:
    before = mb(proc.pid, "VmRSS")
    sizes: list[int] = []

    def client() -> None:
        with httpx2.Client(timeout=300) as c:
            sid = c.post(url, json=INIT, headers=HEADERS).headers["mcp-session-id"]
            sizes.append(len(c.post(url, json=CALL, headers={**HEADERS, "mcp-session-id": sid}).content))

    began = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(sizes) == clients and min(sizes) > answer, sizes
    print(f"| serve: a {answer >> 20} MB answer to {clients} clients ({time.monotonic() - began:.1f} s) | 200 | "
          f"{before} MB | {mb(proc.pid, 'VmHWM')} MB | {mb(proc.pid, 'VmRSS')} MB |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--post-mb", type=int, default=100)
    ap.add_argument("--answer-mb", type=int, default=50)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--max-body", default=None, help="passed on to the listeners (default: theirs)")
    a = ap.parse_args()
    limit = ["--max-body", a.max_body] if a.max_body else []
    print("| what | status | RSS before | peak | RSS after |\n|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        small, big = Path(tmp) / "small.jsonl", Path(tmp) / "big.jsonl"
        cassette(small, 10)
        cassette(big, a.answer_mb << 20)
        target, target_url = start(["demo-server", "--transport", "streamable-http", "--port", "0"],
                                   r"demo server \(streamable-http\) on")
        try:
            proxy, url = start(["record", "--transport", "streamable-http", "--target", target_url, "--listen",
                                "127.0.0.1:0", "--out", str(Path(tmp) / "r.jsonl"), *limit], "point your MCP client at")
            try:
                post("record proxy", proxy, url, a.post_mb << 20)
            finally:
                proxy.terminate()
                proxy.wait()
        finally:
            target.terminate()
            target.wait()
        serve, url = start(["serve", str(small), "--transport", "streamable-http", "--port", "0", *limit], "on")
        try:
            post("serve", serve, url, a.post_mb << 20)
        finally:
            serve.terminate()
            serve.wait()
        serve, url = start(["serve", str(big), "--transport", "streamable-http", "--port", "0"], "on")
        try:
            many(serve, url, a.clients, a.answer_mb << 20)
        finally:
            serve.terminate()
            serve.wait()


if __name__ == "__main__":
    main()
