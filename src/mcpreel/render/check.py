"""Drawing a :class:`~mcpreel.check.result.CheckReport`: a terminal table, JSON, or JUnit XML.

The text form is a rich table (plain when piped: rich drops the colours itself) followed by one block per
check that did not pass: what was sent, what came back, the fix. The console is passed in, so tests
render into a string.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

from mcpreel._infra import jsonio
from mcpreel.check.context import PROFILES
from mcpreel.check.result import FAIL, PASS, SKIP, WARN, CheckReport, CheckResult

__all__ = ["FORMATS", "render", "render_json", "render_junit", "render_text", "text_lines", "verdict"]

FORMATS = ("text", "json", "junit")
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


def text_lines(report: CheckReport) -> Iterator[str]:
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


def render_text(report: CheckReport, console: Any = None) -> None:
    """Print the report as a rich table on ``console`` (stdout when None)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    if console is None:
        console = Console(highlight=False)
        if not console.is_terminal:
            console = Console(highlight=False, width=max(console.width, 120))
    for line in _header(report):
        console.print(Text(line))
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("check", no_wrap=True)
    table.add_column("result", no_wrap=True)
    table.add_column("detail", overflow="fold")
    for r in report.results:
        table.add_row(Text(r.id), Text(r.status, style=_STYLE.get(r.status, "")), Text(r.summary))
    console.print(table)
    console.print()
    for r in report.results:
        if r.status in (PASS, SKIP):
            continue
        head = Text()
        head.append(r.status.upper(), style=_STYLE[r.status])
        head.append(f" {r.id} · {r.title}")
        if r.issue:
            head.append(f"  [{r.issue}]", style="bold")
        console.print(head)
        grid = Table.grid(padding=(0, 2), pad_edge=True)
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column(overflow="fold")
        for label, text in _block(r):
            grid.add_row(f"  {label}", Text(text))
        console.print(grid)
        console.print()
    console.print(Text(verdict(report), style="bold red" if report.failed else "bold green"))


def render_json(report: CheckReport) -> str:
    return jsonio.dumps_str(report.to_dict()) + "\n"


_XML_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _x(text: str) -> str:
    return _XML_BAD.sub("?", text)


def render_junit(report: CheckReport) -> str:
    """JUnit XML: one testcase per check; fail -> <failure>, skip -> <skipped>, warn -> passes with
    <system-out> (a <failure> under --strict)."""
    c = report.counts()
    failures = c[FAIL] + (c[WARN] if report.strict else 0)
    seconds = f"{report.duration_ms / 1000:.3f}"
    suites = ET.Element("testsuites", name="mcpreel check", tests=str(len(report.results)),
                        failures=str(failures), errors="0", skipped=str(c[SKIP]), time=seconds)
    suite = ET.SubElement(suites, "testsuite", name=_x(f"mcpreel check {report.target} (profile {report.profile})"),
                          tests=str(len(report.results)), failures=str(failures), errors="0",
                          skipped=str(c[SKIP]), time=seconds)
    props = ET.SubElement(suite, "properties")
    for name, value in (("target", report.target), ("transport", report.transport), ("profile", report.profile),
                        ("server", _server(report))):
        ET.SubElement(props, "property", name=name, value=_x(str(value)))
    for r in report.results:
        case = ET.SubElement(suite, "testcase", classname=f"mcpreel.check.{report.profile}", name=_x(r.id), time="0")
        body = "\n".join(f"{label}: {text}" if label != "-" else f"- {text}" for label, text in _block(r))
        if r.status == FAIL or (r.status == WARN and report.strict):
            el = ET.SubElement(case, "failure", message=_x(r.summary), type=_x(r.issue or r.status))
            el.text = _x(body)
        elif r.status == SKIP:
            ET.SubElement(case, "skipped", message=_x(r.summary))
        elif r.status == WARN:
            out = ET.SubElement(case, "system-out")
            out.text = _x(f"warning: {r.summary}\n{body}".rstrip())
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def render(report: CheckReport, fmt: str, console: Any = None) -> str | None:
    """``json``/``junit`` -> the document as a string; ``text`` -> printed on ``console``, None."""
    if fmt == "json":
        return render_json(report)
    if fmt == "junit":
        return render_junit(report)
    render_text(report, console)
    return None
