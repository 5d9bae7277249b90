"""Drawing a :class:`~mcpreel.replay.results.ReplayReport`: rich renderables, JSON, JUnit XML.

:func:`renderables` yields the pieces for the CLI to print on its console (plain when piped: rich drops
the colours itself); :func:`to_json` and :func:`to_junit` give the ``--output`` and ``--junit`` documents.

The CLI draws results as they come (the report's ``sink``), none of them kept, in the order a reader
wants them: :func:`heading` first (what is replayed against what, which sessions, in which era: a
:class:`~mcpreel.replay.ReplayPlan`, known before the first request), then :func:`result_lines`, one
result's row and, when it differs, its differences (printed only for results that are not the same
unless ``--all``), then :func:`closing` (the handshake, notes and the summary line); :class:`JsonSpool` and :func:`junit_case` write
the ``--output`` and ``--junit`` documents from a spool on disk, the same documents :func:`to_json` and
:func:`to_junit` give.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from typing import BinaryIO

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from mcpreel._infra import jsonio
from mcpreel._infra.timeutil import duration_ms_text
from mcpreel.eras import era_name
from mcpreel.render.junit import Case, junit_xml
from mcpreel.replay import ReplayPlan
from mcpreel.replay.results import ReplayReport, RequestResult

__all__ = ["JsonSpool", "closing", "heading", "junit_case", "ms", "noise_lines", "renderables", "result_lines", "server_cases",
           "suggested_lines", "to_json", "to_junit"]

_STYLE = {"same": "green", "changed": "bold red", "flaky": "yellow", "error": "bold magenta", "unrecorded": "yellow",
          "definition changed": "bold red"}
#: differences shown per item on a terminal (the JSON and JUnit documents hold them all)
MAX_DIFFS = 20


def ms(value: float | int | None) -> str:
    """A duration for a table cell, as every surface shows one (:func:`~mcpreel._infra.timeutil.duration_ms_text`)."""
    return duration_ms_text(value)


def renderables(report: ReplayReport) -> Iterator[RenderableType]:
    """The report as rich renderables, to print on a console as one group."""
    parts = _heading(report)
    many = len(report.sessions) > 1
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
        detail = _detail(r)
        if detail:
            parts.append(Text("\n".join(detail) + ("\n" if r.status == "changed" else ""),
                              style="bold" if r.status == "changed" else "magenta"))
    for asked in report.unmatched_server_requests:
        parts.append(Text(f"server request {asked.method} not in the recording: {asked.error}", style="red"))
    for note in report.notes:
        parts.append(Text(note, style="dim"))
    style = "bold green" if report.ok else "bold red"
    parts.append(Text(report.summary(), style=style))
    yield Group(*parts)


def _detail(r: RequestResult) -> list[str]:
    """What a result that is not the same has to say: its differences, or its error."""
    name = f"#{r.index} {r.method}{' ' + r.tool if r.tool else ''}"
    if r.status == "changed":
        lines = [f"{name}: {len(r.diff)} difference{'' if len(r.diff) == 1 else 's'}"] + [f"  {d.describe(100)}" for d in r.diff[:MAX_DIFFS]]
        if len(r.diff) > MAX_DIFFS:
            lines.append(f"  … {len(r.diff) - MAX_DIFFS} more (see --output)")
        return lines + suggested_lines(r) + noise_lines(r)
    if r.status == "flaky":
        return [f"{name}: varies between runs, not a change"] + noise_lines(r) + [f"  {n}" for n in r.notes
                                                                                 if n.startswith("no answer in")]
    if r.status in ("error", "definition changed"):
        return [f"{name}: {r.error}"]
    return []


def noise_lines(r: RequestResult) -> list[str]:
    """The paths that varied between the samples of a side (noise: not counted as changes)."""
    if not r.noise:
        return []
    shown = r.noise[:MAX_DIFFS]
    lines = [f"  varies: {n['path']} (differed from the recording in {n['varied']} of {n['samples']} answers)"
             for n in shown]
    if len(r.noise) > MAX_DIFFS:
        lines.append(f"  … {len(r.noise) - MAX_DIFFS} more (see --output)")
    return lines


def suggested_lines(r: RequestResult) -> list[str]:
    """The rules a result suggests for its differences that look volatile, as lines to paste under ``rules:``
    of a ``--compare-rules`` file."""
    if not r.suggestions:
        return []
    kinds = sorted({rule.origin for rule in r.suggestions if rule.origin})
    lines = [f"  looks volatile ({', '.join(kinds)}); to leave it out, add to a --compare-rules file under rules:"]
    return lines + [f"    {rule.describe()}" for rule in r.suggestions]


def result_lines(r: RequestResult) -> list[str]:
    """One result as plain lines: its row (number, session, method, tool, status, recorded and new ms),
    then its differences or its error."""
    session = f"session {r.session}  " if r.session is not None else ""
    row = (f"  #{r.index}  {session}{r.method}{'  ' + r.tool if r.tool else ''}  {r.status}  "
           f"ms {ms(r.recorded_duration_ms)} -> {ms(r.duration_ms)}")
    detail = _detail(r)
    if detail and r.status == "changed":
        detail = detail[1:]  # "#3 tools/call echo: 1 difference": the row above names it; each difference once
    elif detail:
        detail = [detail[0].split(": ", 1)[-1], *detail[1:]]  # the error or "varies", without the name again
    return [row] + [f"    {line.removeprefix('  ')}" for line in detail]




def heading(plan: ReplayPlan) -> Iterator[RenderableType]:
    """What is said before the first row: the file against the target, and the client sessions replayed
    (several: each on a fresh connection) or the one session, with the era each is replayed in."""
    parts: list[RenderableType] = [
        Text(f"replay of {plan.session} against {plan.target} ({plan.transport})", style="bold")]
    pace = ("; pacing: as recorded (each message no earlier than its recorded time)" if plan.pace == "recorded"
            else "")
    if len(plan.sessions) > 1:
        lines = Text(f"{len(plan.sessions)} client sessions, each on a fresh connection{pace}:\n", style="dim")
        for s in plan.sessions:
            lines.append(f"  {s['label']} -> replayed in the {era_name(s['replay_in'])}, "
                         f"{s['requests']} request{'' if s['requests'] == 1 else 's'}\n")
        parts.append(lines)
    elif plan.sessions:
        s = plan.sessions[0]
        which = f"{s['label']} (of {plan.of})" if plan.of > 1 else s["label"]
        recorded, used = s["era"], s["replay_in"]
        name = era_name(used)
        if recorded == used:
            how = f"replayed in the {name}, as recorded"
        elif recorded in ("legacy", "modern"):
            how = f"recorded in the {era_name(recorded)}, replayed in the {name}"
        else:
            how = f"replayed in the {name} (the recording does not say its era)"
        parts.append(Text(which, style="dim"))
        parts.append(Text(how + pace, style="dim"))
    if plan.samples is not None:
        k, b = plan.samples.get("target", 1), plan.samples.get("baseline", 0)
        parts.append(Text(f"{k} run{'s' if k != 1 else ''} against the target"
                          + (f", {b} against the baseline and the recording" if b else ", and the recording")
                          + ": what varies within a side is noise (flaky), changed is what differs between them",
                          style="dim"))
    yield Group(*parts)


def closing(report: ReplayReport, *, heading_said: bool = False) -> Iterator[RenderableType]:
    """What follows the streamed rows: the handshake, refused server requests, notes and the summary line;
    also what was replayed against what (the sessions or the era) unless :func:`heading` said it first."""
    parts = _heading(report) if not heading_said else \
        ([Text(report.handshake, style="dim")] if report.handshake else [])
    for asked in report.unmatched_server_requests:
        parts.append(Text(f"server request {asked.method} not in the recording: {asked.error}", style="red"))
    for note in report.notes:
        parts.append(Text(note, style="dim"))
    parts.append(Text(report.summary(), style="bold green" if report.exit_code == 0 else "bold red"))
    yield Group(*parts)


class JsonSpool:
    """The ``--output`` document of a replay whose results are not kept: each result's JSON goes to a
    temporary file as it comes, and :meth:`write` puts the report around them (the same document as
    :func:`to_json`)."""

    _MARK = "\x00results\x00"

    def __init__(self) -> None:
        self._spool = tempfile.TemporaryFile()
        self._first = True

    def add(self, r: RequestResult) -> None:
        """Add one request's result to the spooled ``results`` array."""
        self._spool.write((b"" if self._first else b",") + jsonio.dumps(r.to_json()))
        self._first = False

    def write(self, out: BinaryIO, report: ReplayReport) -> None:
        """Write the report with the spooled results in place, copied from disk rather than held in memory."""
        doc = report.to_json()
        doc["results"] = self._MARK
        head, _, tail = jsonio.dumps(doc).partition(jsonio.dumps(self._MARK))
        out.write(head + b"[")
        self._spool.seek(0)
        shutil.copyfileobj(self._spool, out)
        out.write(b"]" + tail + b"\n")

    def close(self) -> None:
        """Close (and so delete) the spool."""
        self._spool.close()


