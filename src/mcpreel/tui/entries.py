"""What the viewer shows of a session, as data: one :class:`Entry` a record, built as records arrive.

The viewer (:mod:`mcpreel.tui.app`) is fed the same way whether it browses a file or watches a proxy:
records come in order, a batch at a time, and :class:`Entries` turns each into a row at once, pairing a
response with its request as it arrives through the one walk of a session (:mod:`mcpreel.operations`:
within a client session, by the direction of the request and the id). When the response arrives its
request row learns the answer's status and latency too, so an unanswered call is visible while it waits;
when an operation completes (a multi-round-trip call's last round, a task's result) the row of the call
that opened it shows the operation's status. The filter (:meth:`Entries.matches`) matches an operation:
``method:``, ``tool:`` and ``status:`` look at the request and its answer together, so
``status:error tool:run_sql`` finds the failed calls of that tool (both rows of each). Words of text all
match (``user 99999`` is a row holding both; ``"user 99999"`` in quotes, the phrase), unlike the other keys,
where the same key twice means either: a search box narrows as words are added.

Nothing here knows Textual: the rows, the pairing, the sessions and the filtering are tested alone, and a
100k-record file is turned into rows in a worker thread without touching the screen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.nesting import cut_repr
from mcpreel._infra.timeutil import iso_from_ms
from mcpreel.model import Kind, Message, Session, SessionInfo
from mcpreel.operations.walk import Exchange, Operation, Walker

__all__ = ["Entries", "Entry", "pretty"]

#: statuses a row can show (besides "error <code>")
OK, IS_ERROR, PENDING, NO_ANSWER = "ok", "isError", "pending", "no answer"


@dataclass(slots=True)
class Entry:
    """One record as a row of the list. ``index`` is its position in the session (0-based)."""

    index: int
    msg: Message
    label: str  # the method, "(response)", "batch", "stderr", "invalid", "transport", or another producer's kind
    tool: str | None = None
    id: Any = None
    pair: int | None = None  # the index of the request this response answers, or of the response to this request
    latency_ms: int | None = None
    status: str = ""
    session: int | None = None  # 1-based client session (:mod:`mcpreel.operations.sessions`), once known
    operation: Operation | None = None  # the operation its request or answer belongs to (the walk's)
    #: how long the proxy held the request for a decision (live only: the viewer saw the hold and its
    #: release; a reel does not record the decision's time), so the latency splits into held and server
    held_ms: int | None = None

    @property
    def server_ms(self) -> int | None:
        """The latency without the time the request was held: what the server took."""
        if self.latency_ms is None:
            return None
        if self.held_ms is None:
            return self.latency_ms
        return max(0, self.latency_ms - self.held_ms)

    @property
    def is_request(self) -> bool:
        """Whether the record is a request (it is paired with its answer)."""
        return self.msg.is_request

    @property
    def is_response(self) -> bool:
        """Whether the record is an answer (drawn with its request's method)."""
        return self.label == "(response)"

    @property
    def failed(self) -> bool:
        """Whether the record is an error answer or a tool result with ``isError`` (drawn in red)."""
        return self.status.startswith("error") or self.status == IS_ERROR

    def flags(self) -> list[str]:
        """The marks a row carries: what an intercept did to it, and whether the proxy made it up."""
        out = []
        if self.msg.modified:
            out.append("[MODIFIED]")
        if self.msg.dropped:
            out.append("[DROPPED]")
        if self.msg.injected:
            out.append("[INJECTED]")
        return out

    def text(self) -> str:
        """A one-line summary of what a non-message record says (stderr, an invalid frame, an event)."""
        msg = self.msg
        if msg.kind in (Kind.STDERR, Kind.INVALID):
            return (msg.text or "").replace("\n", " ")
        if msg.kind == Kind.BYTES:  # raw bytes of a pipe that was not JSON lines (HTTP/2, binary)
            from mcpreel.inspection import bytes_text

            return bytes_text(msg.raw if isinstance(msg.raw, bytes) else b"")
        if msg.kind == Kind.TRANSPORT:
            ctx = msg.ctx or {}
            parts = [str(ctx[k]) for k in ("method", "path", "status") if ctx.get(k) is not None]
            return " ".join(parts)
        return ""


def _tool_of(raw: dict[str, Any]) -> str | None:
    params = raw.get("params")
    if isinstance(params, dict) and isinstance(params.get("name"), str):
        return params["name"]
    return None


def _status_of(raw: dict[str, Any]) -> str:
    error = raw.get("error")
    if error is not None:
        code = error.get("code") if isinstance(error, dict) else None
        return f"error {cut_repr(code, 80)}" if code is not None else "error"
    result = raw.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        return IS_ERROR
    return OK


ENDED = "ended"
#: the filter keys that match an operation (its request and answer together), not one row's message
_OPERATION_KEYS = ("method", "tool", "status")


def _operation_status(op: Operation) -> str:
    """The status an operation's rows show: ``ok``, ``error <code>``, ``isError``, ``pending``, ..."""
    status, code, _ = op.status()
    if status == "error":
        return f"error {code}" if code is not None else "error"
    if status == "unanswered":
        return PENDING if not op.complete else NO_ANSWER
    if status in ("task", "input_required"):
        return PENDING
    return status


def _messages_of(op: Operation) -> list[tuple[Any, str]]:
    """Every request and answer of an operation, as (JSON-RPC message, its reel direction)."""
    out: list[tuple[Any, str]] = []
    ex: Exchange
    for ex in op.exchanges:
        out.append((ex.request, ex.dir))
        if ex.response is not None:
            out.append((ex.response, "out" if ex.dir == "in" else "in"))
    return out


class Entries:
    """The rows of a session, in order, growing as records are added (:meth:`add`)."""

    def __init__(self, info: SessionInfo | None = None):
        self.info = info if info is not None else SessionInfo()
        self.rows: list[Entry] = []
        self._walker = Walker()
        self._seqs: set[int] = set()
        self.sessions: list[Any] = []  # sessions.ClientSession, filled by :meth:`find_sessions`
        self.complete = False  # True once the whole file is read (a pending request is then unanswered)

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, msg: Message) -> Entry | None:
        """Add one record; None when a live record with an already-seen ``seq`` comes again (on attach)."""
        if msg.seq is not None:
            if msg.seq in self._seqs:
                return None
            self._seqs.add(msg.seq)
        entry = Entry(len(self.rows), msg, "")
        self.rows.append(entry)
        steps = self._walker.feed(entry.index, msg)
        kind = msg.kind
        if kind != Kind.MESSAGE:
            if kind == Kind.EVENT:
                raw = msg.raw
                label = raw.get("type") or raw.get("kind") or raw.get("dir") if isinstance(raw, dict) else None
                entry.label = label if isinstance(label, str) else "event"
            else:
                entry.label = kind
            return entry
        raw = msg.raw
        if isinstance(raw, list):
            entry.label = f"batch ({len(raw)})"
            return entry
        if not isinstance(raw, dict):
            entry.label = "(not JSON-RPC)"
            return entry
        entry.id = raw.get("id")
        method = raw.get("method")
        for step in steps:
            if step.kind == "operation" and step.operation is not None:
                self._completed(step.operation)
        if method is not None:
            entry.label = method if isinstance(method, str) else str(method)
            if method == "tools/call":
                entry.tool = _tool_of(raw) or "unknown_tool"
            if "id" in raw:
                if msg.dropped:
                    entry.status = "dropped"
                if steps and steps[0].kind == "request":
                    entry.operation = steps[0].operation
                    if not msg.dropped:
                        entry.status = PENDING
            return entry
        if "result" not in raw and "error" not in raw:
            entry.label = "(not JSON-RPC)"
            return entry
        entry.label = "(response)"
        entry.status = _status_of(raw)
        first = steps[0] if steps else None
        ex = first.exchange if first is not None and first.kind == "response" else None
        if ex is None:
            if not msg.dropped:
                entry.status += " (orphan)"
            return entry
        req = self.rows[ex.index]
        entry.pair, req.pair = req.index, entry.index
        entry.tool = req.tool
        entry.operation = ex.operation
        if req.status in (PENDING, "dropped", "") or not (ex.operation is not None and ex.operation.complete
                                                         and ex.operation.opening is not ex):
            req.status = entry.status
        if req.msg.t is not None and msg.t is not None:
            entry.latency_ms = req.latency_ms = max(0, msg.t - req.msg.t)
        entry.held_ms = req.held_ms
        if ex.operation is not None and ex.operation.complete:
            self._completed(ex.operation)
        return entry

    def _completed(self, op: Operation) -> None:
        """An operation is complete: the row of the call that opened it shows the operation's outcome."""
        opening = op.opening
        if opening.index < len(self.rows) and len(op.exchanges) > 1:
            row = self.rows[opening.index]
            row.status = _operation_status(op)
            if op.latency_ms is not None:
                row.latency_ms = op.latency_ms  # from the first request to the answer with the outcome

    def extend(self, messages: Iterable[Message]) -> list[Entry]:
        """Add records in order; returns the entries made (records that make none, such as ignored kinds, are
        skipped)."""
        return [e for e in map(self.add, messages) if e is not None]

    def finish(self) -> None:
        """The whole file is in: a request still waiting was never answered."""
        self.complete = True
        for step in self._walker.finish():
            ex = step.exchange
            if step.kind in ("unanswered", "ended") and ex is not None and ex.index < len(self.rows):
                self.rows[ex.index].status = NO_ANSWER if step.kind == "unanswered" else ENDED
            elif step.kind == "operation" and step.operation is not None and step.operation.status()[0] == "unanswered":
                # still open at the end and never answered, as the walk reads it: a call the proxy dropped
                # that nobody answered (its row keeps its [DROPPED] flag), or one whose id cannot correlate
                opening = step.operation.opening
                if opening.index < len(self.rows):
                    self.rows[opening.index].status = NO_ANSWER

    def matches(self, flt: Any, e: Entry) -> bool:
        """Whether row ``e`` passes the filter ``flt`` (:class:`mcpreel.control.filters.Filter`): ``method``,
        ``tool`` and ``status`` match its operation (any request or answer of it; ``status`` the
        operation's outcome once it has one), the other keys the row's own message. Every ``text`` word
        must be found (a search narrows as words are added); the same other key twice means either."""
        check = flt.term_matches
        msg = e.msg
        for key, values in flt.terms:
            if key == "text":
                ok = all(check(key, v, msg) for v in values)
            elif e.operation is None:
                ok = any(check(key, v, msg) for v in values)
            elif key == "status":
                outcome = _operation_status(e.operation)
                if outcome in (PENDING, NO_ANSWER):
                    ok = any(check(key, v, msg) for v in values)
                else:
                    failed = outcome.startswith("error") or outcome == IS_ERROR
                    ok = ("error" if failed else "ok") in values
            elif key in _OPERATION_KEYS:
                group = _messages_of(e.operation)
                ok = any(check(key, v, raw, d) for v in values for raw, d in group)
            else:
                ok = any(check(key, v, msg) for v in values)
            if not ok:
                return False
        return True

    def find_sessions(self) -> None:
        """Split the rows into client sessions and give each row its session (eras come with them)."""
        self.set_sessions(*self.sessions_of())

    def sessions_of(self) -> tuple[list[Any], list[int | None]]:
        """The client sessions of the rows so far and each row's session number, computed without changing
        anything (a file's worker thread computes them; the screen's thread applies them)."""
        from mcpreel.operations.sessions import split_sessions

        rows = list(self.rows)
        sessions = split_sessions(Session(self.info, [e.msg for e in rows]))
        where = {id(rec): s.index for s in sessions for rec in s.records}
        return sessions, [where.get(id(e.msg)) for e in rows]

    def set_sessions(self, sessions: Sequence[Any], numbers: Sequence[int | None]) -> None:
        """Number each row with its client session once the sessions are known."""
        self.sessions = list(sessions)
        for e, number in zip(self.rows, numbers, strict=False):
            e.session = number

    def session_line(self) -> str:
        """The sessions and their eras, in one line for the header."""
        if not self.sessions:
            return ""
        return " | ".join(s.label() for s in self.sessions)

    def session(self, indexes: Iterable[int] | None = None) -> Session:
        """The rows at ``indexes`` (what the list shows), or every row so far, as a session (save, export)."""
        if indexes is None:
            return Session(self.info, [e.msg for e in self.rows])
        return Session(self.info, [self.rows[i].msg for i in indexes])

    def select(self, keep: Callable[[Entry], bool]) -> list[int]:
        """The indexes of the rows ``keep`` accepts (the filtered view)."""
        return [e.index for e in self.rows if keep(e)]


def when(msg: Message) -> str:
    """The record's time as HH:MM:SS.mmm (UTC), or blanks."""
    if msg.t is None:
        return " " * 12
    iso = iso_from_ms(msg.t)
    return iso[11:23] if len(iso) >= 23 else iso


#: a payload longer than this (as indented JSON) is shown cut, with a note, so the pane stays quick
MAX_PRETTY = 200_000


def pretty(value: Any) -> str:
    """Indented JSON of a message for the detail pane (cut after :data:`MAX_PRETTY` characters)."""
    text = jsonio.dumps_indented(value).decode("utf-8", "backslashreplace")
    if len(text) > MAX_PRETTY:
        return text[:MAX_PRETTY] + f"\n... ({len(text) - MAX_PRETTY:,} more characters not shown)"
    return text
