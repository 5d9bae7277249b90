"""The normalizer: a session -> tool-call semantics (the import contract, T1a and K2-A).

It reads a session's JSON-RPC messages in (timestamp, source line) order and tells a
:class:`TraceSink` what the tool calls were: a step per ``tools/call`` request, ``tools/list`` request
and ``tools/list`` result; a result per matched response; unanswered calls flushed at the end in
request order. It never looks at the clock, so the same input gives the same trace.

Correlation is by (direction of the request, id). Messages without a direction (bare JSON-RPC) take
the rule of :class:`mcpreel.formats.jsonrpc.DirectionGuesser`: a request goes in unless only servers
send its method; a response answers a pending server request with its id if there is one, else a
client request. A ``tools/call`` that reuses the id of one still waiting queues behind it (first in, first
out: the one pairing rule, :class:`mcpreel.operations.walk.Walker`); a call the proxy dropped is kept in
the trace, marked, and only the proxy's own (injected) answer answers it. Both are read in the sorted
pass (a reel's wire blocks say how many dropped records they left out, :attr:`WireBlock.dropped`).

Speed: this is the hot path of a gigabyte import. It consumes :class:`~mcpreel.model.WireBlock`\\ s
(plain lists, no objects per message), handles the two messages that make up nearly every transcript
(a ``tools/call`` request and its response) inline, and sends everything else down a general path.
Most sessions are already in time order, so it streams and restarts once with a full sort only if it
meets a record out of order. The episode start is the smallest timestamp present; events before the
first timed message wait in a buffer for it (past the buffer, a transcript with no time takes 0).
"""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from mcpreel._infra import jsonio
from mcpreel.errors import FormatError, InputError
from mcpreel.model import IdError, Kind, Message, Session, WireBlock, is_server_method, jsonrpc_id
from mcpreel.operations.walk import placed
from mcpreel.toolcalls import auth_discovery

__all__ = ["ImportOptions", "ImportReport", "TraceSink", "normalize"]

_BUFFER_LIMIT = 10_000
# the timestamp of an event whose episode start is not known yet: below every time a session can hold
# (a real time of -1 ms, 1969-12-31T23:59:59.999Z, must not read as "unknown")
_UNKNOWN = float("-inf")


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
    notes: list[str] = field(default_factory=list)  # what the reader said about the file
    authorization_discovery: dict[str, Any] = field(default_factory=lambda: dict(auth_discovery.DEFAULT))
    sorted_in_memory: bool = False


class TraceSink(Protocol):
    """What a trace writer implements. ``ts`` is the running-max timestamp in ms; ``idx`` the step.

    The normalizer walks the session once and says what happened in these words; each trace format
    (:class:`~mcpreel.toolcalls.assay_v2.AssayV2Sink`, :class:`~mcpreel.toolcalls.simple.SimpleSink`)
    decides what of it to write, so a new trace format is one sink, not another walk."""

    def start(self, ts: int, discovery: dict[str, Any]) -> None:
        """The episode begins (``discovery``: what the session showed of the server's authorization)."""

    def call_step(self, ts: int, idx: int, name: str, rid: str | None, args: Any, *, dropped: bool = False) -> None:
        """A ``tools/call`` was asked (``rid``: its id as text, None for one without an id; ``dropped``: the
        proxy dropped it, so it never reached the server)."""

    def list_step(self, ts: int, idx: int) -> None:
        """A ``tools/list`` was asked."""

    def list_result_step(self, ts: int, idx: int, content: str) -> None:
        """The tools were listed (``content``: the listing as JSON text)."""

    def call_result(self, ts: int, idx: int, name: str, args: Any, result: Any, rid: str) -> None:
        """A tool call was answered with a result."""

    def call_error(self, ts: int, idx: int, name: str, args: Any, error: Any, rid: str) -> None:
        """A tool call was answered with a JSON-RPC error."""

    def call_unanswered(self, ts: int, idx: int, name: str, args: Any, rid: str) -> None:
        """A tool call never got an answer before the session ended (a timeout, to a trace)."""

    def call_uncorrelated(self, ts: int, idx: int, name: str, args: Any) -> None:
        """A tool call whose answer cannot be paired with it (no id)."""

    def end(self, ts: int, final_output: str | None) -> None:
        """The episode ends (``final_output``: the last text the tools returned, if any)."""

    def reset(self) -> None:
        """Start the trace again from the beginning (the normalizer found it must sort the session first)."""


