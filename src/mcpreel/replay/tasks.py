"""Replaying the operations that outlive one answer: tasks (polled to their end) and listen streams.

A task is ONE operation: once the live server has created it, the runner polls it as the server asks,
answers its input requests from the recording, asks its result as the recording did, and judges it by its
terminal status and result, never by how many polls either side made. A listen stream is judged by its
acknowledged filter and the kinds and order of what it carried, never by timing.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcpreel._infra.correlation import verbatim_key
from mcpreel.compare.jsondiff import diff
from mcpreel.compare.normalize import canonical_params, comparable
from mcpreel.operations.cassette import ClientItem, Turn
from mcpreel.operations.facts import (
    TERMINAL_TASK_STATUSES,
    created_task,
    task_status_of,
)
from mcpreel.operations.walk import Operation
from mcpreel.replay.judge import _view
from mcpreel.replay.results import RequestResult, ServerRequestResult
from mcpreel.replay.wire import _ms, _Pending, _Run, _translate

# -- tasks ------------------------------------------------------------------------------------------


def _task_member(ex: Turn) -> bool:
    """A recorded ``tasks/get`` poll, ``tasks/result`` or ``tasks/update`` (the 2026 extension's answer to
    an input request) of a task: the runner asks these itself, when the live task asks for them."""
    op = ex.operation
    return op is not None and op.kind == "task" and ex.role in ("poll", "result", "update")


def _poll_interval(answer: dict[str, Any] | None) -> float | None:
    """The interval (seconds) a task answer asks its client to poll at: ``pollInterval`` (2025-11-25)
    or ``pollIntervalMs`` (2026-07-28), on the task object or flat in the result."""
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, dict):
        return None
    for body in (result.get("task"), result):
        if isinstance(body, dict):
            for key in ("pollIntervalMs", "pollInterval"):
                value = body.get(key)
                if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
                    return float(value) / 1000.0
    return None


def _outcome(answer: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a terminal ``tasks/get`` of the 2026-07-28 extension carries (its ``result`` or ``error``)
    as a response, or None when it carries neither."""
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, dict):
        return None
    if isinstance(result.get("result"), dict):
        return {"result": result["result"]}
    if result.get("error") is not None:
        return {"error": result["error"]}
    return None


def _recorded_task_end(op: Operation) -> tuple[str | None, dict[str, Any] | None, bool]:
    """(terminal status, outcome, asked tasks/result) of a recorded task."""
    status = op.task_status
    asked = any(x.role == "result" for x in op.exchanges)
    final = op.final
    if final is None or final.response is None:
        return status, None, asked
    if final.role == "result":
        return status, final.response, asked
    return status, _outcome(final.response), asked


