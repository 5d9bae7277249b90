"""The mock serving operations that live across messages: a task polled more or fewer times than the
recording (the recorded statuses in order, then the terminal one), tasks/result, tasks/list, tasks/cancel;
a listen stream (the ack first, the recorded notifications tagged with the live listen id where the
recording had them, ended by the client's cancel)."""

from __future__ import annotations

import asyncio
from typing import Any

from mcpreel.mock.engine import Mock
from mcpreel.operations.cassette import build
from mcpreel.operations.facts import META_SUBSCRIPTION_ID
from tests.replay.helpers import INIT, call, note, req
from tests.replay.test_live_operations import REC_ID, legacy_task_session, listen_session, modern_task_session


def _drive(mock: Mock, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Send ``messages`` to one connection in order; every emitted message, in order."""
    out: list[dict[str, Any]] = []

    async def main() -> None:
        conn = mock.connection()
        pending = []
        for m in messages:
            p = conn.receive(m, out.append)
            if p is not None:
                pending.append(asyncio.ensure_future(p))
            await asyncio.sleep(0)
        conn.client_gone()
        if pending:
            await asyncio.wait_for(asyncio.gather(*pending), 5)

    asyncio.run(main())
    return out


def _task_call(rid: int) -> dict[str, Any]:
    return {**call(rid, "research", {"topic": "tides"}),
            "params": {"name": "research", "arguments": {"topic": "tides"}, "task": {"ttl": 60000}}}


def _answer(out: list[dict[str, Any]], rid: Any) -> dict[str, Any]:
    return next(m for m in out if m.get("id") == rid and "method" not in m)


def test_a_client_polling_more_than_recorded_gets_the_statuses_in_order_then_the_terminal_one() -> None:
    mock = Mock(build(legacy_task_session(polls=2)))
    polls = [req(100 + i, "tasks/get", {"taskId": REC_ID}) for i in range(6)]
    out = _drive(mock, [INIT, note("notifications/initialized"), _task_call(2), *polls,
                        req(200, "tasks/result", {"taskId": REC_ID})])
    assert _answer(out, 2)["result"]["task"]["taskId"] == REC_ID
    statuses = [_answer(out, 100 + i)["result"]["status"] for i in range(6)]
    assert statuses == ["working", "working", "completed", "completed", "completed", "completed"]
    assert _answer(out, 200)["result"]["content"][0]["text"] == "the report"
    assert not mock.stats.misses


def test_a_client_polling_fewer_times_gets_the_result() -> None:
    mock = Mock(build(legacy_task_session(polls=5)))
    out = _drive(mock, [INIT, _task_call(2), req(3, "tasks/get", {"taskId": REC_ID}),
                        req(4, "tasks/result", {"taskId": REC_ID})])
    assert _answer(out, 3)["result"]["status"] == "working"
    assert _answer(out, 4)["result"]["content"][0]["text"] == "the report"


def test_a_slow_poller_gets_the_status_the_recording_had_reached_by_then() -> None:
    # recorded: 5 polls 10 ms apart, then completed; a client asking 1 s later is not held back
    mock = Mock(build(legacy_task_session(polls=5)))

    async def main() -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        conn = mock.connection()
        conn.receive(INIT, out.append)
        conn.receive(_task_call(2), out.append)
        await asyncio.sleep(0.3)
        conn.receive(req(3, "tasks/get", {"taskId": REC_ID}), out.append)
        return out

    out = asyncio.run(main())
    assert _answer(out, 3)["result"]["status"] == "completed"


def test_tasks_list_and_cancel() -> None:
    mock = Mock(build(legacy_task_session(polls=3)))
    out = _drive(mock, [INIT, _task_call(2), req(3, "tasks/list"), req(4, "tasks/cancel", {"taskId": REC_ID}),
                        req(5, "tasks/get", {"taskId": REC_ID}), req(6, "tasks/result", {"taskId": REC_ID}),
                        req(7, "tasks/list")])
    listed = _answer(out, 3)["result"]["tasks"]
    assert [(t["taskId"], t["status"]) for t in listed] == [(REC_ID, "working")]
    assert _answer(out, 4)["result"]["status"] == "cancelled"
    assert _answer(out, 5)["result"]["status"] == "cancelled"
    assert "error" in _answer(out, 6)
    assert [t["status"] for t in _answer(out, 7)["result"]["tasks"]] == ["cancelled"]


def test_an_unknown_task_id_is_a_miss_that_says_so() -> None:
    mock = Mock(build(legacy_task_session()))
    out = _drive(mock, [INIT, req(3, "tasks/get", {"taskId": "nope"})])
    assert "error" in _answer(out, 3)
    assert mock.stats.misses


def test_the_2026_extension_terminal_get_carries_the_result() -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    mock = Mock(build(modern_task_session()))
    out = _drive(mock, [req(1, "server/discover", {"_meta": meta}),
                        req(2, "tools/call", {"name": "research", "arguments": {}, "_meta": meta}),
                        *[req(10 + i, "tasks/get", {"taskId": REC_ID, "_meta": meta}) for i in range(4)]])
    assert _answer(out, 2)["result"]["resultType"] == "task"
    assert [_answer(out, 10 + i)["result"]["status"] for i in range(4)] == ["working", "working", "completed",
                                                                             "completed"]
    assert _answer(out, 13)["result"]["result"]["content"][0]["text"] == "done"


def test_a_listen_stream_is_acknowledged_then_notified_under_the_live_id_and_ended_by_the_cancel() -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    mock = Mock(build(listen_session()))
    live = "my-listen-9"
    out = _drive(mock, [req(1, "server/discover", {"_meta": meta}),
                        req(live, "subscriptions/listen", {"notifications": {"toolsListChanged": True}, "_meta": meta}),
                        req(2, "tools/call", {"name": "reload", "arguments": {}, "_meta": meta}),
                        note("notifications/cancelled", {"requestId": live})])
    methods = [m.get("method") or f"answer {m.get('id')}" for m in out]
    assert methods == ["answer 1", "notifications/subscriptions/acknowledged", "notifications/tools/list_changed",
                       "answer 2"]
    tagged = [m for m in out if m.get("method")]
    assert all(m["params"]["_meta"][META_SUBSCRIPTION_ID] == live for m in tagged)
    assert tagged[0]["params"]["notifications"] == {"toolsListChanged": True}
    assert not any(m.get("id") == live for m in out)  # the recorded stream had no answer: it ended by the cancel


def test_a_listen_stream_stays_open_until_the_cancel() -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    mock = Mock(build(listen_session()))

    async def main() -> bool:
        conn = mock.connection()
        conn.receive(req(1, "server/discover", {"_meta": meta}), lambda m: None)
        p = conn.receive(req("L", "subscriptions/listen", {"notifications": {"toolsListChanged": True},
                                                           "_meta": meta}), lambda m: None)
        assert p is not None
        stream = asyncio.ensure_future(p)
        await asyncio.sleep(0.1)
        still_open = not stream.done()
        conn.receive(note("notifications/cancelled", {"requestId": "L"}), lambda m: None)
        await asyncio.wait_for(stream, 2)
        return still_open

    assert asyncio.run(main())


def test_a_task_in_one_session_of_a_file_of_several_is_served_from_that_session() -> None:
    from mcpreel.operations.sessions import split_sessions
    from tests.replay.helpers import INIT_OK, res, session

    other = [("in", {**INIT, "params": {**INIT["params"], "clientInfo": {"name": "other", "version": "1"}}}),
             ("out", INIT_OK), ("in", req(2, "tools/list")), ("out", res(2, {"tools": []}))]
    task = [(m.dir, m.raw) for m in legacy_task_session(polls=2)]
    whole = session(*other, *task)
    parts = split_sessions(whole)
    assert len(parts) == 2
    mock = Mock(build(whole), sessions=[(build(p.as_session(whole.info)), p.era, p.client) for p in parts])
    polls = [req(100 + i, "tasks/get", {"taskId": REC_ID}) for i in range(4)]
    out = _drive(mock, [INIT, _task_call(2), *polls])
    assert [_answer(out, 100 + i)["result"]["status"] for i in range(4)] == ["working", "working", "completed",
                                                                            "completed"]
