"""What one request to a local mcpreel listener may cost: the size of its head and body, the time to send its head.

Every listener (the recording proxy, ``serve``, ``demo-server``) is reachable by anything that can open a
socket to it -- another process, a page in the browser -- and without limits one request can make it hold
any amount of memory, or a few hundred trickling connections can hold it open for ever. :class:`Limits`
are applied by :mod:`.loop` to every listener, before the app (and so before anything is recorded):

- **the head** (request line and headers): at most ``max_header`` bytes (default 64 KiB: the official
  SDKs' servers run behind stacks that allow 8-16 KiB; a few-KiB bearer token and ``Mcp-Param-*`` headers
  fit many times over). More is answered ``431``. Counted by the listener's protocol
  (:class:`HeadGuard`) as the bytes arrive, so an endless header is never held;
- **the time to send the head**: ``header_timeout`` seconds (default 10) from the connection's first byte
  -- or from its opening, when nothing comes -- to the end of the head; then ``408`` and the connection is
  closed. A real client writes its head in one go; a slow-loris one trickles it. Idle keep-alive
  connections between requests are uvicorn's (closed after 5 s);
- **the body**: at most ``max_body`` bytes (default 32 MiB: eight times the 4 MiB the official Python and
  TypeScript SDK servers accept, so the proxy never refuses what a server would take, and a base64 image
  or file of ~20 MB still goes through). A declared ``Content-Length`` above it is answered ``413`` at
  once; a chunked body is counted as it comes and answered ``413`` when it passes the limit
  (:class:`BodyLimit`). Either way the app never sees the request: nothing of it is recorded.

Every refusal is a JSON-RPC error with no id (as the ``Origin`` refusals of :mod:`.origin`) and closes the
connection. Before closing, what the client is still sending is read and dropped, up to :data:`DRAIN_LIMIT`
bytes and :data:`DRAIN_SECONDS`: a client blocked writing a big body would otherwise see a reset instead of
the answer. The answer to a declared ``Content-Length`` goes out first, whole, and the connection stays
open while the drain lasts (a client that sends its head and waits has its ``413`` at once, not after the
drain's seconds).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from mcpreel._infra import jsonio

__all__ = ["DEFAULT_HEADER_TIMEOUT", "DEFAULT_MAX_BODY", "DEFAULT_MAX_HEADER", "BodyLimit", "HeadGuard", "Limits",
           "refusal_response"]

DEFAULT_MAX_BODY = 32 << 20
DEFAULT_MAX_HEADER = 64 << 10
DEFAULT_HEADER_TIMEOUT = 10.0
#: what is read and dropped of a refused request before its connection closes
DRAIN_LIMIT = 1 << 30
DRAIN_SECONDS = 5.0

_REASONS = {408: "Request Timeout", 413: "Content Too Large", 431: "Request Header Fields Too Large"}


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits of one listener (see the module docstring for the defaults and why)."""

    max_body: int = DEFAULT_MAX_BODY
    max_header: int = DEFAULT_MAX_HEADER
    header_timeout: float = DEFAULT_HEADER_TIMEOUT


def _error_body(status: int, why: str) -> bytes:
    return jsonio.dumps({"jsonrpc": "2.0", "id": None,
                         "error": {"code": -32600, "message": f"{_REASONS[status]}: {why}"}})


