"""Comparing: what "the same" means for two MCP answers, and what changed between two recordings.

:mod:`.normalize` turns an answer into the form that is compared (ids and ``_meta`` ignored, JSON inside
text content compared as JSON, ``--ignore-path`` applied); :mod:`.jsondiff` lists the paths where two
values differ; :mod:`.diff` compares two whole recordings (tools, calls, error status, latency) for
``mcpreel diff``. :func:`diff_files` is the library's entry point; it never prints.
"""

from __future__ import annotations

from pathlib import Path

from mcpreel.compare.diff import DiffOptions, SessionDiff, diff_sessions
from mcpreel.formats import open_session

__all__ = ["DiffOptions", "SessionDiff", "diff_files", "diff_sessions"]


def diff_files(a: str | Path, b: str | Path, *, format: str = "auto", options: DiffOptions | None = None) -> SessionDiff:
    """Compare the recordings in ``a`` and ``b`` (any readable formats)."""
    sa, _ = open_session(a, format)
    sb, _ = open_session(b, format)
    result = diff_sessions(sa.materialize(), sb.materialize(), options)
    result.notes = [f"{side}: {note}" for side, s in (("A", sa), ("B", sb)) for note in s.info.notes]
    return result
