"""The one reading of a session: client sessions, exchanges and operations, in one streaming pass.

Every verb that asks "what was asked, what answered it, and what belonged to it" reads a session here,
so they all count the same thing. :class:`Walker` is fed record by record (in flat memory: what it holds
is what is still open) and says, per record, what happened as :class:`Step` s:

- each record is put in its **client session** (:mod:`mcpreel.operations.sessions`: a merged file's source, the HTTP
  session, a new ``initialize`` / ``server/discover``); ids correlate within a client session only, so two
  clients that both use id 1 never answer each other;
- each JSON-RPC request opens an :class:`Exchange` (the request and its answer, by direction and id);
- exchanges join **operations** (:class:`Operation`): a plain request; a multi-round-trip request (a
  2026-07-28 ``input_required`` answer and the retries that carry its ``requestState``); a task (the call
  that created it, its ``tasks/get`` polls, ``notifications/tasks/status``, ``tasks/result``,
  ``tasks/cancel``, ``tasks/update``: the 2025-11-25 utility and the 2026-07-28 extension alike, joined by
  task id); a ``subscriptions/listen`` stream (its acknowledgement and the notifications tagged with its
  subscription id, ended by its answer or the client's cancel). The server's own requests (sampling,
  elicitation, roots) are nested under the operation that caused them;
- the control channel's marks stay on the exchange: an edited, dropped or injected request or answer,
  and the answer the proxy gave in place of a dropped request.

Steps are handed out as soon as they are known (an operation once it is complete, see ``"operation"``);
:meth:`Walker.finish` hands out what was still open at the end.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from mcpreel._infra.correlation import Correlator, correlation_key
from mcpreel._infra.nesting import cut_repr
from mcpreel.drafts import PARTIAL_RESULT_NOTIFICATION
from mcpreel.model import Kind, Message, Session
from mcpreel.operations.facts import (
    FAILED,
    LISTEN,
    ORIGIN_KEY,
    TASK_METHODS,
    TERMINAL_TASK_STATUSES,
    Progress,
    created_task,
    is_era_probe_refusal,
    origin_of,
    partial_result_token,
    progress_of,
    progress_token,
    related_task,
    request_state,
    status_of,
    subscription_of,
    target_of,
    task_id_param,
    task_status_of,
)
from mcpreel.operations.sessions import _STARTS, ClientSession, _Splitter

__all__ = ["Exchange", "Operation", "Step", "Walker", "operations", "placed", "walk"]

# operation kinds
REQUEST = "request"  # one request and its answer
ROUNDS = "multi-round-trip"  # a 2026-07-28 request answered input_required, and its retries
TASK = "task"  # a request that created a task, and everything about that task
STREAM = "listen"  # a subscriptions/listen stream
SERVER = "server-request"  # a server's request that no client operation caused (roots/list after init)

_MESSAGE = Kind.MESSAGE

_ROLE_OF_TASK_METHOD = {"tasks/get": "poll", "tasks/result": "result", "tasks/cancel": "cancel",
                        "tasks/update": "update"}


@dataclass(slots=True, eq=False)
class Exchange:
    """One JSON-RPC request and, once it came, its answer; ``n`` numbers requests in the order sent.

    ``request`` is the payload as it crossed the wire (the edited one after an intercept edit;
    ``original`` holds what the sender first said, replay's ``--original``). ``role`` says what it is to its operation: ``call``
    (the opening request), ``round`` (a multi-round-trip retry), ``poll``/``result``/``cancel``/``update``
    (``tasks/*``), ``listen``, ``server`` (a server's request nested under a client operation).
    """

    n: int
    index: int  # record index of the request
    dir: str  # direction of the request: "in" = client -> server, "out" = server -> client
    method: str
    id: Any
    request: dict[str, Any]
    t: int | None
    session: int = 1  # the client session (1-based)
    origin: str | None = None
    source: int | None = None  # where the request stood in its file (line, entry)
    ctx: dict[str, Any] | None = None
    target: str | None = None  # the tool or prompt name or resource URI (see :func:`target_of`)
    role: str = "call"
    operation: Operation | None = None
    # the control channel's marks
    dropped: bool = False
    edited: bool = False
    injected: bool = False
    original: dict[str, Any] | None = None
    # the answer
    response: dict[str, Any] | None = None
    response_index: int | None = None
    response_source: int | None = None
    t_end: int | None = None
    response_injected: bool = False  # the proxy's answer to a dropped request, or a viewer's
    response_edited: bool = False
    response_dropped: bool = False
    cancelled: bool = False  # a notifications/cancelled named it, or its client closed its HTTP stream
    #: the HTTP status an error answer came with (a DigestChanged refusal is 409 whatever its code: drafts)
    response_status: int | None = None

    @property
    def params(self) -> Any:
        """The request's params (None when it has none)."""
        return self.request.get("params")

    @property
    def tool(self) -> str | None:
        """The tool of a ``tools/call`` (``unknown_tool`` when it names none, as ``inspect`` counts it)."""
        if self.method != "tools/call":
            return None
        return self.target or "unknown_tool"

    @property
    def meta(self) -> dict[str, Any]:
        """The request's ``_meta`` (an empty dict when absent or not an object, so callers need no checks)."""
        params = self.params
        meta = params.get("_meta") if isinstance(params, dict) else None
        return meta if isinstance(meta, dict) else {}

    @property
    def latency_ms(self) -> int | None:
        """How long this exchange's answer took (None when unanswered or untimed)."""
        if self.t is None or self.t_end is None or self.response is None:
            return None
        return max(0, self.t_end - self.t)

    @property
    def ended(self) -> bool:
        """Answered, or ended by the sender's cancel (a listen stream ends so)."""
        return self.response is not None or self.cancelled

    def status(self) -> tuple[str, Any, str | None]:
        """(status, code, message) of its answer (:func:`status_of`); a refused ``server/discover`` probe
        is ``fallback`` (see :func:`is_era_probe_refusal`), never a failure."""
        if self.method == "server/discover" and is_era_probe_refusal(self.method, self.response):
            _, code, message = status_of(self.response)
            return "fallback", code, message
        return status_of(self.response)

    @property
    def failed(self) -> bool:
        """Whether the exchange ended in an error of any kind (see :meth:`status`)."""
        return self.status()[0] in FAILED


@dataclass(slots=True, eq=False)
class Operation:
    """What one client (or server) set out to do, with every message that belongs to it.

    ``exchanges`` holds the opening request first, then the rounds, polls, result and cancel in the order
    sent; ``children`` the server's requests it caused; ``notes`` the notifications that belong to it
    (progress, task status, a listen stream's acknowledgement and changes) as ``(record index, message)``.
    """

    n: int
    session: int
    kind: str
    exchanges: list[Exchange] = field(default_factory=list)
    children: list[Exchange] = field(default_factory=list)
    notes: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    task_id: str | int | None = None
    task_statuses: list[str] = field(default_factory=list)  # every status seen, in order
    complete: bool = False  # it reached its end (an answer, a terminal task result, a cancel)
    ended_by: str | None = None  # "answer", "cancel", "task-result", "terminal-status"

    @property
    def opening(self) -> Exchange:
        """The exchange that started the operation (its request is what the client asked)."""
        return self.exchanges[0]

    @property
    def method(self) -> str:
        """The opening request's method."""
        return self.opening.method

    @property
    def target(self) -> str | None:
        """What the opening request names (tool, prompt, resource), if anything."""
        return self.opening.target

    @property
    def dir(self) -> str:
        """Who started the operation: ``in`` the client, ``out`` the server."""
        return self.opening.dir

    @property
    def t(self) -> int | None:
        """When the operation started."""
        return self.opening.t

    @property
    def t_end(self) -> int | None:
        """When the last of its exchanges was answered (a task: its result; a stream: its end)."""
        ends = [ex.t_end for ex in self.exchanges if ex.t_end is not None]
        return max(ends) if ends else None

    @property
    def latency_ms(self) -> int | None:
        """From the opening request to the final answer, however many rounds or polls it took (None for a stream)."""
        if self.kind == STREAM:
            return None  # a stream's length is how long the client listened, not the server's speed
        final = self.final
        if final is None or final.t_end is None or self.t is None:
            return None
        return max(0, final.t_end - self.t)

    @property
    def rounds(self) -> int:
        """How many times the client asked (1 for a plain request)."""
        return sum(1 for ex in self.exchanges if ex.role in ("call", "round"))

    @property
    def polls(self) -> int:
        """How many ``tasks/get`` polls a task took (what a report shows beside its latency)."""
        return sum(1 for ex in self.exchanges if ex.role == "poll")

    @property
    def progress(self) -> list[Progress]:
        """Every progress report of the operation in the order recorded, whichever carrier brought it: its
        ``notifications/progress`` notes, and (a task) the ``progress``/``progressTotal`` its status
        notifications, its creating answer and its ``tasks/get`` answers carry. The next release's drafts
        fold progress into tasks (:data:`mcpreel.drafts.TASK_PROGRESS_FIELD`): a session with no progress
        notification at all reads the same."""
        found: list[tuple[int, int, Progress]] = []
        for index, message in self.notes:
            p = progress_of(message)
            if p is not None:
                found.append((index, len(found), p))
        if self.kind == TASK:
            for ex in self.exchanges:
                if ex.response is not None and ex.role in ("call", "poll"):
                    p = progress_of(ex.response)
                    if p is not None:
                        index = ex.response_index if ex.response_index is not None else ex.index
                        found.append((index, len(found), p))
        return [p for _, _, p in sorted(found, key=lambda item: (item[0], item[1]))]

    @property
    def final(self) -> Exchange | None:
        """The exchange whose answer is the operation's outcome: the last answered round of a request,
        ``tasks/result`` (or the terminal ``tasks/get``) of a task; None while none is known."""
        if self.kind == TASK:
            best: Exchange | None = None
            for ex in self.exchanges:
                if ex.response is None:
                    continue
                if ex.role == "result":
                    return ex
                if ex.role == "poll" and (task_status_of(ex.response) in TERMINAL_TASK_STATUSES):
                    best = ex
            return best
        for ex in reversed(self.exchanges):
            if ex.role in ("call", "round", "listen") and ex.response is not None:
                return ex
        return None

    @property
    def task_status(self) -> str | None:
        """The task's last known status (None for an operation that is not a task)."""
        return self.task_statuses[-1] if self.task_statuses else None

    def status(self) -> tuple[str, Any, str | None]:
        """(status, code, message) of the operation as a whole (see :func:`status_of`); a task whose
        final status is ``failed``/``cancelled`` with no result answer is ``error``; a listen stream the
        client cancelled is ``ended``."""
        final = self.final
        if final is None:
            if self.kind == STREAM and self.opening.cancelled:
                return "ended", None, None
            if self.kind == TASK and self.task_status in ("failed", "cancelled"):
                return "error", None, f"task {self.task_status}"
            if self.opening.cancelled:
                return "cancelled", None, None
            if self.kind == TASK and self.task_status is not None:
                return "task", None, self.task_status
            last = self.exchanges[-1]
            return last.status() if last.response is not None else ("unanswered", None, None)
        status = final.status()
        if self.kind == TASK and final.role == "poll":
            result = final.response.get("result") if final.response else None
            inner = result.get("result") if isinstance(result, dict) else None
            if isinstance(inner, dict):
                return status_of({"result": inner})
            if isinstance(result, dict) and result.get("error") is not None:
                return status_of({"error": result["error"]})
        return status

    @property
    def failed(self) -> bool:
        """Whether the operation ended in an error of any kind (see :meth:`status`)."""
        return self.status()[0] in FAILED

    @property
    def result(self) -> dict[str, Any] | None:
        """The answer that carries the outcome (a task's ``tasks/result`` answer), or None."""
        final = self.final
        return final.response if final is not None else None

    @property
    def dropped(self) -> bool:
        """Whether the opening request was dropped at the proxy (it never reached the server)."""
        return self.opening.dropped

    @property
    def marks(self) -> list[str]:
        """The control channel's marks on any of its messages: edited, dropped, injected."""
        out: list[str] = []
        for ex in (*self.exchanges, *self.children):
            for name, on in (("edited", ex.edited or ex.response_edited), ("dropped", ex.dropped or ex.response_dropped),
                             ("injected", ex.injected or ex.response_injected)):
                if on and name not in out:
                    out.append(name)
        return out


@dataclass(slots=True)
class Step:
    """One thing that happened. ``kind`` is one of:

    - ``request``: ``exchange`` was sent (``operation`` is the operation it opened or joined);
    - ``response``: ``exchange`` was answered (``member`` is the answer);
    - ``notification``: ``member`` is a notification (``related`` the exchange it belongs to: a progress
      token's, a cancelled request, the request a server message was said during; ``operation`` the
      operation it was placed in, when any);
    - ``orphan``: ``member`` is an answer no request waits for;
    - ``other``: a JSON-RPC member that is neither (no method, no result/error);
    - ``record``: a record that is not JSON-RPC (stderr, invalid frame, transport event, other line);
    - ``operation``: ``operation`` is complete (handed out once, after the step that completed it);
    - at the end (:meth:`Walker.finish`): ``unanswered`` (an ``exchange`` never answered; ``cancelled``
      says whether its sender gave up on it), ``ended`` (a listen stream the client ended with its cancel,
      or over HTTP by closing its stream: that is how a stream ends, not a missing answer), then ``operation`` for each operation still open.
    """

    kind: str
    index: int
    msg: Message | None
    member: dict[str, Any] | None = None
    exchange: Exchange | None = None
    related: Exchange | None = None
    session: int = 1
    operation: Operation | None = None


_new = object.__new__


def _lean_exchange(n: int, index: int, d: str, method: str, rid: Any, raw: dict[str, Any], t: int | None,
                   session: int, source: int | None) -> Exchange:
    """``Exchange(n, index, d, method, rid, raw, t, session, None, source, None)``, every other field its
    default, made without the class call (its cost, in CPython 3.11, is most of what a record of the lean
    walk's fast lane costs). Every field is set, in the class's order: ``tests/operations/test_fast_lane.py``
    compares what it makes with the class's own, field for field."""
    ex = _new(Exchange)
    ex.n = n
    ex.index = index
    ex.dir = d
    ex.method = method
    ex.id = rid
    ex.request = raw
    ex.t = t
    ex.session = session
    ex.origin = None
    ex.source = source
    ex.ctx = None
    ex.target = None
    ex.role = "call"
    ex.operation = None
    ex.dropped = False
    ex.edited = False
    ex.injected = False
    ex.original = None
    ex.response = None
    ex.response_index = None
    ex.response_source = None
    ex.t_end = None
    ex.response_injected = False
    ex.response_edited = False
    ex.response_dropped = False
    ex.cancelled = False
    ex.response_status = None
    return ex


def _lean_step(kind: str, index: int, msg: Message, member: dict[str, Any], exchange: Exchange,
               session: int) -> Step:
    """``Step(kind, index, msg, member, exchange, None, session)`` without the class call (see
    :func:`_lean_exchange`)."""
    step = _new(Step)
    step.kind = kind
    step.index = index
    step.msg = msg
    step.member = member
    step.exchange = exchange
    step.related = None
    step.session = session
    step.operation = None
    return step


class Walker:
    """The streaming reading (see the module's docstring). ``http_ids`` maps an HTTP exchange to its
    session id; it is learnt as the records pass (:func:`mcpreel.operations.sessions._http_session_of`).

    **Pairing** (the one rule every verb, writer and index follows): a request waits under (its client
    session, its direction, its id); an answer going the other way takes the request that waits under
    that key, and when a pending id was reused (a second request with the id of one still waiting) the
    answers go first in, first out: the first answer with that id to the first request that is still
    waiting. An id that cannot correlate (null, a boolean, an object) pairs with nothing; a dropped
    request is answered only by the proxy's own (injected) answer; a null-id error said in a request's own
    HTTP exchange answers that request.

    ``pairing_only=True`` is the lean walk of a writer (HAR, qai, Inspector, mcp-recorder) or of the mock's
    on-disk index: the same steps and the same pairing, without operations (a step's ``operation`` is
    None, and no ``operation`` step comes): what pairs a request with its answer costs no more than the
    writer's own pairing did.
    """

    def __init__(self, http_ids: dict[Any, str] | None = None, *, pairing_only: bool = False) -> None:
        self.pairing_only = pairing_only
        self.splitter = _Splitter(keep=False)
        self._place = self.splitter.place
        self.http_ids = http_ids if http_ids is not None else {}
        self.correlator: Correlator[Exchange] = Correlator()
        self.pending: dict[int, dict[int, Exchange]] = {}  # session -> n -> client exchange waiting
        self.progress: dict[tuple[int, Any], Exchange] = {}  # (session, progressToken) -> exchange
        self.by_id: dict[tuple[int, str, Any], Exchange] = {}  # (session, dir, id key) -> pending exchange
        self.dropped: dict[tuple[int, str, Any], Exchange] = {}  # dropped requests, for the proxy's answer
        self.tasks: dict[tuple[int, Any], Operation] = {}  # (session, task id) -> task operation
        self.states: dict[tuple[int, str], Operation] = {}  # (session, requestState) -> operation
        self.streams: dict[tuple[int, Any], Operation] = {}  # (session, listen id) -> listen operation
        self.open: dict[int, Operation] = {}  # n -> operation not yet complete
        self.n = 0
        self.n_ops = 0
        self.index = -1
        #: the correlator's own table, (session, direction, id kind, id) -> the request waiting (a queue
        #: of them when a pending id was reused): the lean walk keys its common records there itself
        self._waiting = self.correlator._pending
        if pairing_only:
            self.feed = self._feed_lean  # type: ignore[method-assign]  # one call a record, not three

    # -- feeding ------------------------------------------------------------------------------------
    def feed(self, index: int, msg: Message) -> list[Step]:
        """The steps of one record (``index`` is its 0-based position in the session)."""
        session = self._place(msg, self.http_ids).index
        if msg.kind != _MESSAGE:
            steps = [Step("record", index, msg, session=session)]
            ctx = msg.ctx
            if ctx and msg.kind == Kind.TRANSPORT and ctx.get("closed") == "client":
                self._closed_by_client(steps, index, msg, ctx)
            return steps
        raw = msg.raw
        d = msg.dir if msg.dir in ("in", "out") else "in"
        if type(raw) is dict:
            if not (msg.dropped or msg.modified or msg.injected):
                plain = (self._pair_plain if self.pairing_only else self._plain)(index, msg, raw, d, session)
                if plain is not None:
                    return plain
            out: list[Step] = []
            self._member(out, index, msg, raw, d, session)
            return out
        out = []
        if isinstance(raw, list):
            members = [m for m in raw if isinstance(m, dict)]
            if not members:
                out.append(Step("record", index, msg, session=session))
            for m in members:
                self._member(out, index, msg, m, d, session)
        else:
            out.append(Step("record", index, msg, session=session))
        return out

    def finish(self) -> list[Step]:
        """What was still open at the end: unanswered (or cancelled) exchanges, then open operations."""
        out: list[Step] = []
        for ex in sorted(self.correlator.pending(), key=lambda e: e.n):
            ended = ex.cancelled and ex.role == "listen"
            out.append(Step("ended" if ended else "unanswered", ex.index, None, ex.request, ex,
                            session=ex.session, operation=ex.operation))
        for op in sorted(self.open.values(), key=lambda o: o.n):
            out.append(Step("operation", op.opening.index, None, session=op.session, operation=op))
        self.open.clear()
        return out

    def client_sessions(self) -> list[ClientSession]:
        """The client sessions seen, described (era, protocol, client), numbered as the steps are."""
        splitter = self.splitter
        sessions = [s for s in splitter.sessions if splitter.counts.get(s.index)]
        for s in sessions:
            splitter.describers[s.index].finish()
        return sessions or [ClientSession(1)]

    # -- the fast lane ------------------------------------------------------------------------------
    def _plain(self, index: int, msg: Message, raw: dict[str, Any], d: str, session: int) -> list[Step] | None:
        """The steps of the common record, or None when it is not one: a client's plain request (an id
        that is an exact int or str, no ``_meta``, no ``requestState`` while a retry could be awaited, not
        about a known task, not a listen) or the plain answer to one (not a task, not ``input_required``),
        unmarked (the caller checks: not dropped, edited or injected). What it returns is exactly what
        :meth:`_member` would (the same objects, fields and order), without its general questions: most of
        a big session is such records, and every verb reads it through here."""
        rid = raw.get("id")
        t = type(rid)
        if t is not int and t is not str:
            return None
        method = raw.get("method")
        if method is not None:
            if d != "in" or type(method) is not str or method == LISTEN:
                return None
            params = raw.get("params")
            if type(params) is dict:
                if "_meta" in params:
                    return None  # a progress token, a related task: the general path
                if self.states and "requestState" in params:
                    return None
            if self.tasks and method in TASK_METHODS:
                return None
            extra = msg.extra
            origin = None
            if extra:
                origin = extra.get(ORIGIN_KEY)
                if not isinstance(origin, str):
                    origin = None
            n = self.n
            ex = Exchange(n, index, "in", method, rid, raw, msg.t, session, origin, msg.source, msg.ctx,
                          target_of(method, params))
            self.n = n + 1
            self.correlator.request("in", rid, ex, scope=session)
            self.by_id[(session, "in", ("n", rid) if t is int else ("s", rid))] = ex
            pending = self.pending.get(session)
            if pending is None:
                pending = self.pending[session] = {}
            pending[n] = ex
            if self.pairing_only:
                return [Step("request", index, msg, raw, ex, None, session)]
            op = Operation(self.n_ops, session, REQUEST, [ex])
            self.n_ops += 1
            ex.operation = op
            self.open[op.n] = op
            return [Step("request", index, msg, raw, ex, None, session, op)]
        if d != "out" or ("result" not in raw and "error" not in raw):
            return None
        result = raw.get("result")
        if type(result) is dict and ("task" in result or "resultType" in result):
            return None  # a task's handle, an input_required: the general path
        asked = self.correlator.response("out", rid, scope=session)
        if asked is None:
            return None  # nothing was taken: the general path finds the orphan (or the proxy's answer)
        ex = asked
        owner = ex.operation
        ex.response = raw
        ex.response_index = index
        ex.response_source = msg.source
        ex.t_end = msg.t
        if "error" in raw and msg.ctx:
            ex.response_status = msg.ctx.get("status")
        # what _forget does, for a client request answered: its id is exactly ``rid``'s key
        full = (session, "in", ("n", rid) if t is int else ("s", rid))
        by_id = self.by_id
        if by_id.get(full) is ex:
            del by_id[full]
        pending = self.pending.get(session)
        if pending is not None:
            pending.pop(ex.n, None)
        if self.progress:
            self._forget_progress(ex)
        step = Step("response", index, msg, raw, ex, None, session, owner)
        if owner is None or ex.role != "call" or owner.kind != REQUEST or owner.complete:
            out = [step]
            if owner is not None:
                self._answered(out, owner, ex, raw, index, msg)
            return out
        owner.complete = True
        owner.ended_by = "answer"
        if self.open.pop(owner.n, None) is None:
            return [step]
        return [step, Step("operation", index, msg, None, None, None, owner.session, owner)]

    def _feed_lean(self, index: int, msg: Message) -> list[Step]:
        """:meth:`feed` of the lean walk (``pairing_only``), with the common record placed and paired in
        this one call: a lone, unmarked JSON-RPC request (an exact int or str id, no ``_meta``, not a
        conversation's start) or answer, of a file with no sources and no HTTP, in the client session
        the splitter's fast lane places it in (:attr:`_Splitter.lane`, the one predicate of both lanes:
        the same conditions, the same counts) and paired as :meth:`_pair_plain` pairs it; every other
        record, and an answer no request waits for, takes the general path, so the steps are
        :meth:`feed`'s (``tests/operations/test_fast_lane.py`` compares them field for field). Most of a
        big file is such records, and every writer reads it through here: its exchanges and steps are
        made by :func:`_lean_exchange` and :func:`_lean_step`, without a class call."""
        raw = msg.raw
        if (type(raw) is not dict or msg.extra or msg.ctx is not None or msg.kind != _MESSAGE or msg.dropped
                or msg.modified or msg.injected):
            return Walker.feed(self, index, msg)
        rid = raw.get("id")
        t = type(rid)
        if t is int:
            id_kind = "n"  # the correlator's kinds of id (correlation_key)
        elif t is str:
            id_kind = "s"
        else:
            return Walker.feed(self, index, msg)
        d = msg.dir
        if d != "in" and d != "out":
            return Walker.feed(self, index, msg)
        method = raw.get("method")
        if method is not None:
            if type(method) is not str or method in _STARTS:
                return Walker.feed(self, index, msg)
            params = raw.get("params")
            if type(params) is dict and "_meta" in params:
                return Walker.feed(self, index, msg)
        elif "method" in raw or ("result" not in raw and "error" not in raw):
            return Walker.feed(self, index, msg)
        splitter = self.splitter
        open_now = splitter.lane
        if open_now is None:
            return Walker.feed(self, index, msg)
        # placed: _Splitter.place's fast lane
        session = open_now.index
        describer = splitter.describers[session]
        if not describer.done:
            describer.feed(msg)
        splitter.counts[session] += 1
        if method is not None:
            # paired: _pair_plain's request
            n = self.n
            self.n = n + 1
            ex = _lean_exchange(n, index, d, method, rid, raw, msg.t, session, msg.source)
            key = (session, d, id_kind, rid)  # the correlator's key (_full_key)
            if self._waiting.setdefault(key, ex) is not ex:
                self.correlator.request(d, rid, ex, scope=session)  # a reused pending id: its queue
            if d == "in":
                open_now.requests += 1
                pending = self.pending.get(session)
                if pending is None:
                    pending = self.pending[session] = {}
                pending[n] = ex
            return [_lean_step("request", index, msg, raw, ex, session)]
        # paired: _pair_plain's answer
        waiting = self._waiting
        key = (session, "in" if d == "out" else "out", id_kind, rid)
        answered = waiting.pop(key, None)
        if type(answered) is not Exchange:
            if answered is None:
                out: list[Step] = []
                self._member(out, index, msg, raw, d, session)  # the orphan (feed's general path)
                return out
            waiting[key] = answered  # a queue (a reused pending id): first in, first out
            answered = self.correlator.response(d, rid, scope=session)
            assert answered is not None
        answered.response = raw
        answered.response_index = index
        answered.response_source = msg.source
        answered.t_end = msg.t
        if d == "out" and not self.by_id and not self.progress:
            pending = self.pending.get(session)
            if pending is not None:
                pending.pop(answered.n, None)
        else:
            self._forget(answered)
        return [_lean_step("response", index, msg, raw, answered, session)]

    def _pair_plain(self, index: int, msg: Message, raw: dict[str, Any], d: str, session: int) -> list[Step] | None:
        """:meth:`_plain` of the lean walk (``pairing_only``): a plain request (an exact int or str id, no
        ``_meta``) either way, or the answer to one, unmarked; paired exactly as the general path pairs
        it (one correlator, the same keys), without what only operations read (the request's target and
        origin, the id kept for a cancel)."""
        rid = raw.get("id")
        t = type(rid)
        if t is not int and t is not str:
            return None
        method = raw.get("method")
        if method is not None:
            if type(method) is not str:
                return None
            params = raw.get("params")
            if type(params) is dict and "_meta" in params:
                return None  # a progress token, a related task: the general path
            n = self.n
            ex = Exchange(n, index, d, method, rid, raw, msg.t, session, None, msg.source, msg.ctx)
            self.n = n + 1
            self.correlator.request(d, rid, ex, scope=session)
            if d == "in":
                pending = self.pending.get(session)
                if pending is None:
                    pending = self.pending[session] = {}
                pending[n] = ex
            return [Step("request", index, msg, raw, ex, None, session)]
        if "result" not in raw and "error" not in raw:
            return None
        answered = self.correlator.response(d, rid, scope=session)
        if answered is None:
            return None  # the general path finds the orphan (or the proxy's answer)
        ex = answered
        ex.response = raw
        ex.response_index = index
        ex.response_source = msg.source
        ex.t_end = msg.t
        if "error" in raw and msg.ctx:
            ex.response_status = msg.ctx.get("status")
        if self.by_id or self.progress or ex.dir != "in":
            self._forget(ex)
        else:
            pending = self.pending.get(session)
            if pending is not None:
                pending.pop(ex.n, None)
        return [Step("response", index, msg, raw, ex, None, session)]

    # -- one JSON-RPC member ------------------------------------------------------------------------
    def _new_op(self, session: int, kind: str, ex: Exchange) -> Operation:
        op = Operation(self.n_ops, session, kind, [ex])
        self.n_ops += 1
        ex.operation = op
        self.open[op.n] = op
        return op

    def _complete(self, out: list[Step], op: Operation, ended_by: str, index: int, msg: Message | None) -> None:
        if op.complete:
            return
        op.complete = True
        op.ended_by = ended_by
        if self.open.pop(op.n, None) is not None:
            out.append(Step("operation", index, msg, session=op.session, operation=op))

    def _member(self, out: list[Step], index: int, msg: Message, raw: dict[str, Any], d: str, session: int) -> None:
        method = raw.get("method")
        if method is not None:
            if type(method) is not str:
                method = cut_repr(method)  # a value where a name belongs, shown short (it may be 1,000 levels deep)
            if "id" in raw:
                self._request(out, index, msg, raw, d, session, method)
            else:
                self._notification(out, index, msg, raw, d, session, method)
            return
        if "result" not in raw and "error" not in raw:
            out.append(Step("other", index, msg, raw, session=session))
            return
        self._response(out, index, msg, raw, d, session)

    def _request(self, out: list[Step], index: int, msg: Message, raw: dict[str, Any], d: str, session: int,
                 method: str) -> None:
        original = msg.original if msg.modified and isinstance(msg.original, dict) and raw is msg.raw else None
        rid = raw.get("id")
        ex = Exchange(self.n, index, d, method, rid, raw, msg.t, session, origin_of(msg), msg.source, msg.ctx,
                      target_of(method, raw.get("params")), dropped=msg.dropped, edited=msg.modified,
                      injected=msg.injected, original=original)
        self.n += 1
        key = correlation_key(rid)
        if msg.dropped:
            if key is not None:
                self.dropped[(session, d, key)] = ex
        elif self.correlator.request(d, rid, ex, scope=session):
            self.by_id[(session, d, key)] = ex
            token = progress_token(raw)
            if token is not None and type(token) in (str, int):
                self.progress[(session, token)] = ex
            partial = partial_result_token(raw)  # SEP-2998's chunks belong to the call (mcpreel.drafts)
            if partial is not None and type(partial) in (str, int):
                self.progress[(session, (PARTIAL_RESULT_NOTIFICATION, partial))] = ex
            if d == "in":
                self.pending.setdefault(session, {})[ex.n] = ex
        op = None if self.pairing_only else self._operation_of_request(ex, raw, d, session, method, index, msg)
        out.append(Step("request", index, msg, raw, ex, session=session, operation=op))

    def _operation_of_request(self, ex: Exchange, raw: dict[str, Any], d: str, session: int, method: str,
                              index: int, msg: Message) -> Operation | None:
        if d == "out":
            owner = self._owner(raw, msg.ctx, session)
            if owner is not None and owner.operation is not None:
                ex.role = "server"
                ex.operation = owner.operation
                owner.operation.children.append(ex)
                return owner.operation
            ex.role = "call"
            return self._new_op(session, SERVER, ex)
        if self.tasks and method in TASK_METHODS:  # no task known: nothing to join
            task_id = task_id_param(raw)
            op = self.tasks.get((session, task_id)) if task_id is not None else None
            if op is not None:
                ex.role = _ROLE_OF_TASK_METHOD[method]
                ex.operation = op
                op.exchanges.append(ex)
                return op
        state = request_state(raw) if self.states else None  # a retry joins only a known input_required
        if state is not None:
            op = self.states.pop((session, state), None)
            if op is not None:
                ex.role = "round"
                ex.operation = op
                op.exchanges.append(ex)
                return op
        if method == LISTEN:
            ex.role = "listen"
            op = self._new_op(session, STREAM, ex)
            key = correlation_key(ex.id)
            if key is not None:
                self.streams[(session, key)] = op
            return op
        return self._new_op(session, REQUEST, ex)

    def _response(self, out: list[Step], index: int, msg: Message, raw: dict[str, Any], d: str, session: int) -> None:
        rid = raw.get("id")
        ex: Exchange | None = None
        if not msg.dropped:
            ex = self.correlator.response(d, rid, scope=session)
        key = correlation_key(rid)
        if ex is None and msg.injected and key is not None:
            # the proxy's own answer to a request it dropped (the request never reached the server)
            ex = self.dropped.pop((session, "in" if d == "out" else "out", key), None)
        if ex is None and rid is None and d == "out" and not msg.dropped:
            ex = self._answered_by_exchange(msg.ctx, session)
        if ex is None:
            out.append(Step("orphan", index, msg, raw, session=session))
            return
        ex.response = raw
        ex.response_index = index
        ex.response_source = msg.source
        ex.t_end = msg.t
        if "error" in raw and msg.ctx:
            ex.response_status = msg.ctx.get("status")
        ex.response_injected = msg.injected
        ex.response_edited = msg.modified
        ex.response_dropped = msg.dropped
        self._forget(ex)
        op = ex.operation
        out.append(Step("response", index, msg, raw, ex, session=session, operation=op))
        if op is not None:
            self._answered(out, op, ex, raw, index, msg)

    def _answered(self, out: list[Step], op: Operation, ex: Exchange, raw: dict[str, Any], index: int,
                  msg: Message) -> None:
        """What an answer does to its operation."""
        role = ex.role
        if role in ("call", "round"):
            if op.kind == SERVER or ex.dir == "out":
                self._complete(out, op, "answer", index, msg)
                return
            task_id = created_task(raw)
            if task_id is not None and op.kind != TASK:
                op.kind = TASK
                op.task_id = task_id
                self.tasks[(op.session, task_id)] = op
                status = task_status_of(raw)
                if status is not None:
                    op.task_statuses.append(status)
                return
            result = raw.get("result")
            if type(result) is dict and result.get("resultType") == "input_required":
                state = result.get("requestState")
                if op.kind == REQUEST:
                    op.kind = ROUNDS
                if isinstance(state, str):
                    self.states[(op.session, state)] = op
                    return
            self._complete(out, op, "answer", index, msg)
        elif role == "listen":
            self._complete(out, op, "answer", index, msg)
        elif role == "poll":
            status = task_status_of(raw)
            if status is not None:
                op.task_statuses.append(status)
                result = raw.get("result")
                # the 2026-07-28 extension: a terminal tasks/get carries the outcome itself
                if status in TERMINAL_TASK_STATUSES and type(result) is dict and (
                        "result" in result or "error" in result or status == "cancelled"):
                    self._complete(out, op, "terminal-status", index, msg)
        elif role == "result":
            self._complete(out, op, "task-result", index, msg)
        elif role == "cancel":
            if "error" not in raw:
                op.task_statuses.append("cancelled")
            self._complete(out, op, "cancel", index, msg)

    def _notification(self, out: list[Step], index: int, msg: Message, raw: dict[str, Any], d: str, session: int,
                      method: str) -> None:
        related: Exchange | None = None
        op: Operation | None = None
        if method == "notifications/cancelled":
            params = raw.get("params")
            key = correlation_key(params.get("requestId")) if type(params) is dict else None
            # a cancellation names a request its sender sent: the one going the same way
            related = self.by_id.get((session, d, key)) if key is not None else None
            if related is not None and not msg.dropped:
                related.cancelled = True
                op = related.operation
                if op is not None and (op.kind == STREAM or related.role in ("call", "round")):
                    out.append(Step("notification", index, msg, raw, related=related, session=session, operation=op))
                    self._complete(out, op, "cancel", index, msg)
                    return
        elif d == "out":
            subscription = subscription_of(raw)
            if subscription is not None:
                key = correlation_key(subscription)
                op = self.streams.get((session, key)) if key is not None else None
                if op is not None:
                    related = op.opening
            if op is None:
                task_id = task_id_param(raw) if method == "notifications/tasks/status" else related_task(raw)
                if task_id is not None:
                    op = self.tasks.get((session, task_id))
                    if op is not None:
                        related = op.exchanges[-1]
                        if method == "notifications/tasks/status":
                            status = task_status_of(raw)
                            if status is not None:
                                op.task_statuses.append(status)
            if op is None:
                related = self._owner(raw, msg.ctx, session)
                op = related.operation if related is not None else None
            if op is not None:
                op.notes.append((index, raw))
        out.append(Step("notification", index, msg, raw, related=related, session=session, operation=op))

    def _closed_by_client(self, out: list[Step], index: int, msg: Message, ctx: dict[str, Any]) -> None:
        """Over Streamable HTTP a 2026-era client cancels by closing its request's response stream (that is
        how the SDK ends a listen stream); the recorder then writes a transport record naming the exchange
        and the request ids it left unanswered. The walk reads it as it reads ``notifications/cancelled``."""
        exchange = ctx.get("exchange")
        names = ctx.get("unanswered")
        if exchange is None or not isinstance(names, list):
            return
        ids = {cut_repr(name) for name in names}
        for pending in self.pending.values():
            for ex in list(pending.values()):
                if ex.ctx and ex.ctx.get("exchange") == exchange and cut_repr(ex.id) in ids:
                    ex.cancelled = True
                    op = ex.operation
                    if op is not None and (op.kind == STREAM or ex.role in ("call", "round")):
                        self._complete(out, op, "cancel", index, msg)

    def _owner(self, message: dict[str, Any], ctx: dict[str, Any] | None, session: int) -> Exchange | None:
        """The client request a server message was said during (the ``before`` of a cassette): a progress
        token's, a task's, the request of the same HTTP exchange, else the last one still waiting."""
        if message.get("method") == "notifications/progress":
            params = message.get("params")
            token = params.get("progressToken") if isinstance(params, dict) else None
            if token is not None and type(token) in (str, int):
                ex = self.progress.get((session, token))
                if ex is not None:
                    return ex
        elif message.get("method") == PARTIAL_RESULT_NOTIFICATION:
            token = partial_result_token(message)
            if token is not None and type(token) in (str, int):
                ex = self.progress.get((session, (PARTIAL_RESULT_NOTIFICATION, token)))
                if ex is not None:
                    return ex
        task_id = related_task(message)
        if task_id is not None:
            op = self.tasks.get((session, task_id))
            if op is not None:
                return op.exchanges[-1]
        pending = self.pending.get(session)
        if not pending:
            return None
        if ctx:
            exchange_id = ctx.get("exchange")
            if exchange_id is not None:
                for ex in reversed(pending.values()):
                    if ex.ctx and ex.ctx.get("exchange") == exchange_id:
                        return ex
            if ctx.get("method") == "GET":
                return None  # said on the standalone stream: it belongs to no request
        for ex in reversed(pending.values()):
            if ex.role != "listen":  # a stream waits for the whole session: it causes nothing
                return ex
        return None

    def _answered_by_exchange(self, ctx: dict[str, Any] | None, session: int) -> Exchange | None:
        """A null-id error in the body of an HTTP exchange answers that exchange's request (a server that
        refuses a request before reading its id: the TypeScript SDK's HTTP 400 for ``server/discover``)."""
        exchange_id = ctx.get("exchange") if type(ctx) is dict else None
        pending = self.pending.get(session)
        if exchange_id is None or not pending:
            return None
        for ex in reversed(pending.values()):
            if ex.ctx and ex.ctx.get("exchange") == exchange_id:
                if self.correlator.discard(ex.dir, ex.id, ex, scope=session):
                    return ex
                return None
        return None

    def _forget(self, ex: Exchange) -> None:
        key = correlation_key(ex.id)
        full = (ex.session, ex.dir, key)
        if self.by_id.get(full) is ex:
            del self.by_id[full]
        if ex.dir == "in":
            pending = self.pending.get(ex.session)
            if pending is not None:
                pending.pop(ex.n, None)
        if self.progress:
            self._forget_progress(ex)

    def _forget_progress(self, ex: Exchange) -> None:
        token = progress_token(ex.request)
        if token is not None and type(token) in (str, int) and self.progress.get((ex.session, token)) is ex:
            del self.progress[(ex.session, token)]
        partial = partial_result_token(ex.request)
        if partial is not None and type(partial) in (str, int):
            key = (ex.session, (PARTIAL_RESULT_NOTIFICATION, partial))
            if self.progress.get(key) is ex:
                del self.progress[key]


def placed(session: Session) -> Iterator[tuple[int, Message]]:
    """Every record with the client session the walk puts it in (the split alone, without pairing: for a
    verb that keys its own fast pass by session, as ``import`` does)."""
    splitter = _Splitter(keep=False)
    http_ids: dict[Any, str] = {}
    place = splitter.place
    for msg in session:
        yield place(msg, http_ids).index, msg


def walk(session: Session) -> Iterator[Step]:
    """Every step of ``session`` in order, then what was still open (see :class:`Step`); one pass, so a
    live stream of records can be walked as it comes."""
    w = Walker()
    feed = w.feed
    for index, msg in enumerate(session):
        yield from feed(index, msg)
    yield from w.finish()


def operations(session: Session) -> Iterator[Operation]:
    """The operations of ``session``, each once, as they complete (the open ones at the end)."""
    for step in walk(session):
        if step.kind == "operation" and step.operation is not None:
            yield step.operation
