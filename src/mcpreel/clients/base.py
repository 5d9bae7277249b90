"""The one transport shape: send a message, iterate what comes back, close.

A client-side transport carries JSON-RPC between us and a live MCP server, whatever the wire: a
stdio subprocess, Streamable HTTP or legacy HTTP+SSE. What it receives comes out as
:class:`~mcpreel.model.Message` records (``dir="out"``, a receive time, the transport context), so a
caller can compare them, answer them or write them to a reel as they are. Besides JSON-RPC a transport
hands out what a faithful caller wants to see: server stderr lines (``Kind.STDERR``), frames that were
not JSON (``Kind.INVALID``) and transport-only events (``Kind.TRANSPORT``: an HTTP error status with
no JSON-RPC body, a lost stream).

Failures to start or reach the peer raise :class:`~mcpreel.errors.TransportError`; a peer that goes
away ends the iteration (``receive()`` returns None) and leaves :attr:`Transport.ended` saying why, and
:meth:`Transport.dead_reason` saying more when the transport knows more (a process's exit code and its
last stderr line). Every member a caller may use is on this class, so no caller has to probe a
transport for what it can do.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from mcpreel._infra.timeutil import now_ms
from mcpreel.model import Kind, Message

__all__ = ["HttpAnswer", "Transport"]


class Transport:
    """Base class: an inbox of received records, filled by the subclass's reader tasks."""

    #: the session transport name the model uses ("stdio", "streamable-http", "sse", "memory")
    name = "memory"
    #: which direction received records get ("out" on the client side: server -> client)
    receive_dir = "out"

    def __init__(self) -> None:
        self._inbox: asyncio.Queue[Message | None] = asyncio.Queue()
        self._finished = False
        self._sending: set[asyncio.Task[None]] = set()
        self.ended: str | None = None  # why the stream of received records ended

    # -- the shape --------------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect or spawn. Raises :class:`TransportError` when the peer cannot be reached."""

    async def send(self, message: Any) -> None:
        """Send one JSON-RPC message (a dict) or batch (a list)."""
        raise NotImplementedError

    def send_nowait(self, message: Any) -> None:
        """Send without awaiting, for a caller that cannot await (a mock answering from a callback).

        Here :meth:`send` runs as a task whose failure is dropped: the peer is gone, and the end of
        the received stream says so. A transport that can deliver at once (in memory) does.
        """
        task = asyncio.ensure_future(self.send(message))
        self._sending.add(task)
        task.add_done_callback(_forget_send)
        task.add_done_callback(self._sending.discard)

    async def receive(self) -> Message | None:
        """The next received record, or None once the peer is gone (and for every call after)."""
        if self._finished and self._inbox.empty():
            return None
        msg = await self._inbox.get()
        if msg is None:
            self._inbox.put_nowait(None)  # stay ended for later callers
        return msg

    async def __aiter__(self) -> AsyncIterator[Message]:
        while True:
            msg = await self.receive()
            if msg is None:
                return
            yield msg

    def dead_reason(self) -> str | None:
        """One line on how the peer went away, when this transport knows more than :attr:`ended`.

        None here, where :attr:`ended` is all there is; a process adds its exit code and last stderr line.
        """
        return None

    async def close(self) -> None:
        """Release everything; safe to call twice."""
        self._finish("closed")

    async def __aenter__(self) -> Transport:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- for subclasses ---------------------------------------------------------------------------
    def _deliver_json(self, raw: Any, ctx: dict[str, Any] | None = None) -> None:
        self._inbox.put_nowait(Message(self.receive_dir, raw, now_ms(), ctx=ctx))

    def _deliver_text(self, kind: str, text: str, ctx: dict[str, Any] | None = None) -> None:
        direction = None if kind == Kind.STDERR else self.receive_dir
        self._inbox.put_nowait(Message(direction, None, now_ms(), kind=kind, text=text, ctx=ctx))

    def _deliver_transport(self, ctx: dict[str, Any]) -> None:
        self._inbox.put_nowait(Message(self.receive_dir, None, now_ms(), kind=Kind.TRANSPORT, ctx=ctx))

    def _finish(self, reason: str) -> None:
        if not self._finished:
            self._finished = True
            self.ended = self.ended or reason
            self._inbox.put_nowait(None)


def _forget_send(task: asyncio.Task[None]) -> None:
    """Take a background send's outcome, so a failure is not reported as never retrieved."""
    if not task.cancelled():
        task.exception()


class HttpAnswer:
    """What an HTTP answer's status and headers say, for anything holding ``status`` and lower-cased
    ``headers``: the probe mode's :class:`WireExchange` and ``check``'s exchange (one reading of both)."""

    status: int | None
    headers: dict[str, str]

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    @property
    def is_sse(self) -> bool:
        return self.content_type == "text/event-stream"

    @property
    def ok_status(self) -> bool:
        return self.status is not None and 200 <= self.status < 300
