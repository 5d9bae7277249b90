"""The listener's side of one-segment writes: what a server writes in one loop turn goes out in one send.

On a loopback hop each ``send()`` that reaches a waiting peer wakes it, and on a small machine the woken
process preempts the sender (measured on the 2-core CI box: four sends cost more than the whole server).
HTTP/1.1 stacks write a message's head and its body with separate sends; :class:`BatchingH11Protocol`
is uvicorn's h11 protocol whose transport gathers the writes made in one event-loop turn
(``http.response.start`` + the first body chunk) and sends them together. Nothing is reordered or
changed; a held write goes out at the end of the loop turn. (The proxy's upstream leg does the same in
:mod:`mcpreel.record.http_wire`.) The same protocols count and time each request's head
(:class:`~mcpreel.serving.limits.HeadGuard`, with the listener's :class:`~mcpreel.serving.limits.Limits`).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from mcpreel.serving.limits import HeadGuard, Limits

__all__ = ["BatchingH11Protocol", "listener_protocol", "loop_factory"]


class _BatchingTransport:
    """An asyncio transport that sends what was written in one loop turn as one buffer."""

    __slots__ = ("_transport", "_loop", "_pending", "_scheduled")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop):
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []
        self._scheduled = False

    def write(self, data: bytes) -> None:
        if not data:
            return
        self._pending.append(data)
        if not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self.flush)

    def flush(self) -> None:
        self._scheduled = False
        if self._pending:
            data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
            self._pending.clear()
            if not self._transport.is_closing():
                self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class BatchingH11Protocol(HeadGuard, H11Protocol):
    """uvicorn's h11 protocol writing through :class:`_BatchingTransport`, its heads guarded."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.transport = _BatchingTransport(transport, self.loop)  # type: ignore[assignment]

    def _head_pending(self) -> bool:
        return self.conn.their_state is h11.IDLE


def listener_protocol(limits: Limits | None = None) -> type[asyncio.Protocol]:
    """The listener's HTTP/1.1 protocol: uvicorn's httptools one (C parser) when installed, else h11."""
    chosen = limits or Limits()
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return type("LimitedH11Protocol", (BatchingH11Protocol,), {"limits": chosen})

    class BatchingHttpToolsProtocol(HeadGuard, HttpToolsProtocol):
        limits = chosen
        _in_head = True  # between requests or inside a head (not a body): what HeadGuard counts

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.transport = _BatchingTransport(transport, self.loop)  # type: ignore[assignment]

        def _head_pending(self) -> bool:
            return self._in_head

        def on_headers_complete(self) -> None:
            self._in_head = False
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._in_head = True
            super().on_message_complete()

    return BatchingHttpToolsProtocol


def loop_factory() -> Any:
    """uvloop's event loop when installed (the proxy's loop turns cost less), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop
