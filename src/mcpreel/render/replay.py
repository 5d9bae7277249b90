"""Rich renderables for replay reports and recording diffs (the library builds them, the CLI prints)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from mcpreel.compare.diff import SessionDiff
from mcpreel.replay.verify import ReplayReport

__all__ = ["diff_renderable", "replay_renderable"]

_STYLE = {"same": "green", "different": "bold red", "error": "bold magenta", "unrecorded": "yellow"}
_MAX_DIFFS = 20


def _ms(value: float | int | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if isinstance(value, float) and value < 10 else f"{value:.0f}"


def replay_renderable(report: ReplayReport) -> RenderableType:
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
        cells: list[RenderableType] = [str(r.index)] + ([str(r.session or "")] if many else [])
        table.add_row(*cells, r.method, r.tool or "", Text(r.status, style=_STYLE.get(r.status, "")),
                      _ms(r.recorded_duration_ms), _ms(r.duration_ms))
    parts.append(table)
    for r in report.results:
        if r.status == "different":
            lines = Text(f"#{r.index} {r.method}{' ' + r.tool if r.tool else ''}: {len(r.diff)} differences\n",
                         style="bold")
            for d in r.diff[:_MAX_DIFFS]:
                lines.append(f"  {d.describe(100)}\n")
            if len(r.diff) > _MAX_DIFFS:
                lines.append(f"  … {len(r.diff) - _MAX_DIFFS} more (see --output)\n")
            parts.append(lines)
        elif r.status == "error":
            parts.append(Text(f"#{r.index} {r.method}{' ' + r.tool if r.tool else ''}: {r.error}", style="magenta"))
    for s in report.unmatched_server_requests:
        parts.append(Text(f"server request {s.method} not in the recording: {s.error}", style="red"))
    for note in report.notes:
        parts.append(Text(note, style="dim"))
    style = "bold green" if report.ok else "bold red"
    parts.append(Text(report.summary(), style=style))
    return Group(*parts)


def _era_line(report: ReplayReport) -> str:
    names = {"modern": "2026-07-28 era", "legacy": "handshake era"}
    used = names.get(report.era or "", report.era or "")
    if report.recorded_era == report.era:
        return f"replayed in the {used}, as recorded"
    return f"recorded in the {names.get(report.recorded_era or '', report.recorded_era)}, replayed in the {used}"


def diff_renderable(d: SessionDiff) -> RenderableType:
    parts: list[RenderableType] = [Text(f"A: {d.a}\nB: {d.b}", style="dim")]
    for note in d.notes:
        parts.append(Text(note, style="yellow"))
    if d.server or d.server_info:
        t = Text("server\n", style="bold")
        for x in d.server:
            t.append(f"  ~ {x.describe(100)}\n", style="red")
        for x in d.server_info:
            t.append(f"    {x.describe(100)} (not counted)\n", style="dim")
        parts.append(t)
    if not all(d.tools_listed):
        missing = [n for n, listed in zip("AB", d.tools_listed, strict=True) if not listed]
        verb = "have" if len(missing) > 1 else "has"
        parts.append(Text(f"tools: not compared ({' and '.join(missing)} {verb} no tools/list answer)", style="dim"))
    elif d.tools:
        t = Text("tools\n", style="bold")
        for tool in d.tools:
            mark = {"added": "+", "removed": "-", "changed": "~"}[tool.kind]
            t.append(f"  {mark} {tool.name} ({tool.kind})\n", style="green" if tool.kind == "added" else "red")
            for x in tool.differences[:_MAX_DIFFS]:
                t.append(f"      {x.describe(100)}\n")
        parts.append(t)
    else:
        parts.append(Text("tools: the same", style="green"))
    if d.calls:
        parts.append(Text("calls (aligned by method, tool and order)", style="bold"))
        table = Table()
        for col, just in (("call", "left"), ("change", "left"), ("status A -> B", "left"), ("ms A", "right"),
                          ("ms B", "right")):
            table.add_column(col, justify=just)  # type: ignore[arg-type]
        for c in d.calls:
            status = f"{c.status_a or '-'} -> {c.status_b or '-'}" if c.a and c.b else ("only in A" if c.a else "only in B")
            style = {"same": "green", "changed": "red", "added": "yellow", "removed": "yellow"}[c.kind]
            ms_b = _ms(c.latency_b) + (" !" if c.latency_shift else "")
            table.add_row(c.label, Text(c.kind, style=style), status, _ms(c.latency_a), ms_b)
        parts.append(table)
        for c in d.changed_calls:
            if c.kind != "changed":
                continue
            t = Text(f"{c.label}\n", style="bold")
            if c.status_a != c.status_b:
                t.append(f"  error status: {c.status_a} -> {c.status_b}\n")
            for x in (c.arguments + c.result)[:_MAX_DIFFS]:
                t.append(f"  {x.describe(100)}\n")
            parts.append(t)
    if d.latency_shifts:
        t = Text("latency shifts" + ("" if d.options.fail_on_latency else " (shown, not counted)") + "\n", style="bold")
        for c in d.latency_shifts:
            t.append(f"  {c.label}: {c.latency_a} ms -> {c.latency_b} ms\n")
        parts.append(t)
    parts.append(Text(d.summary(), style="bold red" if d.exit_code else "bold green"))
    return Group(*parts)
