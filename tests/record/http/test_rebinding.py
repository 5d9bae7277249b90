"""The recording proxy on loopback answers only loopback ``Host`` names (and ``--allow-host`` ones): a page
rebound to its port (DNS rebinding) gets 421, reaches nothing and leaves nothing in the reel."""

from __future__ import annotations

import socket
from pathlib import Path

import anyio
import pytest

from mcpreel._infra import jsonio

from .helpers import ThreadServer, proxy
from .scripted import ScriptedTarget

pytestmark = pytest.mark.anyio


def _ask(port: int, host: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"POST /echo-headers HTTP/1.1\r\nHost: " + host + b"\r\nContent-Type: application/json\r\n"
                  b"Connection: close\r\nContent-Length: 40\r\n\r\n" + b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data


async def test_a_rebound_host_is_refused_421_and_not_recorded(tmp_path: Path) -> None:
    target = ScriptedTarget()
    with ThreadServer(target) as srv:
        with proxy("streamable-http", srv.url("/mcp"), tmp_path) as run:
            port = int(run.url.split(":")[2].split("/")[0])
            answer = await anyio.to_thread.run_sync(_ask, port, b"evil.example:" + str(port).encode())
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 421 "), answer
    error = jsonio.loads(body)
    assert error["jsonrpc"] == "2.0" and error["id"] is None and "evil.example" in error["error"]["message"]
    assert target.seen == []
    assert "evil.example" not in run.out.read_text()
    assert [m for m in run.records() if m.ctx] == []  # nothing of it recorded


async def test_allow_host_lets_a_name_through(tmp_path: Path) -> None:
    target = ScriptedTarget()
    with ThreadServer(target) as srv:
        with proxy("streamable-http", srv.url("/mcp"), tmp_path, allow_hosts=("dev.example",)) as run:
            port = int(run.url.split(":")[2].split("/")[0])
            allowed = await anyio.to_thread.run_sync(_ask, port, b"dev.example:" + str(port).encode())
            loopback = await anyio.to_thread.run_sync(_ask, port, b"localhost:" + str(port).encode())
            refused = await anyio.to_thread.run_sync(_ask, port, b"other.example")
    assert allowed.startswith(b"HTTP/1.1 200 ") and loopback.startswith(b"HTTP/1.1 200 "), (allowed, loopback)
    assert refused.startswith(b"HTTP/1.1 421 ")
    assert len(target.seen) == 2
