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
import time
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from mcpreel._infra.correlation import verbatim_key
from mcpreel._version import __version__
from mcpreel.clients.base import Transport
from mcpreel.compare.jsondiff import Difference, diff
from mcpreel.compare.normalize import IgnorePath, canonical_params, comparable
from mcpreel.compare.rules import CompareRule, CompareRules, suggest
from mcpreel.drafts import PARTIAL_RESULT_NOTIFICATION
from mcpreel.eras import (
    LATEST_LEGACY_PROTOCOL,
    LEGACY,
    MODERN,
    SERVER_INFO_KEY,
    UNKNOWN,
    absent_in_era,
    client_identity,
    discover_request,
    era_name,
    initialize_request,
    to_legacy_request,
    to_modern_request,
)
from mcpreel.errors import InputError, TransportError
from mcpreel.mock.matcher import METHOD_NOT_FOUND, Matcher, Miss, RecordingIndex
from mcpreel.model import Kind, Message, Session
from mcpreel.operations.cassette import Builder, ClientItem, Turn
from mcpreel.operations.facts import (
    LISTEN,
    TERMINAL_TASK_STATUSES,
    created_task,
    digest_refusal,
    partial_chunks,
    partial_result_token,
    subject,
    subscription_of,
    task_status_of,
)
from mcpreel.operations.walk import Operation
from mcpreel.replay.noise import LearnedNoise, Noise, Sampling
from mcpreel.sessions import ClientSession, Describer

__all__ = ["ERA_CHOICES", "LATEST_PROTOCOL", "ReplayOptions", "ReplayReport", "RequestResult",
           "ServerRequestResult", "replay"]

#: the protocol version our own handshake asks for (a recording without ``initialize``)
LATEST_PROTOCOL = LATEST_LEGACY_PROTOCOL
#: what ``--era`` accepts: the recording's own era, or one of the two
ERA_CHOICES = ("auto", LEGACY, MODERN)
#: the verdicts: ``flaky`` is an answer that differs only where the samples vary (:mod:`mcpreel.replay.noise`)
STATUSES = ("same", "changed", "flaky", "error", "unrecorded", "definition changed")
#: the verdict of a request the live server refused as made against stale definitions (DigestChanged,
#: HTTP 409: mcpreel.drafts) where the recording's server served it; a failure, as "changed" is
DEFINITION_CHANGED = "definition changed"
#: the requests of the handshake: answered even by a recording that caught nothing else
_HANDSHAKES = frozenset(("initialize", "server/discover"))


@dataclass
class ReplayOptions:
    ignore_paths: list[IgnorePath] = field(default_factory=list)
    #: the ignore and mask rules people wrote (``--compare-rules``) or learned, applied per method and tool
    rules: CompareRules | None = None
    original: bool = False
    timeout: float = 30.0  # seconds to wait for one response
    unrecorded_grace: float = 1.0  # how long requests the recording never saw answered may take
    match: str = "method-params"  # how server requests are matched against the recording
    era: str = "auto"  # the era to replay in: the recording's own ("auto"), "legacy" or "modern"
    #: ``none``: each client message goes as soon as what it waited for in the recording is answered (the
    #: order, not the clock); ``recorded``: also no earlier than its recorded time after the first one
    pace: str = "none"
    #: which client sessions of the file: the Nth only (1-based), and of a merged file one source only
    session_index: int | None = None
    source: str | None = None
    #: samples beyond the one run (``--repeat``, ``--baseline-*``, ``--learn-noise``): :mod:`mcpreel.replay.noise`
    sampling: Sampling | None = None
    #: a learned noise file (``--noise``): its entries for the recording's server join ``rules``
    noise: Noise | None = None


