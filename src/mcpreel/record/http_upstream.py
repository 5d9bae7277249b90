"""A lean HTTP/1.1 transport for httpx2, for the proxy's plain-``http://`` upstream leg.

Why: the proxy adds every cost of its upstream leg to every round trip, and on the 2-core CI box
httpx2's stock transport (httpcore2: the h11 state machine, anyio cancel scopes, pool bookkeeping, about
1,600 Python calls per exchange) cost ~450 µs of CPU per request against ~30 µs for the same exchange
on a bare asyncio protocol — a third of everything the proxy did. This module is that bare exchange behind
httpx2's own transport interface (:class:`httpx2.AsyncBaseTransport`): the proxy still builds
``httpx2.Request``s, gets ``httpx2.Response``s whose stream it reads raw, and catches httpx2's exceptions.
``https://`` targets keep httpx2's stock transport (:func:`upstream_transport` chooses).

What it does, and no more (a transparent proxy's client): send the request exactly as built (one write),
read the answer's head, hand the body over as it arrives — framed by ``Content-Length``, ``chunked``
(de-chunked, as httpx2's ``aiter_raw`` gives it) or the connection's end — and keep the connection for the
next request when HTTP/1.1 allows it. No redirects, cookies, default headers or decoding. Informational
1xx answers are skipped. Errors are httpx2's: :class:`httpx2.ConnectError`/``ConnectTimeout`` when the
target cannot be reached, :class:`httpx2.RemoteProtocolError` for a malformed or cut answer,
:class:`httpx2.ReadError`/``WriteError`` for a reset.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import httpx2

__all__ = ["Http1Transport", "MAX_HEAD"]

#: the longest response head accepted (status line + headers)
MAX_HEAD = 64 * 1024
#: pause reading a connection whose unread body exceeds this (back-pressure on a fast target)
_HIGH_WATER = 1 << 20
#: idle connections are not reused after this long: servers close theirs after ~5 s (uvicorn, node)
KEEPALIVE_EXPIRY = 4.0
_MAX_IDLE_PER_ORIGIN = 64


class _Closed(Exception):
    """The connection ended (EOF or reset); ``error`` is the reset, if any."""

    def __init__(self, error: BaseException | None):
        self.error = error


class _Connection(asyncio.Protocol):
    """One TCP connection to the target, as a buffer the exchange reads from."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self.idle_since = 0.0
        self._waiter: asyncio.Future[None] | None = None
        self._drained: asyncio.Future[None] | None = None
        self._paused = False

    # -- protocol callbacks -------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if len(self.buf) > _HIGH_WATER and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False

    def connection_lost(self, exc: BaseException | None) -> None:
        self.eof = True
        self.error = exc
        self._wake()
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    def pause_writing(self) -> None:
        self._drained = self.loop.create_future()

    def resume_writing(self) -> None:
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)
        self._drained = None

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- for the exchange ---------------------------------------------------------------------------
    @property
    def reusable(self) -> bool:
        t = self.transport
        return not self.eof and not self.buf and t is not None and not t.is_closing()

    async def write(self, data: bytes) -> None:
        if self.transport is None or self.transport.is_closing() or self.eof:
            raise _Closed(self.error)
        self.transport.write(data)
        if self._drained is not None:
            await self._drained
            if self.eof:
                raise _Closed(self.error)

    async def more(self) -> None:
        """Wait until more bytes (or the end) arrived; raises :class:`_Closed` at the end."""
        if self.eof:
            raise _Closed(self.error)
        if self._paused and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        self._waiter = self.loop.create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def take(self, n: int | None = None) -> bytes:
        if n is None or n >= len(self.buf):
            data = bytes(self.buf)
            self.buf.clear()
        else:
            data = bytes(self.buf[:n])
            del self.buf[:n]
        return data

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


def _parse_head(head: bytes, request: httpx2.Request) -> tuple[bytes, int, bytes, list[tuple[bytes, bytes]]]:
    """``HTTP/1.1 200 OK\\r\\nName: value\\r\\n...`` -> (version, status, reason, header pairs)."""
    lines = head.split(b"\r\n")
    version, _, rest = lines[0].partition(b" ")
    code, _, reason = rest.partition(b" ")
    if not version.startswith(b"HTTP/1.") or len(code) != 3 or not code.isdigit():
        raise httpx2.RemoteProtocolError(f"malformed status line {lines[0][:100]!r}", request=request)
    headers: list[tuple[bytes, bytes]] = []
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(b":")
        if not sep or not name or name != name.strip() or line[:1] in (b" ", b"\t"):
            raise httpx2.RemoteProtocolError(f"malformed header line {line[:100]!r}", request=request)
        headers.append((name, value.strip(b" \t")))
    return version, int(code), reason, headers


