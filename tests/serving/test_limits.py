"""Every listener bounds a request's head (431), its body (413) and the time to send its head (408).

Real sockets to a real :class:`~mcpreel.serving.loop.Server` on 127.0.0.1 (port 0: the test's own),
an app that counts what reaches it: a refused request never does.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
import pytest

from mcpreel.serving.limits import DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_BODY, DEFAULT_MAX_HEADER, Limits
from mcpreel.serving.loop import Server

pytestmark = pytest.mark.timeout(60)


class Echo:
    """An ASGI app answering the size of the body it read; ``seen`` counts the requests that reached it."""

    def __init__(self) -> None:
        self.seen = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                await send({"type": message["type"] + ".complete"})
                if message["type"] == "lifespan.shutdown":
                    return
        self.seen += 1
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            size += len(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = json.dumps({"size": size}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})


@contextmanager
def serving(limits: Limits | None = None) -> Iterator[tuple[Echo, int]]:
    app = Echo()
    server = Server(app, "127.0.0.1", 0, limits=limits)
    started = threading.Event()
    thread = threading.Thread(target=server.run, kwargs={"ready": lambda h, p: started.set(), "handle_signals": False},
                              daemon=True)
    thread.start()
    assert started.wait(10)
    try:
        yield app, server.port
    finally:
        server.stop()
        thread.join(10)


def _error(response: httpx2.Response) -> str:
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None and body["error"]["code"] == -32600
    return str(body["error"]["message"])


def test_the_defaults_are_the_documented_ones() -> None:
    assert (DEFAULT_MAX_BODY, DEFAULT_MAX_HEADER, DEFAULT_HEADER_TIMEOUT) == (32 << 20, 64 << 10, 10.0)
    assert Limits() == Limits(32 << 20, 64 << 10, 10.0)


def test_a_big_header_is_431_and_never_reaches_the_app() -> None:
    with serving() as (app, port):
        url = f"http://127.0.0.1:{port}/mcp"
        ok = httpx2.post(url, content=b"{}", headers={"x-big": "a" * 60_000}, timeout=10)
        assert ok.status_code == 200 and app.seen == 1
        r = httpx2.post(url, content=b"{}", headers={"x-big": "a" * (1 << 20)}, timeout=10)
        assert r.status_code == 431
        assert "larger than 64 KiB" in _error(r) and r.headers["connection"] == "close"
        assert app.seen == 1


def test_a_header_that_never_ends_is_cut_at_the_limit() -> None:
    with serving(Limits(max_header=4096)) as (app, port), socket.create_connection(("127.0.0.1", port), 5) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-endless: ")
        sent = 0
        try:  # the listener reads and drops the rest (bounded), so the client can read the answer
            while sent < (8 << 20):
                sock.sendall(b"b" * 65536)
                sent += 65536
        except OSError:
            pass
        reply = sock.recv(65536)
        assert reply.startswith(b"HTTP/1.1 431 "), reply[:80]
        assert b"larger than 4 KiB" in reply
        assert app.seen == 0


def test_a_big_body_is_413_whole_or_chunked_and_never_reaches_the_app() -> None:
    with serving(Limits(max_body=1 << 20)) as (app, port):
        url = f"http://127.0.0.1:{port}/mcp"
        assert httpx2.post(url, content=b"x" * (1 << 20), timeout=10).json() == {"size": 1 << 20}
        r = httpx2.post(url, content=b"x" * (8 << 20), timeout=30)  # Content-Length declared
        assert r.status_code == 413 and "larger than 1 MiB" in _error(r)

        def chunks() -> Iterator[bytes]:
            for _ in range(64):
                yield b"y" * 65536

        r = httpx2.post(url, content=chunks(), timeout=30)  # chunked: counted as it comes
        assert r.status_code == 413 and "--max-body" in _error(r)
        assert app.seen == 2  # the small one, and the chunked one (its body never reached it whole)


def test_a_trickling_head_is_408_after_the_header_timeout() -> None:
    with serving(Limits(header_timeout=0.5)) as (app, port):
        socks = [socket.create_connection(("127.0.0.1", port), 5) for _ in range(150)]  # as in the issue
        idle = socket.create_connection(("127.0.0.1", port), 5)  # says nothing at all
        began = time.monotonic()
        try:
            head = b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: "
            for i in range(0, 40):
                for sock in socks:
                    try:
                        sock.send(head[i:i + 1] if i < len(head) else b"z")
                    except OSError:
                        pass
                time.sleep(0.05)
                if time.monotonic() - began > 1.5:
                    break
            for sock in [*socks, idle]:
                sock.settimeout(5)
                reply = sock.recv(4096)
                assert reply.startswith(b"HTTP/1.1 408 "), reply[:80]
                assert b"longer than 0.5 s" in reply
            assert time.monotonic() - began < 6  # were 25 s and more: no timeout at all
        finally:
            for sock in [*socks, idle]:
                sock.close()
        assert app.seen == 0


def test_keep_alive_requests_each_get_their_own_head_allowance() -> None:
    with serving(Limits(max_header=2048, header_timeout=0.5)) as (app, port), httpx2.Client(timeout=10) as client:
        url = f"http://127.0.0.1:{port}/mcp"
        for _ in range(5):
            assert client.post(url, content=b"z" * 5000, headers={"x-h": "h" * 1500}).status_code == 200
            time.sleep(0.2)  # longer, together, than the header timeout: only the head is timed
        assert app.seen == 5


class Slow(Echo):
    """Answers after ``delay`` seconds, in two pieces with the delay between."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        import asyncio

        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        self.seen += 1
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"one ", "more_body": True})
        await asyncio.sleep(self.delay)
        await send({"type": "http.response.body", "body": b"two"})


