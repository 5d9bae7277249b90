"""HAR 1.2 (write), for tools that already open HAR: browsers' devtools, mitmproxy, Charles.

HTTP sessions: one entry per HTTP exchange. Records that carry ``ctx["exchange"]`` (the recorder's
exchange id) are grouped by it; otherwise a client message opens an exchange, its response (as the one
reading pairs it: :class:`~mcpreel.operations.walk.Walker`, within its client session, a reused pending id
first in, first out) and the SSE events that arrive while it is open join it, and server messages with
nothing open go to one ``GET`` stream entry. An SSE answer is written as the
``text/event-stream`` body it was, one event per message.

stdio sessions: one entry per request/response pair (paired by the same walk; a notification: one entry, status 204) against the
synthetic URL ``stdio://<command>``; a server's request (sampling, roots, elicitation) is an entry too,
its ``_mcp.direction`` saying which way it went.

MCP facts ride in fields starting with ``_`` (HAR's rule for custom fields): per entry ``_mcp``
(direction, method, id, tool, error, isError, the records' ``seq``, ``modified`` with the ``original``,
``dropped``), per log ``_mcp`` (session id, transport, command, URL, stderr lines, invalid frames).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from typing import Any, BinaryIO
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

from mcpreel._infra import jsonio
from mcpreel._infra.correlation import correlation_key
from mcpreel._infra.jsonstream import SortedSpool, marker, write_document
from mcpreel._infra.nesting import cut_repr
from mcpreel._infra.sse import encode_event
from mcpreel._infra.timeutil import iso_from_ms
from mcpreel._version import __version__
from mcpreel.drafts import H2_PROTOCOL, STDIO_V2_AUTHORITY, STDIO_V2_PATH, STDIO_V2_TRANSPORT
from mcpreel.model import Kind, Message, Session
from mcpreel.operations.walk import Step, Walker

NAME = "har"
LOSSES = "other producers' lines"
KEEPS = frozenset({"time", "direction", "ctx", "edits", "drops", "stderr", "invalid", "transport", "header"})

_REASONS = {0: "", 200: "OK", 202: "Accepted", 204: "No Content", 400: "Bad Request", 401: "Unauthorized",
            403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable", 409: "Conflict",
            415: "Unsupported Media Type", 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}
_SYNTHETIC_BASE = "http://mcp.invalid/mcp"


class _Exchange:
    __slots__ = ("requests", "responses", "transport", "stream", "answer", "waiting")

    def __init__(self, stream: bool = False):
        self.waiting = 0  # ids of its request still waiting for an answer (stdio streaming: done at 0)
        self.requests: list[Message] = []
        self.responses: list[Message] = []
        self.transport: list[Message] = []
        self.stream = stream
        self.answer: Message | None = None  # the record holding the response to this exchange's request

    def _all(self) -> tuple[Message, ...]:
        return (*self.requests, *self.responses, *self.transport)

    def span(self) -> tuple[int | None, int | None]:
        """The first and the last time of its records (None when none has one)."""
        first = last = None
        for group in (self.requests, self.responses, self.transport):
            for m in group:
                t = m.t
                if t is not None:
                    if first is None or t < first:
                        first = t
                    if last is None or t > last:
                        last = t
        return first, last



def _content_type(ctx: Any) -> str | None:
    """The ``Content-Type`` a recorded request or answer came with (None when it names none)."""
    headers = ctx.get("headers") if isinstance(ctx, dict) else None
    if not isinstance(headers, dict):
        return None
    value = next((v for k, v in headers.items() if str(k).lower() == "content-type"), None)
    return value if isinstance(value, str) and value.strip() else None

def _headers(value: Any) -> list[dict[str, str]]:
    if not isinstance(value, dict):
        return []
    out: list[dict[str, str]] = []
    for k, v in value.items():
        if isinstance(v, list):
            out.extend({"name": str(k), "value": str(x)} for x in v)
        else:
            out.append({"name": str(k), "value": v if isinstance(v, str) else jsonio.dumps_str(v)})
    return out


def _status(msgs: list[Message]) -> int | None:
    for m in msgs:
        if m.ctx and type(m.ctx.get("status")) is int:
            return m.ctx["status"]
    return None


def _members(msg: Message) -> Sequence[dict[str, Any]]:
    """``msg.members()``, without making a list for the common record: one JSON-RPC object."""
    raw = msg.raw
    if type(raw) is dict and msg.kind == Kind.MESSAGE:
        return (raw,)
    return msg.members()


def _hold(held: dict[int, _Exchange], ex: _Exchange, steps: list[Step]) -> bool:
    """``ex`` waits for the answers to the requests the walk saw in its record (``held``: walk exchange
    number -> the entry's exchange); False when none can be answered (no request, or an id that pairs
    with nothing)."""
    registered = False
    for step in steps:
        if step.kind == "request":
            asked = step.exchange
            assert asked is not None
            rid = asked.id
            if type(rid) is int or type(rid) is str or correlation_key(rid) is not None:
                held[asked.n] = ex
                ex.waiting += 1
                registered = True
    return registered


def _take(held: dict[int, _Exchange], msg: Message, steps: list[Step],
          touched: list[_Exchange] | None = None) -> _Exchange | None:
    """The entry's exchange the first answer in ``msg`` belongs to, as the walk paired it (None when its
    answers answer no request an entry holds)."""
    found = None
    for step in steps:
        if step.kind == "response":
            asked = step.exchange
            ex = held.pop(asked.n, None) if asked is not None else None
            if ex is not None:
                ex.waiting -= 1
                if touched is not None:
                    touched.append(ex)
                if ex.answer is None:
                    ex.answer = msg
                found = found or ex
    return found


def _group_http(records: list[Message], legacy: bool) -> list[_Exchange]:
    """HTTP exchanges: by the recorder's exchange id where there is one, else rebuilt (see the module)."""
    exchanges: list[_Exchange] = []
    by_key: dict[Any, _Exchange] = {}
    walk = Walker(pairing_only=True).feed
    held: dict[int, _Exchange] = {}  # walk exchange number -> the entry waiting for its answer
    open_list: list[_Exchange] = []
    stream: _Exchange | None = None

    def get_stream() -> _Exchange:
        nonlocal stream
        if stream is None:
            stream = _Exchange(stream=True)
            exchanges.append(stream)
        return stream

    for index, msg in enumerate(records):
        steps = walk(index, msg)
        key = msg.ctx.get("exchange") if msg.ctx else None
        if key is not None and not isinstance(key, (dict, list)):
            ex = by_key.get(key)
            if ex is None:
                ex = by_key[key] = _Exchange()
                exchanges.append(ex)
            if msg.kind == Kind.MESSAGE and msg.dir == "in":
                ex.requests.append(msg)
                _hold(held, ex, steps)
            elif msg.kind == Kind.MESSAGE:
                ex.responses.append(msg)
                _take(held, msg, steps)
            else:
                ex.transport.append(msg)
            continue
        if msg.kind == Kind.MESSAGE and msg.dir == "in":
            ex = _Exchange()
            ex.requests.append(msg)
            exchanges.append(ex)
            if _hold(held, ex, steps):
                open_list.append(ex)
            continue
        if msg.kind == Kind.MESSAGE:
            answered = _take(held, msg, steps)
            if answered is not None and answered in open_list:
                open_list.remove(answered)
            if legacy:
                target = get_stream()  # legacy HTTP+SSE: every server message rides the GET stream
            elif answered is not None:
                target = answered
            elif _is_sse_msg(msg) and open_list:
                target = open_list[-1]  # a notification or server request on an open POST's SSE stream
            else:
                target = get_stream()
            target.responses.append(msg)
            continue
        # transport-only: a client-side event (DELETE, GET) is an exchange of its own; a server-side one
        # (202, 401, an SSE endpoint event) joins the exchange it answers, else the stream
        if msg.dir == "in":
            ex = _Exchange()
            ex.transport.append(msg)
            exchanges.append(ex)
        elif msg.ctx and "sse" in msg.ctx:
            (open_list[-1] if open_list and not legacy else get_stream()).transport.append(msg)
        else:
            last = next((e for e in reversed(exchanges) if not e.stream and e.requests and not e.responses
                         and not e.transport), None)
            (last or get_stream()).transport.append(msg)
    return exchanges


