"""``inspect`` reads the one walk (:mod:`mcpreel.operations`): pairing per client session, the proxy's
injected answers, listen streams ended by the client, tasks and multi-round-trip calls as one operation."""

from __future__ import annotations

from typing import Any

from mcpreel.inspection import analyze
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.render.inspect import plain_lines, row_text


def _req(i: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        out["params"] = params
    return out


def _ok(i: Any, result: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "result": result if result is not None else {}}


def _http(sid: str | None, exchange: int) -> dict[str, Any]:
    ctx: dict[str, Any] = {"exchange": exchange}
    if sid is not None:
        ctx["headers"] = {"mcp-session-id": sid}
    return ctx


def _init(i: Any = 1) -> dict[str, Any]:
    return _req(i, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "c", "version": "1"}})


def test_two_http_sessions_with_the_same_ids_never_answer_each_other():
    # two clients through one HTTP proxy, both numbering from 1; a 400 answered with id null between
    msgs = [
        Message("in", _init(), 100, ctx=_http(None, 1)),
        Message("out", _ok(1, {"protocolVersion": "2025-06-18"}), 101, ctx=_http("A", 1)),
        Message("in", _init(), 102, ctx=_http(None, 2)),
        Message("out", _ok(1, {"protocolVersion": "2025-06-18"}), 103, ctx=_http("B", 2)),
        Message("in", _req(2, "tools/call", {"name": "slow"}), 110, ctx=_http("A", 3)),
        Message("in", _req(2, "tools/call", {"name": "fast"}), 120, ctx=_http("B", 4)),
        Message("out", {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Bad Request"}}, 121,
                ctx={"exchange": 5, "status": 400}),
        Message("out", _ok(2, {"content": []}), 125, ctx=_http("B", 4)),  # B's answer: 5 ms, not 15
        Message("out", _ok(2, {"content": []}), 200, ctx=_http("A", 3)),  # A's answer: 90 ms
    ]
    report = analyze(Session(SessionInfo(transport="streamable-http"), msgs))
    rows = report.rows
    assert isinstance(rows, list)
    assert [r.session for r in rows[:2]] == [1, 1] and [r.session for r in rows[2:4]] == [2, 2]
    assert (rows[7].corr, rows[7].latency_ms, rows[7].session) == (5, 5, 2)
    assert (rows[8].corr, rows[8].latency_ms, rows[8].session) == (4, 90, 1)
    assert report.summary.unanswered == []
    assert report.summary.tools["slow"].p50_ms == 90 and report.summary.tools["fast"].p50_ms == 5
    assert len(report.header.sessions) == 2
    text = "\n".join(plain_lines(report))
    assert "#007 s2 < (response) id=2 corr=#005 5ms" in text
    assert "#008 s1 < (response) id=2 corr=#004 90ms" in text
    assert report.to_dict()["rows"][8]["session"] == 1


def test_the_proxys_answer_to_a_dropped_request_is_paired_and_marked():
    msgs = [
        Message("in", _req(7, "tools/call", {"name": "rm"}), 10, dropped=True),
        Message("out", {"jsonrpc": "2.0", "id": 7, "error": {"code": -32000, "message": "dropped by viewer"}}, 12,
                injected=True),
    ]
    report = analyze(Session(SessionInfo(), msgs))
    answer = report.rows[1]  # type: ignore[index]
    assert (answer.corr, answer.orphan, answer.injected) == (0, False, True)
    assert report.summary.orphans == [] and report.summary.unanswered == []
    assert "[INJECTED]" in row_text(answer) and "[ORPHAN]" not in row_text(answer)
    assert report.summary.tools["rm"].dropped == 1 and report.summary.tools["rm"].errors == 1


def test_a_listen_stream_the_client_cancelled_is_ended_not_unanswered():
    msgs = [
        Message("in", _req(3, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}), 10),
        Message("out", {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 3}}}, 11),
        Message("in", _req(4, "tools/call", {"name": "change"}), 20),
        Message("out", {"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 3}}}, 21),
        Message("out", _ok(4, {"content": []}), 22),
        Message("in", {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}, 30),
    ]
    report = analyze(Session(SessionInfo(), msgs))
    s = report.summary
    assert s.unanswered == [] and s.ended == [0]
    listen = report.rows[0]  # type: ignore[index]
    assert listen.ended and not listen.unanswered
    assert "[ENDED]" in row_text(listen) and "[UNANSWERED]" not in row_text(listen)
    assert "subscriptions/listen" not in s.latency  # a stream's length is not a latency
    summary = next(line for line in plain_lines(report) if line.startswith("Summary:"))
    assert "1 listen stream ended by the client" in summary and "0 unanswered" in summary


def test_a_task_is_one_operation_whose_polls_name_it():
    task = {"taskId": "T1", "status": "working", "pollInterval": 10}
    msgs = [
        Message("in", _req(2, "tools/call", {"name": "research", "task": {"ttl": 60000}}), 1000),
        Message("out", _ok(2, {"task": task}), 1005),
        Message("in", _req(3, "tasks/get", {"taskId": "T1"}), 1100),
        Message("out", _ok(3, {**task}), 1101),
        Message("out", {"jsonrpc": "2.0", "method": "notifications/tasks/status",
                        "params": {**task, "status": "completed"}}, 1150),
        Message("in", _req(4, "tasks/get", {"taskId": "T1"}), 1200),
        Message("out", _ok(4, {**task, "status": "completed"}), 1201),
        Message("in", _req(5, "tasks/result", {"taskId": "T1"}), 1300),
        Message("out", _ok(5, {"content": [{"type": "text", "text": "boom"}], "isError": True}), 1400),
    ]
    report = analyze(Session(SessionInfo(), msgs))
    s = report.summary
    assert (s.operations, s.tasks, s.polls) == (1, 1, 2)
    assert s.tools["research"].calls == 1 and s.tools["research"].is_errors == 1
    assert s.tools["research"].p50_ms == 400  # from the call to the task's result
    assert list(s.latency) == ["tools/call"] and s.latency["tools/call"].count == 1
    assert len(s.errors) == 1 and (s.errors[0].row, s.errors[0].request, s.errors[0].tool) == (8, 0, "research")
    rows = report.rows
    assert isinstance(rows, list)
    for i in (2, 3, 4, 5, 6, 7, 8):
        assert rows[i].part_of == 0 and rows[i].task == "T1", i
    assert "task=T1 of #000" in row_text(rows[2])
    summary = next(line for line in plain_lines(report) if line.startswith("Summary:"))
    assert "1 operation" in summary and "1 task (2 polls)" in summary


def test_a_multi_round_trip_call_is_one_call_with_its_rounds():
    msgs = [
        Message("in", _req(1, "tools/call", {"name": "book"}), 0),
        Message("out", _ok(1, {"resultType": "input_required", "requestState": "s1", "inputRequests": {}}), 10),
        Message("in", _req(2, "tools/call", {"name": "book", "requestState": "s1", "inputResponses": {}}), 20),
        Message("out", {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "no"}}, 50),
    ]
    report = analyze(Session(SessionInfo(), msgs))
    s = report.summary
    assert s.operations == 1 and s.tools["book"].calls == 1 and s.tools["book"].errors == 1
    assert s.latency["tools/call"].count == 1 and s.latency["tools/call"].max_ms == 50
    assert report.rows[2].retry_of == 0  # type: ignore[index]
    assert [(e.row, e.request) for e in s.errors] == [(3, 0)]


