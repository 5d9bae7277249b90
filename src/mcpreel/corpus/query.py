"""Asking the index: any SQL (``mcpreel query``) and the named questions that need none (``mcpreel sessions``).

A :class:`Result` is the column names and the rows; :func:`to_json`, :func:`to_csv` and :func:`table_lines`
are its three renderings (the CLI writes them). The database is opened read-only and sandboxed, so a query
can never change the index nor read, write or list any other file (:data:`~mcpreel.corpus.db.SANDBOX`),
and while an indexer writes it the query waits a few seconds for it (:func:`~mcpreel.corpus.db.connect`).
"""

from __future__ import annotations

import contextlib
import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from mcpreel.corpus.db import connect
from mcpreel.errors import InputError, UsageError
from mcpreel.render.terminal_safe import terminal_safe

__all__ = ["Result", "like_pattern", "parse_since", "query_errors", "run_sql", "sessions", "table_lines", "to_csv",
           "to_json"]


@dataclass
class Result:
    columns: list[str]
    rows: list[tuple[Any, ...]]


@contextlib.contextmanager
def query_errors(timeout_s: float | None = None) -> Iterator[None]:
    """A query DuckDB refuses, as the one-line usage error naming why: the one wording ``mcpreel query`` and
    the corpus MCP server (:mod:`mcpreel.corpus.mcp_server`) both give. With ``timeout_s``, the query was
    interrupted after that long (a timer called ``interrupt``), and the error says so and how to narrow it."""
    import duckdb

    try:
        yield
    except duckdb.PermissionException as exc:  # the sandbox: no file, no extension (corpus.db.SANDBOX)
        raise UsageError(f"the query failed: it reads or writes outside the index, and queries read the index "
                         f"only ({str(exc).splitlines()[0]})") from exc
    except duckdb.Error as exc:
        if timeout_s is not None and isinstance(exc, duckdb.InterruptException):
            raise UsageError(f"the query ran longer than {timeout_s:g} s and was stopped: narrow it "
                             f"(WHERE, LIMIT) or aggregate") from exc
        raise UsageError(f"the query failed: {str(exc).splitlines()[0]}") from exc


def run_sql(db: Path, sql: str, params: list[Any] | None = None) -> Result:
    """``sql`` on the index at ``db`` (read-only); a query DuckDB refuses is a usage error naming why."""
    con = connect(db, read_only=True)
    try:
        with query_errors():
            cur = con.execute(sql, params or [])
        if cur.description is None:
            return Result([], [])
        columns = [d[0] for d in cur.description]
        return Result(columns, cur.fetchall())
    finally:
        con.close()


def parse_since(text: str, now_ms: int | None = None) -> int:
    """``30m``, ``2h``, ``2d``, ``1w`` (that long ago), ``today``, ``yesterday``, a date or an ISO time -> epoch
    ms (:func:`mcpreel.corpus.when.parse_when`, the one reading of a typed time; ``now_ms`` freezes now)."""
    from mcpreel.corpus.when import Clock, parse_when

    clock = None if now_ms is None else Clock(datetime.fromtimestamp(now_ms / 1000).astimezone())
    return parse_when(text, clock=clock)


def _bound(value: str | int, *, end: bool) -> int:
    """A ``since``/``until`` given as typed text (parsed on the machine's clock) or as epoch ms already."""
    if isinstance(value, int):
        return value
    from mcpreel.corpus.when import parse_when

    return parse_when(value, end=end, option="--until" if end else "--since")


