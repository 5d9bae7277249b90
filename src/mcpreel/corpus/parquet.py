"""``mcpreel export parquet``: the index's tables as Parquet, partitioned by day, for engines past one machine.

``OUT/<table>/day=YYYY-MM-DD/*.parquet`` for each of ``files``, ``sessions``, ``operations``, ``tools``:
Hive-style partitions that Spark, DuckDB, Trino, Athena, BigQuery and pandas all read as a ``day`` column,
so the tables of many machines can land in one bucket (a folder a machine, or one ``OUT`` with a ``host``
prefix of your own) and be read as one. The columns are :mod:`mcpreel.corpus.schema`'s, with the same
types; times are epoch milliseconds, which every engine reads alike.

Each table is written into a temporary folder inside ``OUT`` and then moved into place, so a reader never
sees a half-written table and an export that fails leaves the last one whole. ``OUT`` is the user's
folder (``-o .`` in a repository with a ``tools/`` folder is a mistake, not a wish to lose it): the export
writes :data:`MARKER` in it, and replaces a table folder only where that file says an export wrote it;
a ``files``/``sessions``/``operations``/``tools`` there without it is refused, and nothing is touched.
The files are the user's alone (0600 in 0700 folders), as the index is.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from mcpreel.corpus import schema
from mcpreel.corpus.db import connect, private_files
from mcpreel.errors import UsageError

__all__ = ["MARKER", "export_parquet"]


#: the file an export leaves in ``OUT``: the table folders beside it are the export's to replace
MARKER = ".mcpreel-parquet"


def export_parquet(db: Path, out: Path) -> dict[str, int]:
    """Write every table of the index at ``db`` under ``out``; return the rows written per table.

    Refuses (a usage error, nothing changed) when ``out`` holds a table's folder that no export wrote."""
    out = Path(os.path.abspath(out))
    with private_files():
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"{out}: cannot write: {exc.strerror}") from exc
        _check_owned(out)
        con = connect(db, read_only=True, files=True)
        written: dict[str, int] = {}
        try:
            staging = Path(tempfile.mkdtemp(prefix=".parquet-", dir=out))
        except OSError as exc:
            con.close()
            raise UsageError(f"{out}: cannot write: {exc.strerror}") from exc
        try:
            for table in schema.TABLES:
                target = staging / table.name
                (count,) = con.execute(f"SELECT count(*) FROM {table.name}").fetchone()
                if count:
                    con.execute(f"COPY (SELECT * FROM {table.name}) TO '{_quoted(target)}' "
                                f"(FORMAT parquet, PARTITION_BY (day), COMPRESSION zstd)")
                else:
                    target.mkdir()
                written[table.name] = int(count)
            _check_owned(out)  # again: a folder made meanwhile is still the user's
            marker = out / MARKER
            if not marker.exists():
                marker.write_text("written by `mcpreel export parquet`: the table folders beside this file are "
                                  "replaced by the next export\n", encoding="utf-8")
            for table in schema.TABLES:
                final = out / table.name
                old = None
                if os.path.lexists(final):
                    old = staging / f"{table.name}.old"
                    os.replace(final, old)
                os.replace(staging / table.name, final)
        except OSError as exc:
            raise UsageError(f"{out}: cannot write the Parquet tables: {exc.strerror or exc}") from exc
        finally:
            con.close()
            with contextlib.suppress(OSError):
                shutil.rmtree(staging)
    return written


def _check_owned(out: Path) -> None:
    """Refuse ``out`` when a table's folder (or file) is there and no export's marker says it is ours."""
    if (out / MARKER).is_file():
        return
    found = [t.name for t in schema.TABLES if os.path.lexists(out / t.name)]
    if found:
        raise UsageError(f"{out}: {', '.join(found)} already there and not written by `mcpreel export parquet` "
                         f"(no {MARKER}): nothing was changed; give -o a new or empty folder")


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")
