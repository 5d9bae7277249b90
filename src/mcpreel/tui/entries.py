"""What the viewer shows of a session, as data: one :class:`Entry` a record, built as records arrive.

The viewer (:mod:`mcpreel.tui.app`) is fed the same way whether it browses a file or watches a proxy:
records come in order, a batch at a time, and :class:`Entries` turns each into a row at once, pairing a
response with its request as it arrives (by the direction of the request and the id, scoped by the file
of a merged reel, as :mod:`mcpreel._infra.correlation` defines it). When the response arrives its request
row learns the answer's status and latency too, so an unanswered call is visible while it waits.

Nothing here knows Textual: the rows, the pairing, the sessions and the filtering are tested alone, and a
100k-record file is turned into rows in a worker thread without touching the screen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.correlation import Correlator
from mcpreel._infra.timeutil import iso_from_ms
from mcpreel.model import SCOPE_KEY, Kind, Message, Session, SessionInfo

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
    session: int | None = None  # 1-based client session (:mod:`mcpreel.sessions`), once known

    @property
    def is_request(self) -> bool:
        return self.msg.is_request

    @property
    def is_response(self) -> bool:
        return self.label == "(response)"

    @property
    def failed(self) -> bool:
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
        return f"error {code}" if code is not None else "error"
    result = raw.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        return IS_ERROR
    return OK


class Entries:
    """The rows of a session, in order, growing as records are added (:meth:`add`)."""

    def __init__(self, info: SessionInfo | None = None):
        self.info = info if info is not None else SessionInfo()
        self.rows: list[Entry] = []
        self._correlator: Correlator[int] = Correlator()
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
        scope = msg.extra.get(SCOPE_KEY) if msg.extra else None
        direction = msg.dir if msg.dir in ("in", "out") else "in"
        method = raw.get("method")
        if method is not None:
            entry.label = method if isinstance(method, str) else str(method)
            if method == "tools/call":
                entry.tool = _tool_of(raw) or "unknown_tool"
            if "id" in raw:
                if msg.dropped:
                    entry.status = "dropped"
                elif self._correlator.request(direction, raw["id"], entry.index, scope=scope):
                    entry.status = PENDING
            return entry
        if "result" not in raw and "error" not in raw:
            entry.label = "(not JSON-RPC)"
            return entry
        entry.label = "(response)"
        entry.status = _status_of(raw)
        if msg.dropped:
            return entry
        req_index = self._correlator.response(direction, raw.get("id"), scope=scope)
        if req_index is None:
            entry.status += " (orphan)"
            return entry
        req = self.rows[req_index]
        entry.pair, req.pair = req.index, entry.index
        entry.tool = req.tool
        req.status = entry.status
        if req.msg.t is not None and msg.t is not None:
            entry.latency_ms = req.latency_ms = max(0, msg.t - req.msg.t)
        return entry

    def extend(self, messages: Iterable[Message]) -> list[Entry]:
        return [e for e in map(self.add, messages) if e is not None]

    def finish(self) -> None:
        """The whole file is in: a request still waiting was never answered."""
        self.complete = True
        for rows in self._correlator.pending():
            self.rows[rows].status = NO_ANSWER

    def find_sessions(self) -> None:
        """Split the rows into client sessions and give each row its session (eras come with them)."""
        self.set_sessions(*self.sessions_of())

    def sessions_of(self) -> tuple[list[Any], list[int | None]]:
        """The client sessions of the rows so far and each row's session number, computed without changing
        anything (a file's worker thread computes them; the screen's thread applies them)."""
        from mcpreel.sessions import split_sessions

        rows = list(self.rows)
        sessions = split_sessions(Session(self.info, [e.msg for e in rows]))
        where = {id(rec): s.index for s in sessions for rec in s.records}
        return sessions, [where.get(id(e.msg)) for e in rows]

    def set_sessions(self, sessions: Sequence[Any], numbers: Sequence[int | None]) -> None:
        self.sessions = list(sessions)
        for e, number in zip(self.rows, numbers, strict=False):
            e.session = number

    def session_line(self) -> str:
        """The sessions and their eras, in one line for the header."""
        if not self.sessions:
            return ""
        return " | ".join(s.label() for s in self.sessions)

    def session(self) -> Session:
        """Everything shown so far as a session (for save and export)."""
        return Session(self.info, [e.msg for e in self.rows])

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