class _Buffer:
    """Holds events until the episode start is known, then replays them into the real sink."""

    def __init__(self) -> None:
        self.events: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Callable[..., None]:
        events = self.events

        def record(*args: Any, **kwargs: Any) -> None:
            events.append((name, args, kwargs))

        return record

    def replay(self, sink: TraceSink, start: int) -> None:
        for name, args, kwargs in self.events:
            if args[0] == _UNKNOWN:
                args = (start, *args[1:])
            getattr(sink, name)(*args, **kwargs)
        self.events.clear()


class _Restart(Exception):
    """The stream is not in time order (or a call id hash repeats): process it again, sorted."""


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


def _may_repeat_int(rid: str, watermark: int) -> bool:
    """Could this string id equal an integer id below the watermark (not remembered exactly)?"""
    return rid.isascii() and rid.isdigit() and (len(rid) > 4000 or int(rid) <= watermark)


#: the key of a pending request: its id, or ``(scope, id)`` in a merged file (each server's ids apart)
_Key = str | tuple[str, str]


def _take(pending: dict[_Key, int], rid: _Key) -> bool:
    n = pending.get(rid)
    if not n:
        return False
    if n == 1:
        del pending[rid]
    else:
        pending[rid] = n - 1
    return True


class _Pass:
    """One pass over the wire blocks, in an order the caller guarantees (sorted) or checks (streaming)."""

    def __init__(self, sink: TraceSink, name: str, warn: Callable[[str], None], discovery: dict[str, Any],
                 *, streaming: bool, start_ts: int | None):
        self.real_sink = sink
        self.name = name
        self.warn = warn
        self.discovery = discovery
        self.streaming = streaming
        self.report = ImportReport(authorization_discovery=discovery, sorted_in_memory=not streaming)
        self.idx = 0
        # tools/call requests waiting for an answer, by id: from the client (nearly all) and the server
        self.calls_in: dict[_Key, tuple[int, str, Any]] = {}
        self.calls_out: dict[_Key, tuple[int, str, Any]] = {}
        # Duplicate tools/call ids are refused, so every id must be remembered -- cheaply: integer ids
        # that keep rising (every SDK counts) only move a watermark; other ids leave their hash in
        # `seen`. An id that might repeat one not remembered exactly sends the streaming pass to the
        # exact sorted pass.
        self.max_int_id = -1
        self.seen: set[int] = set()
        # other requests waiting for an answer (counts by id), from the client and the server
        self.other_in: dict[_Key, int] = {}
        self.other_out: dict[_Key, int] = {}
        # the sorted pass only: a tools/call that reused the id of one still waiting, behind it (first in,
        # first out: the one pairing rule, :class:`mcpreel.operations.walk.Walker`), by the key it waits under
        self.queued: dict[_Key, deque[tuple[int, str, Any]]] = {}
        # the sorted pass only: each record's intercept mark (``dropped``, ``injected``), by its place in the block
        self.marks: list[str | None] | None = None
        # requests the proxy dropped, waiting for the proxy's own answer: (direction, key) -> their calls
        # (None for a request that is not a tools/call), first in, first out
        self.dropped: dict[tuple[str, _Key], deque[tuple[int, str, Any] | None]] = {}
        self.last_response: dict[str, Any] | None = None
        self.prev_t = 0
        self.committed_zero = False
        if start_ts is None:
            self.sink: Any = _Buffer()
            self.last_ts = _UNKNOWN
        else:
            sink.start(start_ts, discovery)
            self.sink = sink
            self.last_ts = start_ts

    # -- the episode start ----------------------------------------------------------------------------
    def _resolve_start(self, start: int) -> None:
        buf = self.sink
        self.real_sink.start(start, self.discovery)
        buf.replay(self.real_sink, start)
        self.sink = self.real_sink
        if self.last_ts == _UNKNOWN:
            self.last_ts = start

    # -- ids ----------------------------------------------------------------------------------------------
    def _bad_id(self, raw: dict[str, Any], line: int) -> str | None:
        try:
            return jsonrpc_id(raw.get("id"))
        except IdError as exc:
            raise InputError(f"JSON-RPC id on source line {line} {exc}", path=self.name, line=line) from None

    # -- the blocks -----------------------------------------------------------------------------------------
    def run(self, blocks: Any) -> ImportReport:
        for block in blocks:
            if block.dropped and self.streaming:
                raise _Restart  # a dropped call is in the trace: its record (and its mark) is read in the sorted pass
            self._block(block)
            if isinstance(self.sink, _Buffer) and len(self.sink.events) > _BUFFER_LIMIT:
                self.committed_zero = True
                self._resolve_start(0)
        if isinstance(self.sink, _Buffer):
            self._resolve_start(0)
        sink = self.sink
        pending = list(self.calls_in.items())
        if self.calls_out or self.queued or self.dropped:
            pending += self.calls_out.items()
            pending += ((key, call) for key, calls in self.queued.items() for call in calls)
            pending += ((key, call) for (_, key), calls in self.dropped.items() for call in calls if call is not None)
            pending.sort(key=lambda item: item[1][0])
        for key, (idx, name, args) in pending:  # in request order
            self.report.unanswered += 1
            sink.call_unanswered(self.last_ts, idx, name, args, key if type(key) is str else key[1])
        final = None
        last = self.last_response
        if last is not None:
            final = jsonio.dumps_str(last.get("error") if last.get("error") is not None or "result" not in last else last.get("result"))
        sink.end(self.last_ts, final)
        return self.report

    def _block(self, block: WireBlock) -> None:
        if self.streaming and block.scopes is None:
            self._fast_block(block)
        else:
            self._general_block(block)

    def _general_block(self, block: WireBlock) -> None:
        """Any block, one record at a time through :meth:`_record` (the sorted pass, merged files)."""
        raws = block.raws
        dirs = block.dirs
        times = block.times
        sources = block.sources
        scopes = block.scopes
        marks = self.marks
        streaming = self.streaming
        if times is None and streaming and self.prev_t > 0:
            raise _Restart  # untimed messages (time 0) after timed ones: out of order
        for i, raw in enumerate(raws):
            line = sources[i] if sources is not None else block.first_source + i
            if times is not None:
                t = times[i]
                if t is None:
                    if streaming and self.prev_t > 0:
                        raise _Restart
                else:
                    if streaming:
                        if t < self.prev_t:
                            raise _Restart
                        self.prev_t = t
                    if self.last_ts == _UNKNOWN:
                        self._resolve_start(t)
                    elif self.committed_zero and t != 0:
                        raise _Restart  # times after a long untimed prefix: redo knowing the start
                    if t > self.last_ts:
                        self.last_ts = t
            self._record(raw, dirs[i] if dirs is not None else None, line, scopes[i] if scopes is not None else None,
                         marks[i] if marks is not None else None)

    def _record(self, raw: Any, d: str | None, line: int, scope: str | None = None, mark: str | None = None) -> None:
        if type(raw) is dict:
            self.report.messages += 1
            self._general(raw, d, line, scope, mark)
        elif type(raw) is list:
            for member in raw:
                self.report.messages += 1
                if type(member) is dict:
                    self._general(member, d, line, scope, mark)
        else:
            raise FormatError(f"source line {line} must be a JSON-RPC object or batch array, found {jsonio.type_name(raw)}",
                              path=self.name, line=line)

    def _fast_block(self, block: WireBlock) -> None:
        """The hot loop of a streaming pass over one server's records (bare JSON-RPC, or with times and
        directions: a reel).

        A client's ``tools/call`` and its successful answer are handled inline, with the step counter,
        the id watermark and the times in locals; everything else goes down :meth:`_general`, which
        gives the same outcome more slowly (the locals are handed over around each such call). The
        sorted pass and a merged file's scoped records take the general loop of :meth:`_block`.
        """
        raws = block.raws
        times = block.times
        dirs = block.dirs
        sources = block.sources
        if times is None and self.prev_t > 0:
            raise _Restart  # untimed messages (time 0) after timed ones: out of order
        calls_in = self.calls_in
        seen = self.seen
        seen_add = seen.add
        other_out = self.other_out
        sink = self.sink
        call_step = sink.call_step
        call_result = sink.call_result
        ts = self.last_ts
        prev_t = self.prev_t
        committed_zero = self.committed_zero
        idx = self.idx
        max_id = self.max_int_id
        n_messages = n_calls = n_answered = 0
        line = block.first_source - 1
        last_response = None
        d = None
        for i, raw in enumerate(raws):
            line = sources[i] if sources is not None else line + 1
            if dirs is not None:
                d = dirs[i]
            if times is not None:
                t = times[i]
                if t is None:
                    if prev_t > 0:
                        raise _Restart
                else:
                    if t < prev_t:
                        raise _Restart
                    prev_t = t
                    if ts == _UNKNOWN:
                        self._resolve_start(t)
                        ts = self.last_ts
                        sink = self.sink
                        call_step = sink.call_step
                        call_result = sink.call_result
                    elif committed_zero and t != 0:
                        raise _Restart  # times after a long untimed prefix: redo knowing the start
                    if t > ts:
                        ts = t
            if type(raw) is dict:
                n_messages += 1
                method = raw.get("method")
                if method == "tools/call":
                    params = raw.get("params")
                    rid: Any = raw.get("id")  # told apart by type() below: the hot loop's cheapest test
                    if d != "out" and type(params) is dict and type(params.get("name")) is str and "arguments" in params:
                        tr = type(rid)
                        if tr is int and rid > max_id:
                            # a counter's next id cannot repeat an earlier integer id; only a string id
                            # with the same text could, and those are in `seen`
                            max_id = rid
                            rid = str(rid)
                            if seen and hash(rid) in seen:
                                self._duplicate(rid, calls_in, line)
                        elif tr is str and not _may_repeat_int(rid, max_id):
                            h = hash(rid)
                            if h in seen:
                                self._duplicate(rid, calls_in, line)
                            seen_add(h)
                        else:
                            rid = None
                        if rid is not None:
                            name = params["name"]
                            args = params["arguments"]
                            calls_in[rid] = (idx, name, args)
                            call_step(ts, idx, name, rid, args)
                            idx += 1
                            n_calls += 1
                            continue
                elif method is None and d != "in" and "result" in raw:
                    rid = raw.get("id")
                    tr = type(rid)
                    if tr is int:
                        rid = str(rid)
                    # with no direction, a response whose id a server request waits for goes in
                    if (tr is int or tr is str) and (d is not None or not (other_out and rid in other_out)) \
                            and raw.get("error") is None:
                        call = calls_in.pop(rid, None)
                        if call is not None:
                            n_answered += 1
                            call_result(ts, call[0], call[1], call[2], raw["result"], rid)
                            last_response = raw
                            continue
            if last_response is not None:
                self.last_response = last_response
                last_response = None
            self.idx, self.max_int_id, self.last_ts = idx, max_id, ts
            if type(raw) is dict:
                self._general(raw, d, line)
            else:
                self._record(raw, d, line)
            idx, max_id = self.idx, self.max_int_id
        if last_response is not None:
            self.last_response = last_response
        self.idx, self.max_int_id, self.last_ts, self.prev_t = idx, max_id, ts, prev_t
        r = self.report
        r.messages += n_messages
        r.tool_calls += n_calls
        r.steps += n_calls
        r.answered += n_answered

    def _duplicate(self, rid: str, calls: dict[_Key, Any], line: int) -> None:
        """A tools/call id whose hash was seen before."""
        if self.streaming:
            # the sorted pass decides exactly, per client session: a file of several sessions (a proxy that
            # recorded many clients, a session per call) numbers its ids again in each
            raise _Restart
        # sorted pass: duplicates were refused exactly beforehand (:func:`_sorted_records`), so this is a
        # hash collision or an id reused while the first is pending (:meth:`_wait` queues it)

    # -- everything else --------------------------------------------------------------------------------
    def _general(self, raw: dict[str, Any], d: str | None, line: int, scope: str | None = None,
                 mark: str | None = None) -> None:
        """Any message. ``scope`` (a merged file's source) keeps each server's ids apart: the key of a
        pending request is then ``(scope, id)``. ``mark`` is the record's intercept mark (sorted pass):
        a request the proxy dropped never reached the server, and only the proxy's own (injected) answer
        answers it, as the walk pairs it; an answer the proxy dropped never reached the client."""
        sink = self.sink
        report = self.report
        method = raw.get("method")
        if mark == "dropped":
            self._dropped(raw, d, line, scope, method)
            return
        if method is not None:
            rid = self._bad_id(raw, line) if "id" in raw else None
            key = rid if scope is None or rid is None else (scope, rid)
            if d is None:
                d = "out" if isinstance(method, str) and is_server_method(method) else "in"
            if method == "tools/call":
                self._tool_call(raw, d, rid, line, scope)
            elif method == "tools/list":
                idx = self.idx
                self.idx += 1
                report.steps += 1
                sink.list_step(self.last_ts, idx)
                if key is not None:
                    pending = self.other_in if d == "in" else self.other_out
                    pending[key] = pending.get(key, 0) + 1
            elif key is not None:
                pending = self.other_in if d == "in" else self.other_out
                pending[key] = pending.get(key, 0) + 1
            return
        if "result" not in raw and "error" not in raw:
            return
        rid = self._bad_id(raw, line)
        key = rid if scope is None or rid is None else (scope, rid)
        if d is None:
            d = "in" if key is not None and self.other_out.get(key) else "out"
        calls, other = (self.calls_in, self.other_in) if d == "out" else (self.calls_out, self.other_out)
        is_error = raw.get("error") is not None or "result" not in raw
        result = raw.get("result")
        call = calls.pop(key, None) if key is not None else None
        if call is not None and key is not None and self.queued:
            behind = self.queued.get(key)
            if behind:
                calls[key] = behind.popleft()  # the next call that reused the id now waits under it
                if not behind:
                    del self.queued[key]
        if call is None and mark == "injected" and key is not None and not (key in other and other[key]):
            waiting = self.dropped.get(("in" if d == "out" else "out", key))
            if waiting:
                found = waiting.popleft()
                if found is None:
                    self.last_response = raw  # the proxy's answer to a dropped request that is not a tool call
                    return
                call = found
        if call is not None:
            report.answered += 1
            idx, name, args = call
            if is_error:
                sink.call_error(self.last_ts, idx, name, args, raw.get("error"), rid)
            else:
                sink.call_result(self.last_ts, idx, name, args, result, rid)
        elif not is_error and type(result) is dict and type(result.get("tools")) is list:
            idx = self.idx
            self.idx += 1
            report.steps += 1
            sink.list_result_step(self.last_ts, idx, _tools_summary(result["tools"]))
            if key is not None:
                _take(other, key)
            return
        elif key is not None and not _take(other, key):
            report.orphans += 1
            self.warn(f"orphan response with JSON-RPC id {jsonio.dumps_str(rid)} on source line {line}: "
                      "no request waits for it (no line written)")
        self.last_response = raw

    def _tool_call(self, raw: dict[str, Any], d: str, rid: str | None, line: int, scope: str | None = None) -> None:
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
        sink = self.sink
        sink.call_step(self.last_ts, idx, name, rid, args)
        if rid is None:
            sink.call_uncorrelated(self.last_ts, idx, name, args)
            return
        calls = self.calls_in if d == "in" else self.calls_out
        if scope is not None:
            # a merged file: each server counts its own ids, so no watermark holds across them. The
            # sorted pass refused duplicates per server beforehand; here only the key is kept apart.
            if self.streaming:
                raise _Restart
            self._wait(calls, (scope, rid), (idx, name, args))
            return
        watermarked = False
        if d == "in" and self.streaming:
            raw_id = raw.get("id")
            if (type(raw_id) is int and raw_id <= self.max_int_id) or _may_repeat_int(rid, self.max_int_id):
                if rid in calls:
                    self._duplicate(rid, calls, line)
                raise _Restart  # it may repeat an id below the watermark: decide exactly
            if type(raw_id) is int:
                self.max_int_id = raw_id
                watermarked = True
        h = hash(rid) if d == "in" else hash(("out", rid))
        if h in self.seen:
            self._duplicate(rid, calls, line)
        if not watermarked:  # a rising integer id is remembered by the watermark alone, as in the hot loop
            self.seen.add(h)
        if self.streaming:
            calls[rid] = (idx, name, args)
        else:
            self._wait(calls, rid, (idx, name, args))

    def _wait(self, calls: dict[_Key, tuple[int, str, Any]], key: _Key, call: tuple[int, str, Any]) -> None:
        """A tools/call waits for its answer under ``key``; behind the one already waiting there when its
        id was reused while that one is pending (the sorted pass: :func:`_sorted_records` let only that
        reuse through). The answers go first in, first out, as the walk pairs them."""
        if key in calls:
            self.queued.setdefault(key, deque()).append(call)
        else:
            calls[key] = call

    def _dropped(self, raw: dict[str, Any], d: str | None, line: int, scope: str | None, method: Any) -> None:
        """A record the proxy dropped (an intercept drop; the sorted pass). A dropped ``tools/call`` is in
        the trace as the client asked it, with its mark (``dropped`` in the step's meta); it waits for
        the proxy's own answer alone (:meth:`_general`), else it is unanswered at the end. Any other
        dropped request waits for that answer too (so it is no orphan); a dropped answer never reached
        the client: it answers nothing."""
        if method is None or "id" not in raw:
            return
        rid = self._bad_id(raw, line)
        if d is None:
            d = "out" if isinstance(method, str) and is_server_method(method) else "in"
        key: _Key | None = rid if scope is None or rid is None else (scope, rid)
        call: tuple[int, str, Any] | None = None
        if method == "tools/call":
            params = raw.get("params")
            name = params.get("name") if type(params) is dict else None
            args = params.get("arguments") if type(params) is dict else None
            if not isinstance(name, str):
                name = "unknown_tool"
            self.report.tool_calls += 1
            self.report.steps += 1
            idx = self.idx
            self.idx += 1
            self.sink.call_step(self.last_ts, idx, name, rid, args, dropped=True)
            if rid is None:
                self.sink.call_uncorrelated(self.last_ts, idx, name, args)
                return
            call = (idx, name, args)
        if key is not None:
            self.dropped.setdefault((d, key), deque()).append(call)


