"""The in-memory sessions of every shape (``tests/operations/test_tally.py``'s), written as reels on disk.

What the tests of the one tally read instead of recording real peers: both eras, a task, a listen stream, a
multi-round-trip request, several client sessions in one file (HTTP sessions, a second ``initialize``), a
reused pending id, dropped calls, and merged files (one merged in memory, one made by ``mcpreel merge`` of
three reels). Each is written with the reel writer, so the verbs that take a path (``inspect --json``, the
corpus index) read the same records the in-memory checks read.
"""

from __future__ import annotations

from pathlib import Path

from mcpreel.formats import reel
from mcpreel.merge import merge
from mcpreel.model import Session, SessionInfo
from tests.operations.test_tally import SESSIONS, T0

#: the reels :func:`write_reels` makes by ``mcpreel merge`` (name -> the sessions merged, in order)
MERGED = {"merged-files": ("legacy", "modern", "task")}


def write_reels(folder: Path) -> dict[str, Path]:
    """Every session of :data:`~tests.operations.test_tally.SESSIONS` as ``folder/<name>.jsonl``, and the
    merged files of :data:`MERGED`; by name."""
    folder.mkdir(parents=True, exist_ok=True)
    out: dict[str, Path] = {}
    for name, messages in SESSIONS.items():
        path = folder / f"{name}.jsonl"
        with path.open("wb") as fh:
            reel.write(Session(SessionInfo(started=T0, transport="stdio" if name != "http-sessions" else "http"),
                               list(messages)), fh)
        out[name] = path
    for name, parts in MERGED.items():
        path = folder / f"{name}.jsonl"
        merge([out[p] for p in parts], path)
        out[name] = path
    return out
