"""Drawing a :class:`~mcpreel.compare.diff.SessionDiff` (``mcpreel diff``): rich renderables, JSON, JUnit XML.

:func:`renderables` yields the pieces for the CLI to print on its console; :func:`to_json` and
:func:`to_junit` give the ``--json`` and ``--junit`` documents of a collected diff.

A diff of two long sessions is drawn while it is computed (:class:`~mcpreel.compare.stream.DiffStream`):
:func:`call_lines` gives the lines of one aligned call (printed only when it differs, every call with
``--all``), :func:`closing` the server, tools, latency and summary once the stream is done,
:func:`json_call` and :func:`json_tail` the pieces of the ``--json`` document, :func:`junit_case` one
JUnit case. Nothing of the calls is kept but the first latency shifts, to list them.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from mcpreel._infra import jsonio
from mcpreel.compare.diff import CallChange, SessionDiff
from mcpreel.render.junit import Case, junit_xml
from mcpreel.render.replay import MAX_DIFFS, ms

__all__ = ["LATENCY_LISTED", "call_lines", "closing", "json_call", "json_head", "json_tail", "junit_case",
           "renderables", "to_json", "to_junit"]

#: latency shifts listed by name at the end of a streamed diff (the rest are counted)
LATENCY_LISTED = 20
_MARK = {"same": "=", "changed": "~", "added": "+", "removed": "-"}


def call_lines(c: CallChange) -> list[str]:
    """One aligned call as plain lines: the row, then (when it changed) what changed."""
    status = f"{c.status_a or '-'} -> {c.status_b or '-'}" if c.a and c.b else ("only in A" if c.a else "only in B")
    where = f"A {c.a.unit} {c.a.source}" if c.a is not None and c.a.source is not None else ""
    if c.b is not None and c.b.source is not None:
        where += (", " if where else "") + f"B {c.b.unit} {c.b.source}"
    shift = " !" if c.latency_shift else ""
    lines = [f"  {_MARK[c.kind]} {c.label}  {c.kind}  {status}  ms {ms(c.latency_a)} -> {ms(c.latency_b)}{shift}"
             + (f"  ({where})" if where else "")]
    if c.kind == "changed":
        if c.status_a != c.status_b:
            lines.append(f"      error status: {c.status_a} -> {c.status_b}")
        lines += [f"      {x.describe(100)}" for x in (c.arguments + c.result)[:MAX_DIFFS]]
        more = len(c.arguments) + len(c.result) - MAX_DIFFS
        if more > 0:
            lines.append(f"      ... and {more} more")
    return lines


def closing(d: SessionDiff, shifts: list[CallChange]) -> Iterator[RenderableType]:
    """What follows the calls of a streamed diff: notes, server, tools, latency shifts, the summary line.

    ``shifts`` holds the first :data:`LATENCY_LISTED` calls whose latency moved.
    """
    parts: list[RenderableType] = [Text(note, style="yellow") for note in d.notes]
    parts += _server_and_tools(d)
    total = d.latency_shift_count if d.counted is not None else len(d.latency_shifts)
    if total:
        t = Text("latency shifts" + ("" if d.options.fail_on_latency else " (shown, not counted)") + "\n", style="bold")
        for c in shifts[:LATENCY_LISTED]:
            t.append(f"  {c.label}: {c.latency_a} ms -> {c.latency_b} ms\n")
        if total > LATENCY_LISTED:
            t.append(f"  ... and {total - LATENCY_LISTED} more\n")
        parts.append(t)
    parts.append(Text(d.summary(), style="bold red" if d.exit_code else "bold green"))
    yield Group(*parts)


def json_head(a: str | None, b: str | None) -> str:
    """The start of the ``--json`` document, up to the opening of its ``calls`` array."""
    return '{"a":' + jsonio.dumps_str(a) + ',"b":' + jsonio.dumps_str(b) + ',"calls":['


def json_call(c: CallChange, first: bool) -> str:
    """One call of the streamed ``--json`` array (with the comma before every call but the first)."""
    return ("" if first else ",") + jsonio.dumps_str(c.to_json())


def json_tail(d: SessionDiff, shift_labels: list[str], more: dict | None = None) -> str:
    """The rest of the ``--json`` document once every call is out (``shift_labels``: the shifted calls)."""
    doc = d.to_json()
    doc.pop("a"), doc.pop("b"), doc.pop("calls")
    doc["latency_shifts"] = shift_labels
    doc["summary"] = d.summary()
    doc.update(more or {})
    return "]," + jsonio.dumps_str(doc)[1:] + "\n"


def junit_case(c: CallChange, fail_on_latency: bool) -> Case:
    """The JUnit case of one aligned call."""
    case = Case(c.label, "mcpreel.diff", (c.latency_b or 0) / 1000.0)
    if c.kind != "same":
        lines = [x.describe(200) for x in c.arguments + c.result]
        if c.status_a != c.status_b and c.kind == "changed":
            lines.append(f"error status: {c.status_a} -> {c.status_b}")
        case.failure = f"call {c.kind}"
        case.details = "\n".join(lines) or None
    elif c.latency_shift and fail_on_latency:
        case.failure = f"latency {c.latency_a} ms -> {c.latency_b} ms"
    return case


def head_cases(d: SessionDiff) -> list[Case]:
    """The JUnit cases of the server's and tools' differences."""
    cases = [Case(f"server {x.path}", "mcpreel.diff", failure=x.describe(200)) for x in d.server]
    for t in d.tools:
        details = "\n".join(x.describe(200) for x in t.differences)
        cases.append(Case(f"tool {t.name}", "mcpreel.diff", failure=f"tool {t.kind}", details=details or None))
    return cases


def _server_and_tools(d: SessionDiff) -> list[RenderableType]:
    parts: list[RenderableType] = []
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
    return parts


def renderables(d: SessionDiff) -> Iterator[RenderableType]:
    """The differences as rich renderables, to print on a console as one group."""
    parts: list[RenderableType] = [Text(f"A: {d.a}\nB: {d.b}", style="dim")]
    for note in d.notes:
        parts.append(Text(note, style="yellow"))
    parts += _server_and_tools(d)
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
    return junit_xml(suite, head_cases(d) + [junit_case(c, d.options.fail_on_latency) for c in d.calls])
