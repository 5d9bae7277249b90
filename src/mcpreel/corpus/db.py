"""The index database: where it lives, opening it (schema made or checked), and the writers' lock.

DuckDB lets one process write a database file at a time and refuses a second with a terse error. The
indexer takes ``<db>.lock`` first (an OS lock on a file, released when the process ends, however it ends),
with the holder's pid and start written in it, so a second indexer can wait for it and say whom it waits
for, or stop at once naming it; neither ever writes while the other does. Readers (``query``, ``sessions``,
``show``, the corpus report) open the database read-only and retry for a few seconds while a writer holds
it: ``index --watch`` closes the database between its passes, so they get in.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mcpreel.corpus import schema
from mcpreel.errors import InputError, UsageError

__all__ = ["DEFAULT_SESSIONS_DIR", "SANDBOX", "IndexLock", "connect", "default_db", "default_paths", "lock_path",
           "private_files"]

#: where ``mcpreel wrap`` records by default (``wrap --sessions-dir``), the default of ``index``
DEFAULT_SESSIONS_DIR = Path("~/.mcpreel/sessions")
#: how long a reader retries while a writer holds the database
READ_RETRY_S = 10.0


def default_paths() -> list[Path]:
    return [DEFAULT_SESSIONS_DIR.expanduser()]


def default_db() -> Path:
    """``corpus.duckdb`` beside the folder ``wrap`` records into (``~/.mcpreel/corpus.duckdb``)."""
    return DEFAULT_SESSIONS_DIR.expanduser().parent / "corpus.duckdb"


def lock_path(db: Path) -> Path:
    return db.with_name(db.name + ".lock")


def _import_duckdb() -> Any:
    try:
        import duckdb
    except ImportError as exc:  # pragma: no cover - a main dependency
        raise UsageError("the corpus needs duckdb: pip install duckdb") from exc
    return duckdb


#: a read connection's DuckDB settings: no file but the database (no ``COPY … TO``, ``read_text``, ``glob``,
#: ``ATTACH``: a shared index whose tables are views must not read files as whoever opens it), no
#: extension installed or loaded behind the user's back; then the settings are locked against ``SET``
SANDBOX = {"enable_external_access": False, "autoload_known_extensions": False,
           "autoinstall_known_extensions": False}


@contextlib.contextmanager
def private_files() -> Iterator[None]:
    """Files and folders made meanwhile are the user's alone (umask 077: the database, its WAL -- which
    DuckDB makes again after every checkpoint --, the Parquet files: 0600 in 0700 folders), as every
    other output of mcpreel is. Process-wide while it lasts: held around one indexing pass or export."""
    old = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(old)


def connect(db: Path, *, read_only: bool, wait_s: float = READ_RETRY_S, files: bool = False) -> Any:
    """A DuckDB connection to ``db``: read-only ones need the index to exist and to be of this schema
    version; a writable one creates the tables (and rebuilds an index of an older version: it is derived
    from the files, which are read again), and refuses a database that is not an index (it drops nothing).

    A read-only connection is sandboxed (:data:`SANDBOX`: it reads the index and nothing else) unless
    ``files`` (the Parquet export, which writes its own files with ``COPY``)."""
    duckdb = _import_duckdb()
    if read_only and not db.exists():
        raise InputError("no corpus index here: run `mcpreel index` first (or give --db)", path=str(db))
    config = dict(SANDBOX) if read_only and not files else {}
    if not read_only and not db.exists():
        _make_folder(db.parent)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            con = duckdb.connect(str(db), read_only=read_only, config=config)
            break
        except duckdb.IOException as exc:
            text = str(exc)
            if "lock" not in text.lower() or time.monotonic() >= deadline:
                raise InputError(f"cannot open the corpus index: {text.splitlines()[0]}", path=str(db)) from exc
            time.sleep(0.2)
        except duckdb.Error as exc:
            raise InputError(f"not a corpus index (DuckDB cannot open it: {str(exc).splitlines()[0]})",
                             path=str(db)) from exc
    try:
        con.execute("SET enable_progress_bar = false")  # DuckDB's own bar would print on stdout: ours is on stderr
        if config:
            con.execute("SET lock_configuration = true")  # a query cannot SET its way out of the sandbox
        _check_schema(con, db, read_only)
        if not read_only:
            with contextlib.suppress(OSError):
                os.chmod(db, 0o600)  # an index made by an older mcpreel (0644) becomes the user's alone
    except BaseException:
        con.close()
        raise
    return con


def _make_folder(folder: Path) -> None:
    """The database's folder, and any above it that are missing, made 0700 (only those made here); a
    folder that cannot be made (read-only, a file in the way) is one line naming it, not a traceback."""
    missing: list[Path] = []
    at = Path(os.path.abspath(folder))
    while not at.exists() and at.parent != at:
        missing.append(at)
        at = at.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise _cannot_write(folder, exc) from exc


def _cannot_write(where: Path, exc: OSError) -> UsageError:
    return UsageError(f"{where}: cannot write the index there: {exc.strerror or exc} (give another place with "
                      f"--db FILE)")


def _version(con: Any) -> int | None:
    """The index's schema version; None for an empty database; -1 for one that is not an index (tables,
    but no ``meta`` table of ours holding a ``schema_version``, or a view where a table of ours belongs)."""
    import duckdb

    kinds = dict(con.execute("SELECT table_name, table_type FROM information_schema.tables").fetchall())
    tables = set(kinds)
    if "meta" not in tables:
        return None if not tables else -1
    if any(kinds.get(name, "BASE TABLE") != "BASE TABLE" for name in ("meta", *(t.name for t in schema.TABLES))):
        return -1  # an index's tables are tables: a view in their place (reading files, say) is someone else's
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except duckdb.Error:  # a `meta` table of someone else's, without our columns
        return -1
    try:
        return int(row[0]) if row else -1
    except (TypeError, ValueError):
        return -1


def _check_schema(con: Any, db: Path, read_only: bool) -> None:
    version = _version(con)
    if version == schema.VERSION:
        return
    if version is not None and version > schema.VERSION:
        raise InputError(f"made by a newer mcpreel (corpus schema {version}; this one writes {schema.VERSION})",
                         path=str(db))
    if version == -1:
        raise InputError("not a corpus index (a DuckDB database without mcpreel's `meta` table, or with views where "
                         "its tables belong): nothing was changed; give --db a new file or an index", path=str(db))
    if read_only:
        raise InputError(f"corpus schema {version} is not this mcpreel's ({schema.VERSION}): run `mcpreel index` to "
                         f"rebuild it", path=str(db))
    if version is not None:  # an older index: rebuilt from the files
        for name in ("meta", *(t.name for t in schema.TABLES)):
            con.execute(f"DROP TABLE IF EXISTS {name}")
    for statement in schema.create_statements():
        con.execute(statement)
    con.execute("INSERT INTO meta VALUES ('schema_version', ?), ('next_operation_id', '1')", [str(schema.VERSION)])


class IndexLock:
    """The writers' lock, ``<db>.lock``: an exclusive OS lock on the file (``fcntl.flock``, or ``msvcrt``
    on Windows) held for one indexing pass; the file names its holder."""

    def __init__(self, db: Path) -> None:
        self.path = lock_path(db)
        self._fd: int | None = None

    def holder(self) -> str:
        with contextlib.suppress(OSError):
            text = self.path.read_text(encoding="utf-8", errors="replace").strip()
            if text:
                return text
        return "another indexer"

    def _try(self, fd: int) -> bool:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            import msvcrt

            try:
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
                return True
            except OSError:
                return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            return False

    def acquire(self, *, wait: bool, on_wait: Callable[[str], None] | None = None) -> None:
        """Take the lock; ``wait=False`` raises naming the holder at once, else waits (telling ``on_wait``
        once whom it waits for)."""
        _make_folder(self.path.parent)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError as exc:  # a read-only folder: said before DuckDB is asked to write there
            raise _cannot_write(self.path.parent, exc) from exc
        told = False
        while not self._try(fd):
            if not wait:
                os.close(fd)
                raise UsageError(f"{self.path}: the index is being written by {self.holder()}; "
                                 f"run again when it is done (or without --no-wait to wait for it)")
            if not told and on_wait is not None:
                on_wait(f"waiting for {self.holder()} (holding {self.path})")
                told = True
            time.sleep(0.2)
        os.ftruncate(fd, 0)
        os.write(fd, f"indexer pid {os.getpid()} since {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n"
                 .encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing the descriptor releases the lock
            self._fd = None

    @contextlib.contextmanager
    def held(self, *, wait: bool, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        self.acquire(wait=wait, on_wait=on_wait)
        try:
            yield
        finally:
            self.release()
