"""Every replay run kept in the corpus: ``mcpreel replay --db FILE`` appends its verdicts to ``replays``.

A run's verdicts vanish with its terminal unless they are kept; kept beside the index, one query answers
"which tools became flaky since last week" (the corpus reference's example, `mcpreel help corpus`). The table is described in
:data:`mcpreel.corpus.schema.RUN_TABLES`; rows come as tuples in its column order (the caller, the fleet,
makes them). Appending takes the index's writers' lock (:class:`~mcpreel.corpus.db.IndexLock`, waiting for
an indexer that holds it) and one transaction, so a run is in the table whole or not at all. A database that
does not exist yet is made (an empty index with the table); one whose ``replays`` table has another layout
is refused, never rewritten.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mcpreel.corpus import schema
from mcpreel.corpus.db import IndexLock, connect
from mcpreel.errors import InputError

__all__ = ["TABLE", "append_rows"]

#: the table a run is appended to
TABLE = "replays"


def append_rows(db: Path, rows: Sequence[Sequence[Any]], *, on_wait: Callable[[str], None] | None = None) -> int:
    """Append ``rows`` (in :func:`~mcpreel.corpus.schema.column_names` order) to ``replays`` in ``db``, in
    one transaction; returns how many."""
    table = next(t for t in schema.RUN_TABLES if t.name == TABLE)
    names = [c.name for c in table.columns]
    db.parent.mkdir(parents=True, exist_ok=True)
    with IndexLock(db).held(wait=True, on_wait=on_wait):
        con = connect(db, read_only=False)
        try:
            con.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} ({', '.join(f'{c.name} {c.type}' for c in table.columns)})")
            have = [r[0] for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
                [TABLE]).fetchall()]
            if have != names:
                raise InputError(f"its {TABLE} table has another layout ({', '.join(have)}) than this mcpreel "
                                 f"writes ({', '.join(names)})", path=str(db))
            con.execute("BEGIN TRANSACTION")
            try:
                if rows:
                    con.executemany(f"INSERT INTO {TABLE} VALUES ({', '.join('?' for _ in names)})",
                                    [list(r) for r in rows])
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        finally:
            con.close()
    return len(rows)