@dataclass
class RequestResult:
    """One replayed request: what was recorded, what was sent, what came back, and the verdict."""

    index: int
    method: str
    tool: str | None
    status: str
    original_request: dict[str, Any]
    sent_message: dict[str, Any] | None = None
    response: dict[str, Any] | None = None
    recorded_response: dict[str, Any] | None = None
    error: str | None = None
    duration_ms: float | None = None
    recorded_duration_ms: int | None = None
    diff: list[Difference] = field(default_factory=list)
    source: int | None = None
    session: int | None = None  # which client session of the recording (1-based) it belongs to
    judged: bool = field(default=False, repr=False, compare=False)  # has its verdict (see ReplayReport.sink)
    #: a task or a listen stream judged as one operation: its kind and how it went (polls, task ids, ...)
    operation: dict[str, Any] | None = None
    #: what the verdict says besides the differences (refused then and now, the server's identity)
    notes: list[str] = field(default_factory=list)
    #: the rules that would absorb the differences that look volatile (a timestamp, an id, an address)
    suggestions: list[CompareRule] = field(default_factory=list)
    #: the paths that varied between the samples of a side (``{"path", "varied", "samples"}``): noise
    noise: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The request's result as ``--output`` writes it (both answers, so a reader need not open the recording)."""
        return {
            "index": self.index,
            "session": self.session,
            "method": self.method,
            "tool": self.tool,
            "status": self.status,
            "original_request": self.original_request,
            "sent_message": self.sent_message,
            "response": self.response,
            "error": self.error,
            "duration_ms": None if self.duration_ms is None else round(self.duration_ms, 3),
            "recorded_response": self.recorded_response,
            "recorded_duration_ms": self.recorded_duration_ms,
            "diff": [d.to_json() for d in self.diff],
            "source_line": self.source,
        } | ({"operation": self.operation} if self.operation is not None else {}) \
            | ({"notes": self.notes} if self.notes else {}) \
            | ({"suggested_rules": [r.to_entry() for r in self.suggestions]} if self.suggestions else {}) \
            | ({"noise": self.noise} if self.noise else {})


