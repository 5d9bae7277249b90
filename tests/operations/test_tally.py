"""The one tally of a session (:mod:`mcpreel.operations.tally`): ``inspect``'s analyzer, the report's collector
and the corpus accumulator give the same figures as one :class:`SessionTally` fed by the walk.

In memory and fast (this replaced most of what ``tests/test_one_truth.py`` and ``tests/corpus/test_counts.py``
checked on real recordings): both eras, several client sessions in one file (HTTP sessions, a second
``initialize``), a merged file, a task, a listen stream, a reused pending id, dropped calls (answered by the
proxy and not), failures of every kind. Where the verbs have always differed in a detail (a dropped call nobody
answered: ``unanswered`` in the report's and the corpus's figures, ``dropped`` only in ``inspect``'s tool row),
the test says so. The records and messages by kind (:class:`RecordCounts`) and who spoke (:class:`Identity`)
are checked here too; ``tests/test_one_truth.py`` holds all three verbs to the one tally on every fixture file
and on these sessions written as reels (:mod:`tests.operations.synthetic`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpreel.corpus.index import _FileReader, _Indexer
from mcpreel.corpus.schema import column_names
from mcpreel.inspection import analyze
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.operations.facts import META_RELATED_TASK, META_SUBSCRIPTION_ID, ORIGIN_KEY
from mcpreel.operations.tally import IDENTITY_PROBES, OK, Identity, RecordCounts, SessionTally, percentile
from mcpreel.operations.walk import Operation, Walker
from mcpreel.report.data import collect

from .helpers import T0, c, err, note, ok, req, s


def call(rid: Any, name: str, **params: Any) -> dict[str, Any]:
    return req(rid, "tools/call", {"name": name, "arguments": {}, **params})


def text(rid: Any, words: str = "done", *, is_error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": words}]}
    if is_error:
        result["isError"] = True
    return ok(rid, result)


LEGACY_INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "cli", "version": "1"}}


def _legacy(t: int = 0, **kw: Any) -> list[Message]:
    """A 2025-11-25 session: ok, error, isError, unanswered calls, an orphan error, a slow list."""
    return [c(req(1, "initialize", LEGACY_INIT), t, **kw),
            s(ok(1, {"protocolVersion": "2025-11-25", "serverInfo": {"name": "srv", "version": "2"}}), t + 3, **kw),
            c(note("notifications/initialized"), t + 4, **kw),
            c(req(2, "tools/list"), t + 5, **kw), s(ok(2, {"tools": [{"name": "echo"}]}), t + 50, **kw),
            c(call(3, "echo"), t + 60, **kw), s(text(3), t + 62, **kw),
            c(call(4, "echo"), t + 70, **kw), s(text(4), t + 90, **kw),
            c(call(5, "fail"), t + 100, **kw), s(err(5, -32602, "bad"), t + 101, **kw),
            c(call(6, "fail"), t + 110, **kw), s(text(6, "boom", is_error=True), t + 140, **kw),
            c(call(7, "hang"), t + 150, **kw),
            s(err(99, -32000, "who asked"), t + 160, **kw)]


def _modern(t: int = 0) -> list[Message]:
    """A 2026-07-28 session: discover, a multi-round-trip call, a listen stream the client cancels."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "sdk", "version": "9"}}
    return [c(req(1, "server/discover", {"_meta": meta}), t),
            s(ok(1, {"supportedVersions": ["2026-07-28"], "serverInfo": {"name": "new", "version": "1"}}), t + 2),
            c(req("L", "subscriptions/listen", {"notifications": {"toolsListChanged": True}, "_meta": meta}), t + 5),
            s(note("notifications/subscriptions/acknowledged", {"_meta": {META_SUBSCRIPTION_ID: "L"}}), t + 6),
            c(call(2, "greet", _meta=meta), t + 10),
            s(ok(2, {"resultType": "input_required", "requestState": "S1", "inputRequests": {}}), t + 15),
            c(call(3, "greet", requestState="S1", inputResponses={}, _meta=meta), t + 40),
            s(text(3, "hello"), t + 47),
            c(call(4, "greet", _meta=meta), t + 50), s(text(4), t + 51),
            c(note("notifications/cancelled", {"requestId": "L"}), t + 60)]


def _task(status: str) -> dict[str, Any]:
    return {"taskId": "T1", "status": status, "ttl": 60000, "createdAt": "2026-01-01T00:00:00Z",
            "lastUpdatedAt": "2026-01-01T00:00:00Z", "pollInterval": 500}


