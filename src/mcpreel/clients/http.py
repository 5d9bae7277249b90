"""The two HTTP transports of MCP, client side: Streamable HTTP and legacy HTTP+SSE.

Streamable HTTP: every message is its own ``POST`` with ``Accept: application/json,
text/event-stream``; a request's answer is one JSON body or an SSE stream that may carry server
notifications and server requests before the response; notifications and responses get 202. The
``Mcp-Session-Id`` issued on the ``initialize`` answer is sent on every later request, and from the
negotiated protocol version on, ``MCP-Protocol-Version`` too. After ``notifications/initialized`` a
``GET`` opens the optional server -> client stream (a 405 is fine). ``close()`` sends ``DELETE``.
A 2026-07-28 request (one whose ``params._meta`` names its protocol version) is stateless: its POST
carries ``MCP-Protocol-Version``, ``Mcp-Method`` and, for the methods that name something, ``Mcp-Name``,
as the official SDK sends them.

Legacy HTTP+SSE (2024-11-05): ``GET`` the SSE URL, wait for the ``endpoint`` event, ``POST`` every
message to that URI (answered 202); everything the server says comes on the stream.

An HTTP error (a 4xx/5xx page, a 401 challenge, a JSON-RPC error with a null id) reaches the caller as a
``Kind.TRANSPORT`` record whose ``ctx`` names the ``status``, the body and the ``request_ids`` it
answered, so a caller waiting for those requests stops waiting at once and can say what the server said.

The probe mode (:meth:`_HTTPBase.exchange`, what ``mcpreel check`` judges) sends bytes exactly as given,
with exactly the headers given, and keeps what came back as a :class:`WireExchange`: the status, the
headers, the raw body, the SSE events as framed and the bytes of an event the stream ended inside. It
uses the transport's own client, URL and connection state, so a check speaks through the same stack
as replay and forwarding do.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

import httpx2

from mcpreel._infra import jsonio
from mcpreel._infra.sse import SSEEvent, SSEParser
from mcpreel.clients.base import HttpAnswer, Transport
from mcpreel.eras import protocol_of_request
from mcpreel.errors import TransportError

if TYPE_CHECKING:
    import ssl

__all__ = ["MAX_WIRE_BODY", "LegacySSETransport", "StreamableHTTPTransport", "WireExchange"]

#: the most of one response body the probe mode keeps (a check needs the start, never gigabytes)
MAX_WIRE_BODY = 8 << 20

_ACCEPT_POST = "application/json, text/event-stream"
#: method -> the params member a 2026-07-28 POST mirrors in ``Mcp-Name``
_NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def _header_value(value: str) -> str:
    """An ``Mcp-Name`` value as the SDK encodes it: verbatim when it is plain printable ASCII without
    edge spaces, else base64 in the ``=?base64?...?=`` sentinel."""
    import base64

    if value.isascii() and value.isprintable() and value == value.strip() and not value.startswith("=?base64?"):
        return value
    return f"=?base64?{base64.b64encode(value.encode('utf-8')).decode('ascii')}?="


def modern_headers(message: Any) -> dict[str, str]:
    """The routing headers of a 2026-07-28 request or notification (none for a handshake-era one)."""
    if not isinstance(message, dict):
        return {}
    version = protocol_of_request(message)
    method = message.get("method")
    if version is None or not isinstance(method, str):
        return {}
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    key = _NAME_BEARING.get(method)
    params = message.get("params")
    if key is not None and isinstance(params, dict) and isinstance(params.get(key), str):
        headers["Mcp-Name"] = _header_value(params[key])
    return headers


def wire_value(value: str) -> str | bytes:
    """A header value to send back as the server sent it: text that is not ASCII (a session id decoded
    from latin-1) goes back as its latin-1 bytes, where httpx2 would refuse the text."""
    try:
        value.encode("ascii")
        return value
    except UnicodeEncodeError:
        return value.encode("latin-1", "replace")


def _request_ids(message: Any) -> list[Any]:
    members = message if isinstance(message, list) else [message]
    return [m["id"] for m in members if isinstance(m, dict) and "method" in m and "id" in m]


def _connect_error(url: str, exc: Exception) -> TransportError:
    reason = str(exc) or type(exc).__name__
    if isinstance(exc, httpx2.ConnectError):
        reason = f"connection refused or unreachable ({reason})"
    return TransportError(f"cannot reach {url}: {reason}")


def _reason(exc: BaseException) -> str:
    """An HTTP failure in a few words: the system's, when an ``OSError`` is behind it ("[Errno 111]
    Connection refused", where the async client says only "All connection attempts failed"), else the
    first line of its own."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, OSError) and isinstance(cause.errno, int):
            words = os.strerror(cause.errno) if cause.errno > 0 else (cause.strerror or str(cause))
            return f"[Errno {cause.errno}] {words}"
        cause = cause.__cause__ or cause.__context__
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0]