@dataclass
class ServerRequestResult:
    """A request the server sent during the replay and how it was answered."""

    method: str
    request: dict[str, Any]
    answered_from: str | None  # the recorded server request whose answer was used
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The server request as ``--output`` writes it, with what answered it (or why nothing did)."""
        return {"method": self.method, "request": self.request, "answered_from": self.answered_from,
                "error": self.error}


@dataclass
class ReplayReport:
    """What a replay found. ``results`` holds every request's result, unless a ``sink`` takes them.

    With a ``sink`` (the CLI's), each result is handed to it as soon as it and every result before it
    are judged, in request order, and is not kept: a long session's results never sit in memory
    together. The counts (:meth:`count`) are kept either way.
    """

    session: str | None
    target: str
    transport: str
    results: list[RequestResult] = field(default_factory=list)
    server_requests: list[ServerRequestResult] = field(default_factory=list)
    notifications_sent: int = 0
    notifications_received: int = 0
    skipped_dropped: int = 0
    handshake: str | None = None
    ended: str | None = None
    notes: list[str] = field(default_factory=list)
    era: str | None = None  # the era the replay spoke
    recorded_era: str | None = None
    sessions: list[dict[str, Any]] = field(default_factory=list)  # one entry per client session replayed
    sink: Callable[[RequestResult], None] | None = field(default=None, repr=False, compare=False)
    first_index: int = 1  # the number of this report's first result (a later session of a file goes on)
    session_index: int | None = None  # stamped on each result, when the file holds several sessions
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    total: int = 0  # results added, kept or handed out
    #: results judged against a recorded answer, beyond the handshake (streamed results: counted as they come)
    compared_count: int = 0
    #: the samples a sampled replay took per side (``{"target": K, "baseline": B}``), None for one run
    samples: dict[str, int] | None = None
    #: what a sampled replay learned of the server's noise (``--learn-noise``)
    learned: LearnedNoise | None = None
    _held: dict[int, RequestResult] = field(default_factory=dict, repr=False, compare=False)
    _next: int = 1

    def add(self, result: RequestResult) -> None:
        """A request is sent: its result (judged later by :meth:`judged`) gets the next number."""
        self.total += 1
        result.index = self.first_index + self.total - 1
        if self.session_index is not None:
            result.session = self.session_index
        if self.sink is None:
            self.results.append(result)
        else:
            self._held[result.index] = result

    def judged(self, result: RequestResult) -> None:
        """A result has its verdict: count it, and hand out every result judged in order so far."""
        self.counts[result.status] = self.counts.get(result.status, 0) + 1
        if result.status != "unrecorded" and result.method not in _HANDSHAKES:
            self.compared_count += 1
        if self.sink is None:
            return
        result.judged = True
        if self._next < self.first_index:
            self._next = self.first_index
        while (head := self._held.get(self._next)) is not None and head.judged:
            del self._held[self._next]
            self._next += 1
            self.sink(head)

    def flush(self) -> None:
        """Hand out what is left (requests never judged: the run stopped), in order."""
        if self.sink is None:
            return
        for index in sorted(self._held):
            result = self._held.pop(index)
            if not result.judged:
                self.counts[result.status] = self.counts.get(result.status, 0) + 1
            self.sink(result)

    def recount(self, was: str, now: str) -> None:
        """A streamed result's verdict changed after it was counted (a sampled replay settles it over every
        sample): move it from ``was`` to ``now`` in the counts."""
        if was != now:
            self.counts[was] = self.counts.get(was, 0) - 1
            self.counts[now] = self.counts.get(now, 0) + 1

    @property
    def compared(self) -> int:
        """How many requests were judged against a recorded answer, the handshake left aside."""
        if self.sink is None:
            return sum(1 for r in self.results if r.status != "unrecorded" and r.method not in _HANDSHAKES)
        return self.compared_count

    @property
    def nothing_answered(self) -> bool:
        """Whether the recording answered none of the requests beyond the handshake: nothing was judged, and
        a green replay would say nothing (exit 2)."""
        return self.requests > 0 and self.compared == 0 and self.count("unrecorded") > 0

    def count(self, status: str) -> int:
        """How many requests ended with ``status`` (counted as they came when the results were streamed)."""
        if self.sink is None:
            return sum(1 for r in self.results if r.status == status)
        return self.counts.get(status, 0)

    @property
    def requests(self) -> int:
        """How many requests were replayed."""
        return len(self.results) if self.sink is None else self.total

    @property
    def unmatched_server_requests(self) -> list[ServerRequestResult]:
        """The server's requests nothing in the recording answered (a difference too: the server asked something new)."""
        return [s for s in self.server_requests if s.answered_from is None]

    @property
    def ok(self) -> bool:
        """Whether the server answered as recorded: no changed or failed request, no unanswered server request."""
        return (not (self.count("changed") or self.count("error") or self.count(DEFINITION_CHANGED))
                and not self.unmatched_server_requests)

    @property
    def exit_code(self) -> int:
        """0 when :attr:`ok`, 1 on a change (``flaky`` is not one: :meth:`exit_for`), 2 when nothing ran
        or the recording holds no answer to judge by (a replay that could not start raises instead)."""
        return self.exit_for()

    def exit_for(self, *, fail_on_flaky: bool = False) -> int:
        """The exit code, ``flaky`` requests failing too when ``fail_on_flaky`` (``--fail-on flaky``)."""
        if self.requests == 0 or self.nothing_answered:
            return 2
        if not self.ok or (fail_on_flaky and self.count("flaky")):
            return 1
        return 0

    def summary(self) -> str:
        """One line: how many requests were replayed and how each ended."""
        parts = [f"{self.count(s)} {s}" for s in STATUSES if self.count(s) or s in ("same", "changed")]
        n = self.requests
        line = f"{n} request{'s' if n != 1 else ''} replayed: " + ", ".join(parts)
        if self.server_requests:
            refused = len(self.unmatched_server_requests)
            answered = len(self.server_requests) - refused
            line += f"; {answered} server request{'s' if answered != 1 else ''} answered"
            if refused:
                line += f", {refused} not in the recording (refused)"
        if self.skipped_dropped:
            line += f"; {self.skipped_dropped} dropped messages skipped"
        if self.samples is not None:
            k, b = self.samples.get("target", 1), self.samples.get("baseline", 0)
            line += f"; judged over {k} run{'s' if k != 1 else ''} against the target" + (
                f" and {b} against the baseline" if b else "") + " (flaky: varies between runs, not a change)"
        if self.requests == 0:
            line += "; nothing was replayed: the recording holds no client request"
        elif self.nothing_answered:
            line += ("; nothing was judged: the recording holds no answer to any request beyond the handshake "
                     "(record again, letting the client wait for the answers)")
        return line

    def to_json(self) -> dict[str, Any]:
        """The whole report as ``--output`` writes it."""
        return {
            "session": self.session,
            "target": self.target,
            "transport": self.transport,
            "ok": self.ok,
            "summary": {s: self.count(s) for s in STATUSES} | {
                "requests": self.requests,
                "notifications_sent": self.notifications_sent,
                "server_requests": len(self.server_requests),
                "server_requests_unmatched": len(self.unmatched_server_requests),
                "dropped_skipped": self.skipped_dropped,
            } | ({"samples": self.samples} if self.samples is not None else {}),
            "handshake": self.handshake,
            "era": self.era,
            "recorded_era": self.recorded_era,
            "sessions": self.sessions,
            "ended": self.ended,
            "notes": self.notes,
            "results": [r.to_json() for r in self.results],
            "server_requests": [s.to_json() for s in self.server_requests],
        }


