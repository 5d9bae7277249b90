"""What a session says, as data: one row per record and a summary (``mcpreel inspect``).

:func:`analyze` reads any :class:`~mcpreel.model.Session` once and returns a :class:`Report`: the header
(session id, transport, server command or URL, start, end, counts), one :class:`Row` per record
(direction, method or ``(response)``, id, the row of the request a response answers, edits, drops,
errors, stderr, invalid frames, transport events) and a :class:`Summary` (calls per tool, JSON-RPC errors
and ``isError`` results, unanswered requests, orphan responses, latency p50/p95 per method).

It never prints: :mod:`mcpreel.render.inspect` draws a report, ``Report.to_dict()`` is the ``--json``
document, and the proxy's ``inspect`` calls the same function.

Memory stays flat whatever the session's size when asked (``rows="spool"`` or ``"none"``): the rows go to
a temporary file as they are made (a row changes after it is made only to be marked unanswered, which is
applied when it is read back), only the requests still waiting for an answer stay in memory, and the
latency percentiles come from a :class:`LatencySketch` (the tally's: :mod:`mcpreel.operations.tally`,
which counts the summary's operations, calls per tool and latencies for the report and the corpus too) -- exact while a method has at most
:data:`EXACT_LATENCIES` distinct latency values, within :data:`SKETCH_ERROR` (1%) beyond.

The rows and the summary come from the one walk of a session (:mod:`mcpreel.operations`): a response's
row names the request it answers within its client session (a row's ``session``), never across sessions
and never by a file's own ``correlated_id``; a dropped message never reached its peer (a request whose
answer was dropped is unanswered; the proxy's own answer to a dropped request is paired with it and marked
injected); a listen stream the client cancelled is ``ended``. The summary counts **operations**: a
multi-round-trip request is one call (its retries name the first round), a task is one call with its final
status and latency (its polls, result and status notifications name the call that created it and the task).
"""

from __future__ import annotations

import pickle
import tempfile
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.nesting import cut_repr, recursion_room
from mcpreel.drafts import ACKNOWLEDGED_NOTIFICATION, LIFECYCLE_NOTIFICATION
from mcpreel.model import Direction, Kind, Message, Session, SessionInfo
from mcpreel.operations.facts import ORIGIN_KEY, first_text, listen_lifecycle
from mcpreel.operations.tally import (  # the figures it shares with the report and the corpus; re-exported
    EXACT_LATENCIES,
    SKETCH_ERROR,
    LatencySketch,
    LatencyStats,
    RecordCounts,
    SessionTally,
    ToolStats,
    percentile,
)
from mcpreel.operations.walk import STREAM, TASK, Operation, Step, Walker

__all__ = ["EXACT_LATENCIES", "SKETCH_ERROR", "ErrorItem", "Header", "LatencySketch", "LatencyStats", "Report", "Row",
           "RowSpool", "Summary", "ToolStats", "analyze", "percentile"]

#: the kinds looked at for every record, bound once (a class attribute lookup per record adds up)
_MESSAGE = Kind.MESSAGE
_TRANSPORT = Kind.TRANSPORT


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
    session: int = 1  # the client session it belongs to (1-based, as the header's ``sessions`` number them)
    injected: bool = False  # the proxy sent it itself (a viewer's or a rule's, the answer to a dropped request)
    ended: bool = False  # a listen stream the client ended with its cancel (not unanswered: that is its end)
    part_of: int | None = None  # the row of the call that opened its operation (a task's polls, result, status)
    task: Any = None  # the task id, on the rows of a task

    @property
    def is_response(self) -> bool:
        """Whether the row stands for an answer (drawn under its request rather than as a call of its own)."""
        return self.label == "(response)"


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
    #: raw ``bytes`` records (a pipe that was not newline-delimited JSON: HTTP/2, binary) and their bytes
    byte_chunks: int = 0
    raw_bytes: int = 0
    modified: int = 0
    dropped: int = 0
    tools: dict[str, ToolStats] = field(default_factory=dict)
    errors: list[ErrorItem] = field(default_factory=list)
    unanswered: list[int] = field(default_factory=list)
    orphans: list[int] = field(default_factory=list)
    latency: dict[str, LatencyStats] = field(default_factory=dict)
    #: operations (:mod:`mcpreel.operations`): what ``tools``, ``errors`` and ``latency`` count
    operations: int = 0
    tasks: int = 0  # tasks (each one operation: its creating call, polls, status and result)
    polls: int = 0  # the tasks' tasks/get polls
    ended: list[int] = field(default_factory=list)  # listen streams the client ended (their request rows)
    methods: dict[str, int] = field(default_factory=dict)  # operations per method of their opening request
    #: listen streams whose acknowledgment or lifecycle notifications said something of their lifecycle (the
    #: subscription lifecycle draft): request row, streamId, expiresAt, events by type, data_loss, paused
    streams: list[dict[str, Any]] = field(default_factory=list)


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
    #: the client sessions in the file, each with its protocol era (:mod:`mcpreel.operations.sessions`)
    sessions: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, info: SessionInfo) -> Header:
        """The header ``inspect`` shows, taken from the session's info (copied, so the report outlives the reader)."""
        return cls(
            id=info.id, label=info.label, transport=info.transport, command=list(info.command), url=info.url,
            started=info.started, ended=info.ended, duration_ms=info.duration_ms, exit_code=info.exit_code,
            end_reason=info.end_reason, format=info.source_format, path=info.path, producer=info.producer,
            notes=list(info.notes),
        )


