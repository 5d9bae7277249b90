"""Two recordings compared in one streaming pass: flat memory, whatever their length.

``mcpreel diff`` of two million-message sessions cannot pair every exchange in memory first (that took
4.7 GB). Here each side is read once, in recorded order, and turned into its client requests with their
answers (:func:`iter_calls`); the two streams are walked in step and the n-th call of a (method,
subject) group in A is compared with the n-th in B as soon as both have been read (:class:`DiffStream`).
What is held at any time:

- per side, the requests still waiting for an answer, in request order (calls come out in the order they
  were *asked*, so the n-th call of a group is the same n-th as a full pass would give). Past
  ``window`` waiting requests the oldest is given up as unanswered (``no response``), and an answer
  that comes later matches nothing;
- the calls read on one side whose counterpart the other side has not reached yet. Sessions in the same
  order keep this near zero. Past ``window`` pending calls the oldest is reported as only in its side
  (``removed`` from A or ``added`` in B) and its counterpart, when it comes, as only in the other: a
  call whose partner stands more than ``window`` calls away is not compared;
- one counter per (method, subject) group and side (how many calls of it have been read), so a group's
  ordinals stay right after a give-up; it grows with the number of distinct tools, prompts and
  resources, not with the calls;
- the ``initialize`` answer and the tools every ``tools/list`` answer named (folded per side).

:data:`WINDOW` is the default bound (10,000 calls a side); :class:`~mcpreel.compare.diff.DiffOptions`
``window`` changes it. Calls come out in the order they were paired, not grouped by tool.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

from mcpreel._infra import jsonio
from mcpreel.compare.changes import (
    WINDOW,
    CallChange,
    DiffOptions,
    SessionDiff,
    ToolChange,
    error_status,
    latency_shifted,
)
from mcpreel.compare.jsondiff import diff
from mcpreel.compare.normalize import comparable, strip_volatile_meta
from mcpreel.contract.defaults import effective_tool
from mcpreel.model import Session
from mcpreel.operations.cassette import Turn
from mcpreel.operations.walk import Operation, Walker

__all__ = ["WINDOW", "DiffStream", "SideFacts", "iter_calls"]

#: the handshake and discovery of either era, and listings: what a diff compares as facts, not calls
_NOT_CALLS = frozenset({"initialize", "server/discover", "tools/list", "ping"})
_UNITS = {"reel": "line", "jsonrpc": "line", "qai": "message"}


class SideFacts:
    """What one side says besides its calls: the ``initialize`` result and the tools it listed."""

    __slots__ = ("init_result", "listed", "tools")

    def __init__(self) -> None:
        self.init_result: dict[str, Any] | None = None
        self.listed = False
        self.tools: dict[str, Any] = {}

    def take(self, ex: Turn) -> None:
        """Fold one handshake or listing into this side's facts (the first ``initialize``, every ``tools/list`` page)."""
        response = ex.response
        if response is None:
            return
        result = response.get("result")
        if ex.method == "initialize":
            if self.init_result is None and isinstance(result, dict):
                self.init_result = result
        elif ex.method == "tools/list" and isinstance(result, dict) and isinstance(result.get("tools"), list):
            self.listed = True
            for tool in result["tools"]:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    self.tools[tool["name"]] = comparable({"result": effective_tool(tool)})["result"]


def iter_calls(session: Session, facts: SideFacts, window: int = WINDOW) -> Iterator[Turn]:
    """The session's client operations with their outcomes, in the order asked, read in one pass.

    The one reading (:mod:`mcpreel.operations`) pairs them: per client session, a multi-round-trip request
    is one call (its request the first round's, its answer the last round's), a task is one call (its
    answer the task's result, however many polls it took), a server request is part of the call that caused
    it. ``initialize``, ``tools/list`` and ``ping`` go to ``facts`` instead of out; a dropped request never
    reached the server and is no call. Past ``window`` operations waiting for their outcome, the oldest is
    given up as unanswered (``no response``).
    """
    unit = _UNITS.get(session.info.source_format or "reel", "entry")
    walker = Walker()
    order: deque[Operation] = deque()  # client operations in the order asked, complete or not
    complete: set[int] = set()  # operation n
    given_up: set[int] = set()
    position = 0

    def turn(op: Operation) -> Turn:
        nonlocal position
        ex = op.opening
        final = op.final if op.n not in given_up else None
        t = Turn(ex.request, ex.request, position, ex.source, ex.t, ctx=ex.ctx, unit=unit, wire=ex)
        position += 1
        if final is not None:
            t.response, t.t_response = final.response, final.t_end
        return t

    def ready() -> Iterator[Turn]:
        while order and (order[0].n in complete or order[0].n in given_up):
            op = order.popleft()
            complete.discard(op.n)
            out = turn(op)
            given_up.discard(op.n)
            method = out.request.get("method")
            if type(method) is not str or not method or method in _NOT_CALLS:  # a list or object is no name
                facts.take(out)
            else:
                yield out

    for index, rec in enumerate(session):
        for step in walker.feed(index, rec):
            kind = step.kind
            if kind == "request":
                ex = step.exchange
                op = step.operation
                if op is not None and ex is op.opening and ex.dir == "in" and not ex.dropped:
                    order.append(op)
                    if len(order) > window:
                        head = order[0]
                        if head.n not in complete:
                            given_up.add(head.n)
            elif kind == "operation" and step.operation is not None:
                complete.add(step.operation.n)
        if order and (order[0].n in complete or order[0].n in given_up):
            yield from ready()
    for step in walker.finish():
        if step.kind == "operation" and step.operation is not None:
            complete.add(step.operation.n)
    yield from ready()