class _Pending:
    __slots__ = ("exchange", "sent", "t0", "future", "result")

    def __init__(self, exchange: Turn | None, sent: dict[str, Any], result: RequestResult | None):
        self.exchange = exchange
        self.sent = sent
        self.t0 = time.perf_counter()
        self.future: asyncio.Future[tuple[dict[str, Any] | None, str | None, float]] = (
            asyncio.get_running_loop().create_future())
        self.result = result


class _Run:
    def __init__(self, facts: _Facts, transport: Transport, options: ReplayOptions, report: ReplayReport,
                 on_event: Callable[[str], None]):
        self.transport = transport
        self.options = options
        self.report = report
        self.facts = facts  # the era translation of the requests a task's runner makes itself
        self.on_event = on_event
        self.pending: dict[tuple[str, Any], _Pending] = {}
        self.used_ids = _IdSet()
        self.renamed: dict[tuple[str, Any], Any] = {}
        self.max_int = facts.max_int
        self.server_matcher = Matcher(RecordingIndex(facts.server_exchanges, options.match), repeat=True)
        self.stderr_tail: list[str] = []
        self.ended: str | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.request_states: dict[str, str] = {}  # recorded requestState -> the live server's
        self.task_ids: dict[tuple[str, Any], Any] = {}  # recorded task id (key) -> the live server's
        self.recorded_task_ids: dict[tuple[str, Any], Any] = {}  # live task id (key) -> the recorded one
        self.task_runs: dict[int, asyncio.Task[None]] = {}  # task operation n -> its runner
        self.streams: dict[tuple[str, Any], list[dict[str, Any]]] = {}  # live listen id -> what it carried
        self.listens: dict[tuple[str, Any], Turn] = {}  # recorded listen id -> its turn, while open
        self.feed: _Feed | None = None
        self.n_task_requests = 0
        self.conflicts: dict[Any, int] = {}  # request id -> the HTTP status its JSON-RPC error came with
        self.partials: dict[Any, list[dict[str, Any]]] = {}  # partialResultToken -> live chunks (SEP-2998)

    def learn_request_state(self, ex: Turn, answer: dict[str, Any] | None) -> None:
        """An ``input_required`` answer: its ``requestState`` stands in for the recorded one from now on."""
        recorded = _request_state(ex.response)
        live = _request_state(answer)
        if recorded is not None and live is not None and recorded != live:
            self.request_states[recorded] = live

    # -- receiving --------------------------------------------------------------------------------
    async def read_loop(self) -> None:
        while True:
            msg = await self.transport.receive()
            if msg is None:
                break
            self._on_record(msg)
        self.ended = self.transport.ended or "the server closed the connection"
        for p in list(self.pending.values()):
            if not p.future.done():
                p.future.set_result((None, self.ended, _ms(p.t0)))
        self.pending.clear()

    def _on_record(self, msg: Message) -> None:
        if msg.kind == Kind.STDERR:
            self.stderr_tail = (self.stderr_tail + [msg.text or ""])[-5:]
            return
        if msg.kind == Kind.TRANSPORT:
            ctx = msg.ctx or {}
            for rid in ctx.get("request_ids") or []:
                p = self.pending.pop(verbatim_key(rid), None)
                if p is not None and not p.future.done():
                    body = str(ctx.get("body") or ctx.get("error") or "").strip().splitlines()
                    reason = _Refusal(f"HTTP {ctx.get('status')}" + (f": {body[0][:200]}" if body else ""),
                                      ctx.get("status"))
                    p.future.set_result((None, reason, _ms(p.t0)))
            return
        if msg.kind != Kind.MESSAGE:
            return
        for member in msg.members():
            if "method" in member:
                if "id" not in member and self.streams:
                    sub = subscription_of(member)
                    carried = self.streams.get(verbatim_key(sub)) if sub is not None else None
                    if carried is not None:
                        carried.append(member)
                if "id" in member:
                    task = asyncio.ensure_future(self._answer_server_request(member))
                    self.tasks.add(task)
                    task.add_done_callback(self.tasks.discard)
                else:
                    self.report.notifications_received += 1
                    if member.get("method") == PARTIAL_RESULT_NOTIFICATION:  # a chunk of a call's result
                        token = partial_result_token(member)
                        if token is not None and len(self.partials) < _MAX_PARTIAL_CALLS:
                            self.partials.setdefault(verbatim_key(token), []).append(member)
                continue
            p = self.pending.pop(verbatim_key(member.get("id")), None)
            if p is not None and not p.future.done():
                status = (msg.ctx or {}).get("status") if "error" in member else None
                if isinstance(status, int):
                    self.conflicts[verbatim_key(member.get("id"))] = status  # the HTTP status of an error
                p.future.set_result((member, None, _ms(p.t0)))

    async def _answer_server_request(self, request: dict[str, Any]) -> None:
        method = str(request.get("method"))
        found = self.server_matcher.match(request)
        if method == "ping" and (isinstance(found, Miss) or found.response is None):
            # a keep-alive the recording lacks: protocol plumbing, answered as any client would
            answer = {"jsonrpc": "2.0", "id": request["id"], "result": {}}
            self.report.server_requests.append(ServerRequestResult(method, request, "ping: answered {}"))
        elif not isinstance(found, Miss) and found.response is None:
            # asked then and now, and the recording's client never answered it either: the same behaviour,
            # so it is left unanswered again (a server that waited on it then waits on it now)
            self.report.server_requests.append(ServerRequestResult(
                method, request, f"{found.label()}: unanswered in the recording too, left unanswered"))
            return
        elif isinstance(found, Miss):
            reason = found.reason
            answer = {"jsonrpc": "2.0", "id": request["id"],
                      "error": {"code": METHOD_NOT_FOUND, "message": f"mcpreel replay: {reason}"}}
            self.report.server_requests.append(ServerRequestResult(method, request, None, reason))
            self.on_event(f"the server asked {method}, which the recording cannot answer: {reason}")
        else:
            answer = {**(found.response or {}), "id": request["id"]}
            self.report.server_requests.append(ServerRequestResult(method, request, found.label()))
        try:
            await self.transport.send(answer)
        except TransportError:
            pass

    # -- sending ----------------------------------------------------------------------------------
    def _fresh_id(self, recorded: Any) -> Any:
        if isinstance(recorded, str):
            n = 2
            while verbatim_key(f"{recorded}~{n}") in self.used_ids:
                n += 1
            return f"{recorded}~{n}"
        self.max_int += 1
        while verbatim_key(self.max_int) in self.used_ids:
            self.max_int += 1
        return self.max_int

    def prepare(self, message: dict[str, Any]) -> dict[str, Any]:
        """The message as it goes out: a colliding id renamed, a cancellation pointed at the rename, a
        recorded ``requestState`` replaced by the one the live server issued."""
        out = message
        params = message.get("params")
        if self.task_ids and isinstance(params, dict) and "taskId" in params:
            live = self.task_ids.get(verbatim_key(params["taskId"]))
            if live is not None:
                out = message = {**message, "params": {**params, "taskId": live}}
                params = message["params"]
        if self.request_states and isinstance(params, dict) and params.get("requestState") in self.request_states:
            out = message = {**message, "params": {**params, "requestState": self.request_states[params["requestState"]]}}
        if "id" in message:
            key = verbatim_key(message["id"])
            if key in self.used_ids:
                new_id = self._fresh_id(message["id"])
                out = {**message, "id": new_id}
                self.renamed[key] = new_id
                key = verbatim_key(new_id)
            else:
                self.renamed.pop(key, None)
            self.used_ids.add(key)
            if type(out["id"]) is int:
                self.max_int = max(self.max_int, out["id"])
        elif message.get("method") == "notifications/cancelled":
            params = message.get("params")
            if isinstance(params, dict) and "requestId" in params:
                renamed = self.renamed.get(verbatim_key(params["requestId"]))
                if renamed is not None:
                    out = {**message, "params": {**params, "requestId": renamed}}
        return out

    async def send(self, message: dict[str, Any], exchange: Turn | None, result: RequestResult | None) -> _Pending | None:
        sent = self.prepare(message)
        p = None
        if "id" in sent:
            p = _Pending(exchange, sent, result)
            self.pending[verbatim_key(sent["id"])] = p
            if result is not None:
                result.sent_message = sent
        if self.ended is not None:
            if p is not None:
                self.pending.pop(verbatim_key(sent["id"]), None)
                p.future.set_result((None, self.ended, 0.0))
            return p
        try:
            await self.transport.send(sent)
        except TransportError as exc:
            if p is None:
                raise
            self.pending.pop(verbatim_key(sent["id"]), None)
            if not p.future.done():
                p.future.set_result((None, str(exc), _ms(p.t0)))
        return p

    async def wait(self, p: _Pending, timeout: float) -> tuple[dict[str, Any] | None, str | None, float]:
        try:
            return await asyncio.wait_for(asyncio.shield(p.future), timeout)
        except TimeoutError:
            return (None, f"no response within {timeout:g} s", _ms(p.t0))


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000.0


