"""Drawing a :class:`~mcpreel.compare.diff.SessionDiff` (``mcpreel diff``): rich renderables, JSON, JUnit XML.

:func:`renderables` yields the pieces for the CLI to print on its console; :func:`to_json` and
:func:`to_junit` give the ``--json`` and ``--junit`` documents.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from mcpreel._infra import jsonio
from mcpreel.compare.diff import SessionDiff
from mcpreel.render.junit import Case, junit_xml
from mcpreel.render.replay import MAX_DIFFS, ms

__all__ = ["renderables", "to_json", "to_junit"]


def renderables(d: SessionDiff) -> Iterator[RenderableType]:
    """The differences as rich renderables, to print on a console as one group."""
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
            for x in tool.differences[:MAX_DIFFS]:
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
            ms_b = ms(c.latency_b) + (" !" if c.latency_shift else "")
            table.add_row(c.label, Text(c.kind, style=style), status, ms(c.latency_a), ms_b)
        parts.append(table)
        for c in d.changed_calls:
            if c.kind != "changed":
                continue
            t = Text(f"{c.label}\n", style="bold")
            if c.status_a != c.status_b:
                t.append(f"  error status: {c.status_a} -> {c.status_b}\n")
            for x in (c.arguments + c.result)[:MAX_DIFFS]:
                t.append(f"  {x.describe(100)}\n")
            parts.append(t)
    if d.latency_shifts:
        t = Text("latency shifts" + ("" if d.options.fail_on_latency else " (shown, not counted)") + "\n", style="bold")
        for c in d.latency_shifts:
            t.append(f"  {c.label}: {c.latency_a} ms -> {c.latency_b} ms\n")
        parts.append(t)
    parts.append(Text(d.summary(), style="bold red" if d.exit_code else "bold green"))
    yield Group(*parts)


def to_json(d: SessionDiff) -> str:
    """The differences as one JSON document (newline-terminated)."""
    return jsonio.dumps_str(d.to_json()) + "\n"


def to_junit(d: SessionDiff, suite: str) -> str:
    """One case per server difference, per tool and per aligned call."""
    classname = "mcpreel.diff"
    cases = []
    for diff_ in d.server:
        cases.append(Case(f"server {diff_.path}", classname, failure=diff_.describe(200)))
    for t in d.tools:
        details = "\n".join(x.describe(200) for x in t.differences)
        cases.append(Case(f"tool {t.name}", classname, failure=f"tool {t.kind}", details=details or None))
    for c in d.calls:
        case = Case(c.label, classname, (c.latency_b or 0) / 1000.0)
        if c.kind != "same":
            lines = [x.describe(200) for x in c.arguments + c.result]
            if c.status_a != c.status_b and c.kind == "changed":
                lines.append(f"error status: {c.status_a} -> {c.status_b}")
            case.failure = f"call {c.kind}"
            case.details = "\n".join(lines) or None
        elif c.latency_shift and d.options.fail_on_latency:
            case.failure = f"latency {c.latency_a} ms -> {c.latency_b} ms"
        cases.append(case)
    return junit_xml(suite, cases)
