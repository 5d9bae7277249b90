"""The normalizer: a session -> tool-call semantics (the import contract, T1a and K2-A).

It reads a session's JSON-RPC messages in (timestamp, source line) order and tells a
:class:`TraceSink` what the tool calls were: a step per ``tools/call`` request, ``tools/list`` request
and ``tools/list`` result; a tool call per matched response; unanswered calls flushed at the end in
request order. It never looks at the clock, so the same input gives the same trace.

Streaming: most sessions are already in time order, so the normalizer streams, keeping only the
pending requests in memory, and restarts once with a full sort if it meets a record out of order. The
episode start time is the smallest timestamp present; events before the first timestamped message wait
in a small buffer for it (past the buffer, a transcript with no times at all takes 0).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from mcpreel import jsonio
from mcpreel.errors import InputError
from mcpreel.model import IdError, Kind, Message, Session, jsonrpc_id
from mcpreel.trace import auth_discovery

__all__ = ["ImportOptions", "ImportReport", "TraceSink", "normalize"]

_BUFFER_LIMIT = 10_000


@dataclass
class ImportOptions:
    episode_id: str = "mcp_episode"
    prompt: str = "<mcp:session>"
    test_id: str | None = None
    strict: bool = False


@dataclass
class ImportReport:
    """What an import saw (the CLI prints it as one line)."""

    messages: int = 0
    tool_calls: int = 0
    answered: int = 0
    unanswered: int = 0
    orphans: int = 0
    steps: int = 0
    warnings: list[str] = field(default_factory=list)
    authorization_discovery: dict[str, Any] = field(default_factory=lambda: dict(auth_discovery.DEFAULT))
    sorted_in_memory: bool = False


class TraceSink(Protocol):
    """What a trace writer implements. ``ts`` is always the running-max timestamp in ms."""

    def start(self, ts: int, discovery: dict[str, Any]) -> None: ...

    def step(self, ts: int, idx: int, name: str, content: str | None, meta: dict[str, Any],
             call_id: str | None, args: Any, is_call: bool) -> None: ...

    def call(self, ts: int, idx: int, name: str, args: Any, result: Any, error: str | None,
             call_id: str | None, response: dict[str, Any] | None) -> None: ...

    def end(self, ts: int, final_output: str | None) -> None: ...

    def reset(self) -> None: ...


class _Restart(Exception):
    """The stream is not in time order: process it again, sorted."""


class _Call:
    __slots__ = ("idx", "name", "args", "id")

    def __init__(self, idx: int, name: str, args: Any, call_id: str | None):
        self.idx = idx
        self.name = name
        self.args = args
        self.id = call_id


def _tools_summary(tools: list[Any]) -> str:
    summary = []
    for tool in tools:
        if not isinstance(tool, dict):
            tool = {}
        name = tool.get("name")
        desc = tool.get("description")
        schema = tool.get("inputSchema", tool.get("input_schema"))
        summary.append({
            "name": name if isinstance(name, str) else "unknown",
            "description": desc if isinstance(desc, str) else None,
            "input_schema": schema,
            "tool_identity": None,
        })
    return jsonio.dumps_str({"tools": summary})


class _Pass:
    """One pass over the records, in an order the caller guarantees or checks."""

    def __init__(self, sink: TraceSink, report: ImportReport, name: str, warn: Callable[[str], None],
                 check_order: bool, start_ts: int | None, discovery: dict[str, Any]):
        self.sink = sink
        self.report = report
        self.name = name
        self.warn = warn
        self.check_order = check_order
        self.discovery = discovery
        self.prev_key: tuple[int, int] = (-1, -1)
        self.start_ts = start_ts
        self.last_ts = start_ts if start_ts is not None else 0
        self.buffer: list[tuple[str, tuple[Any, ...]]] | None = [] if start_ts is None else None
        self.idx = 0
        self.calls: dict[tuple[str, str], _Call] = {}
        self.seen_calls: set[int] = set()
        self.other: dict[tuple[str, str], int] = {}
        self.final_output: str | None = None
        self.committed_zero = False
        self.check_duplicates = check_order  # the sorted pass had its duplicates checked exactly, beforehand
        if start_ts is not None:
            sink.start(start_ts, discovery)

    # -- emitting, through the buffer while the start time is unknown --------------------------------
    def _emit(self, kind: str, args: tuple[Any, ...]) -> None:
        buf = self.buffer
        if buf is not None:
            buf.append((kind, args))
            if len(buf) > _BUFFER_LIMIT:
                self._resolve_start(0, committed=True)
            return
        getattr(self.sink, kind)(self.last_ts, *args)

    def _resolve_start(self, ts: int, committed: bool = False) -> None:
        buf = self.buffer
        self.buffer = None
        self.start_ts = ts
        self.committed_zero = committed
        self.last_ts = max(self.last_ts, ts)
        self.sink.start(ts, self.discovery)
        for kind, args in buf or ():
            getattr(self.sink, kind)(ts, *args)

    # -- one record ----------------------------------------------------------------------------------
    def feed(self, msg: Message) -> None:
        t = msg.t
        line = msg.source or 0
        if self.check_order:
            key = (t if t is not None else 0, line)
            if key < self.prev_key:
                raise _Restart
            self.prev_key = key
        if t is not None:
            if self.buffer is not None:
                self._resolve_start(t)
            elif self.committed_zero and t != 0:
                raise _Restart  # times appeared after a long untimed prefix: redo knowing the start
            if t > self.last_ts:
                self.last_ts = t
        raw = msg.raw
        if type(raw) is dict:
            self.report.messages += 1
            self._member(raw, msg.dir or "in", line)
        elif type(raw) is list:
            for member in raw:
                self.report.messages += 1
                if type(member) is dict:
                    self._member(member, msg.dir or "in", line)

    def _id(self, raw: dict[str, Any], line: int) -> str | None:
        try:
            return jsonrpc_id(raw.get("id"))
        except IdError as exc:
            raise InputError(f"JSON-RPC id on source line {line} {exc}", path=self.name, line=line) from None

    def _member(self, raw: dict[str, Any], d: str, line: int) -> None:
        method = raw.get("method")
        if method is not None:
            rid = self._id(raw, line) if "id" in raw else None
            if method == "tools/call":
                self._tool_call_request(raw, d, rid, line)
            elif method == "tools/list":
                idx = self.idx
                self.idx += 1
                self.report.steps += 1
                self._emit("step", (idx, "tools/list", "{}", {}, rid, None, False))
                if rid is not None:
                    key = (d, rid)
                    self.other[key] = self.other.get(key, 0) + 1
            elif rid is not None:
                key = (d, rid)
                self.other[key] = self.other.get(key, 0) + 1
            return
        if "result" not in raw and "error" not in raw:
            return
        rid = self._id(raw, line)
        key = ("in" if d == "out" else "out", rid)
        is_error = raw.get("error") is not None or "result" not in raw
        result = raw.get("result")
        call = self.calls.pop(key, None) if rid is not None else None
        if call is not None:
            self.report.answered += 1
            if is_error:
                self._emit("call", (call.idx, call.name, call.args, {"error": raw.get("error")}, "mcp_error", rid, raw))
            else:
                self._emit("call", (call.idx, call.name, call.args, result, None, rid, raw))
        elif not is_error and type(result) is dict and type(result.get("tools")) is list:
            idx = self.idx
            self.idx += 1
            self.report.steps += 1
            self._emit("step", (idx, "tools/list.result", _tools_summary(result["tools"]), {}, rid, None, False))
            if rid is not None:
                self._answer_other(key)
            return
        elif rid is not None and not self._answer_other(key):
            self.report.orphans += 1
            self.warn(f"orphan response with JSON-RPC id {jsonio.dumps_str(rid)} on source line {line}: "
                      "no request waits for it (no line written)")
        self.final_output = jsonio.dumps_str(raw.get("error") if is_error else result)

    def _answer_other(self, key: tuple[str, str]) -> bool:
        n = self.other.get(key)
        if not n:
            return False
        if n == 1:
            del self.other[key]
        else:
            self.other[key] = n - 1
        return True

    def _tool_call_request(self, raw: dict[str, Any], d: str, rid: str | None, line: int) -> None:
        params = raw.get("params")
        name = params.get("name") if type(params) is dict else None
        args = params.get("arguments") if type(params) is dict else None
        if not isinstance(name, str):
            self.warn(f"tools/call on source line {line}: missing required field params.name (named unknown_tool)")
            name = "unknown_tool"
        elif type(params) is not dict or "arguments" not in params:
            self.warn(f"tools/call on source line {line}: missing required field params.arguments (args null)")
        self.report.tool_calls += 1
        self.report.steps += 1
        idx = self.idx
        self.idx += 1
        self._emit("step", (idx, name, None, {"jsonrpc_id": rid}, rid, args, True))
        if rid is None:
            self._emit("call", (idx, name, args, None, None, None, None))
            return
        key = (d, rid)
        if self.check_duplicates:
            # every call id ever seen must be remembered; 64-bit hashes keep that small. A hash seen
            # before is a duplicate if the call is still pending, else possibly a hash collision:
            # the sorted pass then decides exactly.
            if key in self.calls:
                raise InputError(f"duplicate tools/call request id {jsonio.dumps_str(rid)} at source line {line}",
                                 path=self.name, line=line)
            h = hash(key)
            if h in self.seen_calls:
                raise _Restart
            self.seen_calls.add(h)
        self.calls[key] = _Call(idx, name, args, rid)

    def finish(self) -> None:
        if self.buffer is not None:
            self._resolve_start(0)
        for call in self.calls.values():
            self.report.unanswered += 1
            self.sink.call(self.last_ts, call.idx, call.name, call.args, None, "timeout/no_response", call.id, None)
        self.sink.end(self.last_ts, self.final_output)


def _records(session: Iterable[Message]) -> Iterable[Message]:
    for msg in session:
        if msg.kind == Kind.MESSAGE and not msg.dropped:
            yield msg


def normalize(
    session: Session,
    sink: TraceSink,
    *,
    warn: Callable[[str], None] | None = None,
) -> ImportReport:
    """Run the import contract over ``session`` into ``sink``; returns what it saw.

    Raises :class:`InputError` for what the contract refuses (ids of the wrong type, duplicate
    ``tools/call`` ids). Warnings (orphans, missing fields) go to ``warn``.
    """
    name = session.info.path or "<session>"
    warnings: list[str] = []

    def _warn(text: str) -> None:
        warnings.append(text)
        if warn is not None:
            warn(text)

    discovery = dict(auth_discovery.DEFAULT)
    if session.info.transport in ("streamable-http", "sse"):
        discovery = auth_discovery.summarize(session)

    report = ImportReport(authorization_discovery=discovery)
    try:
        p = _Pass(sink, report, name, _warn, True, None, discovery)
        for msg in _records(session):
            p.feed(msg)
        p.finish()
    except _Restart:
        # out of time order (or times after a long untimed prefix): sort everything, then one pass.
        # Duplicate ids are checked in source order first, so the error names the later line.
        sink.reset()
        warnings.clear()
        report = ImportReport(authorization_discovery=discovery, sorted_in_memory=True)
        records = list(_records(session))
        _check_duplicates(records, name)
        records.sort(key=lambda m: (m.t if m.t is not None else 0, m.source or 0))
        start = min((m.t for m in records if m.t is not None), default=0)
        p = _Pass(sink, report, name, _warn, False, start, discovery)
        for msg in records:
            p.feed(msg)
        p.finish()
    report.warnings = warnings
    if report.tool_calls == 0:
        _warn("no tool calls found (the trace holds no tool_call events)")
    return report


def _check_duplicates(records: list[Message], name: str) -> None:
    seen: set[tuple[str, str]] = set()
    for msg in records:
        for raw in msg.members():
            if raw.get("method") != "tools/call" or raw.get("id") is None:
                continue
            line = msg.source or 0
            try:
                rid = jsonrpc_id(raw.get("id"))
            except IdError as exc:
                raise InputError(f"JSON-RPC id on source line {line} {exc}", path=name, line=line) from None
            key = (msg.dir or "in", rid)
            if key in seen:
                raise InputError(f"duplicate tools/call request id {jsonio.dumps_str(rid)} at source line {line}",
                                 path=name, line=line)
            seen.add(key)
