"""The corpus index's schema: four tables, each column with its type and what it means, versioned; and the
run tables (``replays``: every ``replay --db`` run's verdicts), kept when the four are rebuilt.

The schema is data (:data:`TABLES`), not DDL strings scattered in the indexer, so one list says what a
column is for the database (:func:`create_statements`), the indexer's spools (column order), the Parquet
export and the corpus reference's schema table (``mcpreel help corpus``; ``tests/corpus`` checks it names every column here).

Why times are epoch milliseconds (``BIGINT``) and not ``TIMESTAMP``: the tables leave the machine as
Parquet, and a timestamp without a zone is read three ways by three engines; a count of milliseconds and a
``day`` ``DATE`` (the Parquet partition) mean the same everywhere. ``day`` is never null: the day of the
start when known, else of the file's modification time.

Why error messages are stored redacted: the index is what leaves the machine (``export parquet``), and it
holds no bodies; what a failed call said stays in its file (``mcpreel show`` reads it, redacted by default).

:data:`VERSION` goes up whenever a column changes; an index of an older version is rebuilt from the files
(it is derived data), one of a newer version is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RUN_TABLES", "TABLES", "VERSION", "Column", "Table", "column_names", "create_statements", "markdown"]

#: the schema version written in the ``meta`` table; an index of another version is rebuilt or refused
VERSION = 1


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # a DuckDB type that Parquet and Spark read as the same: BIGINT, INTEGER, VARCHAR, BOOLEAN, DATE
    doc: str


@dataclass(frozen=True)
class Table:
    name: str
    doc: str
    columns: tuple[Column, ...]


def _c(name: str, type_: str, doc: str) -> Column:
    return Column(name, type_, doc)


_FILE = _c("file", "VARCHAR", "the session file's absolute path (as `files.path`)")
_SESSION = _c("session", "INTEGER", "the client session in its file, 1-based (as `inspect` numbers them)")
_DAY = _c("day", "DATE", "the UTC day of `start_ms` (else of the file's modification time): the Parquet partition")

TABLES: tuple[Table, ...] = (
    Table("files", "one row per file found under the indexed paths, read or not", (
        _c("path", "VARCHAR", "absolute path (the key)"),
        _c("format", "VARCHAR", "the format it was read as (sniffed), null when it could not be read"),
        _c("size", "BIGINT", "bytes when indexed"),
        _c("mtime_ns", "BIGINT", "modification time when indexed (ns): with `size` and `head_hash`, what says it changed"),
        _c("head_hash", "VARCHAR", "BLAKE2b of its first 64 KiB"),
        _c("status", "VARCHAR", "`ok`, `in-progress` (a reel with no end line yet: a recorder is still writing it) "
           "or `error`"),
        _c("error", "VARCHAR", "the one-line reason it could not be read (status `error`), else null"),
        _c("sessions", "INTEGER", "client sessions in it"),
        _c("records", "BIGINT", "records read (messages, stderr lines, transport events, ...)"),
        _c("messages", "BIGINT", "JSON-RPC messages (batch members one by one), as `inspect`'s summary"),
        _c("operations", "BIGINT", "operations (rows of `operations`)"),
        _c("start_ms", "BIGINT", "the recording's start (epoch ms), else its first record's time"),
        _c("end_ms", "BIGINT", "the recording's end (epoch ms), else its last record's time"),
        _c("indexed_ms", "BIGINT", "when it was indexed (epoch ms)"),
        _DAY,
    )),
    Table("sessions", "one row per client session (a file may hold many: a merged file, one HTTP proxy)", (
        _FILE, _SESSION,
        _c("id", "VARCHAR", "the recording's own session id, when its format has one"),
        _c("http_session", "VARCHAR", "the Mcp-Session-Id (or legacy SSE session id) it used"),
        _c("label", "VARCHAR", "the recording's label"),
        _c("format", "VARCHAR", "the file's format"),
        _c("transport", "VARCHAR", "`stdio`, `streamable-http` or `sse`, when the file says"),
        _c("era", "VARCHAR", "`modern` (2026-07-28: no handshake), `legacy` (the initialize handshake) or `unknown`"),
        _c("protocol", "VARCHAR", "the protocol version (negotiated, else asked)"),
        _c("client_name", "VARCHAR", "clientInfo.name"),
        _c("client_version", "VARCHAR", "clientInfo.version"),
        _c("server_name", "VARCHAR", "serverInfo.name (initialize or server/discover answer, or its _meta)"),
        _c("server_version", "VARCHAR", "serverInfo.version"),
        _c("start_ms", "BIGINT", "its first record's time (epoch ms), else the recording's start"),
        _c("end_ms", "BIGINT", "its last record's time (epoch ms)"),
        _c("in_progress", "BOOLEAN", "its file was still being written when indexed"),
        _c("line", "BIGINT", "where its first record is in the file (line, or entry, as the format counts)"),
        _c("records", "BIGINT", "records"),
        _c("messages", "BIGINT", "JSON-RPC messages"),
        _c("requests", "BIGINT", "requests, either direction"),
        _c("notifications", "BIGINT", "notifications"),
        _c("responses", "BIGINT", "responses, paired or not"),
        _c("orphans", "BIGINT", "responses no request waited for"),
        _c("operations", "BIGINT", "operations"),
        _c("tool_calls", "BIGINT", "tools/call operations"),
        _c("failed", "BIGINT", "operations whose status is `error` or `isError`"),
        _c("unanswered", "BIGINT", "operations whose status is `unanswered`, `cancelled` or `dropped`"),
        _c("tasks", "BIGINT", "operations that became tasks"),
        _DAY,
    )),
    Table("operations", "one row per operation (a request and its answer; a multi-round-trip request; a task with "
          "its polls and result; a listen stream; a server's own request)", (
        _c("id", "BIGINT", "the operation's id in this index (`mcpreel show ID`)"),
        _FILE, _SESSION,
        _c("n", "INTEGER", "its number in the file (0-based, in the order operations opened)"),
        _c("kind", "VARCHAR", "`request`, `multi-round-trip`, `task`, `listen` or `server-request`"),
        _c("dir", "VARCHAR", "`in` (client to server) or `out` (a server's request)"),
        _c("method", "VARCHAR", "the opening request's method"),
        _c("target", "VARCHAR", "the tool or prompt name or resource URI it is about"),
        _c("tool", "VARCHAR", "the tool of a tools/call (`unknown_tool` when it names none), else null"),
        _c("status", "VARCHAR", "`ok`, `isError` (a failed tool result), `error` (a JSON-RPC error), `unanswered`, "
           "`dropped` (held back by the recording proxy and never answered), `cancelled`, `ended` (a listen stream "
           "the client closed), `input_required`, `task` (a task never finished), `fallback` (a refused era probe)"),
        _c("failed", "BOOLEAN", "status is `error` or `isError` (what every verb counts as failed)"),
        _c("code", "BIGINT", "the JSON-RPC error code (status `error`)"),
        _c("message", "VARCHAR", "the error's message or a failed tool's first text (redacted, 500 characters at most)"),
        _c("dropped", "BOOLEAN", "its request was dropped by the recording proxy"),
        _c("marks", "VARCHAR", "control-channel marks on its messages: `edited`, `dropped`, `injected` (comma-separated)"),
        _c("latency_ms", "BIGINT", "opening request to the answer that carries its outcome (null when unanswered)"),
        _c("rounds", "INTEGER", "times the client asked (retries of a multi-round-trip request included)"),
        _c("polls", "INTEGER", "tasks/get polls of a task"),
        _c("task_id", "VARCHAR", "the task's id"),
        _c("task_status", "VARCHAR", "the task's last status"),
        _c("children", "INTEGER", "server requests it caused (sampling, elicitation, roots)"),
        _c("start_ms", "BIGINT", "when its opening request was sent (epoch ms)"),
        _c("end_ms", "BIGINT", "when its last answer came (epoch ms)"),
        _c("request_index", "BIGINT", "record index (0-based) of the opening request in its file"),
        _c("request_line", "BIGINT", "where the opening request is in the file (line, or entry, as the format counts)"),
        _c("response_index", "BIGINT", "record index of the answer that carries its outcome"),
        _c("response_line", "BIGINT", "where that answer is in the file"),
        _c("request_bytes", "BIGINT", "the opening request's size as compact JSON"),
        _c("response_bytes", "BIGINT", "the outcome answer's size as compact JSON"),
        _DAY,
    )),
    Table("tools", "the tool definitions each session saw (tools/list answers), one row per session and distinct "
          "definition", (
        _FILE, _SESSION,
        _c("name", "VARCHAR", "the tool's name"),
        _c("hash", "VARCHAR", "SHA-256 of the definition as canonical JSON (sorted keys): a changed description, "
           "schema or annotation is a new hash"),
        _c("description", "VARCHAR", "its description (redacted)"),
        _c("server_name", "VARCHAR", "the session's serverInfo.name"),
        _c("line", "BIGINT", "where the tools/list answer is in the file"),
        _c("seen_ms", "BIGINT", "when that answer came (epoch ms)"),
        _DAY,
    )),
)


#: tables of runs (``mcpreel replay --db``): history, not derived from the files, so a rebuild of the index
#: (an older :data:`VERSION`) keeps them; a layout change is a new table name, never a rewrite
RUN_TABLES: tuple[Table, ...] = (
    Table("replays", "one row per request replayed by a `mcpreel replay --db FILE` run (a session that could not "
          "run: one row, verdict `error`); appended, never rewritten, and kept when the index is rebuilt", (
        _c("run_id", "VARCHAR", "the run's id (one per `replay` command)"),
        _c("run_ms", "BIGINT", "when the run started (epoch ms)"),
        _c("target", "VARCHAR", "the server replayed against: its URL or command"),
        _c("baseline", "VARCHAR", "what the answers were compared with: `recording`, or the baseline "
           "server's URL or command (`--baseline-url`/`--baseline-command`)"),
        _FILE,
        _SESSION,
        _c("request", "INTEGER", "the request's number in its session's replay (1-based, as `replay` numbers its "
           "rows); null for a session that could not run"),
        _c("method", "VARCHAR", "the request's method"),
        _c("tool", "VARCHAR", "the tool of a tools/call (else the prompt or resource it is about, else null)"),
        _c("verdict", "VARCHAR", "`same`, `changed`, `flaky`, `error` or `unrecorded`"),
        _c("paths", "VARCHAR", "the differing paths, a JSON array (`[]` when none)"),
        _c("recorded_ms", "DOUBLE", "its latency in the recording"),
        _c("replayed_ms", "DOUBLE", "its latency in this run"),
        _c("error", "VARCHAR", "why it has no answer (verdict `error`; redacted, 500 characters at most)"),
        _c("day", "DATE", "the UTC day of `run_ms`"),
    )),
)


def column_names(table: str) -> tuple[str, ...]:
    for t in TABLES + RUN_TABLES:
        if t.name == table:
            return tuple(c.name for c in t.columns)
    raise KeyError(table)


def create_statements() -> list[str]:
    """The DDL of the four tables, the run tables (:data:`RUN_TABLES`) and the ``meta`` table (key, value:
    the schema version, the next id)."""
    out = ["CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)"]
    for t in TABLES + RUN_TABLES:
        cols = ", ".join(f"{c.name} {c.type}" for c in t.columns)
        out.append(f"CREATE TABLE IF NOT EXISTS {t.name} ({cols})")
    return out


def markdown() -> str:
    """The schema as the corpus reference shows it: a table of columns per table (``tests/corpus`` checks they agree)."""
    out: list[str] = []
    for t in TABLES + RUN_TABLES:
        out.append(f"**`{t.name}`**: {t.doc}.\n")
        out.append("| column | type | meaning |")
        out.append("|---|---|---|")
        for c in t.columns:
            out.append(f"| `{c.name}` | {c.type} | {c.doc.replace('|', '/')} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
