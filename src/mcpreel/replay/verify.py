"""Replaying a recording's client side against a live server and judging what comes back.

The client's requests and notifications are sent in recorded order, never its answers to server
requests. Pacing follows the recording: before a message is sent, the responses that were recorded
*before* it are awaited (so a request that depended on an earlier answer still follows it), while
requests that were in flight together in the recording are sent together again (so a
``notifications/cancelled`` still reaches a request that is running). That is the order, not the clock:
by default a message goes as soon as what it waited for is answered, so a session recorded over an
hour replays in seconds. ``ReplayOptions.pace = "recorded"`` (``--pace recorded``) adds the clock: each
client message also waits until its recorded offset from the first one has passed (a slower server
makes it later, never earlier).

- Era: a session is replayed in the era it was recorded in (:mod:`mcpreel.eras`), or in the one
  ``ReplayOptions.era`` names. Handshake era: a recorded ``initialize`` is replayed as recorded (the
  transport takes the protocol version it negotiates); a recording without one gets ours first, built
  from the client's recorded identity, and the report says so. 2026-07-28 era: the requests go as
  recorded, each with its own protocol ``_meta``; no handshake. Translating between the eras changes
  the plumbing only (``initialize`` <-> ``server/discover``, per-request ``_meta``), and the translated
  handshake is not compared.
- Multi-round-trip requests (2026-07-28): when the server answers ``input_required``, the recording's
  own retry is sent with the ``requestState`` the live server just gave in place of the recorded one.
- Tasks (the 2025-11-25 utility and the 2026-07-28 extension): a task is ONE operation. The live server's
  task id stands for the recorded one (in every ``params.taskId`` sent, and in the answers judged); the
  recorded ``tasks/get`` polls and ``tasks/result`` are not sent as recorded: once the live server created
  the task, it is polled as it asks (``pollInterval``, 2026: ``pollIntervalMs``) until a terminal status,
  for at most the recording's own duration of the task plus the timeout, then its result is asked as the
  recording asked it. A task that needs input gets it as the recording gave it: 2025-11-25, ``tasks/result``
  is asked as soon as the live task says ``input_required`` (it blocks until the task ends; the server's
  elicitation tagged with the task is answered from the recording on the way); 2026 extension, the
  ``inputRequests`` of a live ``tasks/get`` are answered from the recorded ``tasks/update`` with one of the
  runner's own (and listed with the server requests). The task is judged by its terminal status and its
  result (``$.status``, ``$.result...``), never by how many polls either side made. A recorded
  ``tasks/cancel`` is sent in its place.
- Listen streams (2026-07-28 ``subscriptions/listen``): the notifications tagged with the live request's
  id are collected; before the recording's own end of the stream (the client's ``notifications/cancelled``)
  is sent, the replayer waits (at most the grace) for as many as the recording carried, then judges the
  acknowledged filter and the kinds and order of the notifications (``$.acknowledged``,
  ``$.notifications[i]``), not their timing.
- Ids: a recorded id is kept unless it is already in use in this run; then the request gets a fresh
  one (and a ``notifications/cancelled`` naming it follows). The report shows both.
- Server requests (sampling, roots, elicitation) are answered from the recording, matched like the
  mock server matches; one the recording cannot answer gets a JSON-RPC error and is a difference
  (a ``ping`` it lacks is answered ``{}``, as the mock answers one: it is plumbing, not behaviour).
- Each response is compared with the recorded one after :func:`~mcpreel.compare.normalize.comparable`.
  Status per request: ``same``, ``changed``, ``error`` (no answer: timeout, transport failure) or
  ``unrecorded`` (the recording holds no answer to compare with: shown, never a difference); a replay that
  takes samples (:mod:`mcpreel.replay.noise`) settles each verdict over all of them, adding ``flaky``.

A target that cannot be started or reached, or that does not complete the handshake, raises
:class:`~mcpreel.errors.TransportError` (exit 2); a target that dies later fails the requests still
open, which are differences (exit 1).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from mcpreel._infra.correlation import verbatim_key
from mcpreel._version import __version__
from mcpreel.clients.base import Transport
from mcpreel.compare.normalize import comparable
from mcpreel.eras import (
    LEGACY,
    MODERN,
    UNKNOWN,
    absent_in_era,
    discover_request,
    era_name,
    initialize_request,
)
from mcpreel.errors import InputError, TransportError
from mcpreel.model import Session
from mcpreel.operations.cassette import ClientItem, Turn
from mcpreel.operations.facts import (
    LISTEN,
    created_task,
    partial_chunks,
    partial_result_token,
    subject,
)
from mcpreel.replay.judge import _judge, _judge_digest
from mcpreel.replay.results import LATEST_PROTOCOL, ReplayOptions, ReplayReport, RequestResult
from mcpreel.replay.tasks import (
    _await_stream,
    _run_task,
    _settle_stream,
    _stream_ended_by,
    _swap_task_ids,
    _task_member,
)
from mcpreel.replay.wire import _client_capabilities, _Facts, _facts, _Feed, _Pending, _Run, _translate

__all__ = ["replay"]


async def replay(session: Session, transport: Transport, options: ReplayOptions | None = None, *,
                 target: str = "", on_event: Callable[[str], None] | None = None,
                 sink: Callable[[RequestResult], None] | None = None, first_index: int = 1,
                 session_index: int | None = None) -> ReplayReport:
    """Replay ``session``'s client side over ``transport`` (started and closed here) and compare.

    ``sink`` takes each result in request order as soon as it is judged, instead of the report's
    ``results`` (numbered from ``first_index``, stamped with ``session_index``).

    The session is read twice, as a stream: once for the few facts the run needs first (:class:`_Facts`),
    then to send each request and judge its answer as it goes, holding only the requests in flight.
    """
    options = options or ReplayOptions()
    on_event = on_event or (lambda line: None)
    facts = _facts(session, options.original)
    path = session.info.path
    if not facts.requests:
        raise InputError("holds no client requests to replay", path=path)
    report = ReplayReport(session=path, target=target, transport=transport.name,
                          skipped_dropped=facts.skipped_dropped,
                          notes=list(session.info.notes),  # what the reader noticed (times rebuilt, say)
                          sink=sink, first_index=first_index, session_index=session_index)
    recorded_era = facts.era
    era = options.era if options.era != "auto" else (recorded_era if recorded_era != UNKNOWN else LEGACY)
    report.era, report.recorded_era = era, recorded_era
    run = _Run(facts, transport, options, report, on_event)
    await transport.start()
    reader = asyncio.ensure_future(run.read_loop())
    try:
        if era == LEGACY and not facts.has_initialize:
            await _handshake(run, facts)
        elif era == MODERN and recorded_era == LEGACY:
            await _discover(run, facts)
        feed = run.feed = _Feed(session, options.original)
        results: dict[int, RequestResult] = {}
        pendings: dict[int, _Pending] = {}
        # pacing: a client item waits for the exchanges whose responses were recorded before it
        answered: list[Turn] = []
        pacer = _Pacer(options.pace == "recorded")
        first_request = True
        left_out = False
        absent: dict[str, int] = {}  # what the target era does not have, left out: method -> how many
        while (event := feed.next()) is not None:
            kind, found = event
            if kind == "answered":
                answered.append(found)
                continue
            item: ClientItem = found
            if answered:
                waiting, answered = sorted(answered, key=lambda e: e.position), []
                for waited in waiting:
                    await _settle(run, waited, pendings, results)
            if era != recorded_era and absent_in_era(item.method, era):
                absent[item.method] = absent.get(item.method, 0) + 1
                continue
            if _translate(item, era, facts):
                if era == LEGACY and not left_out:
                    report.notes.append("the recorded server/discover was not sent: the session was replayed in "
                                        f"the {era_name(LEGACY)} (--era legacy)")
                left_out = True
                continue
            ex = item.exchange
            if ex is not None and _task_member(ex):
                continue  # the task's runner asks the live server itself (see _run_task)
            await pacer.wait(item.t)
            if ex is None:
                stream = _stream_ended_by(run, item.message)
                if stream is not None:
                    await _await_stream(run, stream)
                await run.send(item.message, None, None)
                report.notifications_sent += 1
                if stream is not None:
                    await _settle(run, stream, pendings, results)
                continue
            result = RequestResult(0, ex.method, subject(ex.request), "error",
                                   ex.recorded_request, recorded_response=None,
                                   recorded_duration_ms=None, source=ex.source)
            report.add(result)
            results[ex.position] = result
            p = await run.send(item.message, ex, result)
            assert p is not None
            pendings[ex.position] = p
            if ex.method == LISTEN:
                run.streams[verbatim_key(p.sent.get("id"))] = []
                run.listens[verbatim_key(ex.request.get("id"))] = ex
            if first_request and ex.method == "initialize":
                first_request = False
                feed.until_answered(ex)
                await _settle(run, ex, pendings, results)
                if result.response is None:
                    raise TransportError(_dead(run, "initialize", result.error))
            first_request = False
        if absent:
            said = ", ".join(f"{n} {method}" for method, n in absent.items())
            report.notes.append(f"left out {said}: the {era_name(era)} has no such method (--era {era})")
        # the rest, together: recorded answers wait the full timeout, unrecorded ones a short grace
        await asyncio.gather(*(_settle(run, p.exchange, pendings, results) for p in list(pendings.values())
                               if p.exchange is not None))
        if run.task_runs:  # the tasks still running, each until its terminal status or its bound
            await asyncio.gather(*run.task_runs.values())
        report.ended = run.ended
        report.flush()
        if report.ended and report.count("error"):
            report.notes.append(f"the server went away: {_dead(run, None, report.ended)}")
    finally:
        reader.cancel()
        try:
            await reader
        except (asyncio.CancelledError, Exception):
            pass
        await transport.close()
    return report


class _Pacer:
    """``--pace recorded``: each client message is sent no earlier than its recorded offset from the first
    client message (later when the server is slower than it was); ``none`` sends at once."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self.origin: tuple[int, float] | None = None  # (recorded ms, loop time) of the first message

    async def wait(self, t: int | None) -> None:
        if not self.on or t is None:
            return
        loop = asyncio.get_running_loop()
        if self.origin is None:
            self.origin = (t, loop.time())
            return
        delay = (t - self.origin[0]) / 1000 - (loop.time() - self.origin[1])
        if delay > 0:
            await asyncio.sleep(delay)


