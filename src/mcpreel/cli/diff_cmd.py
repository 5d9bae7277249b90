"""``mcpreel diff A B``: what changed between two recordings."""

from __future__ import annotations

import click

from mcpreel.cli import output
from mcpreel.cli.params import FORMAT_AUTO


@click.command("diff")
@click.argument("a", type=click.Path(dir_okay=False))
@click.argument("b", type=click.Path(dir_okay=False))
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
@click.pass_context
@output.run_command
def diff_command(ctx: click.Context, a: str, b: str, fmt: str, as_json: bool, junit: str | None, html: str | None,
                 ignore_paths: tuple[str, ...], latency_factor: float, latency_min_ms: int,
                 fail_on_latency: bool, sarif_path: str | None = None) -> None:
    """Compare two recordings: tools, calls (arguments, results, error status) and latency.

    Exit 0 when they agree, 1 on differences, 2 when a file cannot be read.
    """
    from mcpreel._infra import jsonio
    from mcpreel.compare import DiffOptions, diff_files
    from mcpreel.compare.normalize import IgnorePath
    from mcpreel.render import diff as render

    options = DiffOptions([IgnorePath(p) for p in ignore_paths], latency_factor, latency_min_ms, fail_on_latency)
    result = diff_files(a, b, format=fmt, options=options)
    classes = _tool_classes(a, b, fmt) if result.tools else []
    if as_json:
        doc = result.to_json()
        doc["tool_classes"] = [ch.to_json() for ch in classes]
        click.echo(jsonio.dumps_str(doc))
    else:
        output.show(render.renderables(result))
        for ch in classes:
            click.echo(f"tool contract: {ch.cls:<9} {ch.path}: {ch.message}")
    if sarif_path:
        output.save(sarif_path, lambda fh: fh.write(jsonio.dumps_indented(_diff_sarif(result, classes, b))))
    if junit:
        output.save_text(junit, render.to_junit(result, f"mcpreel diff {a} {b}"))
    if html:
        from mcpreel.report.compare_page import diff_page

        output.save(html, lambda fh: fh.write(diff_page(result).encode("utf-8", "replace")))
    ctx.exit(result.exit_code)


def _tool_classes(a: str, b: str, fmt: str) -> list:
    """The changes of the tools both recordings listed, classed breaking/dangerous/minor (mcpreel.contract)."""
    from mcpreel.contract.compare import classify_tool_changes
    from mcpreel.formats import open_session

    return classify_tool_changes(open_session(a, fmt)[0], open_session(b, fmt)[0])


def _diff_sarif(result, classes: list, b: str) -> dict:
    from mcpreel.render.sarif import Finding, RuleInfo, sarif_log

    level = {"breaking": "error", "dangerous": "warning", "minor": "note"}
    rules: dict[str, RuleInfo] = {}
    findings = []
    for ch in classes:
        rid = f"contract/{ch.rule}"
        rules.setdefault(rid, RuleInfo(rid, f"tool change: {ch.rule.replace('-', ' ')}", level[ch.cls]))
        findings.append(Finding(rid, level[ch.cls], f"{ch.cls}: {ch.message} at {ch.path}", ch.path, file=b,
                                properties={"class": ch.cls}))
    for call in result.changed_calls:
        rid = f"diff/call-{call.kind}"
        rules.setdefault(rid, RuleInfo(rid, f"a call {call.kind} between the recordings", "warning"))
        line = call.b.source if call.b is not None else None
        findings.append(Finding(rid, "warning", f"{call.label}: {call.kind}", f"/calls/{call.label}", file=b,
                                properties={"line": line} if line is not None else {}))
    for d in result.server:
        rules.setdefault("diff/server-changed", RuleInfo("diff/server-changed", "the server's handshake changed", "warning"))
        findings.append(Finding("diff/server-changed", "warning", f"server: {d.to_json()}", "/server", file=b))
    return sarif_log("diff", list(rules.values()), findings, properties={"differences": result.difference_count})
