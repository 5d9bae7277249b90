"""Replay of a task that needs input, against scripted servers, in both Tasks forms.

2025-11-25 utility: once the live task says ``input_required``, the replayer asks ``tasks/result`` as the
recording did (it blocks until the task ends); the server sends its elicitation tagged with the live task
id on the way, answered from the recording. 2026-07-28 extension: the live ``tasks/get`` lists
``inputRequests``; the replayer answers them from the recorded ``tasks/update`` with one of its own (under
the live server's keys) and polls on. Either way the task is judged by its terminal status and result,
and the runner is bounded in time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from mcpreel.operations.facts import META_RELATED_TASK
from mcpreel.replay.results import ReplayOptions
from tests.replay.helpers import INIT, INIT_OK, call, note, req, res, session, text
from tests.replay.test_live_operations import LIVE_ID, REC_ID, Script, _run, _task

ASK = {"message": "Which tides?", "requestedSchema": {"type": "object", "properties": {"which": {"type": "string"}}}}
ANSWER = {"action": "accept", "content": {"which": "ocean"}}


def _tagged(params: dict[str, Any], task_id: str) -> dict[str, Any]:
    return {**params, "_meta": {META_RELATED_TASK: {"taskId": task_id}}}


def legacy_input_session(outcome: str = "ocean tides") -> Any:
    """A recorded 2025-11-25 task that went input_required: the client asked tasks/result, the server
    sent its elicitation (tagged with the task) on the way, the client answered, the result came."""
    return session(
        ("in", INIT), ("out", INIT_OK), ("in", note("notifications/initialized")),
        ("in", {**call(2, "research", {"topic": "tides"}),
                "params": {"name": "research", "arguments": {"topic": "tides"}, "task": {"ttl": 60000}}}),
        ("out", res(2, {"task": _task(REC_ID, "working", pollInterval=5)})),
        ("in", req(3, "tasks/get", {"taskId": REC_ID})), ("out", res(3, _task(REC_ID, "working", pollInterval=5))),
        ("in", req(4, "tasks/get", {"taskId": REC_ID})), ("out", res(4, _task(REC_ID, "input_required"))),
        ("in", req(5, "tasks/result", {"taskId": REC_ID})),
        ("out", req(0, "elicitation/create", _tagged(ASK, REC_ID))),
        ("in", res(0, ANSWER)),
        ("out", note("notifications/tasks/status", _task(REC_ID, "completed"))),
        ("out", res(5, {**text(outcome), "_meta": {META_RELATED_TASK: {"taskId": REC_ID}}})),
        ("in", req(6, "tools/list")), ("out", res(6, {"tools": []})),
    )


def legacy_input_server(*, seen: list[dict[str, Any]], prefix: str = "", ask: dict[str, Any] = ASK) -> Script:
    """A 2025-11-25 server like server-everything: its task goes input_required after one poll and stays
    there until ``tasks/result`` is asked; then it sends its elicitation (tagged with its task) and answers
    the result from what the client chose."""
    state: dict[str, Any] = {"polls": 0, "result_id": None}

    def script(msg: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
        seen.append(msg)
        method, rid = msg.get("method"), msg.get("id")
        if method is None and rid == "elicit-1":  # the client's answer to our elicitation
            chosen = (msg.get("result") or {}).get("content", {}).get("which", "?")
            send(res(state["result_id"], {**text(f"{prefix}{chosen} tides"),
                                          "_meta": {META_RELATED_TASK: {"taskId": LIVE_ID}}}))
        elif method == "initialize":
            send(INIT_OK | {"id": rid})
        elif method == "tools/call":
            send(res(rid, {"task": _task(LIVE_ID, "working", pollInterval=5)}))
        elif method == "tasks/get":
            state["polls"] += 1
            send(res(rid, _task(LIVE_ID, "working" if state["polls"] < 2 else "input_required", pollInterval=5)))
        elif method == "tasks/result":
            state["result_id"] = rid
            send(req("elicit-1", "elicitation/create", _tagged(ask, LIVE_ID)))
        elif method == "tools/list":
            send(res(rid, {"tools": []}))

    return script


def test_a_legacy_task_that_needs_input_asks_tasks_result_and_the_elicitation_is_answered_as_recorded() -> None:
    seen: list[dict[str, Any]] = []
    t0 = time.monotonic()
    report = asyncio.run(_run(legacy_input_session(), legacy_input_server(seen=seen),
                              ReplayOptions(timeout=5, unrecorded_grace=0.2)))
    took = time.monotonic() - t0
    assert report.ok, [(r.method, r.status, r.diff, r.error) for r in report.results]
    assert [r.method for r in report.results] == ["initialize", "tools/call", "tools/list"]
    task = report.results[1]
    assert task.status == "same"
    assert task.response == {"status": "completed", "result": text("ocean tides")}
    assert task.operation is not None and task.operation["input"] == "tasks/result"
    # tasks/result was asked once, with the live id; the elicitation got the recorded answer
    asked = [m for m in seen if m.get("method") == "tasks/result"]
    assert len(asked) == 1 and asked[0]["params"]["taskId"] == LIVE_ID
    assert next(m for m in seen if m.get("id") == "elicit-1" and "method" not in m)["result"] == ANSWER
    assert [s.method for s in report.server_requests] == ["elicitation/create"]
    assert report.server_requests[0].answered_from is not None
    assert took < 4  # no waiting for a bound: the task ended as soon as the server said so


def test_a_legacy_task_whose_result_changed_is_changed_at_its_path() -> None:
    seen: list[dict[str, Any]] = []
    report = asyncio.run(_run(legacy_input_session(), legacy_input_server(seen=seen, prefix="deep "),
                              ReplayOptions(timeout=5, unrecorded_grace=0.2)))
    task = report.results[1]
    assert task.status == "changed"
    assert [d.path for d in task.diff] == ["$.result.content[0].text"]
    assert not report.ok


def test_a_legacy_task_asking_something_new_is_a_refused_server_request() -> None:
    seen: list[dict[str, Any]] = []
    other = {**ASK, "message": "Which moon?"}
    report = asyncio.run(_run(legacy_input_session(), legacy_input_server(seen=seen, ask=other),
                              ReplayOptions(timeout=5, unrecorded_grace=0.2)))
    assert not report.ok
    assert len(report.unmatched_server_requests) == 1
    assert report.unmatched_server_requests[0].method == "elicitation/create"


def test_a_legacy_task_that_never_gives_its_result_is_bounded() -> None:
    def stuck(msg: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
        method, rid = msg.get("method"), msg.get("id")
        if method == "initialize":
            send(INIT_OK | {"id": rid})
        elif method == "tools/call":
            send(res(rid, {"task": _task(LIVE_ID, "input_required", pollInterval=5)}))
        elif method == "tools/list":
            send(res(rid, {"tools": []}))
        # tasks/result never answered

    t0 = time.monotonic()
    report = asyncio.run(_run(legacy_input_session(), stuck, ReplayOptions(timeout=0.5, unrecorded_grace=0.1)))
    assert time.monotonic() - t0 < 10
    task = report.results[1]
    assert task.status == "error"
    assert task.error is not None and "tasks/result" in task.error


# -- the 2026-07-28 extension: inputRequests in tasks/get, answered with tasks/update ---------------------

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
NAME_ASK = {"method": "elicitation/create",
            "params": {"mode": "form", "message": "Please enter your name.",
                       "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}
NAME_ANSWER = {"action": "accept", "content": {"name": "Luca"}}
DISCOVER_OK = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
               "serverInfo": {"name": "s", "version": "1"}, "resultType": "complete"}


def _ext_task(task_id: str, status: str, **more: Any) -> dict[str, Any]:
    return {"resultType": "complete", "taskId": task_id, "status": status, "createdAt": "2026-01-01T00:00:00Z",
            "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": 60000, "pollIntervalMs": 5, **more}


def modern_input_session(outcome: str = "Hello, Luca!") -> Any:
    """The extension's own example flow: created, working, input_required with inputRequests (seen twice),
    tasks/update with inputResponses, working, completed with the result."""
    return session(
        ("in", req(1, "server/discover", {"_meta": META})), ("out", res(1, DISCOVER_OK)),
        ("in", req(2, "tools/call", {"name": "hello_world", "arguments": {}, "_meta": META})),
        ("out", res(2, {**_ext_task(REC_ID, "working"), "resultType": "task"})),
        ("in", req(3, "tasks/get", {"taskId": REC_ID, "_meta": META})), ("out", res(3, _ext_task(REC_ID, "working"))),
        ("in", req(4, "tasks/get", {"taskId": REC_ID, "_meta": META})),
        ("out", res(4, _ext_task(REC_ID, "input_required", inputRequests={"name": NAME_ASK}))),
        ("in", req(5, "tasks/get", {"taskId": REC_ID, "_meta": META})),
        ("out", res(5, _ext_task(REC_ID, "input_required", inputRequests={"name": NAME_ASK}))),
        ("in", req(6, "tasks/update", {"taskId": REC_ID, "inputResponses": {"name": NAME_ANSWER}, "_meta": META})),
        ("out", res(6, {"resultType": "complete"})),
        ("in", req(7, "tasks/get", {"taskId": REC_ID, "_meta": META})), ("out", res(7, _ext_task(REC_ID, "working"))),
        ("in", req(8, "tasks/get", {"taskId": REC_ID, "_meta": META})),
        ("out", res(8, _ext_task(REC_ID, "completed", result=text(outcome)))),
    )


def modern_input_server(*, seen: list[dict[str, Any]], key: str = "name", ask: dict[str, Any] = NAME_ASK) -> Script:
    """A 2026 extension server: input_required (listing ``ask`` under ``key``) until a tasks/update answers
    that key, then completed with a greeting made from the answer."""
    state: dict[str, Any] = {"name": None}

    def script(msg: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
        seen.append(msg)
        method, rid = msg.get("method"), msg.get("id")
        if method == "server/discover":
            send(res(rid, DISCOVER_OK))
        elif method == "tools/call":
            send(res(rid, {**_ext_task(LIVE_ID, "working"), "resultType": "task"}))
        elif method == "tasks/get":
            if state["name"] is None:
                send(res(rid, _ext_task(LIVE_ID, "input_required", inputRequests={key: ask})))
            else:
                send(res(rid, _ext_task(LIVE_ID, "completed", result=text(f"Hello, {state['name']}!"))))
        elif method == "tasks/update":
            answer = msg["params"]["inputResponses"].get(key)
            if msg["params"]["taskId"] == LIVE_ID and isinstance(answer, dict):
                state["name"] = answer["content"]["name"]
            send(res(rid, {"resultType": "complete"}))

    return script


def test_an_extension_task_that_needs_input_is_answered_with_tasks_update_from_the_recording() -> None:
    seen: list[dict[str, Any]] = []
    report = asyncio.run(_run(modern_input_session(), modern_input_server(seen=seen)))
    assert report.ok, [(r.method, r.status, r.diff, r.error) for r in report.results]
    assert [r.method for r in report.results] == ["server/discover", "tools/call"]
    task = report.results[1]
    assert task.status == "same"
    assert task.operation is not None and task.operation["input"] == "tasks/update"
    updates = [m for m in seen if m.get("method") == "tasks/update"]
    assert len(updates) == 1  # once, however often the server listed the request
    assert updates[0]["params"]["taskId"] == LIVE_ID
    assert updates[0]["params"]["inputResponses"] == {"name": NAME_ANSWER}
    assert updates[0]["params"]["_meta"] == META  # said as the recording said it
    assert [s.answered_from is not None for s in report.server_requests] == [True]


def test_an_input_request_under_another_key_is_answered_under_the_live_key() -> None:
    seen: list[dict[str, Any]] = []
    report = asyncio.run(_run(modern_input_session(), modern_input_server(seen=seen, key="k-77")))
    assert report.ok, [(r.method, r.status, r.diff, r.error) for r in report.results]
    update = next(m for m in seen if m.get("method") == "tasks/update")
    assert update["params"]["inputResponses"] == {"k-77": NAME_ANSWER}


def test_an_input_request_the_recording_never_answered_is_an_error_and_unmatched() -> None:
    seen: list[dict[str, Any]] = []
    other = {**NAME_ASK, "params": {**NAME_ASK["params"], "message": "Please enter your age."}}
    report = asyncio.run(_run(modern_input_session(), modern_input_server(seen=seen, ask=other)))
    assert not report.ok
    task = report.results[1]
    assert task.status == "error"
    assert task.error is not None and "cannot answer" in task.error
    assert [s.method for s in report.unmatched_server_requests] == ["elicitation/create"]
    assert not any(m.get("method") == "tasks/update" for m in seen)


def test_an_extension_task_whose_result_changed_is_changed() -> None:
    report = asyncio.run(_run(modern_input_session(outcome="Hello, Luca."), modern_input_server(seen=[])))
    task = report.results[1]
    assert task.status == "changed"
    assert [d.path for d in task.diff] == ["$.result.content[0].text"]
