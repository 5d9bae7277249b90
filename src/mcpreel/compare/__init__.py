"""Comparing: what "the same" means for two MCP answers, and what changed between two recordings.

:mod:`.normalize` turns an answer into the form that is compared (ids and ``_meta`` ignored, JSON inside
text content compared as JSON, ``--ignore-path`` applied); :mod:`.rules` are the ignores and masks
people write (``replay --compare-rules``) and the rule suggested for a volatile difference;
:mod:`.jsondiff` lists the paths where two values differ (a list result by key: :mod:`.lists`); :mod:`.diff` compares two whole recordings (tools, calls, error status, latency) for
``mcpreel diff``, in one streaming pass (:mod:`.stream`). :func:`diff_files` is the library's entry
point (every call kept); :func:`diff_files_stream` hands the calls out one by one, in flat memory. Neither
prints.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mcpreel.compare.diff import DiffOptions, SessionDiff, diff_sessions
from mcpreel.compare.stream import DiffStream
from mcpreel.formats import open_session

__all__ = ["DiffOptions", "DiffStream", "SessionDiff", "diff_files", "diff_files_stream", "diff_sessions"]


def diff_files_stream(a: str | Path, b: str | Path, *, format: str = "auto",
                      options: DiffOptions | None = None,
                      on_progress: Callable[[int], None] | None = None) -> DiffStream:
    """The recordings in ``a`` and ``b`` (any readable formats) compared as a stream of calls.

    Iterate it for the aligned calls; afterwards its ``result`` has the rest (server, tools, counts).
    ``on_progress`` gets the bytes read of both files together (they are read in step).
    """
    done = [0, 0]

    def part(i: int) -> Callable[[int], None] | None:
        if on_progress is None:
            return None
        report = on_progress

        def update(n: int) -> None:
            done[i] = n
            report(done[0] + done[1])
        return update

    sa, _ = open_session(a, format, on_progress=part(0))
    sb, _ = open_session(b, format, on_progress=part(1))
    return DiffStream(sa, sb, options or DiffOptions())


def diff_files(a: str | Path, b: str | Path, *, format: str = "auto", options: DiffOptions | None = None) -> SessionDiff:
    """Compare the recordings in ``a`` and ``b`` (any readable formats); every aligned call is kept."""
    stream = diff_files_stream(a, b, format=format, options=options)
    calls = list(stream)
    result = stream.result
    result.calls = calls
    return result