def _heading(report: ReplayReport) -> list[RenderableType]:
    """The lines above a replay's table: the handshake, what was replayed against what, its sessions or era."""
    parts: list[RenderableType] = []
    if report.handshake:
        parts.append(Text(report.handshake, style="dim"))
    parts.append(Text(f"replay of {report.session} against {report.target} ({report.transport})", style="bold"))
    if len(report.sessions) > 1:
        lines = Text(f"{len(report.sessions)} client sessions, each on a fresh connection:\n", style="dim")
        for s in report.sessions:
            lines.append(f"  {s['label']} -> replayed in the {era_name(s['replayed_in'])}, {s['requests']} requests\n")
        parts.append(lines)
    elif report.era is not None and report.recorded_era not in (None, "unknown"):
        parts.append(Text(_era_line(report), style="dim"))
    return parts


def _era_line(report: ReplayReport) -> str:
    used = era_name(report.era)
    if report.recorded_era == report.era:
        return f"replayed in the {used}, as recorded"
    return f"recorded in the {era_name(report.recorded_era)}, replayed in the {used}"


def to_json(report: ReplayReport) -> str:
    """The results as one JSON document (newline-terminated)."""
    return jsonio.dumps_str(report.to_json()) + "\n"


def junit_case(r: RequestResult, report_session: str | None) -> Case:
    """The JUnit case of one replayed request."""
    name = f"#{r.index} {r.method}" + (f" {r.tool}" if r.tool else "")
    case = Case(name, f"mcpreel.replay.{report_session or 'session'}", (r.duration_ms or 0.0) / 1000.0)
    if r.status == "changed":
        case.failure = f"{len(r.diff)} difference{'' if len(r.diff) == 1 else 's'}"
        case.details = "\n".join([d.describe(200) for d in r.diff] + suggested_lines(r)) or None
    elif r.status == "definition changed":
        case.failure = r.error or "definition changed"
    elif r.status == "flaky":
        case.flaky = "varies between runs, not a change"
        case.flaky_details = "\n".join(line.strip() for line in noise_lines(r)) or None
    elif r.status == "error":
        case.error = r.error or "no answer"
    elif r.status == "unrecorded":
        case.skipped = "the recording holds no answer to compare with"
    return case


def server_cases(report: ReplayReport) -> list[Case]:
    """The JUnit cases of the server requests the recording could not answer (after the requests')."""
    classname = f"mcpreel.replay.{report.session or 'session'}"
    return [Case(f"server request {s.method}", classname, failure=s.error or "not in the recording")
            for s in report.unmatched_server_requests]


def to_junit(report: ReplayReport, suite: str) -> str:
    """One case per replayed request, plus one per server request the recording could not answer."""
    return junit_xml(suite, [junit_case(r, report.session) for r in report.results] + server_cases(report))
