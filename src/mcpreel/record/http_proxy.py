"""The HTTP recording proxy: Streamable HTTP and legacy HTTP+SSE, as a library.

:class:`RecordingProxy` is a raw ASGI app that forwards every request to one target and streams the answer
back as it comes, telling the sans-io :class:`~mcpreel.record.http_recorder.HttpRecorder` what crossed the
wire. :class:`ProxyServer` serves it with the serving loop of :mod:`mcpreel.serving.loop` (bound first:
port 0 works, and a taken port is a clean :class:`~mcpreel.errors.TransportError`), calls ``ready(url)``
once listening, and stops on SIGINT/SIGTERM or :meth:`ProxyServer.stop`.

What a transparent proxy must respect (spec 03), and where it is done here:

- bytes: request bodies are forwarded as received; response bodies and SSE streams are forwarded chunk by
  chunk as they arrive from the target (``aiter_raw``: even a ``Content-Encoding`` is passed on as is),
  with no read timeout (an SSE stream may say nothing for minutes). Only a *copy* is decoded and parsed
  for the record. The one rewrite is the legacy transport's ``endpoint`` event, when its URI is absolute:
  it is pointed at the proxy (a relative URI already resolves against the proxy, since paths map 1:1);
- statuses: every status the target gives is passed on; the proxy answers by itself only 403 (a foreign
  ``Origin``, by the policy of :mod:`mcpreel.serving.origin`; any ``Host`` is answered), 400 (a request
  target that is not a path, ``OPTIONS *``) and 502 (target unreachable), each with a JSON-RPC error body;
- headers: end-to-end ones are kept (``Mcp-Session-Id``, ``MCP-Protocol-Version``, ``Mcp-Method``,
  ``Mcp-Name``, ``Mcp-Param-*``, ``Last-Event-ID``, ``Authorization``, ``WWW-Authenticate``, cookies, ...);
  hop-by-hop ones (and those a ``Connection`` header names) are dropped; ``Host`` is the target's. The
  upstream side is an httpx2 *transport* with no client around it, so nothing of its own is added (no
  default ``User-Agent``/``Accept-Encoding``, no cookie jar, no environment proxies, no redirects): the
  lean HTTP/1.1 one of :mod:`~mcpreel.record.http_upstream` for ``http://`` targets, httpx2's own for
  ``https://`` (see :mod:`~mcpreel.record.http_wire` for why, and for the one-segment writes);
- disconnects: a client that goes away closes the upstream request (for a 2026-era server that *is*
  cancellation); a target that breaks a stream breaks the client's response too (the client sees an
  incomplete body, not a clean end);
- paths: the proxy's path space maps onto the target's origin 1:1 (``/mcp`` on the proxy is ``/mcp`` on
  the target) and it forwards to the target only;
- recording: :class:`HttpRecorder` is told what crossed the wire right *after* it was sent
  (``call_soon``, in order), so the record is written while the peer works, off the round trip.

With an interceptor (:mod:`mcpreel.intercept`), a client's POST whose body is one JSON-RPC message
the interceptor ``wants`` is held before it goes to the target: ``decide`` runs in a worker thread of the
proxy's own (other exchanges go on meanwhile), then the request goes on as it came, with the edited body
(``Content-Length`` is recomputed), or not at all — a dropped request is answered by the proxy (200, the
JSON-RPC error), a dropped notification or response with 202; ``close`` drops the client's connection.
Only client -> server messages are held on HTTP (answers and SSE events stream through); an injected
client -> server message is POSTed to the target with the headers of the client's last POST (its session),
and what the target answers is recorded, not forwarded (no client asked for it).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2

from mcpreel._infra import jsonio
from mcpreel._infra.sse import SSEParser
from mcpreel._infra.timeutil import now_ms
from mcpreel.errors import UsageError
from mcpreel.intercept import Decision, Interceptor, Pending, drop_answer, safe_decide
from mcpreel.record.http_recorder import HttpExchange, HttpRecorder, body_decoder
from mcpreel.record.http_wire import upstream_transport
from mcpreel.redact.urls import redact_url
from mcpreel.serving.limits import Limits
from mcpreel.serving.loop import DropConnection, Server, run
from mcpreel.serving.origin import RequestPolicy

__all__ = ["TRANSPORTS", "ProxyConfig", "ProxyServer", "RecordingProxy", "parse_target"]

TRANSPORTS = ("streamable-http", "sse")

#: RFC 9110 §7.6.1 hop-by-hop headers, plus what the upstream client sets itself (host, content-length)
_HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"te", b"trailer", b"trailers", b"transfer-encoding",
     b"upgrade", b"proxy-authenticate", b"proxy-authorization"}
)
_REQUEST_DROP = _HOP_BY_HOP | {b"host", b"content-length"}
_RESPONSE_DROP = _HOP_BY_HOP
#: bytes of a legacy GET stream held back while waiting for its first event (the ``endpoint``)
_ENDPOINT_HOLD_LIMIT = 64 * 1024
#: an exchange still running after this long gets a watcher for its client leaving (seconds)
_WATCH_AFTER = 0.05
#: the JSON-RPC error code of the proxy's own 502 answer (implementation-defined server error range)
PROXY_ERROR_CODE = -32000


def parse_target(url: str) -> tuple[str, str]:
    """``https://host:8443/mcp?k=v`` -> (origin ``https://host:8443``, path ``/mcp?k=v``); else refused.

    The path keeps its query: the client is pointed at the same path and query on the proxy.
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        from mcpreel.redact.urls import not_a_url

        raise UsageError(f"--target-url {not_a_url(url)}")
    try:
        parts.port  # noqa: B018  (raises on a malformed port)
    except ValueError as exc:
        raise UsageError(f"target {redact_url(url)!r}: {exc}") from None
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return urlunsplit((parts.scheme, parts.netloc, "", "", "")), path