def _with_task() -> list[Message]:
    final = {"content": [{"type": "text", "text": "report"}], "_meta": {META_RELATED_TASK: {"taskId": "T1"}}}
    return [*_legacy()[:3],
            c(call(2, "research", task={"ttl": 60000}), 10), s(ok(2, {"task": _task("working")}), 12),
            c(req(3, "tasks/get", {"taskId": "T1"}), 500), s(ok(3, _task("working")), 502),
            c(req(4, "tasks/get", {"taskId": "T1"}), 1000), s(ok(4, _task("completed")), 1003),
            c(req(5, "tasks/result", {"taskId": "T1"}), 1010), s(ok(5, final), 1020)]


def _http(session_id: str | None, exchange: int) -> dict[str, Any]:
    headers = {"mcp-session-id": session_id} if session_id else {}
    return {"method": "POST", "path": "/mcp", "exchange": exchange, "headers": headers}


def _two_http_sessions() -> list[Message]:
    return [c(req(1, "initialize", LEGACY_INIT), 0, ctx=_http(None, 1)),
            s(ok(1, {"protocolVersion": "2025-11-25"}), 1, ctx=_http("A", 1)),
            c(req(1, "initialize", LEGACY_INIT), 2, ctx=_http(None, 2)),
            s(ok(1, {"protocolVersion": "2025-11-25"}), 3, ctx=_http("B", 2)),
            c(call(2, "a"), 10, ctx=_http("A", 3)), c(call(2, "b"), 11, ctx=_http("B", 4)),
            s(text(2, "for b"), 20, ctx=_http("B", 4)), s(err(2), 30, ctx=_http("A", 3))]


def _merged() -> list[Message]:
    """Two recordings merged: each with ``tools/call`` id 1 (a: 0 s -> 30 s; b: 10 s -> 20 s)."""
    a, b = {ORIGIN_KEY: "a.jsonl"}, {ORIGIN_KEY: "b.jsonl"}
    return [c(call(1, "slow"), 0, extra=a), c(call(1, "slow"), 10_000, extra=b),
            s(text(1, "b"), 20_000, extra=b), s(text(1, "a"), 30_000, extra=a)]


def _reused_id() -> list[Message]:
    """A second ``tools/call`` reuses id 1 while the first is pending: first in, first out."""
    return [c(call(1, "x"), 0), c(call(1, "x"), 5), s(text(1, "A"), 8), s(text(1, "B"), 20)]


def _dropped() -> list[Message]:
    """A dropped call the proxy answered, and one nobody answered."""
    return [c(req(1, "tools/list"), 0), s(ok(1, {"tools": []}), 1),
            c(call(5, "rm"), 10, dropped=True), s(err(5, -32000, "dropped by the proxy"), 11, injected=True),
            c(call(6, "rm"), 20, dropped=True),
            c(call(7, "ls"), 30, modified=True, original=call(7, "ls", x=1)), s(text(7), 33)]


SESSIONS = {
    "legacy": _legacy(),
    "modern": _modern(),
    "task": _with_task(),
    "second-initialize": [*_legacy(), *_legacy(1000)],
    "http-sessions": _two_http_sessions(),
    "both-eras": [*_legacy(), *_modern(5000)],
    "merged": _merged(),
    "reused-id": _reused_id(),
    "dropped": _dropped(),
}


def _operations(messages: list[Message]) -> list[Operation]:
    w = Walker()
    ops = []
    for index, msg in enumerate(messages):
        ops.extend(st.operation for st in w.feed(index, msg) if st.kind == "operation" and st.operation)
    ops.extend(st.operation for st in w.finish() if st.kind == "operation" and st.operation)
    return ops


def _tally(messages: list[Message], **options: Any) -> SessionTally:
    tally = SessionTally(**options)
    for op in _operations(messages):
        tally.add(op)
    return tally.finish()


def _session(messages: list[Message]) -> Session:
    return Session(SessionInfo(started=T0), list(messages))


