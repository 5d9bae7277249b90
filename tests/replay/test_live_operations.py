"""Replay of operations that live across messages, against scripted servers: a task is one operation
(the live task id for the recorded one, polled as the server asks, judged by terminal status and result,
never by the number of polls), in both Tasks forms; a listen stream is judged by its acknowledged filter
and the kinds and order of what it carried, and ended as recorded."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from mcpreel.clients import memory_pair
from mcpreel.operations.facts import META_SUBSCRIPTION_ID
from mcpreel.replay.results import ReplayOptions, ReplayReport
from mcpreel.replay.verify import replay
from tests.replay.helpers import INIT, INIT_OK, call, note, req, res, session, text

REC_ID = "task-recorded"
LIVE_ID = "task-live-7"


def _task(task_id: str, status: str, **more: Any) -> dict[str, Any]:
    return {"taskId": task_id, "status": status, "createdAt": "2026-01-01T00:00:00Z", **more}


def legacy_task_session(polls: int = 3, outcome: str = "the report", status: str = "completed") -> Any:
    """A recorded 2025-11-25 task: created, ``polls`` working polls, a terminal poll, tasks/result."""
    records: list[tuple[str, Any]] = [("in", INIT), ("out", INIT_OK), ("in", note("notifications/initialized")),
                                      ("in", {**call(2, "research", {"topic": "tides"}),
                                              "params": {"name": "research", "arguments": {"topic": "tides"},
                                                         "task": {"ttl": 60000}}}),
                                      ("out", res(2, {"task": _task(REC_ID, "working", pollInterval=5)}))]
    rid = 3
    for _ in range(polls):
        records += [("in", req(rid, "tasks/get", {"taskId": REC_ID})),
                    ("out", res(rid, _task(REC_ID, "working", pollInterval=5)))]
        rid += 1
    records += [("in", req(rid, "tasks/get", {"taskId": REC_ID})), ("out", res(rid, _task(REC_ID, status)))]
    rid += 1
    records += [("in", req(rid, "tasks/result", {"taskId": REC_ID})),
                ("out", res(rid, {**text(outcome), "_meta": {"io.modelcontextprotocol/related-task": {"taskId": REC_ID}}}))]
    rid += 1
    records += [("in", req(rid, "tools/list")), ("out", res(rid, {"tools": []}))]
    return session(*records)


Script = Callable[[dict[str, Any], Callable[[dict[str, Any]], None]], None]


async def _run(recorded: Any, script: Script, options: ReplayOptions | None = None) -> ReplayReport:
    """Replay ``recorded`` against a server that answers each message with ``script``."""
    client, server = memory_pair()

    async def serve() -> None:
        async for rec in server:
            if rec.kind == "message" and isinstance(rec.raw, dict):
                script(rec.raw, server.send_nowait)

    task = asyncio.ensure_future(serve())
    try:
        return await replay(recorded, client, options or ReplayOptions(timeout=2, unrecorded_grace=0.2),
                            target="scripted")
    finally:
        task.cancel()


def legacy_task_server(*, working: int = 1, outcome: str = "the report", status: str = "completed",
                       seen: list[dict[str, Any]] | None = None) -> Script:
    """A 2025-11-25 server: its own task id, ``working`` polls before ``status``, the result it gives."""
    polls = [0]

    def script(msg: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
        if seen is not None:
            seen.append(msg)
        method, rid = msg.get("method"), msg.get("id")
        if rid is None:
            return
        if method == "initialize":
            send(INIT_OK | {"id": rid})
        elif method == "tools/call":
            send(res(rid, {"task": _task(LIVE_ID, "working", pollInterval=5)}))
        elif method == "tasks/get":
            if msg["params"]["taskId"] != LIVE_ID:
                send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "Task not found"}})
                return
            polls[0] += 1
            send(res(rid, _task(LIVE_ID, "working" if polls[0] <= working else status, pollInterval=5)))
        elif method == "tasks/result":
            send(res(rid, {**text(outcome), "_meta": {"io.modelcontextprotocol/related-task": {"taskId": LIVE_ID}}}))
        elif method == "tools/list":
            send(res(rid, {"tools": []}))

    return script


def test_a_task_with_another_id_and_fewer_polls_is_one_operation_the_same() -> None:
    seen: list[dict[str, Any]] = []
    report = asyncio.run(_run(legacy_task_session(polls=5), legacy_task_server(working=1, seen=seen)))
    assert report.ok, [(r.method, r.status, r.diff, r.error) for r in report.results]
    assert [r.method for r in report.results] == ["initialize", "tools/call", "tools/list"]
    task = report.results[1]
    assert task.status == "same"
    assert task.operation == {"kind": "task", "task_id": LIVE_ID, "recorded_task_id": REC_ID, "polls": 2,
                              "recorded_polls": 6}
    # every tasks/* request carried the live server's id, never the recorded one
    asked = [m for m in seen if str(m.get("method", "")).startswith("tasks/")]
    assert asked and all(m["params"]["taskId"] == LIVE_ID for m in asked)
    assert [m["method"] for m in asked] == ["tasks/get", "tasks/get", "tasks/result"]


def test_a_task_polled_more_than_recorded_is_the_same() -> None:
    report = asyncio.run(_run(legacy_task_session(polls=0), legacy_task_server(working=4)))
    assert report.ok
    assert report.results[1].operation is not None and report.results[1].operation["polls"] == 5


def test_a_different_task_result_is_a_difference_at_its_path() -> None:
    report = asyncio.run(_run(legacy_task_session(), legacy_task_server(outcome="another report")))
    assert not report.ok
    task = report.results[1]
    assert task.status == "changed"
    assert [d.path for d in task.diff] == ["$.result.content[0].text"]


def test_a_different_terminal_status_is_a_difference_at_status() -> None:
    report = asyncio.run(_run(legacy_task_session(), legacy_task_server(status="failed")))
    task = report.results[1]
    assert task.status == "changed"
    assert "$.status" in [d.path for d in task.diff]


def test_a_task_that_never_ends_is_bounded_and_an_error() -> None:
    report = asyncio.run(_run(legacy_task_session(), legacy_task_server(working=10_000),
                              ReplayOptions(timeout=0.3, unrecorded_grace=0.1)))
    task = report.results[1]
    assert task.status == "error"
    assert task.error is not None and "terminal status" in task.error


def test_a_server_that_no_longer_creates_a_task_is_different() -> None:
    def plain(msg: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
        if msg.get("method") == "initialize":
            send(INIT_OK | {"id": msg["id"]})
        elif msg.get("method") == "tools/call":
            send(res(msg["id"], text("the report")))
        elif msg.get("method") == "tools/list":
            send(res(msg["id"], {"tools": []}))

    report = asyncio.run(_run(legacy_task_session(), plain))
    assert not report.ok
    assert report.results[1].status == "changed"


# -- the 2026-07-28 Tasks extension: resultType "task", tasks/get carries the outcome ----------------


def modern_task_session(outcome: str = "done") -> Any:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    records: list[tuple[str, Any]] = [
        ("in", req(1, "server/discover", {"_meta": meta})),
        ("out", res(1, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                        "serverInfo": {"name": "s", "version": "1"}, "resultType": "complete"})),
        ("in", req(2, "tools/call", {"name": "research", "arguments": {}, "_meta": meta})),
        ("out", res(2, {"resultType": "task", "taskId": REC_ID, "status": "working", "pollIntervalMs": 5})),
    ]
    for rid in (3, 4):
        records += [("in", req(rid, "tasks/get", {"taskId": REC_ID, "_meta": meta})),
                    ("out", res(rid, {"resultType": "complete", "taskId": REC_ID, "status": "working"}))]
    records += [("in", req(5, "tasks/get", {"taskId": REC_ID, "_meta": meta})),
                ("out", res(5, {"resultType": "complete", "taskId": REC_ID, "status": "completed",
                                "result": text(outcome)}))]
    return session(*records)


def modern_task_server(outcome: str = "done", seen: list[dict[str, Any]] | None = None) -> Script:
    def script(msg: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
        if seen is not None:
            seen.append(msg)
        method, rid = msg.get("method"), msg.get("id")
        if method == "server/discover":
            send(res(rid, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                           "serverInfo": {"name": "s", "version": "1"}, "resultType": "complete"}))
        elif method == "tools/call":
            send(res(rid, {"resultType": "task", "taskId": LIVE_ID, "status": "working", "pollIntervalMs": 5}))
        elif method == "tasks/get":
            assert msg["params"]["taskId"] == LIVE_ID
            send(res(rid, {"resultType": "complete", "taskId": LIVE_ID, "status": "completed",
                           "result": text(outcome)}))

    return script


def test_the_2026_extension_task_is_judged_by_what_the_terminal_get_carries() -> None:
    seen: list[dict[str, Any]] = []
    report = asyncio.run(_run(modern_task_session(), modern_task_server(seen=seen)))
    assert report.ok, [(r.method, r.status, r.diff, r.error) for r in report.results]
    assert [r.method for r in report.results] == ["server/discover", "tools/call"]
    assert report.results[1].operation is not None and report.results[1].operation["polls"] == 1
    assert all(m["params"]["taskId"] == LIVE_ID for m in seen if m.get("method") == "tasks/get")
    assert not any(m.get("method") == "tasks/result" for m in seen)  # the recording never asked it

    changed = asyncio.run(_run(modern_task_session(), modern_task_server(outcome="undone")))
    assert not changed.ok
    assert [d.path for d in changed.results[1].diff] == ["$.result.content[0].text"]


# -- listen streams --------------------------------------------------------------------------------


def _tag(message: dict[str, Any], sub: Any) -> dict[str, Any]:
    params = dict(message.get("params") or {})
    params["_meta"] = {META_SUBSCRIPTION_ID: sub}
    return {**message, "params": params}


def listen_session() -> Any:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    filt = {"toolsListChanged": True}
    return session(
        ("in", req(1, "server/discover", {"_meta": meta})),
        ("out", res(1, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {"listChanged": True}},
                        "serverInfo": {"name": "s", "version": "1"}, "resultType": "complete"})),
        ("in", req("listen-1", "subscriptions/listen", {"notifications": filt, "_meta": meta})),
        ("out", _tag(note("notifications/subscriptions/acknowledged", {"notifications": filt}), "listen-1")),
        ("in", req(2, "tools/call", {"name": "reload", "arguments": {}, "_meta": meta})),
        ("out", _tag(note("notifications/tools/list_changed"), "listen-1")),
        ("out", res(2, {**text("reloaded"), "resultType": "complete"})),
        ("in", note("notifications/cancelled", {"requestId": "listen-1", "reason": "caller cancelled"})),
    )


def listen_server(*, notifies: bool = True, honours: bool = True, seen: list[dict[str, Any]] | None = None) -> Script:
    streams: list[Any] = []

    def script(msg: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
        if seen is not None:
            seen.append(msg)
        method, rid = msg.get("method"), msg.get("id")
        if method == "server/discover":
            send(res(rid, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {"listChanged": True}},
                           "serverInfo": {"name": "s", "version": "1"}, "resultType": "complete"}))
        elif method == "subscriptions/listen":
            streams.append(rid)
            filt = msg["params"]["notifications"] if honours else {}
            send(_tag(note("notifications/subscriptions/acknowledged", {"notifications": filt}), rid))
        elif method == "tools/call":
            if notifies:
                for sub in streams:
                    send(_tag(note("notifications/tools/list_changed"), sub))
            send(res(rid, {**text("reloaded"), "resultType": "complete"}))

    return script


def test_a_listen_stream_that_carries_the_same_is_the_same_and_ended_as_recorded() -> None:
    seen: list[dict[str, Any]] = []
    report = asyncio.run(_run(listen_session(), listen_server(seen=seen)))
    assert report.ok, [(r.method, r.status, r.diff, r.error) for r in report.results]
    stream = next(r for r in report.results if r.method == "subscriptions/listen")
    assert stream.status == "same"
    assert stream.operation == {"kind": "listen", "ended_by": "cancel", "notifications": 2,
                                "recorded_notifications": 2}
    assert seen[-1]["method"] == "notifications/cancelled" and seen[-1]["params"]["requestId"] == "listen-1"


def test_a_stream_that_no_longer_notifies_is_different_at_its_path() -> None:
    report = asyncio.run(_run(listen_session(), listen_server(notifies=False)))
    assert not report.ok
    stream = next(r for r in report.results if r.method == "subscriptions/listen")
    assert stream.status == "changed"
    assert [d.path for d in stream.diff] == ["$.notifications[0]"]
    assert [r.status for r in report.results if r is not stream] == ["same", "same"]


def test_a_narrower_acknowledged_filter_is_different_at_acknowledged() -> None:
    report = asyncio.run(_run(listen_session(), listen_server(honours=False)))
    stream = next(r for r in report.results if r.method == "subscriptions/listen")
    assert stream.status == "changed"
    assert any(d.path.startswith("$.acknowledged") for d in stream.diff)


def test_a_request_sent_while_the_task_ran_is_not_held_until_its_end() -> None:
    recorded = legacy_task_session(polls=2)
    records = list(recorded)
    # move the recorded tools/list (and its answer) between the first and the second poll
    tail = records[-2:]
    del records[-2:]
    first_poll_answer = next(i for i, m in enumerate(records) if m.dir == "out" and m.raw.get("id") == 3)
    records[first_poll_answer + 1:first_poll_answer + 1] = tail
    for i, m in enumerate(records):
        m.t, m.source = 1_000_000 + 10 * i, i + 2
    seen: list[dict[str, Any]] = []
    report = asyncio.run(_run(session(*records), legacy_task_server(working=3, seen=seen)))
    assert report.ok, [(r.method, r.status, r.diff, r.error) for r in report.results]
    order = [m.get("method") for m in seen if m.get("id") is not None]
    assert order.index("tools/list") < order.index("tasks/result")


def test_a_task_the_recording_cancelled_is_cancelled_again_and_judged_by_its_end() -> None:
    records: list[tuple[str, Any]] = [
        ("in", INIT), ("out", INIT_OK),
        ("in", {**call(2, "research", {}), "params": {"name": "research", "arguments": {}, "task": {"ttl": 1}}}),
        ("out", res(2, {"task": _task(REC_ID, "working", pollInterval=5)})),
        ("in", req(3, "tasks/get", {"taskId": REC_ID})), ("out", res(3, _task(REC_ID, "working"))),
        ("in", req(4, "tasks/cancel", {"taskId": REC_ID})), ("out", res(4, _task(REC_ID, "cancelled"))),
        ("in", req(5, "tasks/get", {"taskId": REC_ID})), ("out", res(5, _task(REC_ID, "cancelled"))),
    ]
    state = {"cancelled": False}
    seen: list[dict[str, Any]] = []

    def script(msg: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
        seen.append(msg)
        method, rid = msg.get("method"), msg.get("id")
        if method == "initialize":
            send(INIT_OK | {"id": rid})
        elif method == "tools/call":
            send(res(rid, {"task": _task(LIVE_ID, "working", pollInterval=5)}))
        elif method == "tasks/cancel":
            state["cancelled"] = msg["params"]["taskId"] == LIVE_ID
            send(res(rid, _task(LIVE_ID, "cancelled")))
        elif method == "tasks/get":
            send(res(rid, _task(LIVE_ID, "cancelled" if state["cancelled"] else "working", pollInterval=5)))

    report = asyncio.run(_run(session(*records), script))
    assert report.ok, [(r.method, r.status, r.diff, r.error) for r in report.results]
    assert [r.method for r in report.results] == ["initialize", "tools/call", "tasks/cancel"]
    assert state["cancelled"]  # the cancel carried the live task id
    assert report.results[1].response == {"status": "cancelled"}