class _Pending:
    __slots__ = ("ex", "group", "ordinal", "side", "done")

    def __init__(self, ex: Turn, group: tuple[str, str | None], ordinal: int, side: int):
        self.ex, self.group, self.ordinal, self.side, self.done = ex, group, ordinal, side, False


class _Group:
    __slots__ = ("count", "queue")

    def __init__(self) -> None:
        self.count = [0, 0]
        self.queue: tuple[deque[_Pending], deque[_Pending]] = (deque(), deque())


def _params_same(a: Turn, b: Turn) -> bool:
    pa, pb = a.request.get("params"), b.request.get("params")
    return pa is pb or jsonio.dumps(pa) == jsonio.dumps(pb)


def _answer(response: dict[str, Any]) -> bytes:
    return jsonio.dumps([response.get("result"), response.get("error"), "result" in response, "error" in response])


class DiffStream:
    """Iterate to get each aligned call (:class:`~mcpreel.compare.diff.CallChange`) as soon as it is known.

    Once exhausted, :attr:`result` holds the server and tool comparison and the counts (its ``calls``
    list stays empty: the calls were handed out). ``options.window`` bounds what is held (see the
    module's docstring).
    """

    def __init__(self, a: Session, b: Session, options: DiffOptions | None = None):
        self.options = options or DiffOptions()
        self.window = self.options.window
        self.facts = (SideFacts(), SideFacts())
        self.sessions = (a, b)
        self.result = SessionDiff(a.info.path, b.info.path, self.options)
        self.counts = {"same": 0, "changed": 0, "added": 0, "removed": 0}
        self.latency_shifts = 0
        self.finished = False

    # -- the walk ---------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[CallChange]:
        sides = [iter_calls(s, f, self.window) for s, f in zip(self.sessions, self.facts, strict=True)]
        groups: dict[tuple[str, str | None], _Group] = {}
        pending: deque[_Pending] = deque()
        live = [True, True]
        npending = 0
        while live[0] or live[1]:
            for side in (0, 1):
                if not live[side]:
                    continue
                ex = next(sides[side], None)
                if ex is None:
                    live[side] = False
                    continue
                key = (ex.method, ex.subject)
                g = groups.get(key)
                if g is None:
                    g = groups[key] = _Group()
                g.count[side] += 1
                n = g.count[side]
                other = 1 - side
                oq = g.queue[other]
                if oq and oq[0].ordinal == n:
                    p = oq.popleft()
                    p.done = True
                    npending -= 1
                    yield self._pair(key, n, p.ex, ex) if side == 1 else self._pair(key, n, ex, p.ex)
                elif g.count[other] >= n:
                    yield self._alone(key, n, ex, side)  # its counterpart was given up
                else:
                    p = _Pending(ex, key, n, side)
                    g.queue[side].append(p)
                    pending.append(p)
                    npending += 1
                    while npending > self.window:
                        head = pending.popleft()
                        if head.done:
                            continue
                        groups[head.group].queue[head.side].popleft()
                        head.done = True
                        npending -= 1
                        yield self._alone(head.group, head.ordinal, head.ex, head.side)
                while pending and pending[0].done:
                    pending.popleft()
        for p in pending:
            if not p.done:
                yield self._alone(p.group, p.ordinal, p.ex, p.side)
        self._finish()

    def _alone(self, key: tuple[str, str | None], n: int, ex: Turn, side: int) -> CallChange:
        if side == 0:
            change = CallChange(key[0], key[1], n, "removed", ex, None)
        else:
            change = CallChange(key[0], key[1], n, "added", None, ex)
        self.counts[change.kind] += 1
        return change

    def _pair(self, key: tuple[str, str | None], n: int, xa: Turn, xb: Turn) -> CallChange:
        options = self.options
        change = CallChange(key[0], key[1], n, "same", xa, xb)
        if not _params_same(xa, xb):
            change.arguments = diff(strip_volatile_meta(xa.request.get("params") or {}),
                                    strip_volatile_meta(xb.request.get("params") or {}), "$.params")
        ra, rb = xa.response, xb.response
        change.status_a, change.status_b = error_status(ra), error_status(rb)
        if ra is not None and rb is not None and _answer(ra) != _answer(rb):
            change.result = diff(comparable(ra, options.ignore_paths), comparable(rb, options.ignore_paths))
        if change.arguments or change.result or change.status_a != change.status_b:
            change.kind = "changed"
        change.latency_shift = latency_shifted(xa.latency_ms, xb.latency_ms, options)
        self.counts[change.kind] += 1
        if change.latency_shift:
            self.latency_shifts += 1
            if change.kind == "same" and options.fail_on_latency:
                self.result.latency_differences += 1
        return change

    def _finish(self) -> None:
        out = self.result
        fa, fb = self.facts
        ia, ib = fa.init_result, fb.init_result
        if ia is not None and ib is not None:
            for key in ("protocolVersion", "capabilities"):
                out.server += diff(comparable({"result": ia.get(key)})["result"],
                                   comparable({"result": ib.get(key)})["result"], f"$.{key}")
            out.server_info = diff(ia.get("serverInfo"), ib.get("serverInfo"), "$.serverInfo")
        out.tools_listed = (fa.listed, fb.listed)
        if fa.listed and fb.listed:
            for name, tool in fa.tools.items():
                if name not in fb.tools:
                    out.tools.append(ToolChange(name, "removed"))
                else:
                    found = diff(tool, fb.tools[name])
                    if found:
                        out.tools.append(ToolChange(name, "changed", found))
            out.tools += [ToolChange(name, "added") for name in fb.tools if name not in fa.tools]
        out.counted = dict(self.counts)
        out.latency_shift_count = self.latency_shifts
        out.notes = [f"{side}: {note}" for side, s in (("A", self.sessions[0]), ("B", self.sessions[1]))
                     for note in s.info.notes]
        self.finished = True
