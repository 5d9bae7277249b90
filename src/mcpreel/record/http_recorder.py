"""The recording core of the HTTP proxy, sans-io: HTTP events in, session records out.

The proxy (:mod:`mcpreel.record.http_proxy`) does the I/O and forwards bytes untouched; it tells this core what
crossed the wire — a request with its body, a response head, a response body, an SSE event, a stream that
closed — and the core turns each into :class:`~mcpreel.model.Message` records handed to ``emit`` (in the
recorder: :meth:`ReelWriter.write`). Nothing here opens a socket, so the rules are tested with scripted
event lists (mitmproxy's layering).

What one HTTP exchange becomes (``exchange`` = a number per HTTP request, ``stream`` = the exchange whose
response is an SSE stream):

- the request: its JSON-RPC message (or batch) ``dir:"in"`` with ``ctx`` {method, path, headers,
  exchange}; a body that is not JSON an ``invalid`` record; no body (GET, DELETE) a ``transport`` record;
- a JSON response: its message(s) ``dir:"out"`` with {method, path, status, headers, exchange};
- an SSE response: a ``transport`` record for the stream's head (status, headers — where an
  ``initialize`` answer's ``Mcp-Session-Id`` lives), then one record per event: ``message`` events carrying
  JSON-RPC as messages with {exchange, stream, sse: {event, id}}; the legacy ``endpoint`` event, a priming
  event, keep-alive comments as ``transport`` records with their ``data``;
- any other answer (a 202, a 401 with its ``WWW-Authenticate`` challenge, a 405, an HTML error page) one
  ``transport`` record with status and headers, and the body as ``data`` (a JSON object, which the envelope
  writer turns into a ``response`` entry, so a 401 reaches the K2-A summary) or ``body`` (text);
- a stream that ends otherwise than by its server finishing it (client gone, upstream broken, proxy
  stopping) a ``transport`` record saying ``closed`` and which requests were still unanswered.

Correlation is by (direction of the request, id), both sides having their own id space, and by
exchange: that is how a client disconnect names the calls it cancelled.

Headers are recorded as they came, with secrets redacted (:func:`mcpreel.redact.is_secret_header`), and
request paths with their secret query parameters redacted (:func:`mcpreel.redact.urls.redact_url`), unless
``keep_secrets``. What is recorded never changes what is forwarded.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.correlation import correlation_key
from mcpreel._infra.sse import SSEEvent
from mcpreel._infra.timeutil import now_ms
from mcpreel.model import Kind, Message
from mcpreel.redact import MARKER, is_secret_header
from mcpreel.redact.urls import redact_url

__all__ = ["HttpExchange", "HttpRecorder", "RecorderStats", "body_decoder", "looks_jsonrpc"]

#: the longest non-JSON body kept as text in a transport record (an HTML error page, say)
MAX_TEXT_BODY = 1 << 20

Emit = Callable[[Message], object]


def looks_jsonrpc(value: Any) -> bool:
    """A JSON-RPC message or batch: an object with ``jsonrpc``, or a non-empty array of such objects.

    Stricter than "has an ``error`` member" on purpose: an OAuth error body (``{"error":"invalid_token"}``)
    is not JSON-RPC and is kept as a 401's transport ``data``.
    """
    if isinstance(value, dict):
        return "jsonrpc" in value
    if isinstance(value, list):
        return bool(value) and all(isinstance(m, dict) and "jsonrpc" in m for m in value)
    return False


def _zlib_decoder() -> Callable[[bytes], bytes]:
    # 47 = 32 + 15: accept a gzip or a zlib header; fall back to raw deflate (some servers send it)
    state: dict[str, Any] = {"d": zlib.decompressobj(47), "raw": False}

    def feed(chunk: bytes) -> bytes:
        try:
            return state["d"].decompress(chunk)
        except zlib.error:
            if state["raw"]:
                raise
            state["d"], state["raw"] = zlib.decompressobj(-15), True
            return state["d"].decompress(chunk)

    return feed


def body_decoder(content_encoding: str | None) -> Callable[[bytes], bytes] | None:
    """A decoder for the recorded copy of a body (``None`` when the coding is unknown here).

    The proxy forwards the coded bytes as they came; only the copy it parses is decoded.
    """
    coding = (content_encoding or "").strip().lower()
    if coding in ("", "identity"):
        return lambda chunk: chunk
    if coding in ("gzip", "x-gzip", "deflate"):
        return _zlib_decoder()
    return None


@dataclass(slots=True)
class HttpExchange:
    """One HTTP request and its answer, as far as the recording is concerned."""

    id: int
    method: str
    path: str
    t: int
    request_headers: dict[str, str]
    status: int | None = None
    response_headers: dict[str, str] | None = None
    sse: bool = False
    request_ids: list[Any] = field(default_factory=list)  # the ids of the requests it carried (client -> server)
    events: int = 0
    done: bool = False



def _decoded(body: bytes, decode: Callable[[bytes], bytes] | None) -> tuple[bytes, str | None]:
    """The body with its content-encoding undone, or as it came and why it could not be."""
    if decode is None:
        return body, None
    try:
        return decode(body), None
    except zlib.error as exc:
        return body, f"content-encoding not decodable: {exc}"

@dataclass(slots=True)
class RecorderStats:
    exchanges: int = 0
    messages_in: int = 0
    messages_out: int = 0
    requests: int = 0
    answered: int = 0
    invalid: int = 0
    transport: int = 0
    statuses: dict[int, int] = field(default_factory=dict)

    @property
    def messages(self) -> int:
        return self.messages_in + self.messages_out


#: header name -> is it a secret (decided once per name: the same dozen names come on every request)
_SECRET: dict[bytes, bool] = {}


def _header_dict(raw: Iterable[tuple[bytes, bytes]], redact: bool) -> dict[str, str]:
    """Header pairs -> a dict (names as they came; repeated names joined by ``, ``), secrets redacted."""
    out: dict[str, str] = {}
    for k, v in raw:
        name = k.decode("latin-1")
        if redact:
            secret = _SECRET.get(k)
            if secret is None:
                secret = is_secret_header(name)
                if len(_SECRET) < 4096:  # bounded: a client inventing header names cannot grow it
                    _SECRET[k] = secret
            value = MARKER if secret else v.decode("latin-1")
        else:
            value = v.decode("latin-1")
        if name in out:
            out[name] = f"{out[name]}, {value}"
        else:
            out[name] = value
    return out


def _mark(msg: Message, marks: dict[str, Any]) -> None:
    msg.modified = marks.get("modified") is True
    if msg.modified:
        msg.original = marks.get("original")
    msg.dropped = marks.get("dropped") is True
    msg.injected = marks.get("injected") is True
    by = marks.get("decided_by")
    msg.decided_by = by if isinstance(by, str) and by else None
    if marks.get("abandoned") is True:  # the client went away while it was held (record.intercept)
        msg.extra = {**(msg.extra or {}), "abandoned": True}


def header(headers: dict[str, str] | None, name: str) -> str | None:
    """A header's value, case-insensitively."""
    if not headers:
        return None
    low = name.lower()
    for k, v in headers.items():
        if k.lower() == low:
            return v
    return None


