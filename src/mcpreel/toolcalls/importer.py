"""Importing a session file into a tool-call trace: the engine behind ``mcpreel import``.

:func:`import_session` is the engine behind ``mcpreel import`` and ``mcpreel trace import-mcp``:
read any session file (through the formats table), normalize it, write the Assay V2 or the simple trace
atomically. It lives apart from the package's ``__init__`` so that the formats table can list the trace
writers as rows without importing the formats table back (no formats <-> toolcalls cycle).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mcpreel._infra.fileio import atomic_output
from mcpreel.errors import UsageError
from mcpreel.formats import open_session
from mcpreel.formats.sniff import Detection
from mcpreel.model import Session
from mcpreel.toolcalls import TRACE_FORMATS
from mcpreel.toolcalls.normalize import ImportOptions, ImportReport, normalize

__all__ = ["ImportOptions", "ImportReport", "default_trace_path", "import_session", "write_trace"]


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