def _is_sse_msg(msg: Message) -> bool:
    return bool(msg.ctx and ("sse" in msg.ctx or msg.ctx.get("slot") == "sse"))


def _body(msgs: list[Message]) -> Any:
    return msgs[0].raw if len(msgs) == 1 else [m.raw for m in msgs]


def _with_ctx(ex: _Exchange) -> bool:
    """Whether any record of the exchange has a transport context (a transport-only record counts)."""
    if ex.transport:
        return True
    for m in ex.requests:
        if m.ctx:
            return True
    for m in ex.responses:
        if m.ctx:
            return True
    return False


def _sse_text(msgs: list[Message], transport: list[Message]) -> str:
    events = []
    for m in sorted([*msgs, *[t for t in transport if t.ctx and "sse" in t.ctx]], key=lambda x: (x.t or 0)):
        sse = (m.ctx or {}).get("sse") or {}
        if m.kind == Kind.MESSAGE:
            data = jsonio.dumps_str(m.raw)
        else:
            raw = (m.ctx or {}).get("data")
            data = raw if isinstance(raw, str) else jsonio.dumps_str(raw)
        sid = sse.get("id")
        name = sse.get("event", "message")
        # a word that is not text is its cut repr: str() of a deep value recurses (issue 40)
        shown = sid if isinstance(sid, str) else cut_repr(sid)
        name = name if isinstance(name, str) or name is None else cut_repr(name)
        events.append(encode_event(data, event=name, id=shown if sid is not None else None)
                      .decode("utf-8", "surrogatepass"))
    return "".join(events)


