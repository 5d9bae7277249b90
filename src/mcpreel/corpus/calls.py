"""``mcpreel calls``: the operations of the whole index, one row each, newest first.

"Yesterday's failed call" is one question across every recorded session, and the answer a person wants
is the call itself -- when, which server, which tool, how it failed, how long it took -- and how to open
it, not the session that holds it (``sessions``) nor SQL (``query``). :func:`find_calls` asks the index
(read-only and sandboxed, as every reader: :func:`~mcpreel.corpus.db.connect`) with the filters as query
parameters, never as SQL text; a name filter matches as ``sessions``' does (``*`` the one wildcard,
``%`` and ``_`` literal: :func:`~mcpreel.corpus.query.like_pattern`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpreel.corpus.query import like_pattern, run_sql

__all__ = ["Call", "CallFilter", "CallPage", "find_calls"]


@dataclass(frozen=True)
class CallFilter:
    """Which operations: every one by default; each field narrows (all must hold)."""

    failed: bool = False  # status error (a JSON-RPC error) or isError (a failed tool result)
    tool: str | None = None  # the tool of a tools/call (``*`` a wildcard)
    method: str | None = None  # the opening request's method (``*`` a wildcard)
    server: str | None = None  # the session's serverInfo.name (``*`` a wildcard)
    since_ms: int | None = None  # started at or after (epoch ms)
    until_ms: int | None = None  # started before (epoch ms)
    slower_than_ms: int | None = None  # answered after more than this, or never answered
    limit: int | None = None  # at most this many rows (the newest)


@dataclass(frozen=True)
class Call:
    """One operation as ``calls`` lists it, with what opens it (its id for ``show``, its file and record)."""

    id: int
    start_ms: int | None
    server: str | None
    client: str | None
    method: str | None
    tool: str | None
    target: str | None
    status: str | None
    code: int | None
    message: str | None
    latency_ms: int | None
    file: str
    session: int
    line: int | None  # the opening request's line (or entry) in its file
    at: int | None  # its record index (0-based): ``mcpreel tui FILE --at N``

    @property
    def name(self) -> str:
        """What was called: the tool of a tools/call, else the method and what it is about."""
        if self.tool:
            return self.tool
        return " ".join(p for p in (self.method or "?", self.target) if p)

    @property
    def error_line(self) -> str:
        """The error's first line (a failed call), else nothing."""
        return (self.message or "").strip().splitlines()[0] if (self.message or "").strip() else ""


@dataclass
class CallPage:
    """The rows found (newest first) and how many matched in all (more than the rows when limited)."""

    calls: list[Call] = field(default_factory=list)
    total: int = 0


_COLUMNS = ("o.id", "o.start_ms", "s.server_name", "s.client_name", "o.method", "o.tool", "o.target", "o.status",
            "o.code", "o.message", "o.latency_ms", "o.file", "o.session", "o.request_line", "o.request_index")


def _where(flt: CallFilter) -> tuple[str, list[Any]]:
    where = ["TRUE"]
    params: list[Any] = []
    if flt.failed:
        where.append("o.failed")
    if flt.tool:
        where.append("o.tool ILIKE ? ESCAPE '\\'")
        params.append(like_pattern(flt.tool))
    if flt.method:
        where.append("o.method ILIKE ? ESCAPE '\\'")
        params.append(like_pattern(flt.method))
    if flt.server:
        where.append("s.server_name ILIKE ? ESCAPE '\\'")
        params.append(like_pattern(flt.server))
    if flt.since_ms is not None:
        where.append("o.start_ms >= ?")
        params.append(flt.since_ms)
    if flt.until_ms is not None:
        where.append("o.start_ms < ?")
        params.append(flt.until_ms)
    if flt.slower_than_ms is not None:
        where.append("(o.latency_ms > ? OR o.latency_ms IS NULL)")
        params.append(flt.slower_than_ms)
    return " AND ".join(where), params


def find_calls(db: Path, flt: CallFilter) -> CallPage:
    """The operations of the index at ``db`` that ``flt`` keeps, newest first (then by file and number),
    and their count."""
    where, params = _where(flt)
    source = "operations o LEFT JOIN sessions s ON s.file = o.file AND s.session = o.session"
    total = run_sql(db, f"SELECT count(*) FROM {source} WHERE {where}", params).rows[0][0]
    limit = f"LIMIT {int(flt.limit)}" if flt.limit else ""
    rows = run_sql(db, f"SELECT {', '.join(_COLUMNS)} FROM {source} WHERE {where} "
                       f"ORDER BY o.start_ms DESC NULLS LAST, o.file, o.n DESC {limit}", params).rows
    return CallPage([Call(*row) for row in rows], int(total))