@dataclass
class ProxyConfig:
    """What the proxy forwards where. ``target`` is the server's URL as the user gave it."""

    transport: str
    target: str
    allow_origins: Sequence[str] = ()
    keep_secrets: bool = False
    #: host names a loopback listener answers beyond the loopback ones (``--allow-host``)
    allow_hosts: Sequence[str] = ()
    connect_timeout: float = 10.0
    #: use httpx2's stock transport for http:// targets too (the lean one is the default there)
    stock_upstream: bool = False
    #: the listener's limits on each request (:mod:`mcpreel.serving.limits`; None: the defaults)
    limits: Limits | None = None
    origin: str = field(init=False)
    target_path: str = field(init=False)

    @property
    def shown_target(self) -> str:
        """The target as said to anyone (the client's 502, stderr, the reel): secret parameters redacted
        unless ``keep_secrets``."""
        return self.target if self.keep_secrets else redact_url(self.target)

    def __post_init__(self) -> None:
        if self.transport not in TRANSPORTS:
            raise UsageError(f"unknown HTTP transport {self.transport!r} (known: {', '.join(TRANSPORTS)})")
        self.origin, self.target_path = parse_target(self.target)


def _upstream(config: ProxyConfig) -> httpx2.AsyncBaseTransport:
    """An httpx2 transport, used without a client around it (see :func:`http_wire.upstream_transport`).

    A client would add what a transparent proxy must not: default headers, a cookie jar, auth flows,
    redirects, environment proxies. A transport sends the request as built, and nothing else.
    """
    if config.stock_upstream:
        return upstream_transport("https", config.connect_timeout)  # httpx2's own, also for http://
    return upstream_transport(urlsplit(config.origin).scheme, config.connect_timeout)


def _filter(headers: Sequence[tuple[bytes, bytes]], drop: frozenset[bytes]) -> list[tuple[bytes, bytes]]:
    """End-to-end headers only: ``drop``, every ``Proxy-*`` and whatever a ``Connection`` header names go."""
    out = []
    named: set[bytes] | None = None
    for k, v in headers:
        low = k.lower()
        if low in drop or low.startswith(b"proxy-"):
            if low == b"connection":
                named = (named or set()) | {t.strip().lower() for t in v.split(b",") if t.strip()}
            continue
        out.append((k, v))
    if named:
        out = [(k, v) for k, v in out if k.lower() not in named]
    return out


def _get(headers: Sequence[tuple[bytes, bytes]], name: bytes) -> bytes | None:
    for k, v in headers:
        if k.lower() == name:
            return v
    return None


def _error_body(request_id: Any, message: str) -> bytes:
    return jsonio.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": PROXY_ERROR_CODE, "message": message}})