def _client_capabilities(facts: _Facts) -> dict[str, Any]:
    caps: dict[str, Any] = {}
    for sx in facts.server_exchanges:
        if sx.method == "sampling/createMessage":
            caps["sampling"] = {}
        elif sx.method == "roots/list":
            caps["roots"] = {"listChanged": True}
        elif sx.method == "elicitation/create":
            caps["elicitation"] = {}
    return caps


def _request_state(message: dict[str, Any] | None) -> str | None:
    result = message.get("result") if isinstance(message, dict) else None
    if isinstance(result, dict) and result.get("resultType") == "input_required":
        state = result.get("requestState")
        return state if isinstance(state, str) else None
    return None


#: requests that negotiate or probe rather than ask: refused then and now is the same, whatever the code
PROBES = frozenset({"server/discover", "initialize", "ping"})
#: the results that name the server (``serverInfo``): its name and version are information, never a difference
_IDENTIFIED = frozenset({"initialize", "server/discover"})


class _Refusal(str):
    """Why a request got no JSON-RPC answer: the HTTP transport refused it (``status``, a 4xx); a reason
    like any other, that also tells the verdict it was a refusal."""

    status: Any

    def __new__(cls, text: str, status: Any) -> _Refusal:
        obj = super().__new__(cls, text)
        obj.status = status
        return obj