def _tools(tools: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    return {name: (t.calls, t.errors, t.is_errors, t.unanswered, t.dropped, t.p50_ms, t.p95_ms)
            for name, t in tools.items()}


def _latency(latency: dict[str, Any]) -> dict[str, tuple[int, int, int, int]]:
    return {m: (x.count, x.p50_ms, x.p95_ms, x.max_ms) for m, x in latency.items()}


@pytest.mark.parametrize("name", list(SESSIONS))
def test_inspect_counts_what_the_tally_counts(name):
    messages = SESSIONS[name]
    tally = _tally(messages)
    summary = analyze(_session(messages)).summary
    assert (summary.operations, summary.tasks, summary.polls) == (tally.operations, tally.tasks, tally.polls)
    assert summary.methods == tally.methods
    assert _tools(summary.tools) == _tools(tally.tools)
    assert _latency(summary.latency) == _latency(tally.latency)
    failures = [e for e in summary.errors if e.request is not None]  # an orphan's error is no operation's
    assert len(failures) == tally.failed
    assert sum(e.kind == "isError" for e in failures) == tally.is_errors


@pytest.mark.parametrize("name", list(SESSIONS))
def test_the_report_counts_what_the_tally_counts(name):
    messages = SESSIONS[name]
    tally = _tally(messages, exact=True, dropped_unanswered=True)
    data = collect(_session(messages), redact=False)
    orphan_errors = sum(1 for m in messages if m.dir == "out" and isinstance(m.raw, dict) and "error" in m.raw
                        and m.raw.get("id") == 99)
    assert data.calls_total == tally.operations
    assert (data.counts["errors"] - orphan_errors, data.counts["is_errors"], data.counts["unanswered"]) == (
        tally.errors, tally.is_errors, tally.unanswered)
    assert _tools(data.tools) == _tools(tally.tools)
    assert _latency(data.latency) == _latency(tally.latency)
    assert data.tool_max == tally.tool_max


@pytest.mark.parametrize("name", list(SESSIONS))
def test_the_corpus_counts_what_the_tally_counts_per_client_session(name, tmp_path):
    messages = SESSIONS[name]
    reader = _FileReader(_Indexer(tmp_path, "t"), Path("x.jsonl"), "2026-01-01")
    rows = reader.read(_session(messages), "jsonl")["rows"]
    columns = column_names("sessions")
    got = {row[columns.index("session")]: tuple(row[columns.index(k)] for k in (
        "operations", "tool_calls", "failed", "unanswered", "tasks")) for row in rows}
    by_session: dict[int, list[Operation]] = {}
    for op in _operations(messages):
        by_session.setdefault(op.session, []).append(op)
    want = {}
    for session, ops in by_session.items():
        tally = SessionTally(latencies=False)
        for op in ops:
            tally.add(op)
        want[session] = (tally.operations, tally.tool_calls, tally.failed, tally.unanswered, tally.tasks)
    assert {k: v for k, v in got.items() if v != (0, 0, 0, 0, 0)} == want


def test_the_figures_are_the_sessions_own():
    """What the tally says, checked by hand (so the three agreeing is agreeing on the truth)."""
    legacy = _tally(SESSIONS["legacy"])
    assert legacy.operations == 7 and legacy.methods == {"initialize": 1, "tools/list": 1, "tools/call": 5}
    assert _tools(legacy.tools) == {"echo": (2, 0, 0, 0, 0, 2, 20), "fail": (2, 1, 1, 0, 0, 1, 30),
                                    "hang": (1, 0, 0, 1, 0, None, None)}
    assert legacy.latency["tools/call"].count == 4 and legacy.latency["tools/list"].p50_ms == 45
    modern = _tally(SESSIONS["modern"])
    assert modern.methods == {"server/discover": 1, "subscriptions/listen": 1, "tools/call": 2}
    assert modern.unanswered == 0 and modern.tools["greet"].calls == 2  # a stream ends, rounds are one call
    assert modern.latency["tools/call"].max_ms == 37
    task = _tally(SESSIONS["task"])
    assert (task.tasks, task.polls, task.tools["research"].calls) == (1, 2, 1)
    assert task.latency["tools/call"].p50_ms == 1010
    merged = _tally(SESSIONS["merged"])
    assert merged.latency["tools/call"].max_ms == 30_000 and merged.latency["tools/call"].p50_ms == 10_000
    reused = _tally(SESSIONS["reused-id"])
    assert (reused.latency["tools/call"].p50_ms, reused.latency["tools/call"].max_ms) == (8, 15)
    assert _tally(SESSIONS["http-sessions"]).errors == 1
    # a dropped call nobody answered: unanswered to the report, dropped only in inspect's tool row
    lean = _tally(SESSIONS["dropped"])
    full = _tally(SESSIONS["dropped"], exact=True, dropped_unanswered=True)
    assert (lean.unanswered, lean.dropped, lean.errors) == (1, 2, 1)
    assert lean.tools["rm"].unanswered == 0 and full.tools["rm"].unanswered == 1
    assert lean.tools["rm"].dropped == full.tools["rm"].dropped == 2


def test_a_plain_answered_request_is_counted_on_the_fast_path_and_says_ok():
    ops = _operations(_legacy())
    tally = SessionTally()
    outcomes = [tally.add(op) for op in ops]
    assert outcomes[0] is OK and outcomes[2] is OK  # initialize, a tool answered
    assert [o[0] for o in outcomes[4:]] == ["error", "isError", "unanswered"]


def test_the_sketch_and_the_exact_percentiles_agree_while_few_values_are_seen():
    messages = [m for i in range(300) for m in (c(call(i, "t"), i * 1000), s(text(i), i * 1000 + (i * 7) % 97))]
    sketched, exact = _tally(messages), _tally(messages, exact=True)
    values = sorted((i * 7) % 97 for i in range(300))
    assert sketched.exact_latency and exact.exact_latency
    assert _latency(sketched.latency) == _latency(exact.latency) == {
        "tools/call": (300, percentile(values, 50), percentile(values, 95), values[-1])}


def _identity(messages: list[Message]) -> Identity:
    identity = Identity()
    w = Walker()
    for index, msg in enumerate(messages):
        for st in w.feed(index, msg):
            if st.kind == "request":
                identity.request(st.exchange)
            elif st.kind == "response" and st.exchange is not None:
                identity.response(st.exchange.method, st.member)
    return identity


def test_who_spoke_is_found_in_either_era_and_shown_alike_by_the_report_and_the_corpus(tmp_path):
    legacy, modern = _identity(SESSIONS["legacy"]), _identity(SESSIONS["modern"])
    assert (legacy.client, legacy.server) == ({"name": "cli", "version": "1"}, {"name": "srv", "version": "2"})
    assert (modern.client, modern.server) == ({"name": "sdk", "version": "9"}, {"name": "new", "version": "1"})
    data = collect(_session(SESSIONS["modern"]), redact=False)
    assert (data.client, data.server, data.protocol_version) == ("sdk 9", "new 1", "2026-07-28")
    reader = _FileReader(_Indexer(tmp_path, "t"), Path("x.jsonl"), "2026-01-01")
    (row,) = reader.read(_session(SESSIONS["modern"]), "jsonl")["rows"]
    columns = column_names("sessions")
    assert [row[columns.index(k)] for k in ("client_name", "client_version", "server_name", "server_version")] == [
        "sdk", "9", "new", "1"]


def test_an_identity_without_a_name_is_passed_over_and_late_ones_are_not_looked_for():
    nameless = {**LEGACY_INIT, "clientInfo": {"version": "1"}}
    meta = {"io.modelcontextprotocol/clientInfo": {"name": "late", "version": "2"}}
    found = _identity([c(req(1, "initialize", nameless)), s(ok(1, {"serverInfo": {"name": ""}, "_meta": {
        "io.modelcontextprotocol/serverInfo": {"name": "by-meta"}}})), c(req(2, "tools/list", {"_meta": meta}))])
    assert found.client == meta["io.modelcontextprotocol/clientInfo"] and found.server == {"name": "by-meta"}
    many = [c(req(i, "tools/list")) for i in range(IDENTITY_PROBES)] + [c(req(99, "tools/list", {"_meta": meta}))]
    assert _identity(many).client is None  # a client says who it is in its first requests or never


def test_records_and_messages_are_counted_by_kind():
    messages = [c([req(1, "tools/list"), req(2, "ping"), note("notifications/initialized")]),
                s([ok(1, {"tools": []}), ok(2)]),
                s(err(7)), s(ok(8), dropped=True),
                Message("out", None, t=T0, kind="stderr", text="warn"),
                Message("in", {"jsonrpc": "2.0", "id": 3, "method": "x"}, t=T0, dropped=True)]
    counts = RecordCounts()
    w = Walker()
    for index, msg in enumerate(messages):
        counts.add(msg, w.feed(index, msg))
    assert (counts.records, counts.messages, counts.batches, counts.stderr, counts.dropped) == (6, 8, 2, 1, 2)
    assert (counts.requests, counts.notifications, counts.responses) == (3, 1, 4)
    assert (counts.client_to_server, counts.server_to_client) == (4, 4)  # messages, a batch's one by one
    assert (counts.orphans, counts.orphan_errors) == (1, 1)  # the dropped answer never reached the client
    summary = analyze(_session(messages)).summary
    data = collect(_session(messages), redact=False)
    for key in ("records", "messages", "batches", "requests", "notifications", "responses", "client_to_server",
                "server_to_client", "stderr", "dropped"):
        assert getattr(summary, key) == data.counts[key] == getattr(counts, key), key
    assert len(summary.orphans) == data.counts["orphans"] == counts.orphans