def _request_id(body: bytes) -> Any:
    """The id of a single JSON-RPC request in ``body`` (None for a batch, a notification or no JSON)."""
    if not body:
        return None
    try:
        value = jsonio.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(value, dict):
        rid = value.get("id")
        return rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None
    return None


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass(slots=True, eq=False)
class _Flow:
    """The I/O state of one exchange while it is being answered."""

    task: asyncio.Task[Any] | None = None  # the task answering the exchange (cancelled when the client leaves)
    started: bool = False  # the response head was sent to the client
    finished: bool = False  # the last body chunk was sent
    client_gone: bool = False
    shutdown: bool = False
    streaming: bool = False  # the answer is an SSE stream (ended at shutdown; other answers may finish)
    host: str | None = None  # the Host the client used (what an absolute legacy endpoint is pointed at)
    recorded: bool = False  # how it ended is in the record


class RecordingProxy:
    """The ASGI app: forward to ``config.target``'s origin, record through ``recorder``."""

    def __init__(self, config: ProxyConfig, recorder: HttpRecorder, *, interceptor: Interceptor | None = None,
                 warn: Callable[[str], None] | None = None):
        self.config = config
        self.recorder = recorder
        self.interceptor = interceptor
        self._warn = warn
        self._loop: asyncio.AbstractEventLoop | None = None
        self._holds: concurrent.futures.ThreadPoolExecutor | None = None
        #: the target and headers of the client's last POST: where an injected message goes, in its session
        self._last_post: tuple[bytes, list[tuple[bytes, bytes]]] | None = None
        #: legacy HTTP+SSE: the open GET streams by the endpoint path their POSTs go to (where the answer to a
        #: dropped request is sent, as an event between the server's events)
        self._sse_streams: dict[str, _SseOut] = {}
        self._transport: httpx2.AsyncBaseTransport | None = None
        self._urls: dict[bytes, httpx2.URL] = {}
        #: no read timeout: an SSE stream may be silent for minutes; connecting is bounded
        self._timeout = {"connect": config.connect_timeout, "read": None, "write": None, "pool": None}
        self._flows: set[_Flow] = set()
        self._closing = False
        #: which requests are answered; :class:`ProxyServer` names the address it is bound to. ``Host`` is
        #: checked on loopback: a page rebound to the proxy's port must not drive the target through it
        self.policy = RequestPolicy(tuple(config.allow_origins), allow_hosts=tuple(config.allow_hosts))

    # -- lifecycle ----------------------------------------------------------------------------------
    @property
    def transport(self) -> httpx2.AsyncBaseTransport:
        if self._transport is None:
            self._transport = _upstream(self.config)
        return self._transport

    def begin_shutdown(self) -> None:
        """End every open stream cleanly (called on the event loop when the server is stopping)."""
        self._closing = True
        stop_holding = getattr(self.interceptor, "shutdown", None)
        if callable(stop_holding):
            stop_holding()  # held requests go on: the server must not wait on a person to stop
        for flow in list(self._flows):
            if flow.streaming and flow.task is not None and not flow.finished:
                flow.shutdown = True
                flow.task.cancel()

    async def aclose(self) -> None:
        if self._holds is not None:
            self._holds.shutdown(wait=False, cancel_futures=True)
            self._holds = None
        if self._transport is not None:
            await self._transport.aclose()
            self._transport = None

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _later(self, fn: Callable[..., object], *args: Any, **kw: Any) -> None:
        """Record after what was just sent goes out (the batched write is flushed first: FIFO), while
        the peer works on it — recording stays off the round trip's critical path, in the order called."""
        if kw:
            fn = functools.partial(fn, **kw)
        asyncio.get_running_loop().call_soon(fn, *args)

    # -- ASGI ---------------------------------------------------------------------------------------
    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            await send({"type": "websocket.close", "code": 1003})

    async def _http(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        method: str = scope["method"]
        raw_path: bytes = scope.get("raw_path") or scope["path"].encode("utf-8")
        query: bytes = scope.get("query_string") or b""
        target = raw_path + (b"?" + query if query else b"")
        path = target.decode("latin-1")
        headers: list[tuple[bytes, bytes]] = scope["headers"]
        origin = coding = host = None
        hosts = 0
        for k, v in headers:  # one pass for the few request headers the proxy itself looks at
            if k == b"origin":
                origin = v
            elif k == b"content-encoding":
                coding = v
            elif k == b"host":
                host = v
                hosts += 1
        refusal = self.policy.refusal(origin.decode("latin-1") if origin is not None else None,
                                      host.decode("latin-1") if host is not None else None, hosts=hosts)
        if refusal is not None:
            if refusal.status in (421, 400):
                # a rebound name, or several Host headers: answered, never recorded (nothing of it is the
                # user's session)
                word = "Misdirected Request" if refusal.status == 421 else "Bad Request"
                await _answer(send, refusal.status, _error_body(None, f"{word}: {refusal.reason}"))
            else:
                await self._reject_origin(method, path, headers, origin.decode("latin-1") if origin else "", send)
            return
        if raw_path[:1] != b"/":
            # `OPTIONS *` and the like name no path: glued to the target's origin they would make no URL,
            # or one on another host (`@host/...`). The proxy forwards to the target only, so it answers.
            await self._refuse(method, path, headers, send, 400, f"request target {path} is not a path",
                               f"Bad Request: the request target {path!r} is not a path (the mcpreel proxy "
                               "forwards paths to its target only)")
            return

        body = await self._read_body(receive)
        if body is None:
            return  # the client left before it finished sending: nothing reached the target
        marks: dict[str, Any] | None = None
        if self.interceptor is not None and method == "POST":
            self._last_post = (target, headers)
            if body and coding is None and getattr(self.interceptor, "active", True):  # else: not even parsed
                held = await self._intercept(body, headers, receive)
                if held is not None:
                    body, marks, done = await self._carry_out(held, body, method, path, headers, send)
                    if done:
                        return
        ex = self.recorder.open(method, path)
        self._later(self.recorder.request_body, ex, headers, body,
                    decode=body_decoder(coding.decode("latin-1")) if coding else None, marks=marks)

        flow = _Flow(host=host.decode("latin-1") if host else None)
        self._flows.add(flow)
        try:
            await self._exchange(ex, method, target, headers, body, receive, send, flow)
        finally:
            self._flows.discard(flow)

    # -- the intercept ------------------------------------------------------------------------------
    async def _intercept(self, body: bytes, headers: list[tuple[bytes, bytes]],
                         receive: Any) -> tuple[Any, Decision] | None:
        """``(message, decision)`` for a body the interceptor wants (waiting for the decision off the loop),
        or None when it lets the body through untouched. A client that disconnects while its request is
        held has it abandoned (the interceptor's ``abandon``): nothing waits on a person for it."""
        interceptor = self.interceptor
        assert interceptor is not None
        if body.lstrip()[:1] != b"{":
            return None
        try:
            value = jsonio.loads(body)
        except (ValueError, UnicodeDecodeError):
            return None
        if type(value) is not dict or not interceptor.wants("in", value):
            return None
        session = _get(headers, b"mcp-session-id")
        item = Pending("in", value, now_ms(), session.decode("latin-1") if session is not None else None)
        if self._holds is None:
            self._holds = concurrent.futures.ThreadPoolExecutor(64, thread_name_prefix="mcpreel-hold")
        loop = asyncio.get_running_loop()
        deciding = loop.run_in_executor(self._holds, safe_decide, interceptor, item, self._warn)
        watcher = asyncio.ensure_future(receive())  # the body is read: what comes next is the disconnect
        try:
            await asyncio.wait({deciding, watcher}, return_when=asyncio.FIRST_COMPLETED)
            if not deciding.done() and not watcher.cancelled() and watcher.exception() is None \
                    and watcher.result().get("type") == "http.disconnect":
                abandon = getattr(interceptor, "abandon", None)
                if callable(abandon):
                    abandon(item.session, value)
        finally:
            if not watcher.done():
                watcher.cancel()
        decision = await deciding
        return value, decision

    async def _carry_out(self, held: tuple[Any, Decision], body: bytes, method: str, path: str,
                         headers: list[tuple[bytes, bytes]], send: Any) -> tuple[bytes, dict[str, Any], bool]:
        """Do what the decision says: ``(body to forward, marks for its record, answered already)``."""
        value, decision = held
        by = decision.by or None
        for direction, message in decision.inject:
            self._later(self._inject_later, direction, message)
        if decision.action == "edit":
            return jsonio.dumps(decision.message), {"modified": True, "original": value, "decided_by": by}, False
        if decision.action == "forward":
            return body, {"decided_by": by}, False
        # drop or close: nothing reaches the target
        ex = self.recorder.open(method, path)
        marks: dict[str, Any] = {"dropped": True, "decided_by": by}
        if decision.abandoned:
            marks["abandoned"] = True
        self.recorder.request_body(ex, headers, jsonio.dumps(value), marks=marks)
        if decision.action == "close":
            self.recorder.closed(ex, "proxy", f"closed by {by or 'the interceptor'}")
            raise DropConnection(f"closed by {by or 'the interceptor'}")
        answer = drop_answer(value, decision)
        stream = self._sse_streams.get(path) if self.config.transport == "sse" else None
        if answer is None or stream is not None:
            # legacy HTTP+SSE answers on the GET stream: the POST is accepted (202) as the server would
            await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            self.recorder.injected_answer(ex, 202, None, by)
            if answer is not None and stream is not None:
                self.recorder.injected_answer(stream.ex, 200, answer, by, sse=True)
                await stream.inject(b"event: message\r\ndata: " + jsonio.dumps(answer) + b"\r\n\r\n")
        else:
            payload = jsonio.dumps(answer)
            await _answer(send, 200, payload)
            self.recorder.injected_answer(ex, 200, answer, by)
        return b"", {}, True

    def _inject_later(self, direction: str, message: Any) -> None:
        asyncio.ensure_future(self._inject_async(direction, message))

    def inject(self, direction: str, message: Any) -> None:
        """The :class:`~mcpreel.intercept.InjectPort` of the HTTP proxy (thread-safe): POST a client ->
        server message to the target in the client's session; a server -> client one cannot be sent."""
        if direction != "in":
            raise ValueError("over HTTP the proxy can send the client nothing of its own (only client_to_server)")
        loop = self._loop
        if loop is None or self._last_post is None:
            raise ValueError("no client has spoken to the proxy yet: there is no session to send it in")
        fut = asyncio.run_coroutine_threadsafe(self._inject_async(direction, message), loop)
        fut.result(timeout=60)

    async def _inject_async(self, direction: str, message: Any) -> None:
        if direction != "in" or self._last_post is None:
            if self._warn is not None:
                self._warn("intercept: over HTTP only client_to_server messages can be injected")
            return
        target, headers = self._last_post
        body = jsonio.dumps(message)
        ex = self.recorder.open("POST", target.decode("latin-1"))
        self.recorder.request_body(ex, headers, body, marks={"injected": True})
        flow = _Flow()

        async def nowhere(event: dict[str, Any]) -> None:  # the answer is recorded, and goes to no client
            return None

        try:
            await self._forward(ex, "POST", target, headers, body, nowhere, flow)
        except _UpstreamBroken as exc:
            self._later(self.recorder.closed, ex, "upstream", str(exc))

    async def _read_body(self, receive: Any) -> bytes | None:
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            if chunk:
                chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def _reject_origin(self, method: str, path: str, headers: list[tuple[bytes, bytes]], origin: str,
                             send: Any) -> None:
        await self._refuse(method, path, headers, send, 403, f"origin {origin} not allowed",
                           f"Forbidden: Origin {origin} is not allowed by the mcpreel proxy (allow it with --allow-origin)")

    async def _refuse(self, method: str, path: str, headers: list[tuple[bytes, bytes]], send: Any, status: int,
                      reason: str, message: str) -> None:
        """Answer ``status`` with a JSON-RPC error, recorded as a request that never reached the target."""
        self.recorder.rejected(method, path, headers, status, reason)
        await _answer(send, status, _error_body(None, message))

    async def _exchange(self, ex: HttpExchange, method: str, target: bytes, headers: list[tuple[bytes, bytes]],
                        body: bytes, receive: Any, send: Any, flow: _Flow) -> None:
        """Forward one request and its answer; a client that goes away meanwhile cancels it.

        After the request body, the next thing ``receive()`` says is ``http.disconnect``: a watcher waits
        for it and cancels the task answering the exchange. Most exchanges are over in a few milliseconds,
        so the watcher starts only for those still running after :data:`_WATCH_AFTER` (uvicorn remembers a
        disconnect, so a late watcher still sees it at once).
        """
        task = asyncio.current_task()
        assert task is not None
        flow.task = task
        watcher: asyncio.Future[Any] | None = None

        def client_said(fut: asyncio.Future[Any]) -> None:
            if fut.cancelled() or fut.exception() is not None:
                return
            if fut.result().get("type") == "http.disconnect" and not flow.finished:
                flow.client_gone = True
                task.cancel()

        def watch() -> None:
            nonlocal watcher
            if not flow.finished:
                watcher = asyncio.ensure_future(receive())
                watcher.add_done_callback(client_said)

        timer = asyncio.get_running_loop().call_later(_WATCH_AFTER, watch)
        error: str | None = None
        try:
            await self._forward(ex, method, target, headers, body, send, flow)
        except asyncio.CancelledError:
            if not (flow.client_gone or flow.shutdown) or flow.finished:
                if not flow.finished and not flow.recorded:
                    # the server cancelled us (its graceful-shutdown time ran out): say so in the record
                    flow.recorded = True
                    self._later(self.recorder.closed, ex, "shutdown")
                raise
            task.uncancel()
        except _UpstreamBroken as exc:
            error = str(exc)
        finally:
            timer.cancel()
            if watcher is not None and not watcher.done():
                watcher.remove_done_callback(client_said)
                watcher.cancel()
        if flow.finished:
            return
        flow.recorded = True
        if flow.client_gone:
            self._later(self.recorder.closed, ex, "client")
        elif flow.shutdown:
            self._later(self.recorder.closed, ex, "shutdown")
            with contextlib.suppress(Exception):
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        elif error is not None:
            self._later(self.recorder.closed, ex, "upstream", error)
            # the target broke the answer: break the client's too, so it does not take a cut body for whole
            raise DropConnection(error)

    async def _forward(self, ex: HttpExchange, method: str, target: bytes, headers: list[tuple[bytes, bytes]],
                       body: bytes, send: Any, flow: _Flow) -> None:
        url = self._urls.get(target)
        if url is None:
            url = httpx2.URL(self.config.origin + target.decode("latin-1"))
            if len(self._urls) < 1024:  # the same few paths come again and again; parsing one costs ~10 µs
                self._urls[target] = url
        request = httpx2.Request(method, url, headers=_filter(headers, _REQUEST_DROP), content=body or None,
                                 extensions={"timeout": self._timeout})
        try:
            response = await self.transport.handle_async_request(request)
        except httpx2.HTTPError as exc:
            reason = _describe(exc)
            message = f"mcpreel proxy: the target {self.config.shown_target} is unreachable ({reason})"
            payload = _error_body(_request_id(body), message)
            await send({"type": "http.response.start", "status": 502,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(payload)).encode())]})
            await send({"type": "http.response.body", "body": payload})
            flow.finished = True
            self._later(self.recorder.unreachable, ex, 502, reason, payload)
            return
        try:
            await self._relay(ex, method, response, send, flow)
        finally:
            await response.aclose()  # unread, the upstream connection is closed: the target sees the client leave

    async def _relay(self, ex: HttpExchange, method: str, response: httpx2.Response, send: Any, flow: _Flow) -> None:
        raw_headers = response.headers.raw
        content_type = (_get(raw_headers, b"content-type") or b"").lower()
        coding = _get(raw_headers, b"content-encoding")
        decode = body_decoder(coding.decode("latin-1") if coding else None)
        is_sse = content_type.startswith(b"text/event-stream")
        flow.streaming = is_sse
        if is_sse and self._closing:  # a stream that opens while the proxy stops ends with its head
            flow.shutdown = True
            asyncio.current_task().cancel()  # type: ignore[union-attr]
        start = {"type": "http.response.start", "status": response.status_code,
                 "headers": _filter(raw_headers, _RESPONSE_DROP)}
        if is_sse:
            # a stream's head goes out at once: the first event may be minutes away
            await send(start)
            flow.started = True
            self._later(self.recorder.response_head, ex, response.status_code, raw_headers, sse=True)
            await self._relay_sse(ex, method, response, send, decode, coding, flow)
        else:
            # any other answer's head goes out with its first bytes, in one segment (see http_wire)
            copy = bytearray()
            async for chunk in self._chunks(response):
                if not flow.started:
                    await send(start)
                    flow.started = True
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                copy += chunk
            if not flow.started:
                await send(start)
                flow.started = True
            flow.finished = True  # before the last send: the client watcher wakes when it completes
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            self._later(self.recorder.response_head, ex, response.status_code, raw_headers, sse=False)
            undecodable = f"content-encoding {coding.decode('latin-1')}" if decode is None and coding else None
            self._later(self.recorder.response_body, ex, bytes(copy), decode=decode, undecodable=undecodable)
            return
        flow.finished = True
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        self._later(self.recorder.stream_end, ex)

    async def _chunks(self, response: httpx2.Response) -> Any:
        """The target's body as it arrives; a broken stream becomes :class:`_UpstreamBroken`."""
        try:
            async for chunk in response.aiter_raw():
                if chunk:
                    yield chunk
        except httpx2.HTTPError as exc:
            raise _UpstreamBroken(_describe(exc)) from exc

    async def _relay_sse(self, ex: HttpExchange, method: str, response: httpx2.Response, send: Any,
                         decode: Callable[[bytes], bytes] | None, coding: bytes | None, flow: _Flow) -> None:
        copy = _StreamCopy(self.recorder, ex, decode)
        # the legacy transport's GET stream opens with the `endpoint` event, which may need rewriting:
        # hold the stream's first bytes back until its first event is complete
        hold: bytearray | None = bytearray() if (self.config.transport == "sse" and method == "GET"
                                                 and coding is None) else None
        out: _SseOut | None = None
        endpoint: str | None = None
        try:
            async for chunk in self._chunks(response):
                if hold is None:
                    if out is None:
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    else:
                        await out.relay(chunk)
                    self._later(copy.feed, chunk)
                    continue
                hold += chunk
                first = copy.first_event(chunk)
                if first is not None:
                    ev, forwarded = first
                    if forwarded is None and ev.event == "endpoint":
                        forwarded = self._rewrite_endpoint(ev.data, flow.host)
                        if forwarded != ev.data:
                            new_raw = ev.raw.replace(ev.data.encode("utf-8"), forwarded.encode("utf-8"), 1)
                            hold = bytearray(bytes(hold).replace(ev.raw, new_raw, 1))
                        if self.interceptor is not None:
                            parts = urlsplit(forwarded.strip())
                            endpoint = parts.path + ("?" + parts.query if parts.query else "")
                            out = self._sse_streams[endpoint] = _SseOut(send, ex)
                    copy.forwarded = forwarded
                if first is not None or len(hold) > _ENDPOINT_HOLD_LIMIT:
                    data = bytes(hold)
                    if out is None:
                        await send({"type": "http.response.body", "body": data, "more_body": True})
                    else:
                        await out.relay(data)
                    hold = None
                    self._later(copy.flush_held)
            if hold:
                await send({"type": "http.response.body", "body": bytes(hold), "more_body": True})
                self._later(copy.flush_held)
        finally:
            if endpoint is not None and self._sse_streams.get(endpoint) is out:
                del self._sse_streams[endpoint]

    @staticmethod
    def _rewrite_endpoint(uri: str, host: str | None) -> str:
        """Point an absolute ``endpoint`` URI at the proxy; a relative one already resolves against it."""
        parts = urlsplit(uri.strip())
        if not parts.scheme or not parts.netloc or not host:
            return uri
        return urlunsplit(("http", host, parts.path, parts.query, parts.fragment))