@dataclass
class WireExchange(HttpAnswer):
    """One HTTP request of the probe mode and what came back, as it was on the wire.

    ``status`` is None when no answer came (``error`` says why; ``connect_failed`` when the server could
    not be reached at all). ``events`` are the SSE events of a 2xx ``text/event-stream`` answer as
    framed; ``unterminated`` the event the stream ended inside (no blank line after it: a conforming
    client never sees that event; its ``raw`` holds the bytes); ``body`` the bytes read (at most ``MAX_WIRE_BODY``;
    ``truncated`` when there were more).
    """

    method: str
    url: str
    sent: bytes
    sent_headers: dict[str, Any]
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)  # names lower-cased
    body: bytes = b""
    events: list[SSEEvent] = field(default_factory=list)
    unterminated: SSEEvent | None = None
    truncated: bool = False
    error: str | None = None
    connect_failed: bool = False
    reason: str | None = None  # the failure's own words (first line), when the request failed
    elapsed_ms: int = 0


#: how long the probe mode waits, once it has its answer, for a stream to end (unread), so that its
#: connection serves the next request instead of a new one being opened
_END_GRACE = 0.02


async def _finish_quietly(chunks: Any) -> None:
    """Read a stream's rest for at most ``_END_GRACE`` seconds and 64 KiB, unkept: a server closes its
    stream right after the response, and a response read to its end leaves its connection reusable."""
    left = 1 << 16
    with contextlib.suppress(Exception):
        async with asyncio.timeout(_END_GRACE):
            async for chunk in chunks:
                left -= len(chunk)
                if left < 0:
                    return


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx2's default TLS context (its CA bundle, ``SSL_CERT_FILE``/``SSL_CERT_DIR``), built once a
    process: loading the CA bundle costs tens of milliseconds, and a check opens a client per
    connection it judges (each era, each version it negotiates)."""
    return httpx2.create_ssl_context()


class _HTTPBase(Transport):
    """What both HTTP transports share: the URL, ``--header`` values, one httpx2 client, SSE pumping, and
    the probe mode (:meth:`exchange`).

    ``http_transport`` replaces httpx2's network layer (an ``httpx2.MockTransport`` scripting a server
    in a test)."""

    def __init__(self, url: str, *, headers: dict[str, str] | None = None, timeout: float = 30.0,
                 http_transport: httpx2.AsyncBaseTransport | None = None):
        super().__init__()
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            from mcpreel.redact.urls import not_a_url

            raise TransportError(not_a_url(url))
        self.url = url
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.http_transport = http_transport
        self.client: httpx2.AsyncClient | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        # no read timeout: an SSE stream may stay quiet for as long as the server likes
        kwargs: dict[str, Any] = {"timeout": httpx2.Timeout(self.timeout, read=None), "follow_redirects": False}
        if self.http_transport is not None:
            kwargs["transport"] = self.http_transport
        else:
            kwargs["verify"] = _tls_context()
        self.client = httpx2.AsyncClient(**kwargs)

    # -- the probe mode ---------------------------------------------------------------------------
    async def exchange(self, body: bytes | None, *, headers: dict[str, Any], method: str = "POST",
                       url: str | None = None, limit: float | None = None,
                       on_event: Callable[[SSEEvent], bool] | None = None,
                       max_body: int = MAX_WIRE_BODY) -> WireExchange:
        """One HTTP request sent as given (bytes, headers, method), its answer kept as it came.

        A 2xx SSE answer is read event by event: ``on_event`` sees each one (and the event a stream
        ended inside) and returns True once it has what it waited for, which ends the read there. Any
        other answer is read whole. ``limit`` bounds the wait for the answer and for the read (the
        transport's ``timeout`` when None). Never raises for what the server did: a failure is the
        record's ``error``.
        """
        if self.client is None:
            raise TransportError("the transport is not started")
        target = url or self.url
        wire = WireExchange(method=method, url=target, sent=body or b"", sent_headers=headers)
        limit = self.timeout if limit is None else limit
        start = time.monotonic()
        deadline = start + limit
        try:
            request = self.client.build_request(method, target, content=body if method == "POST" else None,
                                                headers=headers, timeout=httpx2.Timeout(limit))
            resp = await self.client.send(request, stream=True)
            try:
                wire.status = resp.status_code
                wire.headers = {k.lower(): v for k, v in resp.headers.items()}
                if wire.is_sse and wire.ok_status:
                    await self._read_events(resp, wire, deadline, limit, on_event, max_body)
                else:
                    await self._read_body(resp, wire, deadline, max_body)
            finally:
                await resp.aclose()
        except (httpx2.ConnectError, httpx2.ConnectTimeout) as exc:
            wire.reason, wire.connect_failed = _reason(exc), True
            wire.error = f"connection failed: {wire.reason}"
        except httpx2.TimeoutException as exc:
            wire.reason = _reason(exc)
            wire.error = wire.error or f"no answer within {limit:g} s"
        except httpx2.HTTPError as exc:
            wire.reason = _reason(exc)
            wire.error = wire.error or f"HTTP error: {wire.reason}"
        wire.elapsed_ms = int((time.monotonic() - start) * 1000)
        return wire

    @staticmethod
    async def _read_body(resp: httpx2.Response, wire: WireExchange, deadline: float, max_body: int) -> None:
        buf = bytearray()
        chunks = resp.aiter_bytes()
        try:
            async for chunk in chunks:
                buf += chunk
                if len(buf) > max_body:
                    wire.truncated = True
                    break
                if time.monotonic() > deadline:
                    wire.error = "body still arriving at the time limit"
                    break
        finally:
            with contextlib.suppress(Exception):
                await chunks.aclose()
            wire.body = bytes(buf)

    @staticmethod
    async def _read_events(resp: httpx2.Response, wire: WireExchange, deadline: float, limit: float,
                           on_event: Callable[[SSEEvent], bool] | None, max_body: int) -> None:
        parser = SSEParser()
        buf = bytearray()
        done = False
        chunks = resp.aiter_bytes()
        try:
            while not done:
                if time.monotonic() > deadline:
                    wire.error = f"no response on the event stream within {limit:g} s"
                    break
                try:
                    chunk = await chunks.__anext__()
                except StopAsyncIteration:
                    break
                buf += chunk
                for ev in parser.feed(chunk):
                    wire.events.append(ev)
                    done = (on_event(ev) if on_event is not None else False) or done
                if len(buf) > max_body:
                    wire.truncated = True
                    break
            if done:
                await _finish_quietly(chunks)
        except httpx2.TimeoutException:
            wire.error = f"no response on the event stream within {limit:g} s"
        finally:
            with contextlib.suppress(Exception):
                await chunks.aclose()  # a read stopped early: no generator left for the loop to finalize
            wire.body = bytes(buf)
            if not done:
                # the stream ended (or stalled) inside an event: what a blank line would have dispatched
                tail = list(parser.feed(b"\n\n"))
                if tail and tail[0].comment is None:
                    wire.unterminated = tail[0]
                    if on_event is not None:
                        on_event(tail[0])

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _pump_sse(self, resp: httpx2.Response, ctx: dict[str, Any]) -> None:
        parser = SSEParser()
        async for chunk in resp.aiter_bytes():
            for ev in parser.feed(chunk):
                if ev.comment is not None:
                    continue
                self._on_event(ev.event, ev.data, ev.id, ctx)

    def _on_event(self, event: str, data: str, event_id: str | None, ctx: dict[str, Any]) -> None:
        if event not in ("message", ""):
            self._deliver_transport({**ctx, "sse": {"event": event, "id": event_id}, "data": data})
            return
        if not data.strip():
            return  # a priming event (2025-11-25) has an id and no data
        try:
            raw = jsonio.loads(data)
        except (ValueError, UnicodeDecodeError, RecursionError):
            self._deliver_text("invalid", data, ctx)
            return
        self._seen(raw)
        self._deliver_json(raw, {**ctx, "sse": {"event": event or "message", "id": event_id}})

    def _seen(self, raw: Any) -> None:
        """Hook: a JSON-RPC message arrived (Streamable HTTP learns the protocol version here)."""

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.client is not None:
            with contextlib.suppress(Exception):
                await self.client.aclose()
        self._finish("closed")


class StreamableHTTPTransport(_HTTPBase):
    """A client of a Streamable HTTP server: one POST a message, answers as JSON or SSE, the session id and protocol
    headers carried for the caller."""
    name = "streamable-http"

    def __init__(self, url: str, *, headers: dict[str, str] | None = None, timeout: float = 30.0,
                 get_stream: bool = True, http_transport: httpx2.AsyncBaseTransport | None = None):
        super().__init__(url, headers=headers, timeout=timeout, http_transport=http_transport)
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.get_stream = get_stream
        self._init_ids: set[Any] = set()
        self._get_started = False

    def post_headers(self, message: Any = None) -> dict[str, Any]:
        """The headers a POST of ``message`` carries: ours, the session's, the era's routing headers."""
        headers: dict[str, Any] = {"Accept": _ACCEPT_POST, "Content-Type": "application/json", **self.headers}
        if self.session_id:
            headers["Mcp-Session-Id"] = wire_value(self.session_id)
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        headers.update(modern_headers(message))
        return headers

    def _seen(self, raw: Any) -> None:
        if isinstance(raw, dict) and raw.get("id") in self._init_ids and isinstance(raw.get("result"), dict):
            version = raw["result"].get("protocolVersion")
            if isinstance(version, str):
                self.protocol_version = version

    async def send(self, message: Any) -> None:
        if self.client is None:
            raise TransportError("the transport is not started")
        for m in message if isinstance(message, list) else [message]:
            if isinstance(m, dict) and m.get("method") == "initialize" and "id" in m:
                self._init_ids.add(m["id"])
        request = self.client.build_request("POST", self.url, content=jsonio.dumps(message),
                                            headers=self.post_headers(message))
        try:
            resp = await self.client.send(request, stream=True)
        except httpx2.HTTPError as exc:
            raise _connect_error(self.url, exc) from exc
        sid = resp.headers.get("mcp-session-id")
        if sid:
            self.session_id = sid
        self._spawn(self._read_answer(resp, _request_ids(message)))
        if (self.get_stream and not self._get_started and isinstance(message, dict)
                and message.get("method") == "notifications/initialized"):
            self._get_started = True
            self._spawn(self._get_loop())

    async def _read_answer(self, resp: httpx2.Response, request_ids: list[Any]) -> None:
        ctx: dict[str, Any] = {"method": "POST", "status": resp.status_code}
        try:
            ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype == "text/event-stream" and resp.status_code < 400:
                await self._pump_sse(resp, ctx)
                return
            body = await resp.aread()
            if not body.strip():
                if resp.status_code >= 300 and request_ids:
                    self._deliver_transport({**ctx, "request_ids": request_ids, "body": ""})
                return
            try:
                raw = jsonio.loads(body)
            except (ValueError, UnicodeDecodeError):
                raw = None
            text = body.decode("utf-8", "replace")
            if isinstance(raw, (dict, list)) and (resp.status_code < 300 or _is_jsonrpc(raw)):
                self._seen(raw)
                self._deliver_json(raw, ctx)
                if resp.status_code < 300:
                    return
                # an error status: the JSON-RPC error may carry a null id; the requests it answered must
                # not wait for an answer that will never come (an answer with their id wins: it came first)
            self._deliver_transport({**ctx, "request_ids": request_ids, "body": text[:2000]})
        except httpx2.HTTPError as exc:
            self._deliver_transport({**ctx, "request_ids": request_ids, "error": f"the response stream broke: {exc}"})
        finally:
            await resp.aclose()

    async def _get_loop(self) -> None:
        assert self.client is not None
        headers = {"Accept": "text/event-stream", **self.headers}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        with contextlib.suppress(httpx2.HTTPError):
            async with self.client.stream("GET", self.url, headers=headers) as resp:
                if resp.status_code != 200:
                    return
                await self._pump_sse(resp, {"method": "GET", "status": 200})

    async def close(self) -> None:
        if self.client is not None and self.session_id:
            headers = {**self.headers, "Mcp-Session-Id": self.session_id}
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.client.delete(self.url, headers=headers), 2.0)
        await super().close()


def _is_jsonrpc(raw: Any) -> bool:
    members = raw if isinstance(raw, list) else [raw]
    return any(isinstance(m, dict) and m.get("jsonrpc") == "2.0" for m in members)


class LegacySSETransport(_HTTPBase):
    """A client of a legacy HTTP+SSE server: one GET stream for answers, POSTs to the endpoint the stream names."""
    name = "sse"

    def __init__(self, url: str, *, headers: dict[str, str] | None = None, timeout: float = 30.0,
                 http_transport: httpx2.AsyncBaseTransport | None = None):
        super().__init__(url, headers=headers, timeout=timeout, http_transport=http_transport)
        self.endpoint: str | None = None
        #: the answer to the GET that opened the event stream (its status, headers and, when it was
        #: refused, the start of its body); ``error`` says how the stream failed
        self.stream_answer: WireExchange | None = None
        self._endpoint_ready: asyncio.Future[str] | None = None

    async def start(self) -> None:
        await super().start()
        self._endpoint_ready = asyncio.get_running_loop().create_future()
        self._spawn(self._stream())
        try:
            self.endpoint = await asyncio.wait_for(asyncio.shield(self._endpoint_ready), self.timeout)
        except TimeoutError as exc:
            await self.close()
            raise TransportError(f"{self.url}: no endpoint event within {self.timeout:g} s (is it a legacy SSE URL?)") from exc
        except TransportError:
            await self.close()
            raise

    async def _stream(self) -> None:
        assert self.client is not None and self._endpoint_ready is not None
        ready = self._endpoint_ready
        why = "the server closed the event stream"
        headers = {"Accept": "text/event-stream", **self.headers}
        answer = self.stream_answer = WireExchange(method="GET", url=self.url, sent=b"", sent_headers=headers)
        try:
            async with self.client.stream("GET", self.url, headers=headers) as resp:
                answer.status = resp.status_code
                answer.headers = {k.lower(): v for k, v in resp.headers.items()}
                if resp.status_code != 200 or not answer.is_sse:
                    answer.body = (await resp.aread())[:300]
                    if not ready.done():
                        said = f"{answer.status} {answer.content_type or 'no content type'}"
                        ready.set_exception(TransportError(f"{self.url}: GET answered {said}, not an event stream"))
                    why = f"GET answered {said}"
                    return
                parser = SSEParser()
                async for chunk in resp.aiter_bytes():
                    for ev in parser.feed(chunk):
                        if ev.comment is not None:
                            continue
                        if ev.event == "endpoint":
                            if not ready.done():
                                ready.set_result(urljoin(self.url, ev.data.strip()))
                            continue
                        self._on_event(ev.event, ev.data, ev.id, {"method": "GET", "status": 200})
        except (httpx2.ConnectError, httpx2.ConnectTimeout) as exc:
            why = f"cannot reach {self.url}: {_reason(exc)}"
            if not ready.done():
                ready.set_exception(_connect_error(self.url, exc))
        except httpx2.HTTPError as exc:
            why = f"the event stream failed: {_reason(exc)}"
            if not ready.done():
                ready.set_exception(_connect_error(self.url, exc))
        except asyncio.CancelledError:
            why = "closed"
            raise
        finally:
            answer.error = None if why.startswith("the server closed") else why
            if not ready.done():
                ready.set_exception(TransportError(f"{self.url}: the event stream ended before an endpoint event"))
            self._finish(why)

    async def send(self, message: Any) -> None:
        if self.client is None or self.endpoint is None:
            raise TransportError("the transport is not started")
        try:
            resp = await self.client.post(self.endpoint, content=jsonio.dumps(message),
                                          headers={"Content-Type": "application/json", **self.headers})
        except httpx2.HTTPError as exc:
            raise _connect_error(self.endpoint, exc) from exc
        if resp.status_code >= 300:
            self._deliver_transport({"method": "POST", "status": resp.status_code,
                                     "request_ids": _request_ids(message), "body": resp.text[:2000]})
