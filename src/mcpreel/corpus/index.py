"""``mcpreel index``: every session file under some folders, read once each into the corpus index.

A pass (:func:`index_paths`):

1. **finds** the files under the paths (hidden names and the index's own files left out; links not
   followed) and compares each with what the index knows: the same size, modification time and hash of its
   first 64 KiB is **skipped**; a new or changed one is **read**; one the index knows under these paths that
   is gone is **dropped**;
2. **reads** each file to read with the one reading of a session (:class:`~mcpreel.operations.walk.Walker`,
   fed record by record: what it holds is what is still open), the format sniffed as every verb does
   (:func:`~mcpreel.formats.open_session`); its rows go to spool files on disk as they are made, so memory
   stays flat whatever the corpus' size. A file that cannot be read is kept with its one-line error (the
   rows it had made are cut off the spools) and the pass goes on; a reel with no end line yet is
   ``in-progress`` and is read again once its recorder has written more. With ``jobs`` > 1 the files are
   cut into chunks (runs of files of a few MB, in the files' order) read by the pool's worker processes
   (:mod:`mcpreel._infra.pool`, a process per core), each into batches of spools of its own: the reading
   and the walk are pure Python, and a process per core is the only way a pass gets the machine;
3. **writes** in batches, in this process only (the one writer DuckDB allows): one transaction drops the
   old rows of the batch's files and loads the spools (DuckDB's CSV reader: a hundred times faster than
   inserting rows one by one from Python), on a thread of its own while the next batch is read. Batches
   arrive in the files' order (the pool's results are ordered), and a batch's operation ids, numbered from
   0 where it was read, are moved to where the index stands as it loads: the ids are those one process
   gives. Batches of the pool are loaded a few at a time in one transaction (its chunks are small so its
   workers stay busy to the end; DuckDB writes big transactions best). A pass that stops half-way (a crash,
   Ctrl-C) loses only the batches not yet committed, whose files are read again next time (on Ctrl-C what
   the workers gave back is written first, then they are stopped).

The counts are those of ``inspect --json``: the same walk, and a session's operations, failures, unanswered
calls, tool calls and tasks are the one tally (:class:`~mcpreel.operations.tally.SessionTally`, one per
client session; ``tests/operations/test_tally.py`` checks the three verbs agree), its records and messages
by kind the :class:`~mcpreel.operations.tally.RecordCounts`, its client and server the
:class:`~mcpreel.operations.tally.Identity` the report takes too. Writers take the index's lock (:class:`~mcpreel.corpus.db.IndexLock`).
"""

from __future__ import annotations

import csv
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from mcpreel._infra.fileio import open_regular
from mcpreel.corpus import schema
from mcpreel.corpus.db import IndexLock, connect, lock_path, private_files
from mcpreel.corpus.scrub import stored_error, stored_target
from mcpreel.errors import McpreelError
from mcpreel.formats._source import line_limit
from mcpreel.model import Session
from mcpreel.operations.facts import FAILED
from mcpreel.operations.tally import OK, Identity, RecordCounts, SessionTally
from mcpreel.operations.walk import REQUEST, TASK, Operation, Walker

__all__ = ["IndexStats", "find_files", "index_paths", "watch"]

#: bytes hashed at the head of a file to tell a rewrite of the same size and time
HEAD_BYTES = 65536
#: rows spooled before a batch is written (operations), and files per batch
BATCH_ROWS = 50_000
BATCH_FILES = 2000
#: the pool's tasks: runs of files of about this many bytes (see :func:`_chunks`)
CHUNK_BYTES_MIN = 256 * 1024
CHUNK_BYTES_MAX = 4 * 1024 * 1024
#: operations' rows the writer loads in one transaction when the pool reads (a DuckDB row group and some)
GROUP_ROWS = 150_000
#: what DuckDB may hold in memory while a pass writes (it spills to a temporary file past it)
DUCKDB_MEMORY = "64MB"
#: an error message or a tool description kept in the index, at most
TEXT_MAX = 500


@dataclass
class IndexStats:
    """What one pass did."""

    found: int = 0
    read: int = 0
    skipped: int = 0
    removed: int = 0
    errors: int = 0
    in_progress: int = 0
    sessions: int = 0
    operations: int = 0
    messages: int = 0
    records: int = 0
    bytes: int = 0
    seconds: float = 0.0
    jobs: int = 1  # processes that read the files
    failed_files: list[tuple[str, str]] = field(default_factory=list)  # (path, error) of this pass


# -- finding files ---------------------------------------------------------------------------------


#: files that are never sessions: corpus indexes (this one's or another's), their write-ahead logs and locks
_NOT_SESSIONS = (".duckdb", ".duckdb.wal", ".duckdb.lock")


def find_files(paths: Iterable[Path], exclude: frozenset[Path] = frozenset(),
               on_error: Callable[[Path, OSError], None] | None = None) -> Iterator[Path]:
    """Every regular file under ``paths`` (absolute), in a stable order: a file given by name always, a
    folder's files without hidden names (``.git``, a writer's ``.x.part``), corpus indexes and their locks, and
    without following links. ``on_error(folder, error)`` hears of a folder that could not be listed (no
    permission, a path longer than the system takes): its files are not found."""

    def failed(exc: OSError) -> None:
        if on_error is not None and exc.filename is not None and not isinstance(exc, FileNotFoundError):
            on_error(Path(os.fsdecode(exc.filename)), exc)

    for root in paths:
        root = Path(os.path.abspath(root))
        if root.is_file():
            if root not in exclude:
                yield root
            continue
        for folder, dirs, names in os.walk(root, onerror=failed):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                if name.startswith(".") or name.endswith(_NOT_SESSIONS):
                    continue
                path = Path(folder) / name
                if path in exclude or path.is_symlink() or not path.is_file():
                    continue
                yield path