def _view(message: Any, options: ReplayOptions, method: str, tool: str | None) -> Any:
    """The one view a verdict compares: :func:`comparable` with ``--ignore-path``, then the rules for this
    request's method and tool (every comparison of a replay goes through here)."""
    view = comparable(message, options.ignore_paths)
    return options.rules.apply(view, method, tool) if options.rules is not None else view


def _refusal_of(answer: dict[str, Any] | None, error: str | None) -> str | None:
    """How an answer refused its request (``JSON-RPC error -32601``, ``HTTP 400``), or None when it did not."""
    if isinstance(answer, dict) and "error" in answer:
        code = answer["error"].get("code") if isinstance(answer["error"], dict) else None
        return f"JSON-RPC error {code}" if code is not None else "a JSON-RPC error"
    if answer is None and isinstance(error, _Refusal) and isinstance(error.status, int) and 400 <= error.status < 500:
        return f"HTTP {error.status}"
    return None


def _refused_then_and_now(ex: Turn, answer: dict[str, Any] | None, error: str | None) -> str | None:
    """The note of a plumbing refusal kept: a probe (``server/discover``, ...) refused in the recording and
    refused now, or any request the recording shows refused by the transport (an error tied to no id, what
    an HTTP 4xx carries) and refused now -- whatever either code. None otherwise."""
    recorded = ex.response
    if not isinstance(recorded, dict) or "error" not in recorded:
        return None
    if ex.method not in PROBES and recorded.get("id") is not None:
        return None
    then, now = _refusal_of(recorded, None), _refusal_of(answer, error)
    if then is None or now is None:
        return None
    return f"refused then and now ({then} -> {now}): a refused {ex.method or 'request'} is plumbing, not a difference"


def _server_info(message: Any) -> Any:
    """The identity a server gives in an ``initialize`` (``serverInfo``) or ``server/discover`` result (its
    ``_meta``, 2026-07-28), or None."""
    result = message.get("result") if isinstance(message, dict) else None
    if not isinstance(result, dict):
        return None
    meta = result.get("_meta")
    return result.get("serverInfo", meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else None)


def _identity_note(recorded: Any, live: Any) -> str | None:
    """A note when the server names itself otherwise now than in the recording (``recorded`` and ``live``
    are the answers as they came), else None."""
    was, now = _server_info(recorded), _server_info(live)
    if was == now:
        return None

    def named(info: Any) -> str:
        if not isinstance(info, dict):
            return "nothing"
        return " ".join(str(info[k]) for k in ("name", "version") if info.get(k) is not None) or "nothing"

    return f"the server names itself {named(now)} (recorded: {named(was)}); its identity is information, not a difference"


