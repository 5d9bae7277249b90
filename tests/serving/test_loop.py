"""The one serving loop: bound up front, announces where it listens, serves, stops on request, cleans up."""

from __future__ import annotations

import logging
import socket
import threading

import httpx2
import pytest

from mcpreel.errors import TransportError
from mcpreel.serving.loop import DropConnection, Server


async def hello(scope, receive, send) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["path"] == "/drop":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"10")]})
        await send({"type": "http.response.body", "body": b"half", "more_body": True})
        raise DropConnection("the upstream broke")
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"hello"})


class Running:
    """A :class:`Server` on a thread: what ``ready`` said, and how ``run`` ended."""

    def __init__(self, server: Server):
        self.server = server
        self.ready = threading.Event()
        self.announced: list[tuple[str, int]] = []
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        def ready(host: str, port: int) -> None:
            self.announced.append((host, port))
            self.ready.set()

        try:
            self.server.run(ready=ready, handle_signals=False)
        except BaseException as exc:  # reported to the test
            self.error = exc

    def __enter__(self) -> Running:
        self.thread.start()
        assert self.ready.wait(10), "the server never said it was ready"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
        self.thread.join(10)
        assert not self.thread.is_alive(), "the server did not stop"


def test_it_listens_from_construction_and_announces_the_bound_port() -> None:
    shutdowns: list[bool] = []
    server = Server(hello, "127.0.0.1", 0, on_shutdown=lambda: shutdowns.append(True))
    assert server.port > 0
    with socket.create_connection(("127.0.0.1", server.port), timeout=5):
        pass  # accepted by the kernel before serving begins: the port is ours from the start
    with Running(server) as running:
        assert running.announced == [("127.0.0.1", server.port)]
        r = httpx2.get(f"http://127.0.0.1:{server.port}/", timeout=5)
        assert (r.status_code, r.text) == (200, "hello")
        assert "server" not in r.headers and "date" not in r.headers
    assert running.error is None and server.signal is None
    assert shutdowns == [True]
    with pytest.raises(OSError):  # the socket is closed once it stopped
        socket.create_connection(("127.0.0.1", server.port), timeout=1).close()


def test_a_taken_port_fails_up_front() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(TransportError, match=rf"^cannot listen on 127.0.0.1:{port}: Address already in use \(another program has it: give --listen 127\.0\.0\.1:0 to take a free port\)$"):
            Server(hello, "127.0.0.1", port)


def test_stopped_before_it_serves_it_returns_without_announcing() -> None:
    server = Server(hello)
    server.stop()
    announced: list[tuple[str, int]] = []
    server.run(ready=lambda h, p: announced.append((h, p)), handle_signals=False)
    assert announced == []


def test_an_app_that_fails_to_start_is_a_transport_error() -> None:
    async def no_start(scope, receive, send) -> None:
        await receive()
        await send({"type": "lifespan.startup.failed", "message": "no"})

    server = Server(no_start)
    with pytest.raises(TransportError, match="cannot serve on 127.0.0.1:"):
        server.run(handle_signals=False)


def test_a_dropped_connection_breaks_the_answer_and_is_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="uvicorn.error")
    with Running(Server(hello)) as running:
        with pytest.raises(httpx2.RemoteProtocolError):
            httpx2.get(f"http://127.0.0.1:{running.server.port}/drop", timeout=5)
    assert [r for r in caplog.records if r.name == "uvicorn.error"] == []