async def _settle(run: _Run, ex: Turn, pendings: dict[int, _Pending], results: dict[int, RequestResult]) -> None:
    p = pendings.pop(ex.position, None)
    if p is None:
        op = ex.operation
        runner = run.task_runs.get(op.n) if op is not None and _task_member(ex) else None
        if runner is not None and op is not None and (ex.role == "result" or ex.wire is op.final):
            await asyncio.shield(runner)  # what the recording sent after the task's end waits for it
        return
    if ex.method == LISTEN:
        await _settle_stream(run, ex, p, results.pop(ex.position))
        return
    recorded = ex.response is not None or ex.method == "initialize"  # a handshake always gets the full time
    timeout = run.options.timeout if recorded else run.options.unrecorded_grace
    answer, error, ms = await run.wait(p, timeout)
    run.pending.pop(verbatim_key(p.sent.get("id")), None)
    run.learn_request_state(ex, answer)
    result = results.pop(ex.position)
    result.recorded_response, result.recorded_duration_ms = ex.response, ex.latency_ms
    result.duration_ms = ms if answer is not None else None
    op = ex.operation
    if (op is not None and op.kind == "task" and ex.role == "call" and answer is not None
            and created_task(answer) is not None and op.task_id is not None):
        # the live server created the task: the runner polls it to its end and judges it as one operation
        live_id = created_task(answer)
        run.task_ids[verbatim_key(op.task_id)] = live_id
        run.recorded_task_ids[verbatim_key(live_id)] = op.task_id
        run.task_runs[op.n] = asyncio.ensure_future(_run_task(run, ex, op, result, answer, p.t0))
        return
    if run.recorded_task_ids and answer is not None:
        answer = _swap_task_ids(answer, run.recorded_task_ids)
    _judge(result, ex, answer, error, run.options)
    run.report.notes.extend(f"#{result.index} {result.method}: {note}" for note in result.notes)
    _judge_digest(result, ex, answer, run.conflicts.pop(verbatim_key(p.sent.get("id")), None))
    _judge_chunks(result, ex, run)
    run.report.judged(result)