def _judge(result: RequestResult, ex: Turn, answer: dict[str, Any] | None, error: str | None,
           options: ReplayOptions) -> None:
    """A request's verdict: ``same``, ``changed``, ``error`` or ``unrecorded``, its differences, notes and
    suggested rules. Judged by meaning: lists by key (:mod:`mcpreel.compare.lists`), a refused probe as
    refused then and now whatever its code, the server's identity as a note."""
    result.response = answer
    refused = _refused_then_and_now(ex, answer, error) if ex.response is not None else None
    error = None if error is None else str(error)  # a plain string in the report, whatever carried it
    if ex.response is None:
        result.status = "unrecorded"
        result.error = error if answer is None else None
        return
    if refused is not None:
        result.status = "same"
        result.notes.append(refused)
        return
    if answer is None:
        result.status = "error"
        result.error = error or "no response"
        return
    recorded, live = _view(ex.response, options, ex.method, result.tool), _view(answer, options, ex.method, result.tool)
    if ex.method in _IDENTIFIED:
        note = _identity_note(ex.response, answer)
        if note is not None:
            result.notes.append(note)
        for view in (recorded, live):  # information, never a difference
            if isinstance(view, dict) and isinstance(view.get("result"), dict):
                view["result"].pop("serverInfo", None)
    result.diff = diff(recorded, live)
    if not result.diff and ("error" in ex.response) != ("error" in answer):
        # an error where a result was recorded (or the reverse) is a difference whatever is ignored
        was, now = ("error", "result") if "error" in ex.response else ("result", "error")
        result.diff = [Difference("$", "changed", recorded=f"a JSON-RPC {was}", new=f"a JSON-RPC {now}")]
    result.status = "changed" if result.diff else "same"
    seen: set[CompareRule] = set()
    for difference in result.diff:
        rule = suggest(difference, ex.method, result.tool)
        if rule is not None and rule not in seen:
            seen.add(rule)
            result.suggestions.append(rule)


class _IdSet:
    """The ids sent in this run (as :func:`verbatim_key` keys). Integer ids are kept as ranges: a long
    session's ids count up, so a million of them cost one range, not a million entries; ids that
    scatter (more than ``_MAX_RANGES`` runs) and ids of any other type go in a plain set."""

    __slots__ = ("lo", "hi", "other")
    _MAX_RANGES = 1024

    def __init__(self) -> None:
        self.lo: list[int] = []
        self.hi: list[int] = []
        self.other: set[tuple[str, Any]] = set()

    def __contains__(self, key: tuple[str, Any]) -> bool:
        if key[0] == "int":
            n = key[1]
            i = bisect_right(self.lo, n) - 1
            if i >= 0 and n <= self.hi[i]:
                return True
        return key in self.other

    def add(self, key: tuple[str, Any]) -> None:
        if key[0] != "int" or key in self:
            self.other.add(key)
            return
        n: int = key[1]
        lo, hi = self.lo, self.hi
        i = bisect_right(lo, n) - 1
        left = i >= 0 and hi[i] == n - 1
        right = i + 1 < len(lo) and lo[i + 1] == n + 1
        if left and right:
            hi[i] = hi[i + 1]
            del lo[i + 1], hi[i + 1]
        elif left:
            hi[i] = n
        elif right:
            lo[i + 1] = n
        elif len(lo) < self._MAX_RANGES:
            lo.insert(i + 1, n)
            hi.insert(i + 1, n)
        else:
            self.other.add(key)


@dataclass
class _Facts:
    """What a verdict needs from the whole recording before its first request is sent, found in one
    pass that keeps nothing else: whether it opens with ``initialize``, the client's identity, the
    largest integer id (fresh ids go above it), the server's requests with their recorded answers
    (the replayer answers a live server from them), the era it was recorded in."""

    requests: int = 0
    has_initialize: bool = False
    info: dict[str, Any] | None = None
    caps: dict[str, Any] | None = None
    #: the identity our own handshake names: the same search once the requests are said in the
    #: handshake era (their protocol ``_meta`` gone; a left-out ``server/discover`` as recorded)
    legacy_info: dict[str, Any] | None = None
    legacy_caps: dict[str, Any] | None = None
    max_int: int = 0
    server_exchanges: list[Turn] = field(default_factory=list)
    skipped_dropped: int = 0
    era: str = UNKNOWN