def test_spooled_rows_carry_the_end_marks():
    msgs = [
        Message("in", _req(3, "subscriptions/listen", {}), 10),
        Message("in", _req(4, "ping"), 11),
        Message("in", {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}, 30),
    ]
    report = analyze(Session(SessionInfo(), msgs), rows="spool")
    rows = list(report.rows)
    assert (rows[0].ended, rows[0].unanswered, rows[1].unanswered) == (True, False, True)
    assert report.summary.unanswered == [1] and report.summary.ended == [0]
    assert "[UNANSWERED]" in row_text(report.row(1))


def test_rows_of_several_sessions_say_where_a_session_starts_and_resumes():
    """Issue 29: the rows of a file of several client sessions were one list with an ``s2`` column only."""
    from mcpreel.render.inspect import renderables

    msgs = [
        Message("in", _init(), 100, ctx=_http(None, 1)),
        Message("out", _ok(1, {"protocolVersion": "2025-06-18"}), 101, ctx=_http("A", 1)),
        Message("in", _init(), 102, ctx=_http(None, 2)),
        Message("out", _ok(1, {"protocolVersion": "2025-06-18"}), 103, ctx=_http("B", 2)),
        Message("in", _req(2, "tools/call", {"name": "slow"}), 110, ctx=_http("A", 3)),
        Message("out", _ok(2, {"content": []}), 200, ctx=_http("A", 3)),
    ]
    report = analyze(Session(SessionInfo(transport="streamable-http"), msgs))
    lines = list(plain_lines(report))
    marks = [line.strip() for line in lines if line.strip().startswith("-- session")]
    assert len(marks) == 3, lines
    assert marks[0].startswith("-- session 1: legacy era") and "2 requests" in marks[0] and "Mcp-Session-Id A" in marks[0]
    assert marks[1].startswith("-- session 2: legacy era")
    assert marks[2] == "-- session 1 (continued) --"
    first_row = next(i for i, line in enumerate(lines) if line.strip().startswith("#000"))
    assert lines[first_row - 1].strip() == marks[0]  # the boundary comes before the session's first row
    shown = [str(r) for r in renderables(report) if "-- session" in str(r)]
    assert [s.strip() for s in shown] == marks
    one = analyze(Session(SessionInfo(transport="streamable-http"), msgs[:2]))
    assert not [line for line in plain_lines(one) if "-- session" in line]  # one session: no boundary
