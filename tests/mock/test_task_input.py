"""The mock serving a task that needed input, in both Tasks forms.

2025-11-25: the elicitation the recording has the server send while ``tasks/result`` waited is sent to the
client before the result, and its answer awaited; polls hold at ``input_required`` until then, whatever the
time. 2026-07-28 extension: the recorded ``inputRequests`` reach the client in ``tasks/get``, which holds at
``input_required`` until the client's ``tasks/update`` (matched against the recorded one) came. What the
client never got to see is counted as never sent (``MockStats.asks_summary``), never as nothing missed."""

from __future__ import annotations

import asyncio
from typing import Any

from mcpreel.mock.engine import Mock, MockOptions
from mcpreel.operations.cassette import build
from mcpreel.operations.facts import META_RELATED_TASK
from tests.replay.helpers import INIT, note, req
from tests.replay.test_live_operations import REC_ID
from tests.replay.test_task_input import ANSWER, META, NAME_ANSWER, legacy_input_session, modern_input_session

TASK_CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "research", "arguments": {"topic": "tides"}, "task": {"ttl": 60000}}}


def _answer(out: list[dict[str, Any]], rid: Any) -> dict[str, Any]:
    return next(m for m in out if m.get("id") == rid and "method" not in m)


def test_tasks_result_sends_the_recorded_elicitation_awaits_it_then_gives_the_result() -> None:
    mock = Mock(build(legacy_input_session()))

    async def main() -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        conn = mock.connection()
        for m in (INIT, note("notifications/initialized"), TASK_CALL, req(3, "tasks/get", {"taskId": REC_ID})):
            assert conn.receive(m, out.append) is None
        waiting = conn.receive(req(9, "tasks/result", {"taskId": REC_ID}), out.append)
        assert waiting is not None  # it waits for the client's answer
        run = asyncio.ensure_future(waiting)
        await asyncio.sleep(0.05)
        ask = next(m for m in out if m.get("method") == "elicitation/create")
        assert ask["params"]["_meta"][META_RELATED_TASK] == {"taskId": REC_ID}
        assert not any(m.get("id") == 9 for m in out)  # no result before the answer
        conn.receive({"jsonrpc": "2.0", "id": ask["id"], "result": ANSWER}, out.append)
        await asyncio.wait_for(run, 5)
        return out

    out = asyncio.run(main())
    assert _answer(out, 9)["result"]["content"][0]["text"] == "ocean tides"
    methods = [m.get("method") for m in out if "method" in m]
    assert methods.index("elicitation/create") < methods.index("notifications/tasks/status")
    assert mock.stats.asked == 1 and not mock.stats.ask_unanswered and not mock.stats.ask_pending
    assert mock.stats.asks_summary() == "recorded server requests: 1 sent"


def test_polls_hold_at_input_required_until_the_input_came() -> None:
    mock = Mock(build(legacy_input_session()))

    async def main() -> list[str]:
        out: list[dict[str, Any]] = []
        conn = mock.connection()
        conn.receive(INIT, out.append)
        conn.receive(TASK_CALL, out.append)
        await asyncio.sleep(0.2)  # later than the whole recorded task took: by time, it would be over
        statuses = []
        for rid in (10, 11, 12):
            conn.receive(req(rid, "tasks/get", {"taskId": REC_ID}), out.append)
            statuses.append(_answer(out, rid)["result"]["status"])
        waiting = conn.receive(req(13, "tasks/result", {"taskId": REC_ID}), out.append)
        assert waiting is not None
        run = asyncio.ensure_future(waiting)
        await asyncio.sleep(0.05)
        ask = next(m for m in out if m.get("method") == "elicitation/create")
        conn.receive({"jsonrpc": "2.0", "id": ask["id"], "result": ANSWER}, out.append)
        await asyncio.wait_for(run, 5)
        return statuses

    # by time the recording was over; the task still waits for its input, as the real server's did
    assert asyncio.run(main()) == ["input_required", "input_required", "input_required"]