def _facts(ex: _Exchange) -> dict[str, Any]:
    if ex.stream:
        methods = [m.get("method") for r in ex.responses for m in r.members() if "method" in m]
        answers = sum(1 for r in ex.responses for m in r.members() if "method" not in m)
        facts_s: dict[str, Any] = {"direction": "server_to_client", "stream": True, "messages": len(methods) + answers}
        if methods:
            facts_s["methods"] = sorted({m if isinstance(m, str) else cut_repr(m) for m in methods})  # (issue 40)
        if answers:
            facts_s["responses"] = answers
        events = [t.ctx["sse"].get("event") for t in ex.transport if t.ctx and isinstance(t.ctx.get("sse"), dict)]
        if events:
            facts_s["transport_events"] = events
        stream_seqs = sorted(m.seq for m in ex._all() if m.seq is not None)
        if stream_seqs:
            facts_s["seq"] = stream_seqs
        return facts_s
    requests, responses = ex.requests, ex.responses
    first = requests[0] if requests else (responses[0] if responses else None)
    facts: dict[str, Any] = {}
    if first is not None:
        facts["direction"] = "client_to_server" if first.dir == "in" else "server_to_client"
        raw = first.raw
        if isinstance(raw, dict):
            method = raw.get("method")
            if isinstance(method, str):
                facts["method"] = method
            if "id" in raw:
                facts["id"] = raw["id"]
            if method == "tools/call":
                params = raw.get("params")
                if isinstance(params, dict) and isinstance(params.get("name"), str):
                    facts["tool"] = params["name"]
            if "method" not in raw and ("result" in raw or "error" in raw):
                facts["response"] = True  # a peer's answer riding its own request (the client answering sampling)
        elif isinstance(raw, list):
            facts["batch"] = len(raw)
    answer = [m for m in _members(ex.answer) if "method" not in m] if ex.answer is not None else []
    if answer:
        error = answer[0].get("error")
        result = answer[0].get("result")
        facts["error"] = error
        facts["isError"] = isinstance(result, dict) and result.get("isError") is True
        if ex.answer not in responses:
            facts["answered_on"] = "stream"
    elif any("id" in m and "method" in m for r in requests for m in _members(r)):
        facts["unanswered"] = True
    notes = 0
    for r in responses:
        for member in _members(r):
            if "method" in member:
                notes += 1
    if notes:
        facts["server_messages"] = notes
    # one pass over the records for the seqs, the first edit and a drop
    seqs: list[int] = []
    edited: Message | None = None
    dropped = False
    for group in (requests, responses):
        for m in group:
            if m.seq is not None:
                seqs.append(m.seq)
            if m.modified and edited is None:
                edited = m
            if m.dropped:
                dropped = True
    for t in ex.transport:
        if t.seq is not None:
            seqs.append(t.seq)
    if seqs:
        seqs.sort()
        facts["seq"] = seqs
    if edited is not None:
        facts["modified"] = True
        facts["original"] = edited.original
    if dropped:
        facts["dropped"] = True
    for t in ex.transport:
        if t.ctx and t.ctx.get("event") is not None:
            facts["event"] = t.ctx["event"]
    return facts


