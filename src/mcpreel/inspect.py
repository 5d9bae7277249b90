"""What a session says, as data: one row per record and a summary (``mcpreel inspect``).

:func:`analyze` reads any :class:`~mcpreel.model.Session` once and returns a :class:`Report`: the header
(session id, transport, server command or URL, start, end, counts), one :class:`Row` per record
(direction, method or ``(response)``, id, the row of the request a response answers, edits, drops,
errors, stderr, invalid frames, transport events) and a :class:`Summary` (calls per tool, JSON-RPC errors
and ``isError`` results, unanswered requests, orphan responses, latency p50/p95 per method).

It never prints: :mod:`mcpreel.render.inspect` draws a report, ``Report.to_dict()`` is the ``--json``
document, and the proxy's ``inspect`` calls the same function.

Correlation is by (direction of the request, id), never by a file's own ``correlated_id`` (see
:mod:`mcpreel._infra.correlation`); in a merged file, by source file too. A dropped message never reached its
peer, so it takes no part in correlation: a request whose answer was dropped is unanswered.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.correlation import Correlator
from mcpreel.model import Kind, Message, Session, SessionInfo
from mcpreel.sessions import split_sessions

__all__ = ["ErrorItem", "Header", "LatencyStats", "Report", "Row", "Summary", "ToolStats", "analyze", "percentile"]

#: where merged records name the file they came from (see :mod:`mcpreel.merge`)
ORIGIN_KEY = "file"


@dataclass(slots=True)
class Row:
    """One record as ``inspect`` shows it. ``index`` is its 0-based position in the session."""

    index: int
    kind: str
    dir: str | None
    label: str  # the method, "(response)", "stderr", "invalid", "transport", or another producer's kind
    seq: int | None = None
    t: int | None = None
    id: Any = None
    corr: int | None = None  # index of the request row this response answers
    tool: str | None = None  # params.name of a tools/call (on the request and its response)
    error: dict[str, Any] | None = None  # the JSON-RPC error object of an error response
    is_error: bool = False  # an MCP result with isError: true
    modified: bool = False
    dropped: bool = False
    orphan: bool = False  # a response no request waits for
    unanswered: bool = False  # a request that never got its response
    latency_ms: int | None = None  # response time minus request time
    text: str | None = None  # stderr / invalid frame text, a transport event or other line in words
    origin: str | None = None  # the source file of a merged record
    batch: int | None = None  # member count, for a batch
    payload: Any = None  # the JSON-RPC message (kept when payloads are asked for)
    original: Any = None  # the message before an intercept edit
    input_required: bool = False  # a 2026-07-28 answer asking the client for input before it can complete
    retry_of: int | None = None  # the request row this one retries (a multi-round-trip request's next round)
    sse_events: int = 0  # SSE framing events of this row's HTTP exchange folded into it (priming, comments)

    @property
    def is_response(self) -> bool:
        return self.label == "(response)"


@dataclass(slots=True)
class ToolStats:
    calls: int = 0
    errors: int = 0  # JSON-RPC error responses
    is_errors: int = 0  # results with isError: true
    unanswered: int = 0
    dropped: int = 0
    p50_ms: int | None = None
    p95_ms: int | None = None


@dataclass(slots=True)
class LatencyStats:
    count: int
    p50_ms: int
    p95_ms: int
    max_ms: int


@dataclass(slots=True)
class ErrorItem:
    """One failure: a JSON-RPC error (``kind="jsonrpc"``) or an MCP ``isError`` result (``"isError"``)."""

    row: int
    kind: str
    method: str | None
    tool: str | None
    id: Any
    code: Any = None
    message: str | None = None
    request: int | None = None  # row of the request it answers


@dataclass
class Summary:
    records: int = 0
    messages: int = 0  # JSON-RPC messages (batch members counted one by one)
    client_to_server: int = 0
    server_to_client: int = 0
    requests: int = 0
    notifications: int = 0
    responses: int = 0
    batches: int = 0
    stderr: int = 0
    invalid: int = 0
    transport: int = 0
    events: int = 0
    modified: int = 0
    dropped: int = 0
    tools: dict[str, ToolStats] = field(default_factory=dict)
    errors: list[ErrorItem] = field(default_factory=list)
    unanswered: list[int] = field(default_factory=list)
    orphans: list[int] = field(default_factory=list)
    latency: dict[str, LatencyStats] = field(default_factory=dict)


@dataclass
class Header:
    id: str | None = None
    label: str | None = None
    transport: str | None = None
    command: list[str] = field(default_factory=list)
    url: str | None = None
    started: int | None = None
    ended: int | None = None
    duration_ms: int | None = None
    exit_code: int | None = None
    end_reason: str | None = None
    format: str | None = None
    path: str | None = None
    producer: dict[str, Any] | None = None
    messages: int = 0
    notes: list[str] = field(default_factory=list)
    #: the client sessions in the file, each with its protocol era (:mod:`mcpreel.sessions`)
    sessions: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, info: SessionInfo) -> Header:
        return cls(
            id=info.id, label=info.label, transport=info.transport, command=list(info.command), url=info.url,
            started=info.started, ended=info.ended, duration_ms=info.duration_ms, exit_code=info.exit_code,
            end_reason=info.end_reason, format=info.source_format, path=info.path, producer=info.producer,
            notes=list(info.notes),
        )


@dataclass
class Report:
    header: Header
    rows: list[Row]
    summary: Summary

    def to_dict(self, *, payloads: bool = True, rows: bool = True) -> dict[str, Any]:
        """The ``--json`` document: plain JSON types, rows without payloads unless asked for."""
        out_rows = []
        for row in self.rows if rows else ():
            d = asdict(row)
            if not payloads:
                d.pop("payload")
                d.pop("original")
            elif not row.modified:
                d.pop("original")
            out_rows.append(d)
        doc = {"session": asdict(self.header), "rows": out_rows, "summary": asdict(self.summary)}
        if not rows:
            del doc["rows"]
        return doc


def percentile(sorted_values: list[int], p: float) -> int:
    """Nearest-rank percentile of an ascending list (the value a reader can find in the data)."""
    if not sorted_values:
        raise ValueError("no values")
    k = max(0, math.ceil(p / 100 * len(sorted_values)) - 1)
    return sorted_values[k]


def _text_of_transport(ctx: dict[str, Any]) -> str:
    parts = []
    sse = ctx.get("sse")
    if isinstance(sse, dict):
        parts.append(str(sse.get("event", "message")))
    method = ctx.get("method")
    if isinstance(method, str):
        path = ctx.get("path")
        parts.append(f"{method} {path}" if isinstance(path, str) else method)
    status = ctx.get("status")
    if status is not None:
        parts.append(f"HTTP {status}")
    data = ctx.get("data")
    if isinstance(data, str):
        parts.append(data)
    elif data is not None:
        parts.append(jsonio.dumps_str(data))
    headers = ctx.get("headers")
    if isinstance(headers, dict):
        for k, v in headers.items():
            if isinstance(k, str) and k.lower() == "www-authenticate":
                parts.append(f"WWW-Authenticate: {v}")
    return " ".join(parts) if parts else "transport event"


def _event_label(raw: Any) -> tuple[str, str | None]:
    if isinstance(raw, dict):
        kind = raw.get("kind")
        typ = raw.get("type")
        d = raw.get("dir")
        label = kind if isinstance(kind, str) else (typ if isinstance(typ, str) else (d if isinstance(d, str) else "event"))
        role = raw.get("role")
        return label, (f"role={role}" if isinstance(role, str) else None)
    return "event", None


def _tool_of(raw: dict[str, Any]) -> str | None:
    params = raw.get("params")
    if isinstance(params, dict):
        name = params.get("name")
        if isinstance(name, str):
            return name
    return None


def _sse_framing(ctx: dict[str, Any]) -> Any:
    """The exchange of a transport record that is only SSE framing (a priming event with an id and no
    data, a comment, a keep-alive), None for anything else: such records say nothing of their own."""
    sse = ctx.get("sse")
    if not isinstance(sse, dict) or "method" in ctx or "status" in ctx or "forwarded" in ctx:
        return None
    data = ctx.get("data")
    if data is not None and not (isinstance(data, str) and not data.strip()):
        return None
    if sse.get("event", "message") != "message" and "comment" not in sse:
        return None
    return ctx.get("exchange", ctx.get("stream"))


class _Analyzer:
    def __init__(self, payloads: bool, fold_sse: bool = False):
        self.payloads = payloads
        self.fold_sse = fold_sse
        #: HTTP exchange -> the last row shown for it (what SSE framing events fold into)
        self._exchange_rows: dict[Any, Row] = {}
        self.rows: list[Row] = []
        self.summary = Summary()
        self.correlator: Correlator[int] = Correlator()
        self.latencies: dict[str, list[int]] = {}
        self.tool_latencies: dict[str, list[int]] = {}
        #: requestState of an input_required answer -> the request row it answered (the first round's)
        self.input_states: dict[str, int] = {}

    def _tool(self, name: str) -> ToolStats:
        stats = self.summary.tools.get(name)
        if stats is None:
            stats = self.summary.tools[name] = ToolStats()
        return stats

    def feed(self, index: int, msg: Message) -> None:
        ctx = msg.ctx
        if self.fold_sse and ctx and msg.kind == Kind.TRANSPORT:
            ex = _sse_framing(ctx)
            row = self._exchange_rows.get(ex) if ex is not None else None
            if row is not None:
                self.summary.records += 1
                self.summary.transport += 1
                row.sse_events += 1
                return
        n = len(self.rows)
        self._feed(index, msg)
        if ctx and len(self.rows) > n:
            ex = ctx.get("exchange", ctx.get("stream"))
            if isinstance(ex, (int, str)):
                self._exchange_rows[ex] = self.rows[-1]

    def _feed(self, index: int, msg: Message) -> None:
        s = self.summary
        s.records += 1
        kind = msg.kind
        origin = msg.extra.get(ORIGIN_KEY) if msg.extra and isinstance(msg.extra.get(ORIGIN_KEY), str) else None
        if origin is None and kind == Kind.EVENT and isinstance(msg.raw, dict) and isinstance(msg.raw.get(ORIGIN_KEY), str):
            origin = msg.raw[ORIGIN_KEY]
        if kind == Kind.STDERR:
            s.stderr += 1
            self.rows.append(Row(index, kind, None, "stderr", seq=msg.seq, t=msg.t, text=msg.text, origin=origin))
            return
        if kind == Kind.INVALID:
            s.invalid += 1
            self.rows.append(Row(index, kind, msg.dir, "invalid", seq=msg.seq, t=msg.t, text=msg.text, origin=origin))
            return
        if kind == Kind.TRANSPORT:
            s.transport += 1
            self.rows.append(Row(index, kind, msg.dir, "transport", seq=msg.seq, t=msg.t,
                                 text=_text_of_transport(msg.ctx or {}), origin=origin))
            return
        if kind == Kind.EVENT:
            s.events += 1
            label, text = _event_label(msg.raw)
            self.rows.append(Row(index, kind, msg.dir, label, seq=msg.seq, t=msg.t, text=text, origin=origin,
                                 payload=msg.raw if self.payloads else None))
            return
        d = msg.dir if msg.dir in ("in", "out") else "in"
        if d == "in":
            s.client_to_server += 1
        else:
            s.server_to_client += 1
        if msg.modified:
            s.modified += 1
        if msg.dropped:
            s.dropped += 1
        row = Row(index, kind, d, "", seq=msg.seq, t=msg.t, modified=msg.modified, dropped=msg.dropped, origin=origin,
                  payload=msg.raw if self.payloads else None, original=msg.original if self.payloads and msg.modified else None)
        raw = msg.raw
        if isinstance(raw, list):
            s.batches += 1
            row.batch = len(raw)
            row.label = "batch"
            for member in raw:
                if isinstance(member, dict):
                    self._member(row, member, d, msg, origin)
        elif isinstance(raw, dict):
            self._member(row, raw, d, msg, origin)
        else:
            row.label = "(not JSON-RPC)"
        self.rows.append(row)

    def _member(self, row: Row, raw: dict[str, Any], d: str, msg: Message, origin: str | None) -> None:
        s = self.summary
        s.messages += 1
        single = row.batch is None
        method = raw.get("method")
        if method is not None:
            method = method if isinstance(method, str) else str(method)
            if single:
                row.label = method
                row.id = raw.get("id")
            tool = (_tool_of(raw) or "unknown_tool") if method == "tools/call" else None
            if tool is not None and single:
                row.tool = tool
            if "id" in raw:
                s.requests += 1
                params = raw.get("params")
                state = params.get("requestState") if isinstance(params, dict) else None
                if isinstance(state, str) and state in self.input_states and single:
                    row.retry_of = self.input_states.pop(state)
                if method == "tools/call":
                    stats = self._tool(tool or "unknown_tool")
                    stats.calls += 1
                    if msg.dropped:
                        stats.dropped += 1
                if not msg.dropped:
                    self.correlator.request(d, raw["id"], row.index, scope=origin)
            else:
                s.notifications += 1
            return
        if "result" not in raw and "error" not in raw:
            if single:
                row.label = "(not JSON-RPC)"
                row.id = raw.get("id")
            return
        s.responses += 1
        if single:
            row.label = "(response)"
            row.id = raw.get("id")
        req_index = None if msg.dropped else self.correlator.response(d, raw.get("id"), scope=origin)
        req = self.rows[req_index] if req_index is not None else None
        error = raw.get("error")
        result = raw.get("result")
        is_error = isinstance(result, dict) and result.get("isError") is True
        if isinstance(result, dict) and result.get("resultType") == "input_required" and single:
            row.input_required = True
            state = result.get("requestState")
            if isinstance(state, str) and req is not None:
                self.input_states[state] = req.retry_of if req.retry_of is not None else req.index
        if req is None:
            if not msg.dropped:
                s.orphans.append(row.index)
                row.orphan = True
        else:
            if row.corr is None:
                row.corr = req.index
            req_method = req.label if req.batch is None else None
            tool = req.tool
            if single:
                row.tool = tool
            if req.t is not None and msg.t is not None:
                lat = max(0, msg.t - req.t)
                if row.latency_ms is None:
                    row.latency_ms = lat
                if req_method:
                    self.latencies.setdefault(req_method, []).append(lat)
                if tool is not None:
                    self.tool_latencies.setdefault(tool, []).append(lat)
            if tool is not None:
                stats = self._tool(tool)
                if error is not None:
                    stats.errors += 1
                elif is_error:
                    stats.is_errors += 1
        method_name = req.label if req is not None and req.batch is None else None
        if error is not None:
            err = error if isinstance(error, dict) else {"message": error}
            if single:
                row.error = err
            msg_text = err.get("message")
            s.errors.append(ErrorItem(row.index, "jsonrpc", method_name, row.tool if single else None, raw.get("id"),
                                      code=err.get("code"), message=msg_text if isinstance(msg_text, str) else None,
                                      request=req.index if req is not None else None))
        elif is_error:
            if single:
                row.is_error = True
            s.errors.append(ErrorItem(row.index, "isError", method_name, row.tool if single else None, raw.get("id"),
                                      message=_first_text(result) if isinstance(result, dict) else None, request=req.index if req is not None else None))

    def finish(self) -> Summary:
        s = self.summary
        for index in sorted(set(self.correlator.pending())):
            row = self.rows[index]
            row.unanswered = True
            s.unanswered.append(index)
            if row.tool is not None:
                self._tool(row.tool).unanswered += 1
        for method, values in sorted(self.latencies.items()):
            values.sort()
            s.latency[method] = LatencyStats(len(values), percentile(values, 50), percentile(values, 95), values[-1])
        for tool, values in self.tool_latencies.items():
            values.sort()
            stats = self._tool(tool)
            stats.p50_ms = percentile(values, 50)
            stats.p95_ms = percentile(values, 95)
        s.tools = dict(sorted(s.tools.items()))
        return s


def _first_text(result: dict[str, Any]) -> str | None:
    content = result.get("content")
    if isinstance(content, list):
        for item in content:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                return item["text"]
    return None


def analyze(session: Session | Iterable[Message], *, payloads: bool = False, info: SessionInfo | None = None,
            fold_sse: bool = False) -> Report:
    """Read ``session`` once and return its :class:`Report`.

    ``payloads=True`` keeps each message (and the original of an edit) on its row, for ``-v`` and
    ``--json``; leave it off for large files, where rows then hold no references to message bodies.
    ``fold_sse=True`` (``inspect`` without ``-v``) folds the SSE framing events of an HTTP exchange
    (priming events, comments: no data of their own) into the row shown before for that exchange
    (:attr:`Row.sse_events`) instead of a ``(transport) message`` row each.
    """
    if info is None:
        info = session.info if isinstance(session, Session) else SessionInfo()
    a = _Analyzer(payloads, fold_sse)
    for index, msg in enumerate(session):
        a.feed(index, msg)
    summary = a.finish()
    header = Header.of(info)
    header.messages = summary.messages
    if isinstance(session, Session):
        header.sessions = [{"index": s.index, "era": s.era, "protocol": s.protocol, "client": s.client,
                            "requests": s.requests, "http_session": s.http_session, "file": s.source_file}
                           for s in split_sessions(session)]
    return Report(header, a.rows, summary)
