"""``mcpreel diff A B``: what changed between two recordings."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.params import FORMAT_AUTO, SESSION_FILE
from mcpreel.cli.records import options_record
from mcpreel.render.terminal_safe import terminal_safe

if TYPE_CHECKING:
    from mcpreel.compare import DiffOptions


@dataclass(frozen=True)
class DiffArgs:
    """What ``diff``'s options said, as one record (:func:`mcpreel.cli.records.options_record`): the
    fields are the click parameter names, so a new option is a decorator line and a field here."""

    fmt: str
    as_json: bool
    junit: str | None
    html: str | None
    ignore_paths: tuple[str, ...]
    latency_factor: float
    latency_min_ms: int
    fail_on_latency: bool
    sarif_path: str | None
    all_rows: bool
    redact: bool


@click.command("diff", epilog=examples(
    "mcpreel diff v1.jsonl v2.jsonl",
    "mcpreel diff v1.jsonl v2.json --junit diff.xml --sarif diff.sarif",
    "mcpreel diff v1.jsonl v2.jsonl --all --ignore-path '$.result.content[0].text'",
))
@click.argument("a", type=SESSION_FILE)
@click.argument("b", type=SESSION_FILE)
@click.option("--format", "fmt", type=FORMAT_AUTO, default="auto", show_default=True, help="Both files' format.")
@click.option("--json", "as_json", is_flag=True, help="Print the differences as JSON.")
@click.option("--junit", type=click.Path(dir_okay=False), help="Write a JUnit XML report here.")
@click.option("--html", type=click.Path(dir_okay=False), help="Also write the differences as a self-contained HTML page.")
@click.option("--ignore-path", "ignore_paths", multiple=True, metavar="PATH",
              help="Leave this path out of result comparisons (repeatable).")
@click.option("--latency-factor", type=click.FloatRange(min=1.0), default=2.0, show_default=True,
              help="A latency shift is at least this many times slower or faster ...")
@click.option("--latency-min-ms", type=click.IntRange(min=0), default=50, show_default=True,
              help="... and at least this many milliseconds apart.")
@click.option("--fail-on-latency", is_flag=True, help="Count latency shifts as differences (exit 1).")
@click.option("--sarif", "sarif_path", type=click.Path(dir_okay=False),
              help="Also write a SARIF 2.1.0 report here (tool changes classed as in `contract check`).")
@click.option("--all", "all_rows", is_flag=True, help="List every aligned call, not only those that differ.")
@click.option("--redact/--no-redact", default=True, show_default=True,
              help="Redact secrets in the values shown (rows, --json, --junit, --sarif, --html; the rules of "
                   "`mcpreel redact`); --no-redact shows them as recorded.")
@click.pass_context
@output.run_command
@output.fewer_collections()
@options_record(DiffArgs)
def diff_command(ctx: click.Context, a: str, b: str, args: DiffArgs) -> None:
    """Compare two recordings: tools, calls (arguments, results, error status) and latency.

    Prints the calls that differ (changed, added, removed) and a summary line; --all lists every call.
    The comparison streams: two sessions of a million messages each are compared in flat memory (the
    --json and --junit documents too; --html and --sarif keep what they show).

    Exit 0 when they agree, 1 on differences, 2 when a file cannot be read.
    """
    from mcpreel.compare import DiffOptions
    from mcpreel.compare.normalize import IgnorePath

    options = DiffOptions([IgnorePath(p) for p in args.ignore_paths], args.latency_factor, args.latency_min_ms,
                          args.fail_on_latency)
    with output.byte_progress(output.file_size(a, b), "comparing") as progress:
        _diff(a, b, args, options, progress)


def _diff(a: str, b: str, args: DiffArgs, options: DiffOptions, progress: Callable[[int], None] | None) -> None:
    """The comparison and its outputs, under the progress bar (if any)."""
    from rich.text import Text

    from mcpreel._infra import jsonio
    from mcpreel.compare import diff_files_stream
    from mcpreel.render import diff as render
    from mcpreel.render.junit import JunitSpool

    fmt, as_json, junit, html, sarif_path = args.fmt, args.as_json, args.junit, args.html, args.sarif_path
    all_rows, redact, fail_on_latency = args.all_rows, args.redact, args.fail_on_latency
    stream = diff_files_stream(a, b, format=fmt, options=options, on_progress=progress)
    result = stream.result
    spool = JunitSpool() if junit else None
    kept: list = []  # every call for --html, the ones that differ for --sarif
    shifts: list = []  # the first latency shifts, to list them (--json: every label)
    write = sys.stdout.write
    started = False

    def start() -> None:
        # said once the first call is known: a file that cannot be read is then one error line alone
        nonlocal started
        started = True
        if as_json:
            write(render.json_head(result.a, result.b))
        else:
            output.show([Text(f"A: {result.a}\nB: {result.b}", style="dim")])
            write("calls (aligned by method, tool and order" + ("" if all_rows else "; only those that differ") + ")\n")

    redactor = None
    if redact:  # what diff shows is shared (CI logs, artifacts): each difference's values redacted in place
        from mcpreel.redact import Redactor

        redactor = Redactor()
    try:
        first = True
        for c in stream:
            if redactor is not None and (c.arguments or c.result):
                c.arguments = [redactor.difference(d) for d in c.arguments]
                c.result = [redactor.difference(d) for d in c.result]
            if not started:
                start()
            if as_json:
                write(render.json_call(c, first))
                first = False
            elif all_rows or c.kind != "same":
                write(terminal_safe("\n".join(render.call_lines(c))) + "\n")
            if c.latency_shift and (as_json or len(shifts) < render.LATENCY_LISTED):
                shifts.append(c.label if as_json else c)
            if spool is not None:
                spool.add(render.junit_case(c, fail_on_latency))
            if html or (sarif_path and c.kind != "same"):
                kept.append(c)
        if not started:
            start()
        classes = _tool_classes(a, b, fmt) if result.tools else []
        if as_json:
            write(render.json_tail(result, shifts, {"tool_classes": [ch.to_json() for ch in classes]}))
        else:
            output.show(render.closing(result, shifts))
            for ch in classes:
                output.echo(f"tool contract: {ch.cls:<9} {ch.path}: {ch.message}")
        if junit and spool is not None:
            head = render.head_cases(result)
            output.save(junit, lambda fh: _junit_with_head(fh, spool, head, f"mcpreel diff {a} {b}"))
    finally:
        if spool is not None:
            spool.close()
    result.calls = kept
    if sarif_path:
        output.save(sarif_path, lambda fh: fh.write(jsonio.dumps_indented(_diff_sarif(result, classes, b))))
    if html:
        from mcpreel.report.compare_page import diff_page

        output.save(html, lambda fh: fh.write(diff_page(result, redact=redact, classes=classes).encode("utf-8", "replace")))
    output.finish(result.exit_code)


def _junit_with_head(fh, spool, head: list, suite: str) -> None:
    """The server's and tools' cases come first, as in a collected report: spool the calls after them."""
    from mcpreel.render.junit import JunitSpool

    whole = JunitSpool()
    try:
        for case in head:
            whole.add(case)
        spool.append_to(whole)
        whole.write(fh, suite)
    finally:
        whole.close()


def _tool_classes(a: str, b: str, fmt: str) -> list:
    """The changes of the tools both recordings listed, classed breaking/dangerous/minor (mcpreel.contract)."""
    from mcpreel.contract.compare import classify_tool_changes
    from mcpreel.formats import open_session

    return classify_tool_changes(open_session(a, fmt)[0], open_session(b, fmt)[0])


def _diff_sarif(result, classes: list, b: str) -> dict:
    from mcpreel.render.sarif import RuleInfo, SarifFinding, sarif_log

    level = {"breaking": "error", "dangerous": "warning", "minor": "note"}
    rules: dict[str, RuleInfo] = {}
    findings = []
    for ch in classes:
        rid = f"contract/{ch.rule}"
        rules.setdefault(rid, RuleInfo(rid, f"tool change: {ch.rule.replace('-', ' ')}", level[ch.cls]))
        findings.append(SarifFinding(rid, level[ch.cls], f"{ch.cls}: {ch.message} at {ch.path}", ch.path, file=b,
                                properties={"class": ch.cls}))
    for call in result.changed_calls:
        rid = f"diff/call-{call.kind}"
        rules.setdefault(rid, RuleInfo(rid, f"a call {call.kind} between the recordings", "warning"))
        line = call.b.source if call.b is not None else None
        findings.append(SarifFinding(rid, "warning", f"{call.label}: {call.kind}", f"/calls/{call.label}", file=b,
                                properties={"line": line} if line is not None else {}))
    for d in result.server:
        rules.setdefault("diff/server-changed", RuleInfo("diff/server-changed", "the server's handshake changed", "warning"))
        findings.append(SarifFinding("diff/server-changed", "warning", f"server: {d.to_json()}", "/server", file=b))
    return sarif_log("diff", list(rules.values()), findings, properties={"differences": result.difference_count})
