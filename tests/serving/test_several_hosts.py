"""Issue 40, item 4: a request with two ``Host`` header lines (an evil name, then a loopback one) is refused
400 by every listener (RFC 9112, section 3.2): the HTTP mock (``serve``), the demo server, and the
recording proxy, which records nothing of it. A check that read the last line let the evil one through."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mcpreel._infra import jsonio
from mcpreel.operations.cassette import build
from tests.record.http.helpers import ThreadServer, proxy
from tests.record.http.scripted import ScriptedTarget
from tests.replay.helpers import handshake, session

BODY = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def _ask(port: int, hosts: list[bytes], path: bytes = b"/mcp") -> bytes:
    head = b"POST " + path + b" HTTP/1.1\r\n" + b"".join(b"Host: " + h + b"\r\n" for h in hosts)
    head += (b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
             b"Connection: close\r\nContent-Length: " + str(len(BODY)).encode() + b"\r\n\r\n")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head + BODY)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data


@contextmanager
def _uvicorn(app: Any) -> Iterator[int]:
    with ThreadServer(app, lifespan="off") as server:
        yield server.port


def _refused_400(answer: bytes) -> None:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 "), answer[:300]
    error = jsonio.loads(body)
    assert error["id"] is None and "2 Host headers" in error["error"]["message"], error


def _mock_app() -> Any:
    from mcpreel.mock.engine import Mock
    from mcpreel.mock.server import http_app

    return http_app(Mock(build(session(*handshake()))))


def _demo_app() -> Any:
    from mcpreel.demo.server import http_app

    return http_app()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("make", [_mock_app, _demo_app], ids=["serve-mock", "demo-server"])
def test_two_host_headers_are_refused_by_the_served_apps(make: Any) -> None:
    with _uvicorn(make()) as port:
        loopback = f"127.0.0.1:{port}".encode()
        _refused_400(_ask(port, [b"evil.example", loopback]))
        _refused_400(_ask(port, [loopback, loopback]))
        assert b"Host headers" not in _ask(port, [loopback])  # one is answered as before


@pytest.mark.timeout(60)
def test_two_host_headers_are_refused_by_the_recording_proxy_and_not_recorded(tmp_path: Path) -> None:
    target = ScriptedTarget()
    with ThreadServer(target) as srv:
        with proxy("streamable-http", srv.url("/mcp"), tmp_path) as run:
            port = int(run.url.split(":")[2].split("/")[0])
            answer = _ask(port, [b"evil.example", f"localhost:{port}".encode()], b"/echo-headers")
    _refused_400(answer)
    assert target.seen == []
    assert "evil.example" not in run.out.read_text()
    assert [m for m in run.records() if m.ctx] == []
