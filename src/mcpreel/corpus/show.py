"""``mcpreel show ID``: an operation's messages, read back from its session file.

The index keeps no bodies, only where they are: the operation's file, its number in the file and the
lines of its request and answer. Showing it reads the file again with the same walk that indexed it, up
to the point where that operation is complete, and hands out the requests and answers of its exchanges
(rounds, polls, result, cancel, and the server's requests it caused), redacted unless asked not to be
(what ``show`` prints is pasted into issues like ``inspect``'s output). A file that changed since it was
indexed is refused: the numbers would name other messages.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mcpreel.corpus.db import connect
from mcpreel.corpus.schema import column_names
from mcpreel.errors import InputError

__all__ = ["show_operation"]


def show_operation(db: Path, op_id: int, *, redact: bool = True) -> dict[str, Any]:
    """The document ``show`` prints: ``operation`` (its index row) and ``messages`` (each request and
    answer of the operation, in the order sent, with its line, direction and role) and ``session`` (the
    server's and client's names and versions and the era of the session it was in)."""
    if not -(2**63) <= op_id < 2**63:  # ids are BIGINTs: a longer number names no operation (DuckDB refuses it)
        raise InputError(f"no operation {op_id} in the index", path=str(db))
    con = connect(db, read_only=True)
    try:
        cols = column_names("operations")
        row = con.execute(f"SELECT {', '.join(cols)} FROM operations WHERE id = ?", [op_id]).fetchone()
        if row is None:
            raise InputError(f"no operation {op_id} in the index", path=str(db))
        op_row = dict(zip(cols, row, strict=True))
        file_row = con.execute("SELECT size, mtime_ns FROM files WHERE path = ?", [op_row["file"]]).fetchone()
        peers = con.execute("SELECT server_name, server_version, client_name, client_version, era FROM sessions "
                            "WHERE file = ? AND session = ?", [op_row["file"], op_row["session"]]).fetchone()
    finally:
        con.close()
    path = Path(op_row["file"])
    try:
        st = os.stat(path)
    except OSError as exc:
        raise InputError(f"the file of operation {op_id} cannot be read: {exc.strerror}", path=str(path)) from exc
    if file_row is None or (st.st_size, st.st_mtime_ns) != (file_row[0], file_row[1]):
        raise InputError("changed since it was indexed: run `mcpreel index` again, then show the operation by its "
                         "new id", path=str(path))
    op = _find(path, op_row["n"])
    if op is None:
        raise InputError(f"operation {op_row['n']} is not in the file any more: run `mcpreel index` again",
                         path=str(path))
    redactor = None
    if redact:
        from mcpreel.redact import Redactor

        redactor = Redactor()
    messages: list[dict[str, Any]] = []
    for ex in sorted((*op.exchanges, *op.children), key=lambda e: e.index):
        request = redactor.value(ex.request) if redactor is not None else ex.request
        messages.append({"line": ex.source, "index": ex.index, "dir": ex.dir, "role": ex.role, "method": ex.method,
                         "message": request})
        if ex.response is not None:
            response = redactor.value(ex.response) if redactor is not None else ex.response
            messages.append({"line": ex.response_source, "index": ex.response_index,
                             "dir": "out" if ex.dir == "in" else "in", "role": "answer", "method": ex.method,
                             "message": response})
    messages.sort(key=lambda m: m["index"])
    op_row["day"] = str(op_row["day"]) if op_row.get("day") is not None else None
    session = dict(zip(("server_name", "server_version", "client_name", "client_version", "era"), peers or (None,) * 5,
                       strict=True))
    return {"operation": op_row, "session": session, "messages": messages, "notifications": len(op.notes),
            "redacted": redact}


def _find(path: Path, n: int) -> Any:
    from mcpreel.formats import open_session
    from mcpreel.operations.walk import Walker

    session, _ = open_session(path)
    walker = Walker()
    for index, msg in enumerate(session):
        for step in walker.feed(index, msg):
            if step.kind == "operation" and step.operation is not None and step.operation.n == n:
                return step.operation
    for step in walker.finish():
        if step.kind == "operation" and step.operation is not None and step.operation.n == n:
            return step.operation
    return None