class _SseOut:
    """A legacy GET stream the proxy may add events to (an intercept's answer to a dropped request).

    The server's bytes go on chunk by chunk and a chunk may end inside an event, so an event of the proxy's
    own is sent only where the stream stands between events (after a blank line); otherwise it waits for
    the next boundary the server's bytes reach.
    """

    __slots__ = ("busy", "ex", "pending", "send", "tail")

    def __init__(self, send: Any, ex: HttpExchange):
        self.send = send
        self.ex = ex
        self.tail = b"\n\n"
        self.pending: list[bytes] = []
        self.busy = False  # a chunk of the server's is being sent: the stream's position is in flux

    def _at_boundary(self) -> bool:
        t = self.tail.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        return t.endswith(b"\n\n")

    async def relay(self, chunk: bytes) -> None:
        self.tail = (self.tail + chunk)[-4:]
        self.busy = True
        try:
            await self.send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            self.busy = False
        if self.pending and self._at_boundary():
            events, self.pending = self.pending, []
            await self.send({"type": "http.response.body", "body": b"".join(events), "more_body": True})

    async def inject(self, event: bytes) -> None:
        if not self.busy and not self.pending and self._at_boundary():
            await self.send({"type": "http.response.body", "body": event, "more_body": True})
        else:
            self.pending.append(event)


