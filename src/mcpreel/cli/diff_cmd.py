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
@click.pass_context
@output.run_command
def diff_command(ctx: click.Context, a: str, b: str, fmt: str, as_json: bool, junit: str | None, html: str | None,
                 ignore_paths: tuple[str, ...], latency_factor: float, latency_min_ms: int,
                 fail_on_latency: bool) -> None:
    """Compare two recordings: tools, calls (arguments, results, error status) and latency.

    Exit 0 when they agree, 1 on differences, 2 when a file cannot be read.
    """
    from mcpreel import jsonio
    from mcpreel.cli.replay_cmd import console, save
    from mcpreel.replay import DiffOptions, IgnorePath, diff_files
    from mcpreel.replay.junit import diff_cases, write_junit
    from mcpreel.replay.render import diff_renderable

    options = DiffOptions([IgnorePath(p) for p in ignore_paths], latency_factor, latency_min_ms, fail_on_latency)
    result = diff_files(a, b, format=fmt, options=options)
    if as_json:
        click.echo(jsonio.dumps_str(result.to_json()))
    else:
        console().print(diff_renderable(result))
    if junit:
        save(junit, lambda fh: write_junit(fh, f"mcpreel diff {a} {b}", diff_cases(result)))
    if html:
        from mcpreel.report.compare_page import diff_page

        page = diff_page(result).encode("utf-8", "replace")
        save(html, lambda fh: fh.write(page))
    ctx.exit(result.exit_code)