_ROW_FIELDS = tuple(f.name for f in fields(Row))
#: a row's members as a tuple (pickled ten times faster than the row); a compiled tuple display, a third
#: faster than ``operator.attrgetter`` of two dozen names (every row of a spooled session passes here)
_row_values: Callable[[Row], tuple[Any, ...]] = eval(  # built from the field names, nothing else
    "lambda row: (" + ", ".join(f"row.{name}" for name in _ROW_FIELDS) + ",)")
_UNANSWERED = _ROW_FIELDS.index("unanswered")
_ENDED = _ROW_FIELDS.index("ended")
_SSE_EVENTS = _ROW_FIELDS.index("sse_events")


class RowSpool:
    """Rows kept on disk (pickled in batches in an anonymous temporary file), read back in order.

    What lets ``inspect`` show a million-message session in flat memory. Iterating it again reads the
    file again; ``unanswered`` and ``ended`` (known only at the end) are applied to each row as it is read back.
    """

    _BATCH = 2048

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()
        self._batch: list[Row] = []
        self._count = 0
        self._flushed = 0
        #: SSE framing counts of rows already on disk when their exchange's events came (see :meth:`changed`)
        self._late: dict[int, int] = {}
        self.unanswered: frozenset[int] = frozenset()
        self.ended: frozenset[int] = frozenset()

    def append(self, row: Row) -> None:
        """Add a row; rows go to disk in batches so a million-message session's table does not sit in memory."""
        self._batch.append(row)
        self._count += 1
        if len(self._batch) >= self._BATCH:
            self._flush()

    def changed(self, row: Row, position: int) -> None:
        """``row`` (appended at ``position``) gained folded SSE events after it was appended: a row still
        in the batch is written as it is now; one already on disk gets its count when read back."""
        if position < self._flushed:
            self._late[row.index] = row.sse_events

    def _flush(self) -> None:
        if self._batch:
            values = list(map(_row_values, self._batch))
            at = self._file.tell()
            try:
                pickle.dump(values, self._file, protocol=pickle.HIGHEST_PROTOCOL)
            except RecursionError:
                # a payload nested as deep as the readers accept (1024) is deeper than pickle's C walk
                # may recurse at the default limit: the batch again, from where it began, with room
                self._file.seek(at)
                self._file.truncate()
                with recursion_room():
                    pickle.dump(values, self._file, protocol=pickle.HIGHEST_PROTOCOL)
            self._flushed += len(self._batch)
            self._batch = []

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Row]:
        for values in self.values():
            yield Row(*values)

    def values(self) -> Iterator[tuple[Any, ...]]:
        """The rows' members as tuples (in :class:`Row`'s order), marks applied: what ``--json`` reads,
        without a :class:`Row` made and taken apart again for each."""
        self._flush()
        self._file.seek(0)
        marked = self.unanswered
        ended = self.ended
        late = self._late
        load = pickle.load
        done = 0
        while done < self._count:
            batch: list[tuple[Any, ...]] = load(self._file)
            done += len(batch)
            if not marked and not late and not ended:
                yield from batch
                continue
            for values in batch:
                index = values[0]
                if index in marked:
                    values = (*values[:_UNANSWERED], True, *values[_UNANSWERED + 1:])
                if ended and index in ended:
                    values = (*values[:_ENDED], True, *values[_ENDED + 1:])
                if late and index in late:
                    values = (*values[:_SSE_EVENTS], late[index], *values[_SSE_EVENTS + 1:])
                yield values

    def close(self) -> None:
        """Close (and so delete) the spool file."""
        self._file.close()


