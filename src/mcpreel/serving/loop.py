"""The one serving loop of mcpreel's local servers: bind, serve with uvicorn, announce, stop, shut down.

:class:`Server` binds its socket when it is made (:mod:`.listen`), so a taken port is one clear
:class:`~mcpreel.errors.TransportError` before anything else happens -- before a file is opened or a line
printed -- where uvicorn would log it and end the process with its own exit code. It then serves an ASGI
app with uvicorn configured once for all: the batching HTTP/1.1 protocol of :mod:`.wire` (httptools'
parser when installed), no access log, no logging set up (the library never prints), no ``Server`` or
``Date`` header. ``ready(host, port)`` is called once connections are answered. It stops on SIGINT,
SIGTERM or SIGHUP (in the main thread; a second SIGINT stops at once) or on :meth:`Server.stop` from any
thread, and unlike uvicorn does not raise the signal again afterwards, so the caller can still say what
was served; :attr:`Server.signal` says which signal it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import signal
import socket
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

import uvicorn

from mcpreel._infra import signals as early_signals
from mcpreel._infra.platform import STOP_SIGNALS
from mcpreel.errors import TransportError
from mcpreel.serving.limits import BodyLimit, Limits
from mcpreel.serving.listen import listening_socket
from mcpreel.serving.wire import listener_protocol, loop_factory

__all__ = ["DropConnection", "Server", "run"]

T = TypeVar("T")
_SIGNALS = STOP_SIGNALS  # the stop signals this system has (mcpreel._infra.platform)


class DropConnection(Exception):
    """Raised by an app to have the client's connection dropped instead of its answer ended cleanly.

    A proxy whose upstream broke an answer must break the client's too; that is the app doing its job,
    so the server does not log it as an error.
    """


class _QuietDrop(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, DropConnection)


_QUIET_DROP = _QuietDrop()


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` on a new event loop: uvloop's when installed (a server's loop turns cost less)."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)


class _Uvicorn(uvicorn.Server):
    """uvicorn, with our signal handling and a hook for the app's shutdown."""

    def __init__(self, config: uvicorn.Config, on_shutdown: Callable[[], object] | None, handle_signals: bool):
        super().__init__(config)
        self._on_shutdown = on_shutdown
        self._handle_signals = handle_signals
        self.signal: int | None = None

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if not self._handle_signals or threading.current_thread() is not threading.main_thread():
            yield
            return
        original = {sig: signal.signal(sig, self.handle_exit) for sig in _SIGNALS}
        for signum in early_signals.take():  # kept while the caller got ready (mcpreel._infra.signals)
            self.handle_exit(signum, None)
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)

    def handle_exit(self, sig: int, frame: Any) -> None:
        if self.signal is None:
            self.signal = sig
        super().handle_exit(sig, frame)
        self._captured_signals.clear()  # uvicorn would raise it again after shutdown, killing the caller

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self._on_shutdown is not None:
            self._on_shutdown()
        await super().shutdown(sockets)


class Server:
    """An ASGI app served on ``host:port``, bound at construction (``port`` 0 picks a free one).

    ``graceful_timeout`` bounds how long shutdown waits for open answers (SSE streams may never end);
    ``on_shutdown`` is called on the event loop when shutdown begins (to end such streams cleanly).
    ``limits`` bound each request's head, body and head time (:mod:`.limits`; the defaults when None),
    before ``app`` sees it.
    """

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, *, graceful_timeout: float = 3.0,
                 on_shutdown: Callable[[], object] | None = None, limits: Limits | None = None) -> None:
        try:
            sock = listening_socket(host, port)
        except OSError as exc:
            why = (exc.strerror or str(exc)).split(" (while attempting")[0]
            if exc.errno == errno.EADDRINUSE and port:  # the one fix: a port the system picks
                shown = f"[{host}]" if ":" in host else host
                why += f" (another program has it: give --listen {shown}:0 to take a free port)"
            raise TransportError(f"cannot listen on {host}:{port}: {why}") from exc
        sock.setblocking(False)
        self.app = app
        self.host = host
        self.port: int = sock.getsockname()[1]
        self._socket = sock
        self._graceful_timeout = graceful_timeout
        self._on_shutdown = on_shutdown
        self.limits = limits or Limits()
        self._server: _Uvicorn | None = None
        self._stop_requested = False

    @property
    def signal(self) -> int | None:
        """The signal that stopped the server (None when :meth:`stop` did, or it still runs)."""
        return self._server.signal if self._server is not None else None

    async def serve(self, *, ready: Callable[[str, int], object] | None = None, handle_signals: bool = True) -> None:
        """Serve until a signal (main thread, ``handle_signals``) or :meth:`stop`; then close the socket."""
        logging.getLogger("uvicorn.error").addFilter(_QUIET_DROP)  # the same filter once, however many servers
        config = uvicorn.Config(
            BodyLimit(self.app, self.limits), log_level="warning", log_config=None, access_log=False,
            lifespan="on", server_header=False, date_header=False, ws="none", http=listener_protocol(self.limits),
            # h11 (when httptools is missing) has a head limit of its own: ours, counted first, answers 431
            h11_max_incomplete_event_size=self.limits.max_header + 4096,
            # uvicorn's stub says int; it is an asyncio.wait_for timeout, so a float is what it takes
            timeout_graceful_shutdown=self._graceful_timeout,  # type: ignore[arg-type]
        )
        server = self._server = _Uvicorn(config, self._on_shutdown, handle_signals)
        if self._stop_requested:
            server.should_exit = True

        async def announce() -> None:
            while not server.started and not server.should_exit:
                await asyncio.sleep(0.005)
            if server.started and ready is not None:
                ready(self.host, self.port)

        watcher = asyncio.create_task(announce())
        try:
            await server.serve(sockets=[self._socket])
        except SystemExit:  # uvicorn ends the process when the app's startup fails; a library must not
            raise TransportError(f"cannot serve on {self.host}:{self.port}: the app failed to start") from None
        finally:
            watcher.cancel()
            self._socket.close()

    def run(self, *, ready: Callable[[str, int], object] | None = None, handle_signals: bool = True) -> None:
        """:meth:`serve` on an event loop of its own (see :func:`run`)."""
        run(self.serve(ready=ready, handle_signals=handle_signals))

    def stop(self) -> None:
        """Ask the server to stop (thread-safe; before it serves too): it returns once answers are done."""
        self._stop_requested = True
        if self._server is not None:
            self._server.should_exit = True

    def close(self) -> None:
        """Release the socket of a server that will not serve."""
        self._socket.close()
