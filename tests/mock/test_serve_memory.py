"""``serve``'s memory stays bounded when many clients ask for a big recorded answer at once.

Each client used to get its own encoded copy pushed whole into its socket's buffer, so memory grew with
the clients (a 50 MB answer to 20 clients: ~1-2 GB). Now a big answer goes out in pieces, a few answers at
a time. Clients that do not read yet are the worst case: they hold everything that was sent to them.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcpreel.formats.reel import ReelWriter
from mcpreel.model import Message, SessionInfo

pytestmark = [pytest.mark.timeout(180),
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/status")]

ANSWER = 16 << 20
CLIENTS = 8
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "big", "arguments": {}}}


def _cassette(path: Path) -> None:
    w = ReelWriter(path, SessionInfo(label="big", transport="stdio", command=["x"]))
    w.write(Message("in", INIT))
    w.write(Message("out", {"jsonrpc": "2.0", "id": 1, "result": {
        "protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}}))
    w.write(Message("in", CALL))
    w.write(Message("out", {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "x" * ANSWER}]}}))
    w.close(0, "done")


def _mb(pid: int, key: str) -> int:
    line = next(ln for ln in Path(f"/proc/{pid}/status").read_text().splitlines() if ln.startswith(key))
    return int(line.split()[1]) >> 10


def _request(sock: socket.socket, port: int, body: dict[str, object], sid: str | None = None) -> None:
    data = json.dumps(body).encode()
    head = (f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
            f"accept: application/json, text/event-stream\r\ncontent-length: {len(data)}\r\n")
    if sid:
        head += f"mcp-session-id: {sid}\r\n"
    sock.sendall(head.encode() + b"\r\n" + data)


def _read_answer(sock: socket.socket) -> bytes:
    """The whole answer to one request (chunked or not), read to its end."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += sock.recv(65536)
    head, _, rest = buf.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head.lower():
        while not rest.endswith(b"0\r\n\r\n"):
            chunk = sock.recv(1 << 20)
            assert chunk
            rest += chunk
        return head + b"\r\n\r\n" + rest
    length = int(re.search(rb"content-length: (\d+)", head, re.IGNORECASE).group(1))  # type: ignore[union-attr]
    while len(rest) < length:
        rest += sock.recv(1 << 20)
    return head + b"\r\n\r\n" + rest


def test_a_big_answer_to_many_clients_that_do_not_read_is_bounded(tmp_path: Path) -> None:
    cassette = tmp_path / "big.jsonl"
    _cassette(cassette)
    proc = subprocess.Popen([sys.executable, "-m", "mcpreel", "serve", str(cassette), "--transport", "streamable-http",
                             "--port", "0"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    socks: list[socket.socket] = []
    try:
        assert proc.stderr is not None
        m = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", proc.stderr.readline())
        assert m
        port = int(m.group(1))
        base = _mb(proc.pid, "VmRSS")
        for _ in range(CLIENTS):
            sock = socket.create_connection(("127.0.0.1", port), 10)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
            sock.settimeout(60)
            _request(sock, port, INIT)
            sid = re.search(rb"mcp-session-id: (\w+)", _read_answer(sock), re.IGNORECASE).group(1).decode()  # type: ignore[union-attr]
            _request(sock, port, CALL, sid)  # ...and do not read the answer yet
            socks.append(sock)
        time.sleep(2.0)  # every answer that was going to be pushed is pushed by now
        grown = _mb(proc.pid, "VmHWM") - base
        # before: every client's copy sat in its socket buffer (>= 8 x 16 MB = 128 MB); now two at a time (~52 MB measured)
        assert grown < 6 * ANSWER >> 20, f"serve grew by {grown} MB for {CLIENTS} clients of a {ANSWER >> 20} MB answer"
        for sock in socks:  # and every client still gets its whole answer
            answer = _read_answer(sock)
            assert answer.startswith(b"HTTP/1.1 200 ") and answer.count(b"x" * 65536) >= 1
            assert len(answer) > ANSWER
    finally:
        for sock in socks:
            sock.close()
        proc.terminate()
        proc.wait(20)
