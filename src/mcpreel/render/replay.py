"""Drawing a :class:`~mcpreel.replay.verify.ReplayReport`: rich renderables, JSON, JUnit XML.

:func:`renderables` yields the pieces for the CLI to print on its console (plain when piped: rich drops
the colours itself); :func:`to_json` and :func:`to_junit` give the ``--output`` and ``--junit`` documents.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from mcpreel._infra import jsonio
from mcpreel.render.junit import Case, junit_xml
from mcpreel.replay.verify import ReplayReport

__all__ = ["ms", "renderables", "to_json", "to_junit"]

_STYLE = {"same": "green", "different": "bold red", "error": "bold magenta", "unrecorded": "yellow"}
#: differences shown per item on a terminal (the JSON and JUnit documents hold them all)
MAX_DIFFS = 20


def ms(value: float | int | None) -> str:
    """A duration for a table cell: one decimal below 10 ms, "-" when unknown."""
    if value is None:
        return "-"
    return f"{value:.1f}" if isinstance(value, float) and value < 10 else f"{value:.0f}"


def renderables(report: ReplayReport) -> Iterator[RenderableType]:
    """The report as rich renderables, to print on a console as one group."""
    parts: list[RenderableType] = []
    if report.handshake:
        parts.append(Text(report.handshake, style="dim"))
    parts.append(Text(f"replay of {report.session} against {report.target} ({report.transport})", style="bold"))
    many = len(report.sessions) > 1
    if many:
        lines = Text(f"{len(report.sessions)} client sessions, each on a fresh connection:\n", style="dim")
        for s in report.sessions:
            lines.append(f"  {s['label']} -> replayed in the {s['replayed_in']} era, {s['requests']} requests\n")
        parts.append(lines)
    elif report.era is not None and report.recorded_era not in (None, "unknown"):
        parts.append(Text(_era_line(report), style="dim"))
    table = Table()
    table.add_column("#", justify="right")
    if many:
        table.add_column("session", justify="right")
    table.add_column("method")
    table.add_column("tool")
    table.add_column("status")
    table.add_column("recorded ms", justify="right")
    table.add_column("new ms", justify="right")
    for r in report.results:
        cells: list[RenderableType] = [str(r.index), *([str(r.session or "")] if many else [])]
        table.add_row(*cells, r.method, r.tool or "", Text(r.status, style=_STYLE.get(r.status, "")),
                      ms(r.recorded_duration_ms), ms(r.duration_ms))
    parts.append(table)
    for r in report.results:
        if r.status == "different":
            lines = Text(f"#{r.index} {r.method}{' ' + r.tool if r.tool else ''}: {len(r.diff)} differences\n",
                         style="bold")
            for d in r.diff[:MAX_DIFFS]:
                lines.append(f"  {d.describe(100)}\n")
            if len(r.diff) > MAX_DIFFS:
                lines.append(f"  … {len(r.diff) - MAX_DIFFS} more (see --output)\n")
            parts.append(lines)
        elif r.status == "error":
            parts.append(Text(f"#{r.index} {r.method}{' ' + r.tool if r.tool else ''}: {r.error}", style="magenta"))
    for asked in report.unmatched_server_requests:
        parts.append(Text(f"server request {asked.method} not in the recording: {asked.error}", style="red"))
    for note in report.notes:
        parts.append(Text(note, style="dim"))
    style = "bold green" if report.ok else "bold red"
    parts.append(Text(report.summary(), style=style))
    yield Group(*parts)


def _era_line(report: ReplayReport) -> str:
    names = {"modern": "2026-07-28 era", "legacy": "handshake era"}
    used = names.get(report.era or "", report.era or "")
    if report.recorded_era == report.era:
        return f"replayed in the {used}, as recorded"
    return f"recorded in the {names.get(report.recorded_era or '', report.recorded_era)}, replayed in the {used}"


def to_json(report: ReplayReport) -> str:
    """The results as one JSON document (newline-terminated)."""
    return jsonio.dumps_str(report.to_json()) + "\n"


def to_junit(report: ReplayReport, suite: str) -> str:
    """One case per replayed request, plus one per server request the recording could not answer."""
    classname = f"mcpreel.replay.{report.session or 'session'}"
    cases = []
    for r in report.results:
        name = f"#{r.index} {r.method}" + (f" {r.tool}" if r.tool else "")
        case = Case(name, classname, (r.duration_ms or 0.0) / 1000.0)
        if r.status == "different":
            case.failure = f"{len(r.diff)} differences"
            case.details = "\n".join(d.describe(200) for d in r.diff) or None
        elif r.status == "error":
            case.error = r.error or "no answer"
        elif r.status == "unrecorded":
            case.skipped = "the recording holds no answer to compare with"
        cases.append(case)
    for s in report.unmatched_server_requests:
        cases.append(Case(f"server request {s.method}", classname, failure=s.error or "not in the recording"))
    return junit_xml(suite, cases)
