"""``mcpreel mcp-server``: the corpus as an MCP server, so an agent asks it in its own words.

An agent (Claude Code, Codex, Cursor) that debugs an MCP integration wants "which sessions failed
yesterday", "what did that call send and get back", "when did this tool's description change": the
questions ``sessions``, ``show`` and ``query`` answer on the command line. Served over MCP, the agent asks
them itself. This module is what the tools *do*, as plain functions on a :class:`CorpusTools` (no SDK:
they are tested and typed on their own); :mod:`mcpreel.corpus.mcp_tools` registers them as MCP tools on
the official SDK's ``MCPServer``, imported only when the server runs: the SDK may not be installed, and
then the command says in one line what to install (:data:`SDK_MISSING`).

What the tools promise, whatever the agent asks:

- **Read only.** Every tool opens the index read-only and sandboxed (:func:`~mcpreel.corpus.db.connect`:
  no file but the index, no extension), one connection per call, so ``index --watch`` gets in between;
- **bounded.** A query returns at most ``max_rows`` rows (saying when there were more) and is interrupted
  after ``query_timeout_s``; a message ``show_operation`` quotes is cut past ``max_message_chars``;
- **redacted.** Messages are redacted (the rules of ``mcpreel redact``) unless the person who started the
  server said ``--no-redact``: an agent cannot turn redaction off, since what it reads reaches its model;
- **located.** Every row that is about a session, an operation or a definition carries ``open``:
  ``FILE:LINE``, the session file and the line to open.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpreel._infra import jsonio
from mcpreel.corpus import schema
from mcpreel.corpus.db import connect
from mcpreel.corpus.query import Result, like_pattern, query_errors, sessions, to_json
from mcpreel.errors import UsageError

__all__ = ["SDK_MISSING", "VERDICTS", "CorpusServerOptions", "CorpusTools", "check_index", "located",
           "sdk_missing"]

#: the one line said when the official SDK is not installed
SDK_MISSING = "mcpreel mcp-server runs on the official MCP SDK, which is not installed: pip install 'mcp>=2.3,<3'"
#: a replayed request's verdicts (the ``replays`` table's ``verdict``)
VERDICTS = ("same", "changed", "flaky", "error", "unrecorded")
_LINE_COLUMNS = ("line", "request_line", "response_line")


@dataclass(frozen=True)
class CorpusServerOptions:
    """What the person who starts the server decides (the agent cannot change it): the index, whether
    messages are redacted, and the bounds of every answer."""

    db: Path
    redact: bool = True
    max_rows: int = 500  # the most rows any answer holds (query, sessions, replays)
    query_timeout_s: float = 30.0  # a query running longer is interrupted
    max_message_chars: int = 20_000  # a quoted message longer than this (compact JSON) is cut


def located(file: Any, line: Any) -> str | None:
    """``FILE:LINE`` (``FILE`` alone when the line is unknown): where to open what a row is about."""
    if not file:
        return None
    return f"{file}:{line}" if line is not None else str(file)


def _rows(result: Result) -> list[dict[str, Any]]:
    """The rows as JSON objects (dates as ISO text, decimals as numbers), each located when it names a
    ``file`` and a line column."""
    rows: list[dict[str, Any]] = jsonio.loads(to_json(result))
    for row in rows:
        if "file" in row and "open" not in row:
            line = next((row[c] for c in _LINE_COLUMNS if row.get(c) is not None), None)
            row["open"] = located(row["file"], line)
        elif "path" in row and "open" not in row and isinstance(row["path"], str):
            row["open"] = row["path"]
    return rows


def _select(db: Path, sql: str, params: list[Any] | None = None, *, max_rows: int,
            timeout_s: float) -> tuple[Result, bool]:
    """``sql`` on the index, read-only and sandboxed: at most ``max_rows`` rows, and whether there were more
    (one more is read to tell); interrupted after ``timeout_s``. A refused query is the error ``mcpreel
    query`` gives (:func:`~mcpreel.corpus.query.query_errors`)."""
    con = connect(db, read_only=True)
    timer = threading.Timer(timeout_s, con.interrupt)
    timer.daemon = True
    try:
        timer.start()
        with query_errors(timeout_s):
            cur = con.execute(sql, params or [])
            if cur.description is None:
                return Result([], []), False
            columns = [d[0] for d in cur.description]
            rows = cur.fetchmany(max_rows + 1)
        return Result(columns, rows[:max_rows]), len(rows) > max_rows
    finally:
        timer.cancel()
        con.close()


class CorpusTools:
    """The tools' work, one method each, on the index named by the options; each returns a JSON object
    (what the MCP tool puts in ``structuredContent``) or raises :class:`~mcpreel.errors.McpreelError`
    with the one line the agent reads."""

    def __init__(self, options: CorpusServerOptions) -> None:
        self.options = options

    def _cap(self, limit: int | None, default: int) -> int:
        return max(1, min(int(limit or default), self.options.max_rows))

    def _select(self, sql: str, params: list[Any] | None = None, *, limit: int) -> tuple[Result, bool]:
        return _select(self.options.db, sql, params, max_rows=limit, timeout_s=self.options.query_timeout_s)

    # -- the tools -------------------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """The tables and their columns (what each means), their row counts, and the time span of the
        sessions: what an agent reads before it writes SQL."""
        tables = []
        counts = self._select(" UNION ALL ".join(f"SELECT '{t.name}', count(*) FROM {t.name}"
                                                 for t in schema.TABLES + schema.RUN_TABLES), limit=50)[0].rows
        rows = dict(counts)
        for t in schema.TABLES + schema.RUN_TABLES:
            tables.append({"name": t.name, "doc": t.doc, "rows": int(rows.get(t.name) or 0),
                           "columns": [{"name": c.name, "type": c.type, "doc": c.doc} for c in t.columns]})
        span = self._select("SELECT min(start_ms), max(start_ms) FROM sessions", limit=1)[0].rows[0]
        (runs,) = self._select("SELECT count(DISTINCT run_id) FROM replays", limit=1)[0].rows[0]
        return {"db": str(self.options.db), "tables": tables,
                "first_session_ms": span[0], "last_session_ms": span[1], "replay_runs": int(runs or 0),
                "redacted": self.options.redact, "max_rows": self.options.max_rows}

    def find_sessions(self, *, server_name: str | None = None, tool: str | None = None, client: str | None = None,
                      since: str | None = None, until: str | None = None, failed: bool = False,
                      limit: int | None = None) -> dict[str, Any]:
        """``mcpreel sessions``: the sessions that match, newest first, each located (the first failed
        operation's line with ``failed``, the tool's first call with ``tool``, else the session's start)."""
        cap = self._cap(limit, 20)
        result = sessions(self.options.db, server=server_name or None, tool=tool or None, failed=failed,
                          since=since or None, client=client or None, until=until or None, limit=cap + 1)
        more = len(result.rows) > cap
        result.rows = result.rows[:cap]
        found = _rows(result)
        return {"sessions": found, "count": len(found), "more": more}

    def show_operation(self, op_id: int) -> dict[str, Any]:
        """``mcpreel show``: an operation's index row and each of its requests and answers, read back from
        its file (redacted unless the server was started with ``--no-redact``); a message longer than
        ``max_message_chars`` is cut (``cut`` says so) and the file and line say where it is whole."""
        from mcpreel.corpus.show import show_operation

        doc = jsonio.loads(jsonio.dumps(show_operation(self.options.db, op_id, redact=self.options.redact)))
        op = doc["operation"]
        doc["open"] = located(op.get("file"), op.get("request_line"))
        for message in doc["messages"]:
            message["open"] = located(op.get("file"), message.get("line"))
            text = jsonio.dumps_str(message.get("message"))
            if len(text) > self.options.max_message_chars:
                message["message"] = None
                message["excerpt"] = text[: self.options.max_message_chars]
                message["cut"] = True
        return doc

    def query(self, sql: str, max_rows: int | None = None) -> dict[str, Any]:
        """``mcpreel query``: any SQL (DuckDB's dialect) on the index, read-only, at most ``max_rows`` rows;
        rows that name a ``file`` and a line are located."""
        if not sql.strip():
            raise UsageError("give a SQL query (tables: files, sessions, operations, tools, replays)")
        cap = self._cap(max_rows, 100)
        result, more = self._select(sql, limit=cap)
        rows = _rows(result)
        return {"columns": result.columns, "rows": rows, "row_count": len(rows), "more": more,
                "max_rows": cap}

    def replay_runs(self, *, since: str | None = None, limit: int | None = None) -> dict[str, Any]:
        """The ``replay --db`` runs, newest first: against what, compared with what, and how their
        requests ended (a count per verdict)."""
        cap = self._cap(limit, 20)
        where, params = "TRUE", []
        if since:
            from mcpreel.corpus.when import parse_when

            where, params = "run_ms >= ?", [parse_when(since, option="since")]
        counts = ", ".join(f"count(*) FILTER (WHERE verdict = '{v}') AS {v}" for v in VERDICTS)
        result, more = self._select(f"""
            SELECT run_id, min(run_ms) AS run_ms,
                   strftime(make_timestamp(min(run_ms) * 1000), '%Y-%m-%d %H:%M:%S') AS started,
                   any_value(target) AS target, any_value(baseline) AS baseline,
                   count(DISTINCT file || '#' || session) AS sessions,
                   count(*) FILTER (WHERE request IS NOT NULL) AS requests, {counts}
            FROM replays WHERE {where} GROUP BY run_id ORDER BY run_ms DESC, run_id""", params, limit=cap)
        runs = _rows(result)
        return {"runs": runs, "count": len(runs), "more": more}

    def replay_results(self, *, run_id: str | None = None, tool: str | None = None, verdict: str | None = None,
                       limit: int | None = None) -> dict[str, Any]:
        """One replay run's requests (the newest run when ``run_id`` is not given), each with its verdict,
        the paths that differed, both latencies and the session file to open (the line of the session's
        first record: a replay numbers requests, not lines)."""
        cap = self._cap(limit, 50)
        if verdict and verdict not in VERDICTS:
            raise UsageError(f"verdict {verdict!r}: one of {', '.join(VERDICTS)}")
        if not run_id:
            latest = self._select("SELECT run_id FROM replays ORDER BY run_ms DESC, run_id DESC", limit=1)[0].rows
            if not latest:
                return {"run_id": None, "requests": [], "count": 0, "more": False,
                        "note": "no replay run in this index: `mcpreel replay --db FILE` keeps its verdicts here"}
            run_id = str(latest[0][0])
        where, params = ["r.run_id = ?"], [run_id]
        if tool:
            where.append("r.tool ILIKE ? ESCAPE '\\'")
            params.append(like_pattern(tool))
        if verdict:
            where.append("r.verdict = ?")
            params.append(verdict)
        result, more = self._select(f"""
            SELECT r.file, s.line, r.session, r.request, r.method, r.tool, r.verdict, r.paths,
                   r.recorded_ms, r.replayed_ms, r.error, r.target, r.baseline
            FROM replays r LEFT JOIN sessions s ON s.file = r.file AND s.session = r.session
            WHERE {" AND ".join(where)}
            ORDER BY r.file, r.session, r.request NULLS FIRST""", params, limit=cap)
        rows = _rows(result)
        for row in rows:
            with contextlib.suppress(ValueError, TypeError):
                row["paths"] = jsonio.loads(row["paths"]) if row.get("paths") else []
        if not rows and not self._select("SELECT 1 FROM replays WHERE run_id = ?", [run_id], limit=1)[0].rows:
            raise UsageError(f"no replay run {run_id!r} in the index (replay_runs lists them)")
        return {"run_id": run_id, "requests": rows, "count": len(rows), "more": more}

    def tool_definitions(self, name: str, server_name: str | None = None) -> dict[str, Any]:
        """A tool's definitions over time: one row per distinct definition (a changed description, schema
        or annotation is a new hash), when it was first and last seen, by how many sessions, and the
        tools/list answer to open where it was first seen (the whole definition is there)."""
        where, params = ["name = ?"], [name]
        if server_name:
            where.append("server_name ILIKE ? ESCAPE '\\'")
            params.append(like_pattern(server_name))
        result, _ = self._select(f"""
            SELECT server_name, hash, arg_min(description, coalesce(seen_ms, 0)) AS description,
                   min(seen_ms) AS first_seen_ms, max(seen_ms) AS last_seen_ms,
                   strftime(make_timestamp(min(seen_ms) * 1000), '%Y-%m-%d %H:%M:%S') AS first_seen,
                   strftime(make_timestamp(max(seen_ms) * 1000), '%Y-%m-%d %H:%M:%S') AS last_seen,
                   count(*) AS sessions, count(DISTINCT file) AS files,
                   arg_min(file, coalesce(seen_ms, 0)) AS file, arg_min(line, coalesce(seen_ms, 0)) AS line
            FROM tools WHERE {" AND ".join(where)}
            GROUP BY server_name, hash ORDER BY first_seen_ms NULLS LAST, hash""", params,
            limit=self.options.max_rows)
        rows = _rows(result)
        out: dict[str, Any] = {"name": name, "definitions": rows, "count": len(rows),
                               "changed": len({(r["server_name"], r["hash"]) for r in rows}) >
                               len({r["server_name"] for r in rows})}
        if not rows:
            similar = self._select("SELECT DISTINCT name FROM tools WHERE name ILIKE ? ORDER BY name",
                                   [f"%{like_pattern(name)}%"], limit=20)[0].rows
            out["similar"] = [r[0] for r in similar]
        return out


def check_index(options: CorpusServerOptions) -> None:
    """Refuse, in one line and before anything is served, an index that is missing or of another schema
    (rather than in every tool call's answer)."""
    connect(options.db, read_only=True).close()


def sdk_missing(exc: ImportError) -> bool:
    """Whether ``exc`` says the official SDK (or what it is built on) is not installed: the server then
    says :data:`SDK_MISSING` instead of a traceback."""
    return (exc.name or "").split(".")[0] in ("mcp", "mcp_types", "pydantic", "typing_extensions")