class _StreamCopy:
    """The recorded copy of one SSE stream: decoded and parsed apart from the forwarded bytes.

    While the legacy ``endpoint`` is awaited, events are parsed at once (:meth:`first_event`) and their
    records held back until the bytes went out (:meth:`flush_held`); afterwards each chunk is parsed and
    recorded after it was forwarded (:meth:`feed`, called later). A coding that cannot be decoded stops
    the record of the stream, never the stream.
    """

    __slots__ = ("recorder", "ex", "decode", "parser", "held", "forwarded")

    def __init__(self, recorder: HttpRecorder, ex: HttpExchange, decode: Callable[[bytes], bytes] | None):
        self.recorder = recorder
        self.ex = ex
        self.decode = decode
        self.parser = SSEParser()
        self.held: list[Any] = []
        self.forwarded: str | None = None

    def first_event(self, chunk: bytes) -> tuple[Any, str | None] | None:
        """Parse a held chunk (no coding here); the first real event, once it is complete."""
        first = None
        for ev in self.parser.feed(chunk):
            if first is None and ev.comment is None and not any(e.comment is None for e in self.held):
                first = (ev, None)
            self.held.append(ev)
        return first

    def flush_held(self) -> None:
        held, self.held = self.held, []
        for ev in held:
            is_first = ev.comment is None and ev.event == "endpoint" and self.forwarded is not None
            self.recorder.sse_event(self.ex, ev, forwarded=self.forwarded if is_first else None)
            if is_first:
                self.forwarded = None

    def feed(self, chunk: bytes) -> None:
        if self.decode is None:
            return
        try:
            data = self.decode(chunk)
        except zlib.error as exc:
            self.decode = None
            self.recorder.unrecordable(self.ex, f"content-encoding not decodable: {exc}")
            return
        for ev in self.parser.feed(data):
            self.recorder.sse_event(self.ex, ev)