def test_an_answer_slower_than_the_header_timeout_is_not_cut() -> None:
    """The head timer stops when a head is complete, even when the whole request came in one segment."""
    app = Slow(1.0)
    server = Server(app, "127.0.0.1", 0, limits=Limits(header_timeout=0.3))
    started = threading.Event()
    thread = threading.Thread(target=server.run, kwargs={"ready": lambda h, p: started.set(), "handle_signals": False},
                              daemon=True)
    thread.start()
    assert started.wait(10)
    try:
        with socket.create_connection(("127.0.0.1", server.port), 5) as sock:
            for _ in range(2):  # keep-alive: the second request too
                sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 2\r\n\r\n{}")
                sock.settimeout(5)
                reply = b""
                while not reply.endswith(b"3\r\ntwo\r\n0\r\n\r\n"):
                    chunk = sock.recv(4096)
                    assert chunk, reply
                    reply += chunk
                assert reply.startswith(b"HTTP/1.1 200 ") and b"408" not in reply, reply
    finally:
        server.stop()
        thread.join(10)
    assert app.seen == 2


def test_the_h11_protocol_has_the_same_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without httptools the listener speaks through h11: the same 431, 408 and untouched slow answers."""
    import mcpreel.serving.loop as loop
    from mcpreel.serving.wire import BatchingH11Protocol

    monkeypatch.setattr(loop, "listener_protocol",
                        lambda limits: type("H11", (BatchingH11Protocol,), {"limits": limits}))
    with serving(Limits(max_header=4096, header_timeout=0.5, max_body=1 << 16)) as (app, port):
        url = f"http://127.0.0.1:{port}/mcp"
        with httpx2.Client(timeout=10) as client:
            for _ in range(3):  # keep-alive requests, each in the time and size allowed
                assert client.post(url, content=b"z" * 5000, headers={"x-h": "h" * 3000}).status_code == 200
                time.sleep(0.3)
        r = httpx2.post(url, content=b"{}", headers={"x-big": "a" * 20000}, timeout=10)
        assert r.status_code == 431 and "larger than 4 KiB" in _error(r)
        assert httpx2.post(url, content=b"x" * (1 << 17), timeout=10).status_code == 413
        with socket.create_connection(("127.0.0.1", port), 5) as sock:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")
            sock.settimeout(5)
            assert sock.recv(4096).startswith(b"HTTP/1.1 408 ")
        assert app.seen == 3


@pytest.mark.parametrize("h11", [False, True])
def test_a_declared_oversized_body_is_413_at_once_even_when_the_client_waits(monkeypatch: pytest.MonkeyPatch,
                                                                            h11: bool) -> None:
    """Issue 28 item 14: a client that declares a too-big Content-Length and waits had its 413 only after the
    drain's 5 s; the answer goes out at once (the drain still runs after it, before the close)."""
    if h11:
        import mcpreel.serving.loop as loop
        from mcpreel.serving.wire import BatchingH11Protocol

        monkeypatch.setattr(loop, "listener_protocol",
                            lambda limits: type("H11", (BatchingH11Protocol,), {"limits": limits}))
    with serving(Limits(max_body=1 << 20)) as (app, port), socket.create_connection(("127.0.0.1", port), 5) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                     b"content-length: 1000000000\r\n\r\n")
        started = time.monotonic()
        sock.settimeout(10)
        reply = b""
        while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            assert chunk, reply
            reply += chunk
        took = time.monotonic() - started
        assert reply.startswith(b"HTTP/1.1 413 ") and b"larger than 1 MiB" in reply
        assert took < 2.0, took  # before: 5 s (the drain came first)
        sock.sendall(b"x" * 65536)  # what the client still sends is read and dropped, no reset meanwhile
        assert app.seen == 0
