"""Drawing a :class:`~mcpreel.check.result.CheckReport`: a terminal table, plain lines, JSON, or JUnit XML.

The text form is a rich table (plain when piped: rich drops the colours itself) followed by one block per
check that did not pass: what was sent, what came back, the fix. :func:`renderables` yields the pieces
for the CLI to print on its console, :func:`plain_lines` the same content as text lines (the ``--out``
file, the demo's report); :func:`to_json` and :func:`to_junit` the documents.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich import box
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from mcpreel._infra import jsonio
from mcpreel.check.context import PROFILES
from mcpreel.check.result import FAIL, PASS, SKIP, WARN, CheckReport, CheckResult
from mcpreel.render.junit import Case, junit_xml

__all__ = ["plain_lines", "renderables", "to_json", "to_junit", "verdict"]

_STYLE = {PASS: "green", FAIL: "bold red", WARN: "yellow", SKIP: "dim"}


def _server(report: CheckReport) -> str:
    info = report.server_info or {}
    name = info.get("name")
    if not name:
        return "server: unknown"
    version = info.get("version") or "(no version)"
    proto = f" · protocol {report.protocol_version}" if report.protocol_version else ""
    return f"server: {name} {version}{proto}"


def verdict(report: CheckReport) -> str:
    """The closing line: the counts and what they mean for the exit code."""
    c = report.counts()
    total = len(report.results)
    counts = f"{total} checks: {c[PASS]} pass · {c[FAIL]} fail · {c[WARN]} warn · {c[SKIP]} skip"
    if report.failed:
        why = "a warning, with --strict" if report.strict and not c[FAIL] else "a check failed"
        return f"{counts}  ->  FAILED ({why}; exit {report.exit_code})"
    return f"{counts}  ->  OK (exit 0)"


def _header(report: CheckReport) -> list[str]:
    eras = [f"eras: {'; '.join(report.eras)}"] if report.eras else []
    return [
        f"mcpreel check {report.target}  ({report.transport})",
        f"profile {report.profile}: {PROFILES.get(report.profile, '')}",
        f"{_server(report)} · {report.duration_ms / 1000:.1f} s",
        *eras,
    ]


def _block(r: CheckResult) -> Iterator[tuple[str, str]]:
    """(label, text) pairs of the explanation of a result that did not pass."""
    if r.sent:
        yield "sent", r.sent
    if r.received:
        yield "received", r.received
    if r.fix:
        yield "fix", r.fix
    for d in r.details:
        yield "-", d


def plain_lines(report: CheckReport) -> Iterator[str]:
    """The text report as plain lines (what a file or a pipe gets when rich is not wanted)."""
    yield from _header(report)
    yield ""
    width = max((len(r.id) for r in report.results), default=10)
    for r in report.results:
        yield f"  {r.id:<{width}}  {r.status:<4}  {r.summary}"
    for r in report.results:
        if r.status in (PASS, SKIP):
            continue
        yield ""
        issue = f"  [{r.issue}]" if r.issue else ""
        yield f"{r.status.upper()} {r.id} · {r.title}{issue}"
        for label, text in _block(r):
            yield f"  {label:<8}  {text}" if label != "-" else f"    - {text}"
    yield ""
    yield verdict(report)


def renderables(report: CheckReport) -> Iterator[RenderableType]:
    """The report as rich renderables, to print one after the other on a console."""
    for line in _header(report):
        yield Text(line)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("check", no_wrap=True)
    table.add_column("result", no_wrap=True)
    table.add_column("detail", overflow="fold")
    for r in report.results:
        table.add_row(Text(r.id), Text(r.status, style=_STYLE.get(r.status, "")), Text(r.summary))
    yield table
    yield Text("")
    for r in report.results:
        if r.status in (PASS, SKIP):
            continue
        head = Text()
        head.append(r.status.upper(), style=_STYLE[r.status])
        head.append(f" {r.id} · {r.title}")
        if r.issue:
            head.append(f"  [{r.issue}]", style="bold")
        yield head
        grid = Table.grid(padding=(0, 2), pad_edge=True)
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column(overflow="fold")
        for label, text in _block(r):
            grid.add_row(f"  {label}", Text(text))
        yield grid
        yield Text("")
    yield Text(verdict(report), style="bold red" if report.failed else "bold green")


def to_json(report: CheckReport) -> str:
    """The report as one JSON document (newline-terminated)."""
    return jsonio.dumps_str(report.to_dict()) + "\n"


def to_junit(report: CheckReport) -> str:
    """JUnit XML: one testcase per check; fail -> <failure>, skip -> <skipped>, warn -> passes with
    <system-out> (a <failure> under --strict)."""
    classname = f"mcpreel.check.{report.profile}"
    cases = []
    for r in report.results:
        case = Case(r.id, classname, None)
        body = "\n".join(f"{label}: {text}" if label != "-" else f"- {text}" for label, text in _block(r))
        if r.status == FAIL or (r.status == WARN and report.strict):
            case.failure, case.failure_type, case.details = r.summary, r.issue or r.status, body
        elif r.status == SKIP:
            case.skipped = r.summary
        elif r.status == WARN:
            case.system_out = f"warning: {r.summary}\n{body}".rstrip()
        cases.append(case)
    properties = [("target", report.target), ("transport", report.transport), ("profile", report.profile),
                  ("server", _server(report))]
    return junit_xml(f"mcpreel check {report.target} (profile {report.profile})", cases, title="mcpreel check",
                     properties=[(k, str(v)) for k, v in properties], time_s=report.duration_ms / 1000)