@contextmanager
def _no_cyclic_gc():
    """Parsed JSON has no reference cycles, but millions of fresh containers make the cyclic
    collector scan every live block again and again (a third of an import's time): pause it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def normalize(session: Session, sink: TraceSink, *, warn: Callable[[str], None] | None = None) -> ImportReport:
    """Run the import contract over ``session`` into ``sink``; returns what it saw.

    Raises :class:`InputError` for what the contract refuses (ids of the wrong type, duplicate
    ``tools/call`` ids). Warnings (orphans, missing fields) go to ``warn``: as they happen on a sorted
    pass, and at the end of a streaming pass, since a streaming pass that meets a record out of time
    order is thrown away with what it said (its warnings would come twice, and an "orphan" there may
    find its request once the records are sorted).
    """
    name = session.info.path or "<session>"
    warnings: list[str] = []

    def _held(text: str) -> None:
        warnings.append(text)

    def _warn(text: str) -> None:
        warnings.append(text)
        if warn is not None:
            warn(text)

    discovery = dict(auth_discovery.DEFAULT)
    if session.info.transport in ("streamable-http", "sse"):
        discovery = auth_discovery.summarize(session)
    with _no_cyclic_gc():
        return _normalize(session, sink, name, warnings, _held, _warn, warn, discovery)


def _normalize(session: Session, sink: TraceSink, name: str, warnings: list[str], _held: Callable[[str], None],
               _warn: Callable[[str], None], warn: Callable[[str], None] | None, discovery: dict[str, Any]) -> ImportReport:
    try:
        report = _Pass(sink, name, _held, discovery, streaming=True, start_ts=None).run(session.wire_blocks())
    except _Restart:
        # Out of time order (or times after a long untimed prefix, a dropped call, a reused id): sort
        # everything, then one pass. Duplicate ids are checked in source order first, so the error names
        # the later line.
        sink.reset()
        warnings.clear()
        records = _sorted_records(session, name)
        start = min((r[0] for r in records if r[0] is not None), default=0)
        scopes = [r[4] for r in records]
        block = WireBlock([r[2] for r in records], 0, [r[1] for r in records], [r[3] for r in records], [r[0] for r in records],
                          scopes if any(s is not None for s in scopes) else None)
        sorted_pass = _Pass(sink, name, _warn, discovery, streaming=False, start_ts=start)
        marks = [r[5] for r in records]
        sorted_pass.marks = marks if any(m is not None for m in marks) else None
        report = sorted_pass.run([block])
    else:
        if warn is not None:
            for text in warnings:  # the streaming pass stood: what it noticed is final
                warn(text)
    report.warnings = warnings
    if report.tool_calls == 0:
        _warn("no tool calls found (the trace holds no tool_call events)")
    return report


#: a record of the sorted pass: time, source line, payload, direction, scope (client session or merged
#: file), intercept mark (``dropped``, ``injected`` or None)
_SortedRecord = tuple[int | None, int, Any, str | None, str | None, str | None]


def _mark(msg: Message) -> str | None:
    return "dropped" if msg.dropped else "injected" if msg.injected else None


def _session_scoped(session: Session) -> Iterator[_SortedRecord]:
    """The wire payloads with their client session as the scope (the one reading's split) and their
    intercept mark, when the file holds more than one client session or a record the proxy dropped; the
    reader's own blocks (a merged file's scopes) otherwise."""
    records: list[_SortedRecord] = []
    sessions: set[int] = set()
    marked = False
    for index, msg in placed(session):
        if msg.kind != Kind.MESSAGE:
            continue
        sessions.add(index)
        mark = _mark(msg)
        marked = marked or mark == "dropped"
        records.append((msg.t, msg.source or 0, msg.raw, msg.dir, str(index), mark))
    if len(sessions) > 1 or marked:
        yield from records
        return
    del records
    for block in session.wire_blocks():
        for i, raw in enumerate(block.raws):
            line = block.sources[i] if block.sources is not None else block.first_source + i
            t = block.times[i] if block.times is not None else None
            d = block.dirs[i] if block.dirs is not None else None
            scope = block.scopes[i] if block.scopes is not None else None
            yield (t, line, raw, d, scope, None)


def _sorted_records(session: Session, name: str) -> list[_SortedRecord]:
    """Every payload in time order, refusing a ``tools/call`` id used twice within one client session
    (the contract's "one transcript"; a merged file's source is a session of its own), unless the first
    is still waiting for its answer: a reused pending id, which pairs first in, first out as the walk
    pairs it (``docs/explanation/operations.md``, "The reused-id rule"). Waiting is read in source
    order, as the walk reads it; a dropped request or answer never took part in it."""
    records: list[_SortedRecord] = []
    seen: set[tuple[str | None, str, str | None]] = set()
    waiting: dict[tuple[str | None, str, str | None], int] = {}
    for record in _session_scoped(session):
        t, line, raw, d, scope, mark = record
        records.append(record)
        if mark == "dropped":
            continue
        for m in raw if type(raw) is list else (raw,):
            if type(m) is not dict or m.get("id") is None:
                continue
            method = m.get("method")
            if method is None:
                if waiting and ("result" in m or "error" in m):  # an answer: the call it answers waits no more
                    try:
                        key = (scope, "out" if d == "in" else "in", jsonrpc_id(m.get("id")))
                    except IdError:
                        continue  # refused where the pass reads it, naming its line
                    if waiting.get(key):
                        waiting[key] -= 1
                continue
            if method != "tools/call":
                continue
            try:
                rid = jsonrpc_id(m.get("id"))
            except IdError as exc:
                raise InputError(f"JSON-RPC id on source line {line} {exc}", path=name, line=line) from None
            key = (scope, d or "in", rid)
            if key in seen and not waiting.get(key):
                raise InputError(f"duplicate tools/call request id {jsonio.dumps_str(rid)} at source line {line}",
                                 path=name, line=line)
            seen.add(key)
            waiting[key] = waiting.get(key, 0) + 1
    records.sort(key=lambda r: (r[0] if r[0] is not None else 0, r[1]))
    return records