class HttpRecorder:
    """Turns the proxy's HTTP events into session records (see the module docstring)."""

    def __init__(self, emit: Emit, *, keep_secrets: bool = False, clock: Callable[[], int] = now_ms):
        self._emit = emit
        self._keep_secrets = keep_secrets
        self._clock = clock
        self._next = 0
        self._pending: dict[tuple[str, Hashable], int] = {}  # (dir of the request, id key) -> exchange
        self.stats = RecorderStats()
        #: the last ``MCP-Protocol-Version`` / ``Mcp-Session-Id`` seen (the envelope's session context)
        self.session_headers: dict[str, str] = {}

    # -- helpers ------------------------------------------------------------------------------------
    def _headers(self, raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
        return _header_dict(raw, not self._keep_secrets)

    def _path(self, path: str) -> str:
        """The request target as recorded: its secret query parameters redacted (not forwarded so)."""
        return path if self._keep_secrets else redact_url(path)

    def _out(self, msg: Message) -> None:
        if msg.kind == Kind.MESSAGE:
            if msg.dir == "in":
                self.stats.messages_in += 1
            else:
                self.stats.messages_out += 1
            self._correlate(msg)
        elif msg.kind == Kind.INVALID:
            self.stats.invalid += 1
        elif msg.kind == Kind.TRANSPORT:
            self.stats.transport += 1
        self._emit(msg)

    def _correlate(self, msg: Message) -> None:
        ex = (msg.ctx or {}).get("exchange")
        for m in msg.members():
            mid = correlation_key(m.get("id"))
            if mid is None:
                continue
            key = (msg.dir or "in", mid)
            if "method" in m:
                self.stats.requests += 1
                self._pending[key] = ex if isinstance(ex, int) else 0
            elif "result" in m or "error" in m:
                asked = ("out" if msg.dir == "in" else "in", mid)
                if self._pending.pop(asked, None) is not None:
                    self.stats.answered += 1

    def _note_session_headers(self, headers: dict[str, str]) -> None:
        for canonical in ("MCP-Protocol-Version", "Mcp-Session-Id"):
            v = header(headers, canonical)
            if v is not None:
                self.session_headers[canonical] = v

    def _body_records(self, direction: str, body: bytes, ctx: dict[str, Any], t: int) -> list[Message]:
        """A body -> records: JSON-RPC as a message, other JSON as ``data``, text as ``body``."""
        try:
            value = jsonio.loads(body)
        except (ValueError, UnicodeDecodeError):
            text = body.decode("utf-8", "replace")
            if direction == "in" or "json" in (header(ctx.get("headers"), "content-type") or ""):
                return [Message(direction, None, t, kind=Kind.INVALID, text=text, ctx=ctx)]
            ctx = dict(ctx)
            if len(text) > MAX_TEXT_BODY:
                ctx["body_truncated"] = len(text)
                text = text[:MAX_TEXT_BODY]
            ctx["body"] = text
            return [Message(direction, None, t, kind=Kind.TRANSPORT, ctx=ctx)]
        if direction == "in" or looks_jsonrpc(value):
            return [Message(direction, value, t, ctx=ctx)]
        ctx = dict(ctx)
        if isinstance(value, dict):
            ctx["data"] = value
        else:
            ctx["body"] = body.decode("utf-8", "replace")
        return [Message(direction, None, t, kind=Kind.TRANSPORT, ctx=ctx)]

    # -- events -------------------------------------------------------------------------------------
    def request(self, method: str, path: str, headers: Iterable[tuple[bytes, bytes]], body: bytes | None,
                *, decode: Callable[[bytes], bytes] | None = None) -> HttpExchange:
        """A client's HTTP request arrived whole: record what it carried; returns its exchange."""
        ex = self.open(method, path)
        self.request_body(ex, headers, body, decode=decode)
        return ex

    def open(self, method: str, path: str) -> HttpExchange:
        """A new exchange, numbered and timed now (its request is recorded by :meth:`request_body`).

        Split from the recording so the proxy can forward first and record while the target works.
        """
        self._next += 1
        self.stats.exchanges += 1
        return HttpExchange(self._next, method, self._path(path), self._clock(), {})

    def request_body(self, ex: HttpExchange, headers: Iterable[tuple[bytes, bytes]], body: bytes | None,
                     *, decode: Callable[[bytes], bytes] | None = None, marks: dict[str, Any] | None = None) -> None:
        """Record the request of ``ex``: its JSON-RPC message(s), or a transport record when it had no body.

        ``marks`` are an intercept's fields for the message record (``modified``/``original``, ``dropped``,
        ``injected``, ``decided_by``; :mod:`mcpreel.intercept`)."""
        t = ex.t
        hdrs = ex.request_headers = self._headers(headers)
        method, path = ex.method, ex.path
        self._note_session_headers(hdrs)
        ctx: dict[str, Any] = {"method": method, "path": path, "headers": hdrs, "exchange": ex.id}
        if not body:
            self._out(Message("in", None, t, kind=Kind.TRANSPORT, ctx=ctx))
            return
        body, why = _decoded(body, decode)
        if why:
            ctx["undecoded"] = why
        for msg in self._body_records("in", body, ctx, t):
            for m in msg.members():
                if "method" in m and correlation_key(m.get("id")) is not None:
                    ex.request_ids.append(m["id"])
            if marks and msg.kind == Kind.MESSAGE:
                _mark(msg, marks)
            self._out(msg)

    def injected_answer(self, ex: HttpExchange, status: int, message: Any, decided_by: str | None, *,
                        sse: bool = False) -> None:
        """The proxy answered ``ex`` itself (a dropped request's JSON-RPC error, or a 202): recorded as an
        injected server -> client message (or a transport record for the 202). ``sse``: the message went
        as an event of ``ex``'s open stream (legacy HTTP+SSE), not as its answer."""
        if sse:
            ctx: dict[str, Any] = {"method": ex.method, "path": ex.path, "exchange": ex.id, "stream": ex.id,
                                   "sse": {"event": "message"}}
            self._out(Message("out", message, self._clock(), ctx=ctx, injected=True, decided_by=decided_by))
            return
        ex.done = True
        ex.status = status
        self.stats.statuses[status] = self.stats.statuses.get(status, 0) + 1
        ctx = {"method": ex.method, "path": ex.path, "status": status, "headers": {}, "exchange": ex.id}
        if message is None:
            self._out(Message("out", None, self._clock(), kind=Kind.TRANSPORT, ctx=ctx))
            return
        self._out(Message("out", message, self._clock(), ctx=ctx, injected=True, decided_by=decided_by))

    def rejected(self, method: str, path: str, headers: Iterable[tuple[bytes, bytes]], status: int,
                 reason: str) -> None:
        """A request the proxy refused itself (a foreign ``Origin``): it never reached the target."""
        self._next += 1
        hdrs = self._headers(headers)
        self.stats.exchanges += 1
        self.stats.statuses[status] = self.stats.statuses.get(status, 0) + 1
        ctx = {"method": method, "path": self._path(path), "headers": hdrs, "exchange": self._next,
               "status": status, "proxy": reason}
        self._out(Message("in", None, self._clock(), kind=Kind.TRANSPORT, ctx=ctx))

    def response_head(self, ex: HttpExchange, status: int, headers: Iterable[tuple[bytes, bytes]], *, sse: bool) -> None:
        """The target's answer began. An SSE stream is recorded now (it may stay open for hours)."""
        ex.status = status
        ex.sse = sse
        ex.response_headers = self._headers(headers)
        self.stats.statuses[status] = self.stats.statuses.get(status, 0) + 1
        self._note_session_headers(ex.response_headers)
        if sse:
            ctx = {"method": ex.method, "path": ex.path, "status": status, "headers": ex.response_headers,
                   "exchange": ex.id, "stream": ex.id}
            self._out(Message("out", None, self._clock(), kind=Kind.TRANSPORT, ctx=ctx))

    def response_body(self, ex: HttpExchange, body: bytes, *, decode: Callable[[bytes], bytes] | None = None,
                      undecodable: str | None = None) -> None:
        """A non-SSE answer's whole body arrived (the bytes were already forwarded)."""
        ex.done = True
        t = self._clock()
        ctx: dict[str, Any] = {"method": ex.method, "path": ex.path, "status": ex.status,
                               "headers": ex.response_headers or {}, "exchange": ex.id}
        if undecodable:
            ctx["undecoded"] = undecodable
            ctx["body_bytes"] = len(body)
            self._out(Message("out", None, t, kind=Kind.TRANSPORT, ctx=ctx))
            return
        body, why = _decoded(body, decode)
        if why:
            ctx["undecoded"] = why
            ctx["body_bytes"] = len(body)
            self._out(Message("out", None, t, kind=Kind.TRANSPORT, ctx=ctx))
            return
        if not body.strip():
            self._out(Message("out", None, t, kind=Kind.TRANSPORT, ctx=ctx))
            return
        for msg in self._body_records("out", body, ctx, t):
            self._out(msg)

    def sse_event(self, ex: HttpExchange, ev: SSEEvent, *, forwarded: str | None = None) -> None:
        """One SSE event (or comment line) of ``ex``'s stream was forwarded.

        ``forwarded`` is the data the client got when the proxy rewrote it (the legacy ``endpoint``).
        """
        ex.events += 1
        t = self._clock()
        sse: dict[str, Any]
        if ev.comment is not None:
            sse = {"comment": ev.comment}
            ctx = {"exchange": ex.id, "stream": ex.id, "sse": sse, "data": ""}
            self._out(Message("out", None, t, kind=Kind.TRANSPORT, ctx=ctx))
            return
        sse = {"event": ev.event}
        if ev.id is not None:
            sse["id"] = ev.id
        if ev.retry is not None:
            sse["retry"] = ev.retry
        ctx = {"exchange": ex.id, "stream": ex.id, "sse": sse}
        if ev.event == "message" and ev.data.strip():
            try:
                value = jsonio.loads(ev.data)
            except (ValueError, UnicodeDecodeError):
                self._out(Message("out", None, t, kind=Kind.INVALID, text=ev.data, ctx=ctx))
                return
            if isinstance(value, (dict, list)):
                self._out(Message("out", value, t, ctx=ctx))
                return
        ctx["data"] = ev.data
        if forwarded is not None and forwarded != ev.data:
            ctx["forwarded"] = forwarded
        self._out(Message("out", None, t, kind=Kind.TRANSPORT, ctx=ctx))

    def closed(self, ex: HttpExchange, how: str, error: str | None = None) -> None:
        """``ex``'s answer ended otherwise than by its server finishing it.

        ``how``: ``client`` (the client went away: the proxy closed the upstream request, which is how a
        2026-era client cancels), ``upstream`` (the target broke the stream), ``shutdown`` (the proxy is
        stopping).
        """
        ex.done = True
        ctx: dict[str, Any] = {"method": ex.method, "path": ex.path, "exchange": ex.id, "closed": how}
        if ex.sse:
            ctx["stream"] = ex.id
        if ex.status is not None:
            ctx["status"] = ex.status
        if error:
            ctx["error"] = error
        pending = [str(rid) for rid in ex.request_ids if ("in", correlation_key(rid)) in self._pending]
        if pending:
            ctx["unanswered"] = pending
        self._out(Message("in" if how == "client" else "out", None, self._clock(), kind=Kind.TRANSPORT, ctx=ctx))

    def unrecordable(self, ex: HttpExchange, reason: str) -> None:
        """The rest of ``ex``'s stream goes on to the client but cannot be parsed for the record."""
        ctx = {"exchange": ex.id, "stream": ex.id, "undecoded": reason}
        self._out(Message("out", None, self._clock(), kind=Kind.TRANSPORT, ctx=ctx))

    def stream_end(self, ex: HttpExchange) -> None:
        """A GET stream ended normally (POST streams end with their answer and need no record)."""
        ex.done = True
        if ex.method == "GET":
            ctx = {"method": ex.method, "path": ex.path, "exchange": ex.id, "stream": ex.id, "closed": "server"}
            self._out(Message("out", None, self._clock(), kind=Kind.TRANSPORT, ctx=ctx))

    def unreachable(self, ex: HttpExchange, status: int, error: str, body: bytes) -> None:
        """The target could not be reached; the proxy answered ``status`` itself with ``body``."""
        ex.done = True
        ex.status = status
        self.stats.statuses[status] = self.stats.statuses.get(status, 0) + 1
        ctx = {"method": ex.method, "path": ex.path, "status": status, "exchange": ex.id, "proxy": "unreachable",
               "error": error, "body": body.decode("utf-8", "replace")}
        self._out(Message("out", None, self._clock(), kind=Kind.TRANSPORT, ctx=ctx))

    @property
    def unanswered(self) -> int:
        return len(self._pending)