def head_hash(path: Path) -> str:
    """A digest of the file's head; a regular file only (a FIFO swapped in is refused, not waited on)."""
    with open_regular(path) as fh:
        return hashlib.blake2b(fh.read(HEAD_BYTES), digest_size=16).hexdigest()


def path_text(path: Path | str) -> str:
    """A file's path as the index stores it: as it is, or with the bytes of a name that is not UTF-8 written
    ``\\udcXX`` (as the spools write them: DuckDB holds UTF-8 text only)."""
    text = str(path)
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode()
    return text


#: a todo entry's digest that is an error found while listing (the file is stored with it, not read)
_LISTING_ERROR = "\x00"
#: the longest line (or document read whole) a file of the corpus may hold: past it the file is stored
#: with that error (a 2 GB line is refused as soon as this much of it is read, not held whole)
MAX_LINE_BYTES = 256 << 20


#: the size and times of a file that could not be looked at (stored as zeros beside its error)
_NO_STAT = os.stat_result((0,) * 10, {"st_atime_ns": 0, "st_mtime_ns": 0, "st_ctime_ns": 0})


def _listed(paths: list[Path], own: frozenset[Path]) -> Iterator[tuple[Path, OSError | None]]:
    """:func:`find_files`' files (None), then each folder it could not list with why (stored as an error)."""
    unlisted: list[tuple[Path, OSError]] = []
    for path in find_files(paths, own, lambda folder, exc: unlisted.append((folder, exc))):
        yield path, None
    yield from unlisted


#: the folders of a pass' spools, in the temporary folder: ``mcpreel-index-<pid>-<random>``
_SPOOL_PREFIX = "mcpreel-index-"
#: a spool folder without a process id in its name (an older mcpreel's) is stale past this age
_STALE_SECONDS = 86_400


def sweep_spools(tmp: str | None = None) -> list[Path]:
    """Remove the spool folders that indexers killed mid-pass left in the temporary folder (``kill -9``, an
    out-of-memory kill: their ``finally`` never ran), and return them: a folder is stale when the process
    named in it is gone (or, unnamed, it is a day old). Only this user's folders are looked at."""
    gone: list[Path] = []
    try:
        entries = list(os.scandir(tmp or tempfile.gettempdir()))
    except OSError:
        return gone
    uid = os.getuid() if hasattr(os, "getuid") else None
    for entry in entries:
        if not entry.name.startswith(_SPOOL_PREFIX):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not entry.is_dir(follow_symlinks=False) or (uid is not None and st.st_uid != uid):
            continue
        pid_text = entry.name[len(_SPOOL_PREFIX):].split("-", 1)[0]
        if pid_text.isdigit() and "-" in entry.name[len(_SPOOL_PREFIX):]:
            if _alive(int(pid_text)):
                continue
        elif time.time() - st.st_mtime < _STALE_SECONDS:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        gone.append(Path(entry.path))
    return gone


def _alive(pid: int) -> bool:
    """Is the indexer that made a spool still running (ours, or one the platform seam finds)?"""
    from mcpreel._infra.platform import pid_alive

    return pid == os.getpid() or pid_alive(pid)


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


# -- small conversions -----------------------------------------------------------------------------

_DAYS: dict[int, str] = {}
_MS_PER_DAY = 86_400_000
#: times before 2000-01-01 are a format's relative clock (0 at the start), not a day: the file's day is used;
#: past 9999-12-31 no calendar has them
_EPOCH_FLOOR_MS = 946_684_800_000
_EPOCH_CEILING_MS = 253_402_300_799_999
#: the columns of a plain operation's short row (see :meth:`_FileReader._plain_ok`)
PLAIN_COLUMNS = (("id", "BIGINT"), ("k", "BIGINT"), ("session", "INTEGER"), ("n", "INTEGER"), ("method", "VARCHAR"),
                 ("target", "VARCHAR"), ("start_ms", "BIGINT"), ("end_ms", "BIGINT"), ("request_index", "BIGINT"),
                 ("request_line", "BIGINT"), ("response_index", "BIGINT"), ("response_line", "BIGINT"),
                 ("request_bytes", "BIGINT"), ("response_bytes", "BIGINT"))


def _day(ms: int | None) -> str | None:
    if ms is None or type(ms) is not int or not _EPOCH_FLOOR_MS <= ms <= _EPOCH_CEILING_MS:
        return None
    key = ms // _MS_PER_DAY
    day = _DAYS.get(key)
    if day is None:
        try:
            day = datetime.fromtimestamp(key * 86_400, UTC).date().isoformat()
        except (OverflowError, OSError, ValueError):
            return None
        if len(_DAYS) < 100_000:
            _DAYS[key] = day
    return day


def _int64(value: Any) -> int | None:
    return value if type(value) is int and -(1 << 63) <= value < (1 << 63) else None


def _text(value: Any) -> str | None:
    """A short free text for the index: a string, NULs out, cut to :data:`TEXT_MAX`."""
    if not isinstance(value, str) or not value:
        return None
    if "\x00" in value:
        value = value.replace("\x00", "\\0")
    return value if len(value) <= TEXT_MAX else value[:TEXT_MAX - 1] + "…"


_dumps = orjson.dumps


def _size(payload: Any) -> int | None:
    try:
        return len(orjson.dumps(payload))
    except (TypeError, orjson.JSONEncodeError):
        return None  # a big integer past 64 bits, kept faithfully by a reader: its size is not known here


