"""Traces: a session normalized into tool-call semantics (``mcpreel import``).

:func:`import_session` is the engine behind ``mcpreel import`` and ``mcpreel trace import-mcp``:
read any session file, normalize it, write the Assay V2 or the simple trace atomically.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mcpreel.errors import UsageError
from mcpreel.fileio import atomic_output
from mcpreel.formats import open_session
from mcpreel.formats.sniff import Detection
from mcpreel.model import Session
from mcpreel.trace.assay_v2 import AssayV2Sink
from mcpreel.trace.normalize import ImportOptions, ImportReport, normalize
from mcpreel.trace.simple import SimpleSink

__all__ = ["TRACE_FORMATS", "ImportOptions", "ImportReport", "import_session", "write_trace"]

TRACE_FORMATS = {"assay-v2": AssayV2Sink, "simple": SimpleSink}


def default_trace_path(path: str | Path) -> Path:
    """``<dir>/<stem>.trace.jsonl`` for an input file."""
    p = Path(path)
    return p.with_name(f"{p.stem}.trace.jsonl")


def write_trace(
    session: Session,
    out_path: str | Path,
    *,
    trace_format: str = "assay-v2",
    options: ImportOptions | None = None,
    warn: Callable[[str], None] | None = None,
) -> ImportReport:
    """Normalize ``session`` into a trace file at ``out_path`` (written atomically, mode 0600)."""
    options = options or ImportOptions()
    try:
        sink_cls = TRACE_FORMATS[trace_format]
    except KeyError:
        raise UsageError(f"unknown trace format {trace_format!r} (known: {', '.join(TRACE_FORMATS)})") from None
    with atomic_output(out_path) as fh:
        sink = sink_cls(fh, options.episode_id, options.prompt, options.test_id)
        return normalize(session, sink, warn=warn)


def import_session(
    path: str | Path,
    out_path: str | Path | None = None,
    *,
    format: str = "auto",
    trace_format: str = "assay-v2",
    options: ImportOptions | None = None,
    warn: Callable[[str], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> tuple[ImportReport, Detection, Path]:
    """Read ``path`` (any session format), normalize it, write the trace. Returns the report,
    which format was read, and where the trace went."""
    options = options or ImportOptions(episode_id=Path(path).stem)
    session, detection = open_session(path, format, strict=options.strict, on_progress=on_progress)
    target = Path(out_path) if out_path is not None else default_trace_path(path)
    if target.exists() and Path(path).exists() and target.resolve() == Path(path).resolve():
        raise UsageError(f"{path}: the trace would overwrite the session it is made from; give another --out-trace")
    report = write_trace(session, target, trace_format=trace_format, options=options, warn=warn)
    report.notes = list(session.info.notes)
    return report, detection, target