def _judge_chunks(result: RequestResult, ex: Turn, run: _Run) -> None:
    """Partial results (SEP-2998): the final result is what is judged (it is authoritative); where the
    chunks the call set off differ from the recorded ones, the result says so (a note, not a failure)."""
    token = partial_result_token(ex.request)
    if token is None:
        return
    live = partial_chunks(run.partials.pop(verbatim_key(token), []), token)
    op = ex.operation  # the walk places the chunks in their operation's notes (a lean replay keeps no before)
    recorded = partial_chunks([m for _, m in op.notes] if op is not None else [*ex.before, *ex.after], token)

    def view(chunks: list[dict[str, Any]]) -> list[Any]:
        return [comparable({"result": c.get("params")}).get("result") for c in chunks]

    if view(recorded) != view(live):
        said = (f"the partial results differ (final result judged alone): {len(recorded)} chunk"
                f"{'' if len(recorded) == 1 else 's'} recorded, {len(live)} now"
                + ("" if len(recorded) != len(live) else ", with other contents"))
        result.notes.append(said)
        run.report.notes.append(f"#{result.index} {result.method}{' ' + result.tool if result.tool else ''}: {said}")


async def _discover(run: _Run, facts: _Facts) -> None:
    """The 2026-07-28 era's opening for a handshake-era recording: ``server/discover`` in place of
    ``initialize``; a server that refuses it cannot be replayed in that era."""
    info, caps = facts.info, facts.caps
    p = await run.send(discover_request("mcpreel-discover", info, caps), None, None)
    assert p is not None
    answer, error, _ = await run.wait(p, run.options.timeout)
    if answer is None or "result" not in answer:
        why = error or f"server/discover was answered with an error: {answer.get('error') if answer else None}"
        raise TransportError(_dead(run, f"server/discover (the {era_name(MODERN)}; --era legacy replays the "
                                        f"{era_name(LEGACY)})", why))
    run.report.handshake = ("the recording's initialize was sent as server/discover: the session was replayed "
                            f"in the {era_name(MODERN)} (--era modern)")