class _NoRows:
    """Rows not kept at all (``inspect --summary``): only their count."""

    def __init__(self) -> None:
        self._count = 0

    def append(self, row: Row) -> None:
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Row]:
        return iter(())


@dataclass
class Report:
    header: Header
    rows: list[Row] | RowSpool | _NoRows
    summary: Summary
    #: the rows the summary names (unanswered requests, orphan responses) by index, when ``rows`` is
    #: not a list that holds them all
    refs: dict[int, Row] = field(default_factory=dict)
    #: whether every latency percentile is exact (False: bucketed, within :data:`SKETCH_ERROR`)
    exact_latency: bool = True

    def row(self, index: int) -> Row:
        """The row at ``index`` that the summary names."""
        found = self.refs.get(index)
        if found is not None:
            return found
        assert isinstance(self.rows, list), "a spooled report keeps only the rows its summary names"
        return self.rows[index]

    def row_dict(self, row: Row, *, payloads: bool) -> dict[str, Any]:
        """One row as the ``--json`` document holds it. The members are read directly, not through
        ``asdict`` (which deep-copies every payload: a tenth of the speed on a big session)."""
        return _values_dict(_row_values(row), payloads)

    def row_dicts(self, *, payloads: bool) -> Iterator[dict[str, Any]]:
        """:meth:`row_dict` of every row, in order (a spool's rows straight from their stored members)."""
        rows = self.rows
        values = rows.values() if isinstance(rows, RowSpool) else map(_row_values, rows)
        for v in values:
            yield _values_dict(v, payloads)

    def summary_dict(self) -> dict[str, Any]:
        """The summary as plain JSON types; ``latency_error`` (the relative error bound) only when the
        percentiles were bucketed (see :class:`LatencySketch`)."""
        out = asdict(self.summary)
        if not self.exact_latency:
            out["latency_error"] = SKETCH_ERROR
        return out

    def to_dict(self, *, payloads: bool = True, rows: bool = True) -> dict[str, Any]:
        """The ``--json`` document: plain JSON types, rows without payloads unless asked for."""
        out_rows = list(self.row_dicts(payloads=payloads)) if rows else []
        doc = {"session": asdict(self.header), "rows": out_rows, "summary": self.summary_dict()}
        if not rows:
            del doc["rows"]
        return doc


def _dict_of(names: tuple[str, ...]) -> Any:
    """A function from a row's members (a tuple in :class:`Row`'s order) to a dict of ``names``: one
    dict display, compiled once, three times as fast as ``dict(zip(...))`` and deleting what is left out
    (``--json`` makes one per row)."""
    items = ", ".join(f"{name!r}: v[{_ROW_FIELDS.index(name)}]" for name in names)
    return eval(f"lambda v: {{{items}}}")  # built from the field names above, nothing else


_MODIFIED = _ROW_FIELDS.index("modified")
_ERROR = _ROW_FIELDS.index("error")
_DICT_BARE = _dict_of(tuple(n for n in _ROW_FIELDS if n not in ("payload", "original")))
_DICT_PAYLOAD = _dict_of(tuple(n for n in _ROW_FIELDS if n != "original"))
_DICT_EDITED = _dict_of(_ROW_FIELDS)


def _values_dict(values: tuple[Any, ...], payloads: bool) -> dict[str, Any]:
    """A row's members as its ``--json`` object: no payload unless asked for, the original only of an
    edit, the error object copied."""
    d: dict[str, Any] = (_DICT_BARE if not payloads else _DICT_EDITED if values[_MODIFIED] else _DICT_PAYLOAD)(values)
    d["direction"] = Direction.WORDS.get(d["dir"])  # c2s / s2c beside the reel's own in / out
    error = values[_ERROR]
    if error is not None:
        d["error"] = dict(error)
    return d


