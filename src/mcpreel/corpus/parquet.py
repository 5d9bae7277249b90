"""``mcpreel export parquet``: the index's tables as Parquet, partitioned by day, for engines past one machine.

``OUT/<table>/day=YYYY-MM-DD/*.parquet`` for each of ``files``, ``sessions``, ``operations``, ``tools``:
Hive-style partitions that Spark, DuckDB, Trino, Athena, BigQuery and pandas all read as a ``day`` column,
so the tables of many machines can land in one bucket (a folder a machine, or one ``OUT`` with a ``host``
prefix of your own) and be read as one. The columns are :mod:`mcpreel.corpus.schema`'s, with the same
types; times are epoch milliseconds, which every engine reads alike.

Each table is written into a temporary folder beside ``OUT`` and then moved into place, so a reader never
sees a half-written table and an export that fails leaves the last one whole.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from mcpreel.corpus import schema
from mcpreel.corpus.db import connect
from mcpreel.errors import UsageError

__all__ = ["export_parquet"]


def export_parquet(db: Path, out: Path) -> dict[str, int]:
    """Write every table of the index at ``db`` under ``out``; return the rows written per table."""
    out = Path(os.path.abspath(out))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{out}: cannot write: {exc.strerror}") from exc
    con = connect(db, read_only=True)
    written: dict[str, int] = {}
    staging = Path(tempfile.mkdtemp(prefix=".parquet-", dir=out))
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
        for table in schema.TABLES:
            final = out / table.name
            old = None
            if final.exists():
                old = staging / f"{table.name}.old"
                os.replace(final, old)
            os.replace(staging / table.name, final)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
    finally:
        con.close()
        with contextlib.suppress(OSError):
            shutil.rmtree(staging)
    return written


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")