def _name_version(info: Any) -> tuple[str | None, str | None]:
    if not isinstance(info, dict):
        return None, None
    name, version = info.get("name"), info.get("version")
    return (_text(name), _text(version) if isinstance(version, str) else None)


# -- the spools ------------------------------------------------------------------------------------


class _Spool:
    """One table's rows of the open batch, as CSV in a temporary file (read back by DuckDB's CSV reader,
    which takes less memory and time than its JSON reader for the same rows). Written where the files are
    read (a worker process, or the pass' own), loaded by the one writer: once :meth:`finish`-ed it pickles
    as its path and row count."""

    def __init__(self, folder: Path, table: schema.Table, name: str | None = None) -> None:
        self.table = table
        self.path = folder / f"{name or table.name}.csv"
        self._fh: Any = open(self.path, "w", newline="", encoding="utf-8", errors="backslashreplace")
        # rows end in CRLF: DuckDB's CSV reader reads a lone CR inside a quoted value (a file or tool name
        # may hold one) only when CRLF is the row end it was told
        self.writer: Any = csv.writer(self._fh, lineterminator="\r\n")
        self.rows = 0
        #: added to the ``id`` column when loaded (operations: ids are numbered from 0 where they are read)
        self.id_offset = 0

    def __getstate__(self) -> dict[str, Any]:
        return {"table": self.table, "path": self.path, "rows": self.rows, "id_offset": self.id_offset}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._fh = self.writer = None

    def add(self, row: tuple[Any, ...] | list[Any]) -> None:
        """One row, its values in the table's column order."""
        self.writer.writerow(row)
        self.rows += 1

    def mark(self) -> tuple[int, int]:
        """Where the spool stands (before a file is read: :meth:`rollback` cuts what that file added)."""
        self._fh.flush()
        return self._fh.tell(), self.rows

    def rollback(self, mark: tuple[int, int]) -> None:
        """Back to ``mark``: the rows added since are gone."""
        self._fh.flush()
        self._fh.seek(mark[0])
        self._fh.truncate()
        self.rows = mark[1]

    def finish(self) -> None:
        """Every row on disk and the file closed (before the writer loads it)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = self.writer = None

    def load(self, con: Any) -> None:
        """Insert the spool's rows into its table (finished: :meth:`_Batch.write`)."""
        if self.rows:
            cols = ", ".join(f"'{c.name}': '{c.type}'" for c in self.table.columns)
            select = f"* REPLACE (id + {int(self.id_offset)} AS id)" if self.id_offset else "*"
            con.execute(f"INSERT INTO {self.table.name} SELECT {select} FROM {_read_csv(cols)}", [str(self.path)])

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = self.writer = None


def _read_csv(columns: str) -> str:
    """DuckDB's reading of a spool file (``?``) with ``columns`` (``'name': 'TYPE', ...``)."""
    return (f"read_csv(?, header = false, delim = ',', quote = '\"', escape = '\"', new_line = '\\r\\n', "
            f"auto_detect = false, allow_quoted_nulls = false, columns = {{{columns}}})")


# -- one file --------------------------------------------------------------------------------------


class _SessionAcc:
    """What one client session of the file being read adds up to."""

    __slots__ = ("counts", "tally", "identity", "start", "end", "line", "tools")

    def __init__(self) -> None:
        #: its records and messages by kind, and who spoke in it: counted as ``inspect`` and the report count
        self.counts = RecordCounts()
        self.identity = Identity()
        #: its operations, failed, unanswered (a dropped call nobody answered included: its row's status is
        #: ``dropped``), tool calls and tasks: the tally ``inspect`` and the report take too. The latencies
        #: are on each operation's row, so the tally keeps none (:mod:`mcpreel.operations.tally`)
        self.tally = SessionTally(latencies=False)
        self.start: int | None = None
        self.end: int | None = None
        self.line: int | None = None
        self.tools: set[tuple[str, str]] = set()