def test_a_client_that_never_asks_for_the_result_leaves_the_elicitation_counted_as_never_sent() -> None:
    mock = Mock(build(legacy_input_session()))

    async def main() -> None:
        out: list[dict[str, Any]] = []
        conn = mock.connection()
        conn.receive(INIT, out.append)
        conn.receive(TASK_CALL, out.append)
        conn.receive(req(3, "tasks/get", {"taskId": REC_ID}), out.append)
        conn.client_gone()

    asyncio.run(main())
    summary = mock.stats.asks_summary()
    assert summary is not None and "1 never sent (elicitation/create of task" in summary
    assert mock.stats.asked == 0


def test_a_client_that_does_not_answer_the_elicitation_is_counted_and_still_gets_the_result() -> None:
    mock = Mock(build(legacy_input_session()), MockOptions(answer_timeout=0.1))

    async def main() -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        conn = mock.connection()
        conn.receive(INIT, out.append)
        conn.receive(TASK_CALL, out.append)
        waiting = conn.receive(req(9, "tasks/result", {"taskId": REC_ID}), out.append)
        assert waiting is not None
        await asyncio.wait_for(waiting, 5)
        return out

    out = asyncio.run(main())
    assert _answer(out, 9)["result"]["content"][0]["text"] == "ocean tides"
    assert mock.stats.ask_unanswered and mock.stats.ask_unanswered[0].startswith("elicitation/create")


def test_the_extension_task_lists_its_input_requests_and_holds_until_tasks_update() -> None:
    mock = Mock(build(modern_input_session()))

    async def main() -> tuple[list[str], dict[str, Any], list[str]]:
        out: list[dict[str, Any]] = []
        conn = mock.connection()
        conn.receive(req(1, "server/discover", {"_meta": META}), out.append)
        conn.receive(req(2, "tools/call", {"name": "hello_world", "arguments": {}, "_meta": META}), out.append)
        await asyncio.sleep(0.2)
        before = []
        for rid in (10, 11, 12):
            conn.receive(req(rid, "tasks/get", {"taskId": REC_ID, "_meta": META}), out.append)
            before.append(_answer(out, rid)["result"]["status"])
        asked = _answer(out, 12)["result"]["inputRequests"]
        conn.receive(req(20, "tasks/update", {"taskId": REC_ID, "inputResponses": {"name": NAME_ANSWER},
                                               "_meta": META}), out.append)
        assert "error" not in _answer(out, 20)
        after = []
        for rid in (30, 31, 32):
            conn.receive(req(rid, "tasks/get", {"taskId": REC_ID, "_meta": META}), out.append)
            after.append(_answer(out, rid)["result"]["status"])
        return before, asked, after

    before, asked, after = asyncio.run(main())
    assert before == ["input_required", "input_required", "input_required"]
    assert asked["name"]["method"] == "elicitation/create"
    assert after[-1] == "completed"
    assert not mock.stats.misses and not mock.stats.ask_pending
    assert mock.stats.asked == 1  # one input request, however often the client was shown it


def test_an_extension_task_update_answered_otherwise_is_a_miss_and_the_task_keeps_waiting() -> None:
    mock = Mock(build(modern_input_session()))
    out: list[dict[str, Any]] = []

    async def main() -> None:
        conn = mock.connection()
        conn.receive(req(2, "tools/call", {"name": "hello_world", "arguments": {}, "_meta": META}), out.append)
        other = {"action": "accept", "content": {"name": "Bob"}}
        conn.receive(req(20, "tasks/update", {"taskId": REC_ID, "inputResponses": {"name": other},
                                               "_meta": META}), out.append)
        for rid in (30, 31, 32, 33):
            conn.receive(req(rid, "tasks/get", {"taskId": REC_ID, "_meta": META}), out.append)

    asyncio.run(main())
    assert "error" in _answer(out, 20)
    assert len(mock.stats.misses) == 1
    assert _answer(out, 33)["result"]["status"] == "input_required"