def _text_of_transport(ctx: dict[str, Any]) -> str:
    parts = []
    sse = ctx.get("sse")
    if isinstance(sse, dict):
        parts.append(cut_repr(sse.get("event", "message")))
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
    for key, word in (("closed", "closed by"), ("error", ""), ("framing", "framing"), ("transport", "transport"),
                      ("goaway", "GOAWAY"), ("undecoded", "")):
        value = ctx.get(key)
        if isinstance(value, str) and (key != "transport" or "framing" in ctx):
            parts.append(f"{word} {value}".strip())
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


def bytes_text(data: bytes, preview: int = 48) -> str:
    """A raw chunk in words: its size and its first bytes (text as it reads, else ``\\xNN`` escapes)."""
    head = data[:preview].decode("utf-8", "backslashreplace")
    head = head.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    head = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in head)
    return f"{len(data)} byte{'s' if len(data) != 1 else ''}: {head}{'…' if len(data) > preview else ''}"


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


#: the operations whose later messages name the call that opened them on their rows
_PART_KINDS = (TASK, STREAM)
#: what a listen stream says of its own lifecycle (the subscription lifecycle draft: mcpreel.drafts)
_LIFECYCLE_METHODS = frozenset({ACKNOWLEDGED_NOTIFICATION, LIFECYCLE_NOTIFICATION})

#: how many recent HTTP exchanges keep their row for SSE framing events to fold into
_FOLD_WINDOW = 4096