class _FileReader:
    """Reads one file into the spools (sessions, operations, tools) and returns its ``files`` row values."""

    def __init__(self, indexer: _Indexer, path: Path, day_fallback: str, key: int = 0) -> None:
        self.indexer = indexer
        self.key = key  # the file's number in the open batch (the plain spool's rows name it so)
        self.path = str(path)
        self.day_fallback = day_fallback
        self.accs: dict[int, _SessionAcc] = {}
        self.operations = 0
        self.redactor: Any = None

    def _acc(self, session: int) -> _SessionAcc:
        acc = self.accs.get(session)
        if acc is None:
            acc = self.accs[session] = _SessionAcc()
        return acc

    def redact(self, text: str | None) -> str | None:
        if text is None:
            return None
        if self.redactor is None:
            from mcpreel.redact import Redactor

            self.redactor = Redactor()
        return _text(self.redactor.text(text))

    def read(self, session: Session, fmt: str) -> dict[str, Any]:
        walker = Walker()
        feed = walker.feed
        accs = self.accs
        records = 0
        op_row = self._operation
        for index, msg in enumerate(session):
            steps = feed(index, msg)
            records += 1
            first = steps[0]
            sid = first.session
            acc = accs.get(sid)
            if acc is None:
                acc = self._acc(sid)
                acc.line = msg.source
            acc.counts.add(msg, steps)
            t = msg.t
            if t is not None:
                if acc.start is None:
                    acc.start = t
                acc.end = t
            if len(steps) == 1 and first.kind == "request":  # the common record: a request, nothing else
                identity = acc.identity
                if identity.client is None:
                    identity.request(first.exchange)
                continue
            for step in steps:
                kind = step.kind
                if kind == "request":
                    acc.identity.request(step.exchange)
                elif kind == "response":
                    ex = step.exchange
                    if ex is not None:
                        if ex.method == "tools/list":
                            self._tools(acc, step.session, step.member, msg.source, t)
                        acc.identity.response(ex.method, step.member)
                elif kind == "operation":
                    op = step.operation
                    if op is not None:
                        op_row(op, acc if op.session == sid else None)
        for step in walker.finish():
            if step.kind == "operation" and step.operation is not None:
                op_row(step.operation)
        clients = walker.client_sessions()
        return self._sessions(session, fmt, clients, records)

    def _tools(self, acc: _SessionAcc, session: int, member: Any, line: int | None, t: int | None) -> None:
        result = member.get("result") if isinstance(member, dict) else None
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(tools, list):
            return
        for tool in tools:
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                continue
            try:
                digest = hashlib.sha256(orjson.dumps(tool, option=orjson.OPT_SORT_KEYS)).hexdigest()
            except (TypeError, orjson.JSONEncodeError):
                digest = hashlib.sha256(repr(sorted(tool.items(), key=lambda kv: str(kv[0]))).encode(
                    "utf-8", "backslashreplace")).hexdigest()
            key = (tool["name"], digest)
            if key in acc.tools:
                continue
            acc.tools.add(key)
            description = tool.get("description")
            self.indexer.tools_rows.append([
                self.path, session, _text(tool["name"]), digest,
                self.redact(description) if isinstance(description, str) else None,
                None, line, t, None])  # server name and day are filled in at the end of the file

    def _operation(self, op: Operation, acc: _SessionAcc | None = None) -> None:
        """One ``operations`` row (spooled at once: the operation is complete, or open at the end);
        ``acc``: its session's counts, when the caller has them at hand."""
        if acc is None:
            acc = self._acc(op.session)
        outcome = acc.tally.add(op)
        opening = op.exchanges[0]
        # OK itself: the tally's plain request (one exchange, answered, no error, no resultType or task, not
        # dropped); its row is a plain one unless a viewer or a rule marked it
        if outcome is OK and not (opening.edited or opening.injected or opening.response_edited
                                  or opening.response_dropped or opening.response_injected):
            response = opening.response
            assert response is not None  # OK is an answered request's
            self._plain_ok(op, opening, response)
            return
        self._general(op, outcome)

    def _plain_ok(self, op: Operation, opening: Any, response: dict[str, Any]) -> None:
        """The common operation: one client request, answered ``ok``, unmarked. Its row is what
        :meth:`_general` would write (``tests/corpus`` compares both), but only the columns that vary go
        to the spool (:data:`PLAIN_COLUMNS`): the load fills in the rest. Most operations of a corpus
        are these, so this is where the indexer's own time goes."""
        session = op.session
        method = opening.method
        if len(method) > TEXT_MAX or "\x00" in method:
            method = _text(method)
        target = opening.target
        if target is not None:
            target = stored_target(target)  # a resource URI's ?api_key= and user:pass@ never stored
        if target is not None and (len(target) > TEXT_MAX or "\x00" in target):
            target = _text(target)
        indexer = self.indexer
        n_id = indexer.next_id
        indexer.next_id = n_id + 1
        size_in: int | None
        size_out: int | None
        try:
            size_in, size_out = len(_dumps(opening.request)), len(_dumps(response))
        except (TypeError, orjson.JSONEncodeError):
            size_in, size_out = _size(opening.request), _size(response)
        plain = indexer.plain  # its writer called here, not through add(): this runs once per operation
        plain.writer.writerow((
            n_id, self.key, session, op.n, method, target, opening.t, opening.t_end, opening.index, opening.source,
            opening.response_index, opening.response_source, size_in, size_out))
        plain.rows += 1
        self.operations += 1

    def _general(self, op: Operation, outcome: tuple[str, Any, str | None]) -> None:
        opening = op.exchanges[0]
        kind = op.kind
        simple = len(op.exchanges) == 1 and not op.children
        if simple:
            final = opening if opening.response is not None else None
        else:
            final = op.final
        status, code, message = outcome
        dropped = opening.dropped
        if dropped and status in ("unanswered", "cancelled"):
            status = "dropped"  # the row says why it went unanswered (the tally counts it unanswered)
        failed = status in FAILED
        method = opening.method
        tool = opening.tool
        message = self.redact(message) if failed else None
        task_id = op.task_id
        if simple and not (opening.edited or dropped or opening.injected or opening.response_edited
                           or opening.response_dropped or opening.response_injected):
            marks = None
        else:
            marks = ",".join(op.marks) or None
        t0 = opening.t
        if simple:
            t1 = opening.t_end
            latency = (t1 - t0 if t1 > t0 else 0) if (t0 is not None and t1 is not None and kind == REQUEST
                                                     and final is not None) else op.latency_ms
            end = t1
        else:
            latency = op.latency_ms
            end = op.t_end
        response = final.response if final is not None else None
        n_id = self.indexer.next_id
        self.indexer.next_id = n_id + 1
        day = _day(t0)
        if day is None:
            day = self.day_fallback
        target = opening.target
        if target is not None:
            target = stored_target(target)
        self.indexer.ops.add((
            n_id, self.path, op.session, op.n, kind, opening.dir, _text(method),
            _text(target) if target is not None else None, _text(tool) if tool is not None else None,
            status, failed, _int64(code), message, dropped, marks, latency, op.rounds,
            op.polls if kind == TASK else 0, _text(str(task_id)) if task_id is not None else None, _text(op.task_status),
            len(op.children), t0, end, opening.index, opening.source,
            final.response_index if final is not None else None,
            final.response_source if final is not None else None,
            _size(opening.request), _size(response) if response is not None else None, day))
        self.operations += 1

    def _sessions(self, session: Session, fmt: str, clients: list[Any], records: int) -> dict[str, Any]:
        info = session.info
        rows = []
        starts: list[int] = []
        ends: list[int] = []
        messages = 0
        for cs in clients:
            acc = self.accs.get(cs.index) or _SessionAcc()
            start = acc.start if acc.start is not None else info.started
            if start is not None:
                starts.append(start)
            if acc.end is not None:
                ends.append(acc.end)
            counts = acc.counts
            messages += counts.messages
            client = _name_version(acc.identity.client)
            if client == (None, None) and cs.client:
                name, _, version = cs.client.partition(" ")
                client = (_text(name), _text(version) or None)
            server = _name_version(acc.identity.server)
            day = _day(start) or self.day_fallback
            rows.append([
                self.path, cs.index, _text(info.id), _text(cs.http_session), _text(info.label), fmt,
                _text(info.transport), cs.era, _text(cs.protocol), client[0], client[1], server[0], server[1],
                start, acc.end, None, acc.line, counts.records, counts.messages, counts.requests, counts.notifications,
                counts.responses, counts.orphans, acc.tally.operations, acc.tally.tool_calls, acc.tally.failed,
                acc.tally.unanswered, acc.tally.tasks,
                day])
        for row in self.indexer.tools_rows:
            acc_server = self.accs.get(row[1])
            row[5] = _name_version(acc_server.identity.server)[0] if acc_server is not None else None
            row[8] = _day(row[7]) or next((r[-1] for r in rows if r[1] == row[1]), self.day_fallback)
        start = info.started if info.started is not None else (min(starts) if starts else None)
        end = info.ended if info.ended is not None else (max(ends) if ends else None)
        return {"rows": rows, "sessions": len(rows), "records": records, "messages": messages,
                "operations": self.operations, "start": start, "end": end}


