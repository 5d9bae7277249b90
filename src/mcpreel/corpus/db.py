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

__all__ = ["DEFAULT_SESSIONS_DIR", "IndexLock", "connect", "default_db", "default_paths", "lock_path"]

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


def connect(db: Path, *, read_only: bool, wait_s: float = READ_RETRY_S) -> Any:
    """A DuckDB connection to ``db``: read-only ones need the index to exist and to be of this schema
    version; a writable one creates the tables (and rebuilds an index of an older version: it is derived
    from the files, which are read again)."""
    duckdb = _import_duckdb()
    if read_only and not db.exists():
        raise InputError("no corpus index here: run `mcpreel index` first (or give --db)", path=str(db))
    deadline = time.monotonic() + wait_s
    while True:
        try:
            con = duckdb.connect(str(db), read_only=read_only)
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
        _check_schema(con, db, read_only)
    except BaseException:
        con.close()
        raise
    return con


def _version(con: Any) -> int | None:
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    if "meta" not in tables:
        return None if not tables else -1
    row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    try:
        return int(row[0]) if row else -1
    except ValueError:
        return -1


def _check_schema(con: Any, db: Path, read_only: bool) -> None:
    version = _version(con)
    if version == schema.VERSION:
        return
    if version is not None and version > schema.VERSION:
        raise InputError(f"made by a newer mcpreel (corpus schema {version}; this one writes {schema.VERSION})",
                         path=str(db))
    if read_only:
        raise InputError(f"corpus schema {version} is not this mcpreel's ({schema.VERSION}): run `mcpreel index` to "
                         f"rebuild it", path=str(db))
    if version is not None:  # an older index (or a database that is not one): rebuilt from the files
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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
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