def refusal_response(status: int, why: str) -> bytes:
    """A whole HTTP/1.1 answer (head and JSON-RPC error body) that closes the connection."""
    body = _error_body(status, why)
    head = (f"HTTP/1.1 {status} {_REASONS[status]}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode("ascii")
    return head + body


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


class HeadGuard:
    """Mixin for uvicorn's HTTP protocols: the head's size and time limits, counted as bytes arrive.

    The class using it sets :attr:`limits` and says, with :meth:`_head_pending`, whether the parser is
    between requests or inside a head (as opposed to a body).
    """

    limits: Limits = Limits()
    _head_bytes = 0
    _head_timer: asyncio.TimerHandle | None = None
    _refused = False
    _drained = 0

    def _head_pending(self) -> bool:  # pragma: no cover - every protocol class says
        raise NotImplementedError

    def connection_made(self, transport: asyncio.Transport) -> None:
        """Start the head timer as soon as the client connects (a client that sends nothing is cut off too)."""
        super().connection_made(transport)  # type: ignore[misc]
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the head timer with the connection."""
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]

    def _arm(self) -> None:
        if self._head_timer is None:
            loop = asyncio.get_running_loop()
            self._head_timer = loop.call_later(self.limits.header_timeout, self._head_timed_out)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        cycle = getattr(self, "cycle", None)
        if cycle is not None and not cycle.response_complete:
            return  # an answer is still going out: the next head is not late, it has not begun
        if self._head_pending() and not self._refused:
            self._refuse(408, f"the request head took longer than {self.limits.header_timeout:g} s")

    def _head_done(self) -> None:
        self._disarm()
        self._head_bytes = 0

    def _refuse(self, status: int, why: str) -> None:
        """Answer ``status`` and close; what the client still sends is dropped meanwhile (see DRAIN_*)."""
        self._refused = True
        self._disarm()
        transport: Any = self.transport  # type: ignore[attr-defined]
        if transport.is_closing():
            return
        transport.write(refusal_response(status, why))
        try:
            transport.write_eof()
        except (NotImplementedError, OSError, RuntimeError):
            transport.close()
            return
        if hasattr(transport, "resume_reading"):
            transport.resume_reading()
        asyncio.get_running_loop().call_later(DRAIN_SECONDS, transport.close)

    def data_received(self, data: bytes) -> None:
        """Count the head's bytes before the HTTP parser sees them, refusing a head too large (431) without buffering
        it."""
        if self._refused:
            self._drained += len(data)
            if self._drained > DRAIN_LIMIT:
                self.transport.close()  # type: ignore[attr-defined]
            return
        feed = super().data_received  # type: ignore[misc]
        while data:
            # uvicorn makes a new request cycle when a head is complete: that is how a head is seen ending,
            # even when its whole request (and more) came in one chunk
            cycle = getattr(self, "cycle", None)
            if not self._head_pending():  # inside a body: its own limit is BodyLimit's
                feed(data)
                if getattr(self, "cycle", None) is not cycle:
                    self._head_done()
                return
            self._arm()
            room = self.limits.max_header - self._head_bytes
            part, data = (data, b"") if len(data) <= room else (data[:room], data[room:])
            self._head_bytes += len(part)
            feed(part)
            if self._refused or self.transport.is_closing():  # type: ignore[attr-defined]
                return
            if getattr(self, "cycle", None) is not cycle:
                self._head_done()  # what follows is its body, or the next request
                continue
            if self._head_bytes >= self.limits.max_header:
                self._refuse(431, f"the request head is larger than {_size(self.limits.max_header)} "
                                  "(the listener's --max-header)")
            return


class BodyLimit:
    """ASGI middleware: a request body over ``limits.max_body`` is answered 413, never seen by ``app``.

    A declared ``Content-Length`` over the limit is refused before a byte of the body is read; a chunked
    body is counted as it is received (at most the limit is ever held) and refused once it passes it.
    The rest of a refused body is read and dropped (up to :data:`DRAIN_LIMIT`) before the answer, so a
    client still writing it sees the 413 -- unless it asked ``Expect: 100-continue``, and so sends nothing.
    """

    def __init__(self, app: Any, limits: Limits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limits.max_body
        declared: int | None = None
        expects = False
        for k, v in scope["headers"]:
            if k == b"content-length":
                try:
                    declared = int(v)
                except ValueError:
                    declared = None
            elif k == b"expect":
                expects = v.lower() == b"100-continue"
        why = f"the request body is larger than {_size(limit)} (the listener's --max-body)"
        if declared is not None and declared > limit:
            # the whole answer now; its end (and so the close) once what the client still sends is drained
            await _answer(send, 413, why, more=not expects)
            if not expects:
                await _drain(receive, 0)
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        seen = 0
        over = False
        started = False

        async def limited_receive() -> Any:
            nonlocal seen, over
            if over:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    over = True
                    if message.get("more_body", False):
                        await _drain(receive, seen)
                    return {"type": "http.disconnect"}  # the app drops a request its client left
            return message

        async def guarded_send(message: Any) -> None:
            nonlocal started
            if over:
                return  # whatever the app says of a request it never got whole
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except Exception:
            if not over:
                raise
        if over and not started:
            await _answer(send, 413, why)


async def _drain(receive: Any, seen: int) -> None:
    """Read and drop the rest of a refused body (bounded in bytes and time)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DRAIN_SECONDS
    while seen <= DRAIN_LIMIT:
        left = deadline - loop.time()
        if left <= 0:
            return
        try:
            message = await asyncio.wait_for(receive(), left)
        except TimeoutError:
            return
        if message["type"] != "http.request":
            return
        seen += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


async def _answer(send: Any, status: int, why: str, more: bool = False) -> None:
    """The refusal (its body whole); ``more``: the response is ended later, by an empty last body."""
    body = _error_body(status, why)
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body, "more_body": more})