def _in_progress(session: Session, fmt: str) -> bool:
    """A reel with no end line: its recorder has not finished it (or died before it could)."""
    info = session.info
    return fmt == "reel" and info.ended is None and info.exit_code is None and info.duration_ms is None \
        and info.end_reason is None


# -- the pass --------------------------------------------------------------------------------------


class _Batch:
    """What one transaction writes: the spools of some files read in a row, the file numbers of its plain
    spool, and the paths whose old rows it replaces or drops. Each batch has its own folder of spools,
    made where its files are read (a worker or the pass' own process): :meth:`seal` closes its spools, and
    the sealed batch pickles as paths and counts for the writer."""

    def __init__(self, folder: Path, number: int | str) -> None:
        self.number = number
        self.folder = folder / f"batch-{number}"
        self.folder.mkdir()
        by_name = {t.name: t for t in schema.TABLES}
        self.files = _Spool(self.folder, by_name["files"])
        self.sessions = _Spool(self.folder, by_name["sessions"])
        self.ops = _Spool(self.folder, by_name["operations"])
        self.plain = _Spool(self.folder, by_name["operations"], "plain")
        self.tools = _Spool(self.folder, by_name["tools"])
        self.paths: list[str] = []  # the plain spool's file numbers -> path
        self.days: list[str] = []  # -> the day of a row without a time (the file's)
        self.stale: list[str] = []  # paths whose old rows the batch replaces or drops
        self.file_count = 0
        self.ids = 0  # operation ids used, numbered from 0 (the writer adds where the index stands)
        self.results: list[tuple[str, str | None, dict[str, int] | None]] = []  # per file: status, error, counts
        self.bytes = 0  # the size of its files
        self.spools = (self.files, self.sessions, self.ops, self.plain, self.tools)

    def seal(self) -> _Batch:
        """Its spools finished and closed: ready for the writer (in this process or another)."""
        for spool in self.spools:
            spool.finish()
        return self

    def close(self) -> None:
        for spool in self.spools:
            spool.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def write(self, con: Any, next_id: int) -> None:
        """Write the batch in one transaction: the old rows of its files out, the spools in (its operation ids
        from where the index stood: :attr:`_Spool.id_offset`), the next free id ``next_id``; then its folder goes."""
        try:
            con.execute("BEGIN TRANSACTION")
            try:
                self.load(con)
                con.execute("UPDATE meta SET value = ? WHERE key = 'next_operation_id'", [str(next_id)])
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        finally:
            self.close()

    def load(self, con: Any) -> None:
        """The old rows of its files out, its spools in (inside the caller's transaction)."""
        self.seal()
        if self.stale:
            for table, key in (("operations", "file"), ("sessions", "file"), ("tools", "file"), ("files", "path")):
                con.execute(f"DELETE FROM {table} WHERE list_contains(?, {key})", [self.stale])
        for spool in (self.files, self.sessions, self.ops, self.tools):
            spool.load(con)
        self._load_plain(con)

    @property
    def rows(self) -> int:
        """Its operations' rows (what its load costs, mostly)."""
        return self.ops.rows + self.plain.rows

    def _load_plain(self, con: Any) -> None:
        """The plain operations' short rows, with the columns they all share filled in (see
        :meth:`_FileReader._plain_ok`; the same values :meth:`_FileReader._general` writes)."""
        spool = self.plain
        if spool.rows:
            cols = ", ".join(f"'{name}': '{type_}'" for name, type_ in PLAIN_COLUMNS)
            con.execute(f"""
                INSERT INTO operations
                SELECT p.id + {int(spool.id_offset)}, f.path, p.session, p.n, 'request', 'in', p.method, p.target,
                       CASE WHEN p.method = 'tools/call' THEN coalesce(p.target, 'unknown_tool') END,
                       'ok', false, NULL, NULL, false, NULL,
                       CASE WHEN p.start_ms IS NOT NULL AND p.end_ms IS NOT NULL
                            THEN greatest(p.end_ms - p.start_ms, 0) END,
                       1, 0, NULL, NULL, 0, p.start_ms, p.end_ms, p.request_index, p.request_line,
                       p.response_index, p.response_line, p.request_bytes, p.response_bytes,
                       CASE WHEN p.start_ms BETWEEN {_EPOCH_FLOOR_MS} AND {_EPOCH_CEILING_MS}
                            THEN CAST(make_timestamp(p.start_ms * 1000) AS DATE) ELSE f.day END
                FROM {_read_csv(cols)} p
                JOIN (SELECT unnest(?::VARCHAR[]) AS path, unnest(?::DATE[]) AS day,
                             unnest(range(?::BIGINT)) AS k) f ON p.k = f.k""",
                        [str(spool.path), self.paths, self.days, len(self.paths)])