def _url(base: str, path: Any) -> str:
    if not isinstance(path, str) or not path:
        return base
    parts = urlsplit(base)
    p, _, q = path.partition("?")
    return urlunsplit((parts.scheme, parts.netloc, p, q, ""))


def _query(url: str) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)]


def _json_text(value: Any) -> tuple[str, int]:
    """``value`` as JSON text and the length of its UTF-8 (the encoder's bytes: no second encoding)."""
    data = jsonio.dumps(value)
    return data.decode("utf-8", "surrogatepass"), len(data)


_NO_CTX: dict[str, Any] = {}


def _entry(ex: _Exchange, *, http: bool, base: str, session_t: int | None, endpoint: str | None = None) -> dict[str, Any]:
    requests, resp_msgs, transport = ex.requests, ex.responses, ex.transport
    if _with_ctx(ex):
        asks = [m for m in (*requests, *transport) if m.ctx and m.dir == "in"]
        req_ctx = next((m.ctx for m in asks if m.ctx and m.ctx.get("headers")), None) or ((asks[0].ctx or {}) if asks else {})
        answers = [m for m in (*resp_msgs, *transport) if m.ctx and m.dir != "in"]
        resp_ctx = next((m.ctx for m in answers if m.ctx and m.ctx.get("headers")), None) or ((answers[0].ctx or {}) if answers else {})
        status = _status([*resp_msgs, *[t for t in transport if t.dir != "in"]])
        sse = any(_is_sse_msg(m) for m in resp_msgs) or ex.stream
        sse_events = any(t.ctx and "sse" in t.ctx for t in transport)
    else:  # no record has a transport context (a stdio session's never do): none of it to look for
        req_ctx = resp_ctx = _NO_CTX
        status = None
        sse = ex.stream
        sse_events = False
    t0, t1 = ex.span()
    if t0 is None:
        t0 = session_t or 0
    elapsed = max(0, (t1 - t0)) if t1 is not None else 0
    method = req_ctx.get("method")
    if not isinstance(method, str):
        method = "GET" if ex.stream or not requests else "POST"
    path = req_ctx.get("path")
    if path is None and endpoint is not None and method == "POST":
        path = endpoint  # legacy HTTP+SSE: the client posts to the URI the endpoint event named
    url = _url(base, path) if http else base
    request: dict[str, Any] = {
        "method": method, "url": url, "httpVersion": "HTTP/1.1", "cookies": [],
        "headers": _headers(req_ctx.get("headers")) if req_ctx else [], "queryString": _query(url) if http else [],
        "headersSize": -1, "bodySize": 0,
    }
    if requests:
        text, size = _json_text(_body(requests))
        request["postData"] = {"mimeType": (_content_type(req_ctx) if req_ctx else None) or "application/json",
                               "text": text}
        request["bodySize"] = size
    if resp_msgs or sse_events:
        if sse:
            text = _sse_text(resp_msgs, transport)
            size = len(text.encode("utf-8", "surrogatepass"))
            mime = "text/event-stream"
        else:
            text, size = _json_text(_body(resp_msgs))
            mime = "application/json"
        status = status if status is not None else 200
    else:
        body = next(((t.ctx or {}).get("data") for t in transport if isinstance((t.ctx or {}).get("data"), dict)), None)
        if body is not None:
            text, size = _json_text(body)
            mime = "application/json"
        else:
            text, size, mime = "", 0, ""
        if status is None:
            lifecycle = next((t for t in transport if t.dir == "in" and t.ctx), None)
            if lifecycle is not None and lifecycle.ctx and type(lifecycle.ctx.get("status")) is int:
                status = lifecycle.ctx["status"]
            elif requests and (ex.answer is not None or not any("id" in m for r in requests for m in r.members())):
                # a notification (nothing comes back), or a legacy POST answered on the stream
                status = 202 if http else 204
            else:
                status = 0  # never answered
    recorded_type = _content_type(resp_ctx) if resp_ctx else None  # (a stdio entry's never says one)
    if recorded_type and mime and text:
        mime = recorded_type  # the content type as the server sent it (an unknown one too), never rewritten
    content: dict[str, Any] = {"size": size, "mimeType": mime}
    if text:
        content["text"] = text
    response = {
        "status": status, "statusText": _REASONS.get(status, ""), "httpVersion": "HTTP/1.1", "cookies": [],
        "headers": _headers(resp_ctx.get("headers")) if resp_ctx else [],
        "content": content,
        "redirectURL": "", "headersSize": -1, "bodySize": size if status else -1,
    }
    return {
        "startedDateTime": iso_from_ms(t0),
        "time": elapsed,
        "request": request,
        "response": response,
        "cache": {},
        "timings": {"send": 0, "wait": elapsed, "receive": 0},
        "_mcp": _facts(ex),
    }