def sessions(db: Path, *, server: str | None = None, tool: str | None = None, failed: bool = False,
             since: str | int | None = None, client: str | None = None, limit: int | None = None,
             until: str | int | None = None) -> Result:
    """The client sessions that match, newest first, each naming the file and the line to open: the first
    failed operation's line with ``failed``, the first call of ``tool`` with ``tool``, else the session's
    first record. ``server``/``client`` match a name (case-insensitive, ``*`` a wildcard); ``since``/``until``
    bound the session's start (typed text as ``--since`` takes it, or epoch ms; ``until`` excludes its instant)."""
    where = ["TRUE"]
    where_params: list[Any] = []
    if server:
        where.append("s.server_name ILIKE ? ESCAPE '\\'")
        where_params.append(like_pattern(server))
    if client:
        where.append("s.client_name ILIKE ? ESCAPE '\\'")
        where_params.append(like_pattern(client))
    if since:
        where.append("s.start_ms >= ?")
        where_params.append(_bound(since, end=False))
    if until:
        where.append("s.start_ms < ?")
        where_params.append(_bound(until, end=True))
    on = ["o.file = s.file", "o.session = s.session"]
    join_params: list[Any] = []
    if tool:
        on.append("o.tool = ?")
        join_params.append(tool)
    if failed:
        on.append("o.failed")
    if tool or failed:
        join = "JOIN operations o ON " + " AND ".join(on)  # only sessions that have such an operation
    else:
        join = "LEFT JOIN operations o ON FALSE"
    sql = f"""
        SELECT s.file, coalesce(min(o.request_line), s.line) AS line, s.session,
               strftime(make_timestamp(s.start_ms * 1000), '%Y-%m-%d %H:%M:%S') AS start,
               s.client_name AS client, s.server_name AS server, s.era, s.operations, s.failed,
               s.unanswered, min(o.id) AS operation
        FROM sessions s {join}
        WHERE {" AND ".join(where)}
        GROUP BY s.file, s.line, s.session, s.start_ms, s.client_name, s.server_name, s.era, s.operations,
                 s.failed, s.unanswered
        ORDER BY s.start_ms DESC NULLS LAST, s.file, s.session
        {f"LIMIT {int(limit)}" if limit else ""}"""
    return run_sql(db, sql, join_params + where_params)


def like_pattern(name: str) -> str:
    """A ``--server-name``/``--client`` value as a LIKE pattern (with ``ESCAPE '\\'``): ``*`` is the one
    wildcard the user writes; ``%``, ``_`` and ``\\`` match themselves (a server named ``my_srv`` is not
    ``myXsrv``, ``100%`` is not ``1000``)."""
    escaped = name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.replace("*", "%")


# -- renderings ------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """A value as JSON has it (dates and times as ISO text, decimals as numbers, bytes as hex)."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def to_json(result: Result) -> bytes:
    """One JSON array of objects, a member per column."""
    from mcpreel._infra import jsonio

    return jsonio.dumps([dict(zip(result.columns, (_plain(v) for v in row), strict=True)) for row in result.rows])


def to_csv(result: Result) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(result.columns)
    for row in result.rows:
        w.writerow(["" if v is None else _plain(v) for v in row])
    return out.getvalue()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    # one cell, one line, and nothing a terminal obeys (a tool named ESC]52;... sets no clipboard)
    text = str(_plain(value)).replace("\n", "\\n").replace("\r", "\\r")
    return terminal_safe(text, multiline=False)


def table_lines(result: Result, *, max_width: int = 60) -> Iterator[str]:
    """Aligned plain-text columns (numbers to the right), a header line, then a row count."""
    cells = [[_cell(v) for v in row] for row in result.rows]
    cells = [[c if len(c) <= max_width else "…" + c[-(max_width - 1):] for c in row] for row in cells]
    widths = [len(c) for c in result.columns]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    numeric = [all(isinstance(r[i], (int, float, Decimal)) and not isinstance(r[i], bool) or r[i] is None
                   for r in result.rows) and any(r[i] is not None for r in result.rows)
               for i in range(len(result.columns))]

    def line(values: list[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric, strict=True)).rstrip()

    yield line(list(result.columns))
    yield line(["-" * w for w in widths])
    for row in cells:
        yield line(row)
    yield f"({len(result.rows):,} row{'s' if len(result.rows) != 1 else ''})"


def check_exists(db: Path) -> None:
    if not db.exists():
        raise InputError("no corpus index here: run `mcpreel index` first (or give --db)", path=str(db))


def example_queries(page: str) -> list[str]:
    """The documented example queries: every ```sql block between the ``corpus-example-queries`` markers of
    the corpus reference (``mcpreel help corpus``, the site's reference page; the Spark test and the benchmark
    run exactly what it shows)."""
    start = page.index("<!-- corpus-example-queries")
    end = page.index("<!-- end corpus-example-queries -->", start)
    return [block.strip() for block in re.findall(r"```sql\n(.*?)```", page[start:end], flags=re.S)]