class _Indexer:
    """Reads files into the open batch (where the files are read: a worker of the pool, or the pass' own
    process); a full batch is handed on, sealed, and the next one opened."""

    def __init__(self, folder: Path, name: str) -> None:
        self.folder = folder
        self.name = name
        self.count = 0
        self.next_id = 0  # of the open batch
        self.tools_rows: list[list[Any]] = []  # the open file's (written when the file is done)
        self._open()

    def _open(self) -> None:
        batch = self.batch = _Batch(self.folder, f"{self.name}-{self.count}")
        self.count += 1
        self.next_id = 0
        # the spools the file reader writes to, by name (looked up once per row)
        self.files, self.sessions, self.ops, self.plain, self.tools = (
            batch.files, batch.sessions, batch.ops, batch.plain, batch.tools)

    def take(self) -> _Batch:
        """The open batch, sealed (its ids counted); a new one is opened."""
        batch = self.batch
        batch.ids = self.next_id
        self._open()
        return batch.seal()

    def read_file(self, path: Path, st: os.stat_result, digest: str, now: int,
                  on_progress: Callable[[int], None] | None) -> tuple[str, str | None, dict[str, Any] | None]:
        """Read one file into the spools; (status, error, counts)."""
        from mcpreel.formats import open_session

        batch = self.batch
        marks = [s.mark() for s in (self.sessions, self.ops, self.plain, self.tools)]
        next_id = self.next_id
        self.tools_rows = []
        day_fallback = _day(st.st_mtime_ns // 1_000_000) or "1970-01-01"
        reader = _FileReader(self, path, day_fallback, len(batch.paths))
        batch.paths.append(path_text(path))
        batch.days.append(day_fallback)
        batch.file_count += 1
        batch.bytes += st.st_size
        fmt: str | None = None
        if digest.startswith(_LISTING_ERROR):  # it could not be listed or opened: stored with that error
            error = stored_error(digest[len(_LISTING_ERROR):])
            self.files.add((str(path), None, st.st_size, st.st_mtime_ns, "", "error", error,
                            0, 0, 0, 0, None, None, now, day_fallback))
            return "error", error, None
        try:
            with line_limit(MAX_LINE_BYTES):
                session, detection = open_session(path, on_progress=on_progress)
                fmt = detection.format
                counts = reader.read(session, fmt)
                in_progress = _in_progress(session, fmt)
        except (McpreelError, OSError, ValueError, TypeError, KeyError, IndexError, AttributeError,
                RecursionError, UnicodeError, OverflowError, MemoryError, AssertionError) as exc:
            for spool, mark in zip((self.sessions, self.ops, self.plain, self.tools), marks, strict=True):
                spool.rollback(mark)
            self.next_id = next_id
            self.tools_rows = []
            error = _one_line(exc, path)
            self.files.add((str(path), fmt, st.st_size, st.st_mtime_ns, digest, "error", error,
                            0, 0, 0, 0, None, None, now, day_fallback))
            return "error", error, None
        for row in counts["rows"]:
            row[15] = in_progress
            self.sessions.add(row)
        for row in self.tools_rows:
            self.tools.add(row)
        self.tools_rows = []
        status = "in-progress" if in_progress else "ok"
        self.files.add((str(path), fmt, st.st_size, st.st_mtime_ns, digest, status, None,
                        counts["sessions"], counts["records"], counts["messages"], counts["operations"],
                        counts["start"], counts["end"], now, _day(counts["start"]) or day_fallback))
        return status, None, counts

    @property
    def full(self) -> bool:
        """Whether the open batch is as big as a batch gets."""
        batch = self.batch
        return batch.ops.rows + batch.plain.rows >= BATCH_ROWS or batch.file_count >= BATCH_FILES


@dataclass
class _Chunk:
    """Files read in a row by one worker of the pool (or by the pass itself), into batches in ``folder``."""

    folder: str
    name: str
    files: list[tuple[Path, os.stat_result, str]]
    now: int


def _read_batches(chunk: _Chunk, on_progress: Callable[[int], None] | None = None) -> Iterator[_Batch]:
    """Read ``chunk``'s files, yielding each batch (sealed, its per-file results in it) as it fills, and the
    last; ``on_progress(bytes read of the chunk)`` as the files are read (in the pass' own process only)."""
    indexer = _Indexer(Path(chunk.folder), chunk.name)
    try:
        done = 0
        for path, st, digest in chunk.files:
            progress = None if on_progress is None else (lambda n, base=done: on_progress(base + n))
            status, error, counts = indexer.read_file(path, st, digest, chunk.now, progress)
            if counts is not None:
                counts = {k: counts[k] for k in ("sessions", "operations", "messages", "records")}
            indexer.batch.results.append((status, error, counts))
            done += st.st_size
            if on_progress is not None:
                on_progress(done)
            if indexer.full:
                yield indexer.take()
        if indexer.batch.file_count:
            yield indexer.take()
    finally:
        indexer.batch.close()  # the open batch (empty, or cut short): its folder goes


def _read_chunk(chunk: _Chunk) -> list[_Batch]:
    """A worker's task: ``chunk`` read, its batches sealed (spools on disk, the rest pickled back)."""
    return list(_read_batches(chunk))


def _worker_init() -> None:
    """Each worker collects cyclic garbage as the CLI's batch verbs do (``cli.output.fewer_collections``):
    reading makes many small objects and no cycles."""
    import gc

    gc.freeze()
    gc.set_threshold(10_000, *gc.get_threshold()[1:])


def _write_group(batches: list[_Batch], con: Any, next_id: int) -> None:
    """Batches in one transaction (the pool's: its chunks are small so that its workers stay busy to the end,
    while DuckDB writes best in big transactions, past a row group of rows straight into the file)."""
    if len(batches) == 1:
        batches[0].write(con, next_id)
        return
    try:
        con.execute("BEGIN TRANSACTION")
        try:
            for batch in batches:
                batch.load(con)
            con.execute("UPDATE meta SET value = ? WHERE key = 'next_operation_id'", [str(next_id)])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    finally:
        for batch in batches:
            batch.close()


class _Writer:
    """The one writer into DuckDB: a batch at a time, in the order handed over, on a thread of its own
    (DuckDB lets go of the interpreter while it loads, so the reading goes on beside it); a failed write is
    raised at the next :meth:`submit` or :meth:`wait`."""

    def __init__(self, con: Any, known: dict[str, Any], removed: list[str]) -> None:
        self.con = con
        self.known = known
        self.removed = removed
        row = con.execute("SELECT value FROM meta WHERE key = 'next_operation_id'").fetchone()
        self.next_id = int(row[0]) if row else 1
        self.batches = 0
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="mcpreel-index-writer")
        self._writing: Future[None] | None = None

    def submit(self, batches: list[_Batch]) -> None:
        """Write ``batches`` in one transaction after the ones before: their files' old rows replaced (and, in
        the first, the rows of the files gone); their operation ids follow the index's."""
        self.wait()
        known = self.known
        for batch in batches:
            batch.stale.extend(p for p in batch.paths if p in known)
            if self.batches == 0:
                batch.stale.extend(self.removed)
            self.batches += 1
            batch.ops.id_offset = batch.plain.id_offset = self.next_id
            self.next_id += batch.ids
        self._writing = self._thread.submit(_write_group, batches, self.con, self.next_id)

    def wait(self) -> None:
        writing, self._writing = self._writing, None
        if writing is not None:
            writing.result()

    def close(self) -> None:
        """Wait for the batch being written (a pass that stops loses only the batches not committed)."""
        try:
            self.wait()
        finally:
            self._thread.shutdown(wait=True)