def stdio_url(command: list[str]) -> str:
    """``stdio://<command>``: the synthetic URL of a stdio session's entries."""
    return "stdio://" + quote(shlex.join(command) if command else "server", safe="/:@-._~")


class _NotStdio(Exception):
    """A record with a transport context in a session that did not say its transport: HTTP after all."""


class _Http2OverStdio(_NotStdio):
    """The stdio pipe spoke HTTP/2 (the ``stdio-v2`` draft): its decoded HTTP exchanges are the entries."""


def _stdio_entries(session: Iterable[Message], base: str, started: int | None, stderr: list[dict[str, Any]],
                   invalid: list[dict[str, Any]], spool: SortedSpool, guessed: bool) -> None:
    """One pass over a stdio session, the grouping of a stdio session, record by record: each exchange
    becomes an encoded entry once its last awaited answer has come, kept in start order by ``spool``
    (ties in the order the exchanges opened, as the stable sort of the whole list kept them).
    ``guessed``: the transport was not given, so a record with a context means HTTP after all."""
    walk = Walker(pairing_only=True).feed  # the one reading's pairing (see the module docstring)
    held: dict[int, _Exchange] = {}  # walk exchange number -> the entry waiting for its answer
    dumps = jsonio.dumps_indented
    waiting: dict[int, tuple[int, _Exchange]] = {}  # id(exchange) -> (its number, it), still waiting

    def done(ex: _Exchange, n: int) -> None:
        entry = _entry(ex, http=False, base=base, session_t=started)
        spool.add((entry["startedDateTime"], n), dumps(entry))

    n = 0
    touched: list[_Exchange] = []
    message, stderr_kind, invalid_kind = Kind.MESSAGE, Kind.STDERR, Kind.INVALID
    for index, msg in enumerate(session):
        kind = msg.kind
        if kind != message:
            if kind == Kind.TRANSPORT and msg.ctx and msg.ctx.get("framing") == H2_PROTOCOL:
                raise _Http2OverStdio  # (the recorder says so before the first decoded record)
            if guessed and msg.ctx and kind == Kind.TRANSPORT:
                raise _NotStdio
            if kind == stderr_kind:
                stderr.append({"t": iso_from_ms(msg.t) if msg.t is not None else None, "text": msg.text})
            elif kind == invalid_kind:
                invalid.append({"t": iso_from_ms(msg.t) if msg.t is not None else None,
                                "direction": "client_to_server" if msg.dir == "in" else "server_to_client",
                                "text": msg.text})
            continue
        if guessed and msg.ctx:
            raise _NotStdio
        steps = walk(index, msg)
        raw = msg.raw
        # a request or a notification answers nothing: no exchange to look for
        answered = None if type(raw) is dict and "method" in raw else _take(held, msg, steps, touched)
        if answered is not None:
            answered.responses.append(msg)
            for ex in touched:
                if ex.waiting == 0:
                    item = waiting.pop(id(ex), None)
                    if item is not None:
                        done(ex, item[0])
            touched.clear()
            continue
        ex = _Exchange()
        ex.requests.append(msg)
        _hold(held, ex, steps)
        if ex.waiting:
            waiting[id(ex)] = (n, ex)
        else:
            done(ex, n)
        n += 1
    for number, ex in waiting.values():
        done(ex, number)


