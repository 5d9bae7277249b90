"""One replay run's connection to the live server: what was sent, what is pending, what came back.

:class:`_Run` owns the transport for one session's replay: it reads every message the server sends
(answers to pending requests, server requests answered from the recording, listen notifications, partial
results), renames a colliding id, swaps recorded ``requestState`` and task ids for the live ones. The facts
gathered before the first request (:class:`_Facts`), the recording read as a stream (:class:`_Feed`) and
the saying of a recorded request in the replay's era (:func:`_translate`) live here too, since both the
main loop and the task runner send through them.
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
from mcpreel.clients.base import Transport
from mcpreel.drafts import PARTIAL_RESULT_NOTIFICATION
from mcpreel.eras import (
    LEGACY,
    UNKNOWN,
    client_identity,
    to_legacy_request,
    to_modern_request,
)
from mcpreel.errors import TransportError
from mcpreel.mock.matcher import METHOD_NOT_FOUND, Matcher, Miss, RecordingIndex
from mcpreel.model import Kind, Message, Session
from mcpreel.operations.cassette import Builder, ClientItem, Turn
from mcpreel.operations.facts import (
    partial_result_token,
    subscription_of,
)
from mcpreel.operations.sessions import ClientSession, Describer
from mcpreel.operations.walk import Operation
from mcpreel.replay.results import ReplayOptions, ReplayReport, RequestResult, ServerRequestResult, _Refusal

#: calls with partial results whose chunks are kept at once (a bound: a server naming tokens nobody asked for)
_MAX_PARTIAL_CALLS = 1024


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