def _one_line(exc: BaseException, path: Path) -> str:
    if isinstance(exc, McpreelError):
        text = str(exc)
    elif isinstance(exc, OSError):
        text = f"{path}: cannot be read: {exc.strerror or exc}"
    elif isinstance(exc, RecursionError):
        text = f"{path}: nested too deep to read"
    else:
        text = f"{path}: cannot be read: {type(exc).__name__}: {exc}"
    prefix = f"{path}: "
    if text.startswith(prefix):
        text = text[len(prefix):]  # the row names the file
    return stored_error(" ".join(text.split()))  # redacted and cut: it may quote the file


def index_paths(
    paths: list[Path],
    db: Path,
    *,
    wait: bool = True,
    on_wait: Callable[[str], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
    jobs: int = 1,
) -> IndexStats:
    """One indexing pass of ``paths`` into ``db`` (see the module doc), under the writers' lock.

    ``on_start(files_to_read, bytes_to_read)`` is told once what the pass will read, ``on_progress(bytes)``
    how much of it is read so far. ``jobs``: processes that read the files (:mod:`mcpreel._infra.pool`; 1:
    this one); this process is the one writer either way.
    """
    t_start = time.perf_counter()
    db = Path(os.path.abspath(db))
    with IndexLock(db).held(wait=wait, on_wait=on_wait), private_files():  # the DB and its WAL: 0600
        con = connect(db, read_only=False)
        try:
            # flat memory: DuckDB's own buffers bounded (it spills to disk past them), one thread (one process)
            con.execute(f"SET memory_limit = '{DUCKDB_MEMORY}'")
            con.execute("SET threads = 1")
            return _pass(con, _PassPlan(paths, db, t_start, max(1, jobs)), on_start, on_progress)
        finally:
            con.close()


@dataclass
class _PassPlan:
    paths: list[Path]
    db: Path
    t_start: float
    jobs: int


def _chunks(todo: list[tuple[Path, os.stat_result, str]], folder: Path, now: int, jobs: int) -> list[_Chunk]:
    """The files to read cut into the pool's tasks: runs of files of about ``total / (jobs * 8)`` bytes
    (between :data:`CHUNK_BYTES_MIN` and :data:`CHUNK_BYTES_MAX`: the workers stay busy to the end, the
    writer's transactions stay few), at most :data:`BATCH_FILES` files each; one chunk of all with one job."""
    if jobs == 1:
        return [_Chunk(str(folder), "0", todo, now)] if todo else []
    total = sum(st.st_size for _, st, _ in todo)
    target = min(CHUNK_BYTES_MAX, max(CHUNK_BYTES_MIN, total // (jobs * 8)))
    chunks: list[_Chunk] = []
    run: list[tuple[Path, os.stat_result, str]] = []
    size = 0
    for entry in todo:
        run.append(entry)
        size += entry[1].st_size
        if size >= target or len(run) >= BATCH_FILES:
            chunks.append(_Chunk(str(folder), str(len(chunks)), run, now))
            run, size = [], 0
    if run:
        chunks.append(_Chunk(str(folder), str(len(chunks)), run, now))
    return chunks


def _pass(con: Any, plan: _PassPlan, on_start: Callable[[int, int], None] | None,
          on_progress: Callable[[int], None] | None) -> IndexStats:
    stats = IndexStats()
    paths, db = plan.paths, plan.db
    roots = [os.path.abspath(p) for p in paths]
    known = {r[0]: (r[1], r[2], r[3]) for r in con.execute("SELECT path, size, mtime_ns, head_hash FROM files").fetchall()}
    own = frozenset({db, db.with_name(db.name + ".wal"), lock_path(db)})
    todo: list[tuple[Path, os.stat_result, str]] = []
    seen: set[str] = set()
    for path, listing_error in _listed(paths, own):
        key = path_text(path)
        if key in seen:
            continue
        seen.add(key)
        stats.found += 1
        st: os.stat_result | None = None
        try:
            if listing_error is not None:
                raise listing_error
            st = path.stat()
            digest = head_hash(path)
        except FileNotFoundError:
            continue  # gone between the listing and now: the next pass sees it, or sees it gone
        except OSError as exc:  # unreadable, not a regular file any more, a path too long: stored with it
            digest = _LISTING_ERROR + f"cannot be read: {exc.strerror or exc}"
        st = st or _NO_STAT
        old = known.get(key)
        if old is not None and digest.startswith(_LISTING_ERROR) and old == (st.st_size, st.st_mtime_ns, ""):
            stats.skipped += 1  # the same error as the last pass found (it is stored with it)
            continue
        if old is not None and old == (st.st_size, st.st_mtime_ns, digest):
            stats.skipped += 1
            continue
        todo.append((path, st, digest))
    removed = [p for p in known if p not in seen and _under(p, roots)]
    stats.removed = len(removed)
    total = sum(st.st_size for _, st, _ in todo)
    if on_start is not None:
        on_start(len(todo), total)
    sweep_spools()
    folder = Path(tempfile.mkdtemp(prefix=f"{_SPOOL_PREFIX}{os.getpid()}-"))
    writer = _Writer(con, known, removed)
    batches: Iterable[_Batch] = ()
    try:
        chunks = _chunks(todo, folder, int(time.time() * 1000), plan.jobs)
        jobs = min(plan.jobs, len(chunks))
        stats.jobs = max(jobs, 1)
        group_rows = 0  # a transaction per batch
        if jobs <= 1:
            batches = (b for chunk in chunks for b in _read_batches(chunk, on_progress))
            progress = None  # told by the reading, file by file
        else:
            from mcpreel._infra.pool import Pool

            pool = Pool(jobs, initializer=_worker_init)
            batches = _pooled(pool, chunks)
            progress = on_progress
            group_rows = GROUP_ROWS
        done_bytes = 0
        group: list[_Batch] = []
        try:
            for batch in batches:
                _count(stats, batch)
                done_bytes += batch.bytes
                group.append(batch)
                if sum(b.rows for b in group) >= group_rows:
                    full, group = group, []
                    writer.submit(full)
                if progress is not None:
                    progress(done_bytes)
        except KeyboardInterrupt:
            if group:  # what the workers gave back is written before the pass stops
                writer.submit(group)
            raise
        if group:
            writer.submit(group)
        if writer.batches == 0 and removed:  # nothing read: one batch drops the rows of the files gone
            writer.submit([_Indexer(folder, "removed").take()])
        writer.wait()
    finally:
        close = getattr(batches, "close", None)
        if close is not None:
            close()  # the pool's workers stopped (at once on an error or Ctrl-C), a half-read batch dropped
        writer.close()
        shutil.rmtree(folder, ignore_errors=True)
    stats.seconds = time.perf_counter() - plan.t_start
    return stats


def _count(stats: IndexStats, batch: _Batch) -> None:
    """What a batch read, into the pass' counts."""
    for path_text, (status, error, counts) in zip(batch.paths, batch.results, strict=True):
        stats.read += 1
        if status == "error":
            stats.errors += 1
            stats.failed_files.append((path_text, error or ""))
            continue
        if status == "in-progress":
            stats.in_progress += 1
        assert counts is not None
        stats.sessions += counts["sessions"]
        stats.operations += counts["operations"]
        stats.messages += counts["messages"]
        stats.records += counts["records"]
    stats.bytes += batch.bytes


def _pooled(pool: Any, chunks: list[_Chunk]) -> Iterator[_Batch]:
    """The chunks' batches read by the pool's workers, in the chunks' order (so operation ids are those one
    process gives); on any stop (Ctrl-C, an error) the workers stop at once."""
    with pool:
        for batches in pool.map(_read_chunk, chunks):
            yield from batches


def watch(
    paths: list[Path],
    db: Path,
    *,
    interval: float = 2.0,
    on_pass: Callable[[IndexStats], None] | None = None,
    on_wait: Callable[[str], None] | None = None,
    stop: Callable[[], bool] = lambda: False,
    jobs: int = 1,
) -> None:
    """Keep the index current: a pass, then another every ``interval`` seconds until ``stop()``. The lock
    and the database are taken for each pass only, so queries (and another indexer) get in between."""
    while True:
        stats = index_paths(paths, db, wait=True, on_wait=on_wait, jobs=jobs)
        if on_pass is not None:
            on_pass(stats)
        deadline = time.monotonic() + interval
        while time.monotonic() < deadline:
            if stop():
                return
            time.sleep(min(0.2, interval))
        if stop():
            return