def _facts(session: Session, original: bool) -> _Facts:
    facts = _Facts()
    builder = Builder(session.info.source_format, original=original, keep=False)
    describer = Describer(ClientSession(1))
    identified = legacy_identified = False
    for rec in session:
        describer.feed(rec)
        builder.feed(rec)
        if not builder.out:
            continue
        for kind, item in builder.out:
            ex = item.exchange if kind == "item" else None
            if ex is None:
                continue
            facts.requests += 1
            if ex.method == "initialize":
                facts.has_initialize = True
            if not identified:
                info, caps = client_identity(ex.request)
                if info is not None or caps is not None:
                    facts.info, facts.caps, identified = info, caps, True
            if not legacy_identified:
                said = ex.request if ex.method == "server/discover" else to_legacy_request(ex.request)
                info, caps = client_identity(said)
                if info is not None or caps is not None:
                    facts.legacy_info, facts.legacy_caps, legacy_identified = info, caps, True
            rid = ex.request.get("id")
            if type(rid) is int and rid > facts.max_int:
                facts.max_int = rid
        builder.out.clear()
    describer.finish()
    facts.era = describer.session.era
    facts.server_exchanges = builder.cas.server_exchanges
    facts.skipped_dropped = builder.cas.skipped_dropped
    return facts


class _Feed:
    """The recording's client side as it streams from the file: ``("item", ClientItem)`` for each
    message the client sent, ``("answered", Turn)`` where a request's recorded response comes;
    :meth:`until_answered` reads ahead (buffering) to the response of one request."""

    def __init__(self, session: Session, original: bool) -> None:
        self.builder = Builder(session.info.source_format, original=original, keep=False)
        self.records: Iterator[Message] = iter(session)
        self.buffer: deque[tuple[str, Any]] = deque()

    def _pull(self) -> bool:
        for rec in self.records:
            self.builder.feed(rec)
            if self.builder.out:
                self.buffer.extend(self.builder.out)
                self.builder.out.clear()
                return True
        return False

    def next(self) -> tuple[str, Any] | None:
        if not self.buffer and not self._pull():
            return None
        return self.buffer.popleft()

    def until_answered(self, ex: Turn) -> None:
        while ex.response is None and self._pull():
            pass

    def until_complete(self, op: Operation) -> None:
        """Read ahead to the recorded end of an operation (a task's terminal status and result)."""
        while not op.complete and self._pull():
            pass


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


#: calls with partial results whose chunks are kept at once (a bound: a server naming tokens nobody asked for)
_MAX_PARTIAL_CALLS = 1024


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


def _judge_digest(result: RequestResult, ex: Turn, answer: dict[str, Any] | None, status: int | None) -> None:
    """A live DigestChanged refusal (HTTP 409) where the recording's server served the request: the
    server's definitions moved since the recording -- its own verdict, pointing at ``mcpreel contract``."""
    if result.status != "changed" or not digest_refusal(answer, status):
        return
    if digest_refusal(ex.response, ex.wire.response_status if ex.wire is not None else None):
        return  # refused then too: an ordinary comparison
    result.status = DEFINITION_CHANGED
    result.error = ("the server refused the request as made against changed definitions (DigestChanged"
                    + (f", HTTP {status}" if status else "") + "): its tools, prompts or resources changed since "
                    "the recording; `mcpreel contract` shows how")


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


def _translate(item: ClientItem, era: str, facts: _Facts) -> bool:
    """Say one recorded client message in ``era`` (its plumbing rewritten in place); True when it is
    left out (our own handshake or ``server/discover`` takes its place)."""
    method = item.method
    if era == LEGACY:
        if method == "server/discover" and not facts.has_initialize:
            return True  # our initialize takes its place
        message = to_legacy_request(item.message)
    elif facts.has_initialize:  # a handshake-era recording said in the 2026 era
        if method in ("initialize", "notifications/initialized", "server/discover"):
            return True  # our server/discover takes their place (and a recorded probe's: the handshake is translated)
        message = to_modern_request(item.message, facts.info, facts.caps)
    else:
        return False
    if message is not item.message:
        item.message = message
        if item.exchange is not None:
            item.exchange.request = message
    return False


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

