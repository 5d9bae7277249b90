"""Spans by operation and by client session (issue 24, finding 6): a root and an ``mcp.session.id`` per client
session, a task as one span with its polls as events, a listen stream as one span, the control channel's
marks on spans, and the 2026 client's refused ``server/discover`` probe never painted red."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp import Client

from mcpreel.formats import open_session
from mcpreel.inspection import analyze
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.otel.mapping import spans
from mcpreel.report.data import collect
from tests.record.http.helpers import everything, proxy

T = 1_800_000_000_000


def _msg(d: str, raw: Any, t: int, **kw: Any) -> Message:
    return Message(d, raw, t, **kw)


def _http(d: str, raw: Any, t: int, sid: str | None, **kw: Any) -> Message:
    ctx = {"method": "POST", "path": "/mcp", "headers": {"mcp-session-id": sid} if sid else {}}
    return Message(d, raw, t, ctx=ctx, **kw)


def _ids():
    n = iter(range(1, 10_000))
    return lambda bits: next(n)


def test_two_http_sessions_reusing_ids_get_a_root_and_a_session_id_each():
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}
    ok = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {},
                                                  "serverInfo": {"name": "srv", "version": "2"}}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {}}}
    records = [
        _http("in", init, T, None), _http("out", ok, T + 1, "A"),
        _http("in", init, T + 2, None), _http("out", ok, T + 3, "B"),
        _http("in", call, T + 4, "A"), _http("in", call, T + 5, "B"),
        _http("out", {"jsonrpc": "2.0", "id": 2, "result": {"content": []}}, T + 9, "B"),
        _http("out", {"jsonrpc": "2.0", "id": 2, "result": {"content": []}}, T + 20, "A"),
    ]
    records = spans(Session(SessionInfo(transport="streamable-http"), records), ids=_ids())
    roots = [r for r in records if r.kind == "internal"]
    assert [r.attributes["mcp.session.id"] for r in roots] == ["A", "B"]
    by_root = {r.span_id: r.attributes["mcp.session.id"] for r in roots}
    calls = [r for r in records if r.name == "tools/call echo"]
    assert sorted((by_root[c.parent_id], c.attributes["mcp.session.id"], (c.end_ns - c.start_ns) // 1_000_000)
                  for c in calls) == [("A", "A", 16), ("B", "B", 4)]


def test_a_task_is_one_span_with_its_polls_as_events():
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "research", "arguments": {"topic": "x"}, "task": {"ttl": 60000}}}
    created = {"jsonrpc": "2.0", "id": 5, "result": {"task": {"taskId": "T1", "status": "working", "pollInterval": 10}}}
    get = {"jsonrpc": "2.0", "method": "tasks/get", "params": {"taskId": "T1"}}
    records = [
        _msg("in", call, T), _msg("out", created, T + 2),
        _msg("out", {"jsonrpc": "2.0", "method": "notifications/tasks/status",
                     "params": {"taskId": "T1", "status": "working"}}, T + 3),
        _msg("in", {**get, "id": 6}, T + 10), _msg("out", {"jsonrpc": "2.0", "id": 6, "result": {"taskId": "T1", "status": "working"}}, T + 11),
        _msg("in", {**get, "id": 7}, T + 20), _msg("out", {"jsonrpc": "2.0", "id": 7, "result": {"taskId": "T1", "status": "completed"}}, T + 21),
        _msg("in", {"jsonrpc": "2.0", "id": 8, "method": "tasks/result", "params": {"taskId": "T1"}}, T + 22),
        _msg("out", {"jsonrpc": "2.0", "id": 8, "result": {"content": [{"type": "text", "text": "done"}]}}, T + 30),
    ]
    out = spans(Session(SessionInfo(transport="stdio"), records), ids=_ids())
    names = [r.name for r in out]
    assert names == ["tools/call research", "mcp session"]
    task = out[0]
    assert (task.end_ns - task.start_ns) // 1_000_000 == 30
    assert task.attributes["mcp.task.id"] == "T1" and task.attributes["mcp.task.status"] == "completed"
    assert task.attributes["mcpreel.task.polls"] == 2 and task.error is None
    assert [e.name for e in task.events] == ["notifications/tasks/status", "tasks/get", "tasks/get", "tasks/result"]


def test_a_listen_stream_is_one_span_ended_by_the_clients_cancel():
    meta = {"io.modelcontextprotocol/subscriptionId": 3}
    records = [
        _msg("in", {"jsonrpc": "2.0", "id": 3, "method": "subscriptions/listen",
                    "params": {"notifications": {"toolsListChanged": True}}}, T),
        _msg("out", {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                     "params": {"_meta": meta, "notifications": {"toolsListChanged": True}}}, T + 1),
        _msg("in", {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "change", "arguments": {}}}, T + 2),
        _msg("out", {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": meta}}, T + 3),
        _msg("out", {"jsonrpc": "2.0", "id": 4, "result": {"content": []}}, T + 4),
        _msg("in", {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}, T + 9),
    ]
    out = spans(Session(SessionInfo(transport="stdio"), records), ids=_ids())
    listen = next(r for r in out if r.name == "subscriptions/listen")
    assert listen.attributes["mcpreel.ended_by"] == "cancel" and "mcpreel.unanswered" not in listen.attributes
    assert [e.name for e in listen.events] == ["notifications/subscriptions/acknowledged",
                                               "notifications/tools/list_changed", "notifications/cancelled"]
    root = out[-1]
    assert root.attributes["mcpreel.unanswered"] == 0 and root.error is None


def test_marks_of_the_control_channel_are_on_the_spans():
    records = [
        _msg("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "rm", "arguments": {}}}, T,
             dropped=True, decided_by="viewer"),
        _msg("out", {"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "dropped by mcpreel"}}, T + 1,
             injected=True),
        _msg("in", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ls", "arguments": {"a": 2}}}, T + 2,
             modified=True, original={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ls", "arguments": {"a": 1}}}),
        _msg("out", {"jsonrpc": "2.0", "id": 2, "result": {"content": []}}, T + 3),
    ]
    out = {r.name: r for r in spans(Session(SessionInfo(transport="stdio"), records), ids=_ids())}
    dropped = out["tools/call rm"]
    assert dropped.attributes["mcpreel.dropped"] is True and dropped.attributes["mcpreel.answer.injected"] is True
    assert out["tools/call ls"].attributes["mcpreel.edited"] is True
    assert out["mcp session"].attributes["mcpreel.orphans"] == 0


@pytest.mark.e2e
def test_two_real_clients_through_one_http_proxy(everything_js, tmp_path):
    """server-everything behind `mcpreel record`: the SDK client in its default mode (its `server/discover`
    probe refused, then `initialize`) and in `mode="legacy"`; two roots, two session ids, nothing red."""

    async def drive(url: str) -> None:
        async with Client(url) as c:  # auto: server/discover refused (-32601), falls back to initialize
            await c.call_tool("echo", {"message": "one"})
        async with Client(url, mode="legacy") as c:
            await c.call_tool("echo", {"message": "two"})

    with everything("streamableHttp", everything_js) as port:
        with proxy("streamable-http", f"http://127.0.0.1:{port}/mcp", tmp_path, envelope=False) as run:
            asyncio.run(asyncio.wait_for(drive(run.url), 60))
    session = open_session(tmp_path / "s.jsonl")[0]
    out = spans(session, ids=_ids())
    roots = [r for r in out if r.kind == "internal"]
    assert len(roots) == 2
    sids = [r.attributes["mcp.session.id"] for r in roots]
    assert len(set(sids)) == 2 and all(sids)
    root_sid = {r.span_id: r.attributes["mcp.session.id"] for r in roots}
    for r in out:
        if r.kind != "internal" and r.parent_id in root_sid:
            assert r.attributes.get("mcp.session.id") == root_sid[r.parent_id], r.name
    probe = next(r for r in out if r.name == "server/discover")
    assert probe.error is None and probe.attributes["mcpreel.era_fallback"] is True
    assert all(r.error is None for r in roots)
    assert sorted(r.attributes["mcpreel.requests"] for r in roots)[0] >= 2
    data = collect(open_session(tmp_path / "s.jsonl")[0])
    assert data.counts["errors"] == 0
    # inspect (finding 5): server-everything refuses the probe with HTTP 400 and `id: null`; that answer
    # pairs with the probe in its own HTTP exchange, and nothing pairs across the two client sessions
    report = analyze(open_session(tmp_path / "s.jsonl")[0])
    assert report.summary.orphans == [] and report.summary.unanswered == []
    assert len(report.header.sessions) == 2
    probe_row = next(r for r in report.rows if r.label == "server/discover")
    answer = next(r for r in report.rows if r.corr == probe_row.index)
    assert answer.session == probe_row.session == 1


def test_a_stateless_http_session_streams_its_spans_once_without_an_http_id():
    """2026-07-28 over HTTP names no session: spans wait for an id a bounded while, then go out, each once."""
    records = []
    for i in range(200):
        ctx = {"method": "POST", "path": "/mcp", "exchange": i}
        records.append(Message("in", {"jsonrpc": "2.0", "id": i, "method": "tools/list"}, T + i, ctx=ctx))
        records.append(Message("out", {"jsonrpc": "2.0", "id": i, "result": {"tools": []}}, T + i, ctx=ctx))
    out = spans(Session(SessionInfo(transport="streamable-http", id="R"), records), ids=_ids())
    assert len(out) == 201 and len({r.span_id for r in out}) == 201
    assert {r.attributes.get("mcp.session.id") for r in out} == {"R"}


def test_the_session_header_on_a_span_carries_no_secret():
    """Spans go to a collector others read: the server's argv and the label are redacted as the recorder
    redacts them (a ``--token`` value, a URL's ``api_key``), with content off as well as on."""
    info = SessionInfo(transport="stdio", command=["srv", "--token", "Tok-PLANTED-9f8e7d"],
                       label="http://127.0.0.1:9/mcp?api_key=Key-PLANTED-1234")
    records = [Message("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, T),
               Message("out", {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}, T + 1)]
    for content in (False, True):
        root = spans(Session(info, records), include_content=content, ids=_ids())[-1]
        shown = f"{root.attributes['mcpreel.server.command']} {root.attributes['mcpreel.session.label']}"
        assert "PLANTED" not in shown and shown.startswith("srv --token ")