def _swap_task_ids(value: Any, ids: dict[tuple[str, Any], Any]) -> Any:
    """``value`` with every live task id put back as the recorded one (so it is not a difference)."""
    if isinstance(value, dict):
        return {k: _swap_task_ids(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_swap_task_ids(v, ids) for v in value]
    if type(value) in (str, int):
        recorded = ids.get(verbatim_key(value))
        if recorded is not None:
            return recorded
    return value


def _settled_status(status: str | None, outcome: dict[str, Any] | None) -> str | None:
    """A task's status once its result is known: a ``tasks/result`` answer ends the task (the 2025-11-25
    request blocks until a terminal status), so a status last seen as ``working`` or ``input_required``
    counts as ``completed`` when the answer is a result and ``failed`` when it is an error."""
    if status in TERMINAL_TASK_STATUSES or outcome is None:
        return status
    if "result" in outcome:
        return "completed"
    if "error" in outcome:
        return "failed"
    return status


def _input_requests_of(answer: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The ``inputRequests`` a 2026 extension ``tasks/get`` answer carries (status ``input_required``):
    key -> ``{"method", "params"}``; empty when it carries none."""
    result = answer.get("result") if isinstance(answer, dict) else None
    asked = result.get("inputRequests") if isinstance(result, dict) else None
    if not isinstance(asked, dict):
        return {}
    return {k: v for k, v in asked.items() if isinstance(v, dict) and isinstance(v.get("method"), str)}


def _input_key(request: dict[str, Any]) -> tuple[str, bytes]:
    return str(request.get("method")), canonical_params(request.get("params"))


def _recorded_input(op: Operation, key: str, request: dict[str, Any]) -> tuple[Any, str] | None:
    """The recorded answer to a live task's input request: the ``inputResponses`` entry of a recorded
    ``tasks/update`` whose key the recorded task asked the same request under (method and params, the
    volatile ``_meta`` aside), the same key first; with a label saying where it came from. None: the
    recording never answered such a request."""
    asked: dict[str, dict[str, Any]] = {}
    answers: dict[str, Any] = {}
    for ex in op.exchanges:
        if ex.role == "poll":
            asked.update(_input_requests_of(ex.response))
        elif ex.role == "update" and isinstance(ex.params, dict) and isinstance(ex.params.get("inputResponses"), dict):
            answers.update(ex.params["inputResponses"])
    want = _input_key(request)
    for k in [key] + [k for k in asked if k != key]:
        if k in answers and k in asked and _input_key(asked[k]) == want:
            return answers[k], f"the recorded tasks/update (input {k!r} of task {op.task_id!r})"
    return None


async def _task_request(run: _Run, method: str, task_id: Any, timeout: float, op: Operation | None = None,
                        more: dict[str, Any] | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """Ask the live server about its task: the recording's own request of that method when it has one (its
    ``_meta`` and the rest of its params as recorded), with the live task id, said in the replay's era."""
    run.n_task_requests += 1
    template = next((x.request for x in op.exchanges if x.method == method), None) if op is not None else None
    recorded_params = template.get("params") if template is not None else None
    params = dict(recorded_params) if isinstance(recorded_params, dict) else {}
    params.update(more or {})
    params["taskId"] = task_id
    item = ClientItem({"jsonrpc": "2.0", "id": f"mcpreel-task-{run.n_task_requests}", "method": method,
                       "params": params})
    if run.report.era is not None:
        _translate(item, run.report.era, run.facts)
    p = await run.send(item.message, None, None)
    assert p is not None
    answer, error, _ = await run.wait(p, timeout)
    run.pending.pop(verbatim_key(p.sent.get("id")), None)
    return answer, error


async def _answer_inputs(run: _Run, op: Operation, live_id: Any, asked: dict[str, dict[str, Any]],
                         timeout: float) -> str | None:
    """Answer a 2026 extension task's input requests from the recording with one ``tasks/update`` (each
    listed in the report's server requests, as a server's request is); why it could not, or None."""
    responses: dict[str, Any] = {}
    for key, request in asked.items():
        method = str(request.get("method"))
        found = _recorded_input(op, key, request)
        if found is None:
            reason = f"the task asked {method} (input request {key!r}), which the recording cannot answer"
            run.report.server_requests.append(ServerRequestResult(method, request, None, reason))
            run.on_event(f"the server asked {method} for its task, which the recording cannot answer")
            return reason
        responses[key], label = found
        run.report.server_requests.append(ServerRequestResult(method, request, label))
    answer, why = await _task_request(run, "tasks/update", live_id, timeout, op, {"inputResponses": responses})
    if answer is None or "result" not in answer:
        return f"tasks/update: {why or (answer or {}).get('error')}"
    return None


async def _run_task(run: _Run, ex: Turn, op: Operation, result: RequestResult, created: dict[str, Any],
                    t0: float) -> None:
    """Follow a live task as its server asks until a terminal status (bounded by the recording's own
    duration of the task plus the timeout), and judge it by that status and its result.

    Polled at the server's interval. When it needs input (``input_required``): the 2025-11-25 utility
    asks ``tasks/result`` as the recording did, which blocks until the task ends while the server sends
    its requests tagged with the task (an elicitation), answered from the recording as every server
    request is; the 2026 extension's ``tasks/get`` lists ``inputRequests``, answered from the recorded
    ``tasks/update`` with one of the live task's own, and the polls go on."""
    options = run.options
    live_id = created_task(created)
    if run.feed is not None:
        run.feed.until_complete(op)  # the recorded end: terminal status and result
    rec_status, rec_outcome, asked_result = _recorded_task_end(op)
    rec_status = _settled_status(rec_status, rec_outcome) if asked_result else rec_status
    recorded_ms = (op.t_end - op.t) if op.t is not None and op.t_end is not None else 0
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max(0, recorded_ms) / 1000.0 + options.timeout
    extension = isinstance(created.get("result"), dict) and created["result"].get("resultType") == "task"
    interval = _poll_interval(created)
    status = task_status_of(created)
    last: dict[str, Any] | None = created
    error: str | None = None
    live_outcome: dict[str, Any] | None = None
    blocked = False  # tasks/result was asked while the task needed input
    answered: set[str] = set()  # the input requests already answered (the 2026 extension)
    polls = 0
    while status not in TERMINAL_TASK_STATUSES:
        remaining = deadline - loop.time()
        if remaining <= 0:
            error = (f"the task did not reach a terminal status within {max(0, recorded_ms) / 1000.0:g} s (the "
                     f"recording's) + {options.timeout:g} s; last status {status!r}")
            break
        if status == "input_required" and not extension and asked_result:
            blocked = True
            live_outcome, why = await _task_request(run, "tasks/result", live_id, remaining, op)
            if live_outcome is None:
                error = f"tasks/result (asked while the task needed input): {why or 'no response'}"
            else:
                status = _settled_status(status, live_outcome)
            break
        asked = {k: v for k, v in _input_requests_of(last).items() if k not in answered} if extension else {}
        if status == "input_required" and asked:
            answered.update(asked)
            why = await _answer_inputs(run, op, live_id, asked, min(options.timeout, max(0.1, remaining)))
            if why is not None:
                error = why
                break
        await asyncio.sleep(min(interval if interval is not None else 0.5, max(0.0, deadline - loop.time())))
        answer, why = await _task_request(run, "tasks/get", live_id, min(options.timeout, max(0.1, remaining)), op)
        if answer is None or "result" not in answer:
            error = f"tasks/get: {why or (answer or {}).get('error')}"
            last = answer
            break
        polls += 1
        last = answer
        status = task_status_of(answer)
        interval = _poll_interval(answer) or interval
    if not blocked:
        live_outcome = _outcome(last) if error is None else None
        if error is None and asked_result:
            live_outcome, why = await _task_request(run, "tasks/result", live_id, options.timeout, op)
            if live_outcome is None:
                error = f"tasks/result: {why or 'no response'}"
    ids = {verbatim_key(live_id): op.task_id}
    recorded_doc: dict[str, Any] = {"status": rec_status}
    live_doc: dict[str, Any] = {"status": status}
    if rec_outcome is not None:
        recorded_doc.update(_view(rec_outcome, options, ex.method, result.tool))
        if live_outcome is not None:
            live_doc.update(_view(_swap_task_ids(live_outcome, ids), options, ex.method, result.tool))
    result.recorded_response, result.response = recorded_doc, live_doc
    result.recorded_duration_ms = op.latency_ms
    result.duration_ms = _ms(t0)
    result.operation = {"kind": "task", "task_id": live_id, "recorded_task_id": op.task_id, "polls": polls,
                        "recorded_polls": op.polls}
    if blocked or answered:
        result.operation["input"] = "tasks/result" if blocked else "tasks/update"
    if error is not None and status not in TERMINAL_TASK_STATUSES or live_outcome is None and rec_outcome is not None:
        result.status, result.error = "error", error or "the task's result did not come"
        result.diff = diff(recorded_doc, live_doc)
    else:
        result.diff = diff(recorded_doc, live_doc)
        result.status = "changed" if result.diff else "same"
    run.report.judged(result)


# -- listen streams ---------------------------------------------------------------------------------


def _stream_ended_by(run: _Run, message: dict[str, Any]) -> Turn | None:
    """The open listen stream a client ``notifications/cancelled`` ends (None: it names none)."""
    if not run.listens or message.get("method") != "notifications/cancelled":
        return None
    params = message.get("params")
    if not isinstance(params, dict) or "requestId" not in params:
        return None
    return run.listens.get(verbatim_key(params["requestId"]))


def _stream_doc(notes: list[dict[str, Any]]) -> dict[str, Any]:
    """What a stream is judged by: the acknowledged filter, and each notification's kind (its params
    without ``_meta``, where it has more: a resource's uri) in order."""
    acknowledged: Any = None
    carried: list[dict[str, Any]] = []
    for note in notes:
        method = note.get("method")
        params = note.get("params")
        clean = comparable({"result": params}).get("result") if isinstance(params, dict) else None
        if method == "notifications/subscriptions/acknowledged" and acknowledged is None:
            acknowledged = clean or {}
            continue
        carried.append({"method": method, **({"params": clean} if clean else {})})
    return {"acknowledged": acknowledged, "notifications": carried}


def _recorded_stream(ex: Turn) -> list[dict[str, Any]]:
    op = ex.operation
    return [note for _, note in op.notes] if op is not None else []


async def _await_stream(run: _Run, ex: Turn) -> None:
    """Before the stream is ended: wait (at most the grace) for as many notifications as it carried."""
    carried = run.streams.get(_live_key(run, ex))
    if carried is None:
        return
    want = len(_recorded_stream(ex))
    loop = asyncio.get_running_loop()
    end = loop.time() + max(run.options.unrecorded_grace, 0.05)
    while len(carried) < want and loop.time() < end:
        await asyncio.sleep(0.02)


def _live_key(run: _Run, ex: Turn) -> tuple[str, Any]:
    key = verbatim_key(ex.request.get("id"))
    renamed = run.renamed.get(key)
    return verbatim_key(renamed) if renamed is not None else key


async def _settle_stream(run: _Run, ex: Turn, p: _Pending, result: RequestResult) -> None:
    """Judge a listen stream: its acknowledged filter and what it carried, in order; its answer too
    when the recording has the server ending it."""
    live_key = verbatim_key(p.sent.get("id"))
    cancelled = ex.wire is not None and ex.wire.cancelled
    await _await_stream(run, ex)  # a stream the client closed (HTTP) gets the same grace as one it cancelled
    answer: dict[str, Any] | None = None
    error: str | None = None
    if ex.response is not None or not cancelled:
        timeout = run.options.timeout if ex.response is not None else run.options.unrecorded_grace
        answer, error, _ = await run.wait(p, timeout)
    run.pending.pop(live_key, None)
    run.listens.pop(verbatim_key(ex.request.get("id")), None)
    carried = run.streams.pop(live_key, [])
    recorded_doc = _stream_doc(_recorded_stream(ex))
    live_doc = _stream_doc(carried)
    if ex.response is not None:
        recorded_doc["end"] = _view(ex.response, run.options, ex.method, result.tool)
        live_doc["end"] = _view(answer, run.options, ex.method, result.tool) if answer is not None else None
    result.recorded_response, result.response = recorded_doc, live_doc
    result.duration_ms = _ms(p.t0)
    result.operation = {"kind": "listen", "ended_by": "cancel" if cancelled else ("answer" if answer else None),
                        "notifications": len(carried), "recorded_notifications": len(_recorded_stream(ex))}
    if not carried and answer is None and not cancelled and ex.response is None:
        result.status, result.error = "unrecorded", error
    else:
        result.diff = diff(recorded_doc, live_doc)
        result.status = "changed" if result.diff else "same"
    run.report.judged(result)