async def _answer(send: Any, status: int, body: bytes) -> None:
    """Send a whole JSON answer of the proxy's own."""
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class _UpstreamBroken(Exception):
    """The target's answer broke off (reset, malformed chunk) after it began."""


# -- serving ----------------------------------------------------------------------------------------


class ProxyServer:
    """Serves a :class:`RecordingProxy` on ``host:port`` (bound at construction, so errors come early)."""

    def __init__(self, proxy: RecordingProxy, host: str = "127.0.0.1", port: int = 0):
        self.proxy = proxy
        proxy.policy = RequestPolicy(tuple(proxy.config.allow_origins), host,
                                     allow_hosts=tuple(proxy.config.allow_hosts))
        self._server = Server(proxy, host, port, on_shutdown=proxy.begin_shutdown, limits=proxy.config.limits)
        self.host = host
        self.port: int = self._server.port

    @property
    def url(self) -> str:
        """The proxy URL for the target's own path (what a client is pointed at, secrets and all)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.proxy.config.target_path}"

    @property
    def shown_url(self) -> str:
        """:attr:`url` as written or printed: its secret query parameters redacted unless ``keep_secrets``."""
        return self.url if self.proxy.config.keep_secrets else redact_url(self.url)

    @property
    def signal(self) -> int | None:
        """The signal that stopped the server (None when :meth:`stop` did)."""
        return self._server.signal

    def run(self, *, ready: Callable[[str], object] | None = None, handle_signals: bool = True) -> None:
        """Serve until SIGINT/SIGTERM/SIGHUP (main thread, ``handle_signals``) or :meth:`stop`."""

        async def main() -> None:
            try:
                await self._server.serve(ready=None if ready is None else lambda h, p: ready(self.url),
                                         handle_signals=handle_signals)
            finally:
                await self.proxy.aclose()

        run(main())

    def close(self) -> None:
        """Release the listening socket of a server that will not :meth:`run`."""
        self._server.close()

    def stop(self) -> None:
        """Ask the server to stop (thread-safe); :meth:`run` returns once streams are closed."""
        self._server.stop()