class _Analyzer:
    """Rows and summary from the one walk (:class:`~mcpreel.operations.walk.Walker`): a row per record,
    its pairing and client session from the walk's steps; the summary's calls, failures and latencies
    per operation (a multi-round-trip request is one call with its rounds, a task one call with its polls)."""

    def __init__(self, payloads: bool, rows: list[Row] | RowSpool | _NoRows, fold_sse: bool = False):
        self.payloads = payloads
        self.rows = rows
        self.refs: dict[int, Row] = {}
        self.fold_sse = fold_sse
        #: HTTP exchange -> (the last row shown for it, its position): what SSE framing events fold into.
        #: Bounded: framing events follow their exchange closely, and a session of a million exchanges
        #: must not keep a row for each (an event of an exchange forgotten here gets its own row).
        self._exchange_rows: OrderedDict[Any, tuple[Row, int]] = OrderedDict()
        self.summary = Summary()
        self.walker = Walker()
        self._walk = self.walker.feed
        #: the figures shared with the report and the corpus. ``inspect`` streams a session of any length, so
        #: its latencies are sketched; a dropped call nobody answered is ``dropped`` in its tool's row, not
        #: ``unanswered`` as well (it never reached the server): see :mod:`mcpreel.operations.tally`
        self.tally = SessionTally(exact=False, dropped_unanswered=False)
        #: the records and messages by kind, counted as the report and the corpus count them
        self.counts = RecordCounts()
        self._count = self.counts.add
        #: the rows of requests still waiting, by record index (a response's row reads its request's tool)
        self.unanswered: set[int] = set()
        self.ended: set[int] = set()
        #: listen operation -> its acknowledgment and lifecycle notifications with their times (the drafts)
        self.lifecycle: dict[int, list[tuple[int | None, dict[str, Any]]]] = {}

    def feed(self, index: int, msg: Message) -> None:
        ctx = msg.ctx
        if ctx and self.fold_sse and msg.kind == _TRANSPORT:
            ex = _sse_framing(ctx)
            held = self._exchange_rows.get(ex) if ex is not None else None
            if held is not None:
                steps = self._walk(index, msg)  # the walk still places it (it may name the HTTP session)
                self._count(msg, steps)
                self._operations(steps)
                row, position = held
                row.sse_events += 1
                if isinstance(self.rows, RowSpool):
                    self.rows.changed(row, position)
                return
        row = self.feed_unfolded(index, msg)
        if ctx and self.fold_sse:
            ex = ctx.get("exchange", ctx.get("stream"))
            if isinstance(ex, (int, str)):
                rows = self._exchange_rows
                rows[ex] = (row, len(self.rows) - 1)
                rows.move_to_end(ex)
                if len(rows) > _FOLD_WINDOW:
                    rows.popitem(last=False)

    def feed_unfolded(self, index: int, msg: Message) -> Row:
        """Count ``msg`` and append its row (every record makes exactly one); return that row. Called
        as it is when SSE framing is not folded (:meth:`feed` without its checks: one call less a record)."""
        kind = msg.kind
        extra = msg.extra
        origin = None
        if extra:
            origin = extra.get(ORIGIN_KEY)
            if not isinstance(origin, str):
                origin = None
        steps = self._walk(index, msg)
        self._count(msg, steps)
        session = steps[0].session if steps else 1
        if kind == _MESSAGE:
            row = self._message(index, msg, origin, steps)
        elif kind == Kind.STDERR:
            row = Row(index, kind, None, "stderr", seq=msg.seq, t=msg.t, text=msg.text, origin=origin, session=session)
        elif kind == Kind.INVALID:
            row = Row(index, kind, msg.dir, "invalid", seq=msg.seq, t=msg.t, text=msg.text, origin=origin,
                      session=session)
        elif kind == _TRANSPORT:
            row = Row(index, kind, msg.dir, "transport", seq=msg.seq, t=msg.t,
                      text=_text_of_transport(msg.ctx or {}), origin=origin, session=session)
        elif kind == Kind.BYTES:
            data = msg.raw if isinstance(msg.raw, bytes) else b""
            row = Row(index, kind, msg.dir, "bytes", seq=msg.seq, t=msg.t, text=bytes_text(data), origin=origin,
                      session=session)
        elif kind == Kind.EVENT:
            if origin is None and isinstance(msg.raw, dict) and isinstance(msg.raw.get(ORIGIN_KEY), str):
                origin = msg.raw[ORIGIN_KEY]
            label, text = _event_label(msg.raw)
            row = Row(index, kind, msg.dir, label, seq=msg.seq, t=msg.t, text=text, origin=origin,
                      payload=msg.raw if self.payloads else None, session=session)
        else:  # another kind: counted as a message, as the model's constants are all named above
            row = self._message(index, msg, origin, steps)
        if kind != _MESSAGE and len(steps) > 1:
            self._operations(steps)  # a transport record can end an operation (a client closing its stream)
        self.rows.append(row)
        return row

    def _operations(self, steps: list[Step]) -> None:
        for step in steps:
            if step.kind == "operation" and step.operation is not None:
                self._operation(step.operation)

    def _message(self, index: int, msg: Message, origin: str | None, steps: list[Step]) -> Row:
        d = msg.dir
        if d != "out":
            d = "in"
        modified = msg.modified
        dropped = msg.dropped
        raw = msg.raw
        payloads = self.payloads
        # positional, the members left at their defaults unset: a row per record of a big session
        row = Row(index, msg.kind, d, "", msg.seq, msg.t)
        if modified is not False:
            row.modified = modified
            if payloads and modified:
                row.original = msg.original
        if dropped is not False:
            row.dropped = dropped
        if origin is not None:
            row.origin = origin
        if payloads:
            row.payload = raw
        if steps:
            row.session = steps[0].session
        injected = msg.injected
        if injected is not False:
            row.injected = injected
        if type(raw) is dict:
            first = steps[0]
            kind = first.kind
            ex = first.exchange
            if kind == "request" and ex is not None and ex.role == "call":  # the common case, inline
                row.label = method = ex.method
                row.id = ex.id
                if method == "tools/call":
                    row.tool = ex.target or "unknown_tool"
                if len(steps) > 1:
                    for step in steps[1:]:
                        self._step(row, step, True)
                return row
            if kind == "response" and ex is not None and ex.role == "call":  # its answer, inline
                row.label = "(response)"
                row.id = ex.id
                row.corr = ex.index
                if ex.method == "tools/call":
                    row.tool = ex.target or "unknown_tool"
                t0, t1 = ex.t, msg.t
                if t0 is not None and t1 is not None:
                    row.latency_ms = t1 - t0 if t1 > t0 else 0
                error = raw.get("error")
                if error is not None:
                    row.error = error if isinstance(error, dict) else {"message": error}
                else:
                    result = raw.get("result")
                    if type(result) is dict:
                        if result.get("isError") is True:
                            row.is_error = True
                        elif result.get("resultType") == "input_required":
                            row.input_required = True
                        op = ex.operation
                        if op is not None and op.kind in _PART_KINDS:
                            row.task = op.task_id
                for step in steps[1:]:
                    if step.kind == "operation" and step.operation is not None:
                        self._operation(step.operation)
                    else:
                        self._step(row, step, True)
                return row
            for step in steps:
                self._step(row, step, True)
        elif isinstance(raw, list):
            row.batch = len(raw)
            row.label = "batch"
            for step in steps:
                self._step(row, step, False)
        else:
            row.label = "(not JSON-RPC)"
        return row

    def _step(self, row: Row, step: Step, single: bool) -> None:
        s = self.summary
        kind = step.kind
        if kind == "operation":
            op = step.operation
            if op is not None:
                self._operation(op)
            return
        if kind == "record":
            return
        member = step.member
        if kind == "request":
            if single:
                ex = step.exchange
                assert ex is not None
                row.label = ex.method
                row.id = ex.id
                if ex.method == "tools/call":
                    row.tool = ex.tool
                role = ex.role
                if role != "call":
                    op = ex.operation
                    if op is not None:
                        if role == "round":
                            row.retry_of = op.opening.index
                        elif role != "server":
                            row.part_of = op.opening.index
                            row.task = op.task_id
            return
        if kind == "notification":
            listen = step.operation
            if (listen is not None and listen.kind == STREAM and member is not None
                    and isinstance(member.get("method"), str) and member.get("method") in _LIFECYCLE_METHODS and len(self.lifecycle) < 4096):
                self.lifecycle.setdefault(listen.n, []).append((row.t, member))
            if single and member is not None:
                row.label = cut_repr(member.get("method"))
                op = step.operation
                if op is not None and op.kind in _PART_KINDS:
                    row.part_of = op.opening.index
                    row.task = op.task_id
            return
        if kind == "other":
            if single and member is not None:
                row.label = "(not JSON-RPC)"
                row.id = member.get("id")
            return
        # a response, paired or not
        assert member is not None
        rid = member.get("id")
        if single:
            row.label = "(response)"
            row.id = rid
        error = member.get("error")
        result = member.get("result")
        is_error = False
        if type(result) is dict:
            is_error = result.get("isError") is True
            if single and result.get("resultType") == "input_required":
                row.input_required = True
        ex = step.exchange
        if kind == "orphan" or ex is None:
            if not row.dropped:
                s.orphans.append(row.index)
                row.orphan = True
                self.refs[row.index] = row
            if error is not None:
                err = error if isinstance(error, dict) else {"message": error}
                if single:
                    row.error = err
                text = err.get("message")
                s.errors.append(ErrorItem(row.index, "jsonrpc", None, None, rid, code=err.get("code"),
                                          message=text if isinstance(text, str) else None))
            elif is_error:
                if single:
                    row.is_error = True
                s.errors.append(ErrorItem(row.index, "isError", None, None, rid,
                                          message=first_text(result) if isinstance(result, dict) else None))
            return
        if row.corr is None:
            row.corr = ex.index
        if single:
            row.tool = ex.tool
            if row.latency_ms is None:
                row.latency_ms = ex.latency_ms
            op = ex.operation
            if op is not None and op.kind in _PART_KINDS:
                if ex.role not in ("call", "listen"):
                    row.part_of = op.opening.index
                row.task = op.task_id
            if error is not None:
                row.error = error if isinstance(error, dict) else {"message": error}
            elif is_error:
                row.is_error = True

    def _operation(self, op: Operation) -> None:
        """Count one operation (handed out once, when complete or at the end) into the tally, and keep what
        only ``inspect`` shows of it: its failure as an :class:`ErrorItem`, a listen stream's lifecycle."""
        status, code, message = self.tally.add(op)
        if op.kind == STREAM and op.n in self.lifecycle:
            opening = op.opening
            life = listen_lifecycle(self.lifecycle.pop(op.n))
            if life is not None:
                self.summary.streams.append({"request": opening.index, "subscription": opening.id, **life})
        if status == "error" or status == "isError":
            opening = op.opening
            final = op.final
            answered = final if final is not None else next(
                (ex for ex in reversed(op.exchanges) if ex.response_index is not None), None)
            at = answered.response_index if answered is not None and answered.response_index is not None \
                else opening.index
            self.summary.errors.append(ErrorItem(at, "jsonrpc" if status == "error" else "isError", opening.method,
                                                 opening.tool, opening.id, code=code, message=message,
                                                 request=opening.index))
        # the server's requests it caused (sampling, elicitation, roots) are part of it: their rows show their
        # own answers, the summary counts the operation once, by its outcome

    def finish(self) -> Summary:
        s = self.summary
        rows = self.rows
        held = rows if isinstance(rows, list) else None
        for step in self.walker.finish():
            if step.kind == "operation":
                if step.operation is not None:
                    self._operation(step.operation)
                continue
            ex = step.exchange
            if ex is None:
                continue
            index = ex.index
            ended = step.kind == "ended"
            (self.ended if ended else self.unanswered).add(index)
            row = held[index] if held is not None and index < len(held) and held[index].index == index else None
            if row is None:
                row = Row(index, "message", ex.dir, ex.method, t=ex.t, id=ex.id, tool=ex.tool, session=ex.session)
            if ended:
                row.ended = True
                s.ended.append(index)
            else:
                row.unanswered = True
                s.unanswered.append(index)
            self.refs[index] = row
        s.unanswered.sort()
        s.ended.sort()
        s.errors.sort(key=lambda e: e.row)
        if isinstance(rows, RowSpool):
            rows.unanswered = frozenset(self.unanswered)
            rows.ended = frozenset(self.ended)
        c = self.counts
        s.records, s.messages, s.requests, s.notifications, s.responses = (
            c.records, c.messages, c.requests, c.notifications, c.responses)
        s.client_to_server, s.server_to_client, s.batches, s.modified, s.dropped = (
            c.client_to_server, c.server_to_client, c.batches, c.modified, c.dropped)
        s.stderr, s.invalid, s.transport, s.events, s.byte_chunks, s.raw_bytes = (
            c.stderr, c.invalid, c.transport, c.events, c.byte_chunks, c.raw_bytes)
        tally = self.tally.finish()
        s.operations = tally.operations
        s.methods = tally.methods
        s.tasks = tally.tasks
        s.polls = tally.polls
        s.tools = tally.tools
        s.latency = tally.latency
        return s

    def exact(self) -> bool:
        return self.tally.exact_latency