def _framing(method: str, status: int, headers: list[tuple[bytes, bytes]], request: httpx2.Request) -> tuple[str, int]:
    """How the body is delimited: ``none``, ``length`` (n bytes), ``chunked`` or ``close``."""
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return "none", 0
    te = [v for k, v in headers if k.lower() == b"transfer-encoding"]
    if te:
        codings = [c.strip().lower() for v in te for c in v.split(b",") if c.strip()]
        return ("chunked", 0) if codings and codings[-1] == b"chunked" else ("close", 0)
    lengths = {v.strip() for k, v in headers if k.lower() == b"content-length"}
    if lengths:
        if len(lengths) != 1 or not next(iter(lengths)).isdigit():
            raise httpx2.RemoteProtocolError(f"bad Content-Length {sorted(lengths)!r}", request=request)
        return "length", int(next(iter(lengths)))
    return "close", 0


def _keep_alive(version: bytes, headers: list[tuple[bytes, bytes]]) -> bool:
    tokens = {t.strip().lower() for k, v in headers if k.lower() == b"connection" for t in v.split(b",")}
    if version == b"HTTP/1.0":
        return b"keep-alive" in tokens
    return b"close" not in tokens


class _Body(httpx2.AsyncByteStream):
    """The answer's body as it arrives; gives the connection back when it was read to its end."""

    def __init__(self, transport: Http1Transport, key: tuple[str, int], conn: _Connection, framing: str, length: int,
                 reuse: bool, request: httpx2.Request):
        self._transport = transport
        self._key = key
        self._conn = conn
        self._framing = framing
        self._left = length
        self._reuse = reuse and framing != "close"
        self._request = request
        self._done = framing == "none" or (framing == "length" and length == 0)
        self._closed = False
        if self._done:
            self._release()

    def _release(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._reuse and self._conn.reusable:
            self._transport._checkin(self._key, self._conn)
        else:
            self._conn.close()

    def _cut(self, where: str) -> httpx2.HTTPError:
        self._closed = True
        self._conn.close()
        if self._conn.error is not None:
            return httpx2.ReadError(f"connection reset {where}: {self._conn.error}", request=self._request)
        return httpx2.RemoteProtocolError(f"peer closed connection without sending complete message body ({where})",
                                          request=self._request)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        conn = self._conn
        try:
            if self._framing == "length":
                while self._left > 0:
                    if not conn.buf:
                        try:
                            await conn.more()
                        except _Closed:
                            raise self._cut(f"{self._left} bytes short") from None
                        continue
                    data = conn.take(self._left)
                    self._left -= len(data)
                    if self._left == 0:
                        self._done = True
                        self._release()
                    yield data
            elif self._framing == "close":
                while True:
                    if conn.buf:
                        yield conn.take()
                        continue
                    try:
                        await conn.more()
                    except _Closed:
                        if conn.error is not None:
                            raise self._cut("before its end") from None
                        self._done = True
                        self._release()
                        return
            elif self._framing == "chunked":
                async for data in self._chunks():
                    yield data
        except BaseException:
            if not self._done:
                self._closed = True
                conn.close()
            raise

    async def _line(self) -> bytes:
        conn = self._conn
        while True:
            end = conn.buf.find(b"\r\n")
            if end >= 0:
                line = bytes(conn.buf[:end])
                del conn.buf[: end + 2]
                return line
            if len(conn.buf) > MAX_HEAD:
                raise httpx2.RemoteProtocolError("chunk size line too long", request=self._request)
            try:
                await conn.more()
            except _Closed:
                raise self._cut("in a chunk header") from None

    async def _chunks(self) -> AsyncIterator[bytes]:
        conn = self._conn
        while True:
            size_line = (await self._line()).split(b";", 1)[0].strip()
            try:
                size = int(size_line, 16)
            except ValueError:
                raise httpx2.RemoteProtocolError(f"malformed chunk size {size_line[:40]!r}",
                                                 request=self._request) from None
            if size < 0:
                raise httpx2.RemoteProtocolError("negative chunk size", request=self._request)
            if size == 0:
                while await self._line():  # trailers, up to the blank line
                    pass
                self._done = True
                self._release()
                return
            left = size
            while left > 0:
                if not conn.buf:
                    try:
                        await conn.more()
                    except _Closed:
                        raise self._cut(f"{left} bytes short in a chunk") from None
                    continue
                data = conn.take(left)
                left -= len(data)
                yield data
            if await self._line() != b"":
                raise httpx2.RemoteProtocolError("chunk not followed by CRLF", request=self._request)

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            if self._done and self._reuse and self._conn.reusable:
                self._transport._checkin(self._key, self._conn)
            else:
                self._conn.close()  # unread: the target sees the client leave


class Http1Transport(httpx2.AsyncBaseTransport):
    """HTTP/1.1 over plain TCP, one request per connection at a time, idle connections kept for reuse."""

    def __init__(self, connect_timeout: float = 10.0):
        self._connect_timeout = connect_timeout
        self._idle: dict[tuple[str, int], list[_Connection]] = {}

    def _checkin(self, key: tuple[str, int], conn: _Connection) -> None:
        idle = self._idle.setdefault(key, [])
        if len(idle) >= _MAX_IDLE_PER_ORIGIN:
            conn.close()
            return
        conn.idle_since = time.monotonic()
        idle.append(conn)

    def _checkout(self, key: tuple[str, int]) -> _Connection | None:
        idle = self._idle.get(key)
        now = time.monotonic()
        while idle:
            conn = idle.pop()
            if conn.reusable and now - conn.idle_since < KEEPALIVE_EXPIRY:
                return conn
            conn.close()
        return None

    async def _connect(self, request: httpx2.Request, host: str, port: int) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            _, conn = await asyncio.wait_for(loop.create_connection(lambda: _Connection(loop), host, port),
                                             self._connect_timeout)
        except TimeoutError:
            raise httpx2.ConnectTimeout(f"no connection to {host}:{port} within {self._connect_timeout:g} s",
                                        request=request) from None
        except OSError as exc:
            raise httpx2.ConnectError(str(exc) or type(exc).__name__, request=request) from exc
        return conn

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        if url.scheme != "http":
            raise httpx2.UnsupportedProtocol(f"this transport speaks plain http, not {url.scheme}", request=request)
        host = url.host
        port = url.port or 80
        key = (host, port)
        head = b"%s %s HTTP/1.1\r\n" % (request.method.encode("ascii"), url.raw_path) + b"".join(
            b"%s: %s\r\n" % (k, v) for k, v in request.headers.raw) + b"\r\n"
        try:
            body: bytes | None = request.content  # a body given as bytes (httpx2 reads those at once)
        except httpx2.RequestNotRead:
            body = None  # a streamed body
        stream = request.stream
        conn = self._checkout(key)
        if conn is None:
            conn = await self._connect(request, host, port)
        try:
            if body is not None:
                await conn.write(head + body)
            else:
                await conn.write(head)
                chunked = any(k.lower() == b"transfer-encoding" for k, _ in request.headers.raw)
                async for chunk in stream:  # type: ignore[union-attr]
                    if chunk:
                        await conn.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
                if chunked:
                    await conn.write(b"0\r\n\r\n")
            while True:
                end = conn.buf.find(b"\r\n\r\n")
                if end >= 0:
                    raw_head = conn.take(end + 4)[:-4]
                    version, status, reason, headers = _parse_head(raw_head, request)
                    if 100 <= status < 200 and status != 101:
                        continue  # informational: the answer follows
                    break
                if len(conn.buf) > MAX_HEAD:
                    raise httpx2.RemoteProtocolError("response head too long", request=request)
                await conn.more()
        except _Closed as closed:
            conn.close()
            if closed.error is not None:
                raise httpx2.ReadError(f"connection reset: {closed.error}", request=request) from None
            raise httpx2.RemoteProtocolError("Server disconnected without sending a response.",
                                             request=request) from None
        except BaseException:
            conn.close()
            raise
        framing, length = _framing(request.method, status, headers, request)
        body_stream = _Body(self, key, conn, framing, length, _keep_alive(version, headers), request)
        return httpx2.Response(status, headers=headers, stream=body_stream,
                               extensions={"http_version": version, "reason_phrase": reason})

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for conn in idle:
                conn.close()
        self._idle.clear()

    def __repr__(self) -> str:  # pragma: no cover
        return f"<Http1Transport idle={sum(map(len, self._idle.values()))}>"
