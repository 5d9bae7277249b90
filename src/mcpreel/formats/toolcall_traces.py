"""The normalized traces as session writers, so ``mcpreel convert`` writes them like any other format.

``assay-v2`` and ``simple`` are the import issue's traces (:mod:`mcpreel.toolcalls`); this adapter runs the
same normalizer into the same sinks, so ``mcpreel convert s.json out.trace.jsonl --to assay-v2`` writes
byte for byte what ``mcpreel import s.json --out-trace out.trace.jsonl`` writes. Write only: a trace
keeps nothing but tool semantics.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from mcpreel.errors import UsageError
from mcpreel.model import Session
from mcpreel.toolcalls import TRACE_FORMATS
from mcpreel.toolcalls.normalize import ImportOptions, ImportReport, normalize

LOSSES = "everything but tool semantics (tool calls, their results, tools/list and the final output)"
KEEPS: frozenset[str] = frozenset()


def episode_id_of(session: Session) -> str:
    """The default episode id: the input file's stem, as ``mcpreel import`` chooses it."""
    info = session.info
    if info.path:
        return Path(info.path).stem
    return info.label or info.id or "mcp_episode"


def write(
    session: Session,
    out: BinaryIO,
    *,
    trace_format: str = "assay-v2",
    options: ImportOptions | None = None,
    warn: Callable[[str], None] | None = None,
    **_: Any,
) -> ImportReport:
    """Normalize ``session`` into ``out`` (which must be seekable: the normalizer may restart once)."""
    try:
        sink_cls = TRACE_FORMATS[trace_format]
    except KeyError:
        raise UsageError(f"unknown trace format {trace_format!r} (known: {', '.join(TRACE_FORMATS)})") from None
    options = options or ImportOptions(episode_id=episode_id_of(session))
    sink = sink_cls(out, options.episode_id, options.prompt, options.test_id)
    return normalize(session, sink, warn=warn)