async def _handshake(run: _Run, facts: _Facts) -> None:
    info, caps = facts.legacy_info, facts.legacy_caps
    if caps is None:
        caps = _client_capabilities(facts)
    request = initialize_request("mcpreel-initialize", info or {"name": "mcpreel-replay", "version": __version__},
                                 caps, LATEST_PROTOCOL)
    p = await run.send(request, None, None)
    assert p is not None
    answer, error, _ = await run.wait(p, run.options.timeout)
    if answer is None or "result" not in answer:
        why = error or f"initialize was answered with an error: {answer.get('error') if answer else None}"
        raise TransportError(_dead(run, "our initialize", why))
    result = answer["result"]
    version = result.get("protocolVersion") if isinstance(result, dict) else None
    if run.report.recorded_era == MODERN:
        run.report.handshake = (f"the session was recorded in the {era_name(MODERN)} and replayed in the "
                                f"{era_name(LEGACY)} (--era legacy): mcpreel performed the handshake (protocol "
                                f"{version or 'unknown'})")
    else:
        run.report.handshake = (f"the recording has no initialize: mcpreel performed the handshake "
                                f"(protocol {version or 'unknown'})")
    await run.send({"jsonrpc": "2.0", "method": "notifications/initialized"}, None, None)


def _dead(run: _Run, what: str | None, why: str | None) -> str:
    reason = why or "no response"
    told = run.transport.dead_reason() if run.ended else None
    if told:
        reason = told
    elif run.stderr_tail and run.ended:
        reason += f"; its last stderr line: {run.stderr_tail[-1].strip()[:200]}"
    target = run.report.target or "the target"
    if what:
        return f"cannot replay against {target}: {what} got no answer: {reason}"
    return reason