def write(session: Session, out: BinaryIO) -> None:
    """The HAR document, written as a stream: a stdio session in one pass with its entries in a
    :class:`SortedSpool` (flat memory); an HTTP session's exchanges are grouped with the whole session
    in hand (their records join exchanges opened long before), then written one entry at a time."""
    info = session.info
    stderr: list[dict[str, Any]] = []
    invalid: list[dict[str, Any]] = []
    entries: Iterable[Any] = ()
    spool = SortedSpool()
    http = info.transport in ("streamable-http", "sse") or (info.transport is None and info.url is not None)
    h2 = False
    if not http:
        first = iter(session)  # one pass, finished below when it turns out to be HTTP (it counts the records)
        try:
            _stdio_entries(first, stdio_url(info.command), info.started, stderr, invalid, spool,
                           guessed=info.transport is None)
            entries = spool
        except _NotStdio as why:
            h2 = isinstance(why, _Http2OverStdio)
            spool.close()
            spool = SortedSpool()
            for _ in first:  # read to its end: a conversion counts the records of the first pass
                pass
            http = True
            stderr.clear()
            invalid.clear()
    if http:
        records: list[Message] = []
        for msg in session:
            if msg.kind == Kind.STDERR:
                stderr.append({"t": iso_from_ms(msg.t) if msg.t is not None else None, "text": msg.text})
            elif msg.kind == Kind.INVALID:
                invalid.append({"t": iso_from_ms(msg.t) if msg.t is not None else None,
                                "direction": "client_to_server" if msg.dir == "in" else "server_to_client",
                                "text": msg.text})
            elif msg.kind in (Kind.MESSAGE, Kind.TRANSPORT):
                records.append(msg)
        base = info.url or (f"http://{STDIO_V2_AUTHORITY}{STDIO_V2_PATH}" if h2 else _SYNTHETIC_BASE)
        exchanges = _group_http(records, legacy=info.transport == "sse")
        endpoint = next((m.ctx["data"] for m in records if m.kind == Kind.TRANSPORT and m.ctx
                         and isinstance(m.ctx.get("sse"), dict) and m.ctx["sse"].get("event") == "endpoint"
                         and isinstance(m.ctx.get("data"), str)), None)
        http_entries = [_entry(ex, http=True, base=base, session_t=info.started, endpoint=endpoint) for ex in exchanges]
        http_entries.sort(key=lambda e: e["startedDateTime"])  # HAR viewers expect start order; the sort is stable
        if h2:  # HTTP/2 over the pipe: what the exchanges were (their pseudo-headers are kept as recorded)
            for entry in http_entries:
                entry["request"]["httpVersion"] = entry["response"]["httpVersion"] = "HTTP/2"
        entries = http_entries
    log_facts: dict[str, Any] = {"session": info.id, "transport": STDIO_V2_TRANSPORT if h2 else
                                 info.transport or ("streamable-http" if http else "stdio")}
    if info.command:
        log_facts["command"] = info.command
    if info.url:
        log_facts["url"] = info.url
    if info.started is not None:
        log_facts["started"] = iso_from_ms(info.started)
    if info.ended is not None:
        log_facts["ended"] = iso_from_ms(info.ended)
    if info.exit_code is not None:
        log_facts["exit_code"] = info.exit_code
    if stderr:
        log_facts["stderr"] = stderr
    if invalid:
        log_facts["invalid"] = invalid
    key = marker()
    doc = {"log": {
        "version": "1.2",
        "creator": {"name": "mcpreel", "version": __version__},
        "pages": [],
        "entries": key,
        "_mcp": log_facts,
    }}
    try:
        write_document(out, doc, {key: entries})
    finally:
        spool.close()
    out.write(b"\n")