def analyze(
    session: Session | Iterable[Message],
    *,
    payloads: bool = False,
    info: SessionInfo | None = None,
    rows: str = "list",
    fold_sse: bool = False,
) -> Report:
    """Read ``session`` once and return its :class:`Report`.

    ``payloads=True`` keeps each message (and the original of an edit) on its row, for ``-v`` and
    ``--json``; leave it off for large files, where rows then hold no references to message bodies.
    ``rows``: ``"list"`` keeps the rows in memory, ``"spool"`` in a temporary file (a :class:`RowSpool`,
    flat memory), ``"none"`` not at all (the summary alone). ``fold_sse=True`` (``inspect`` without
    ``-v``) folds the SSE framing events of an HTTP exchange (priming events, comments: no data of their
    own) into the row shown before for that exchange (:attr:`Row.sse_events`) instead of a
    ``(transport) message`` row each.
    """
    if info is None:
        info = session.info if isinstance(session, Session) else SessionInfo()
    store: list[Row] | RowSpool | _NoRows = [] if rows == "list" else (RowSpool() if rows == "spool" else _NoRows())
    a = _Analyzer(payloads, store, fold_sse)
    feed = a.feed if fold_sse else a.feed_unfolded
    for index, msg in enumerate(session):
        feed(index, msg)
    summary = a.finish()
    clients = a.walker.client_sessions() if isinstance(session, Session) else None
    header = Header.of(info)
    header.messages = summary.messages
    if clients is not None:
        header.sessions = [{"index": s.index, "era": s.era, "protocol": s.protocol, "client": s.client,
                            "requests": s.requests, "http_session": s.http_session, "file": s.source_file}
                           for s in clients]
    return Report(header, store, summary, a.refs if not isinstance(store, list) else {}, a.exact())
