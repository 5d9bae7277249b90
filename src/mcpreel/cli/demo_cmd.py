"""``mcpreel demo-server`` (our small MCP server) and ``mcpreel demo`` (the main job, end to end)."""

from __future__ import annotations

import sys

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.limit_options import limit_options, limits_of
from mcpreel.cli.listen_options import listen_options
from mcpreel.cli.vocabulary import hidden
from mcpreel.errors import DifferenceFound

_TRANSPORTS = click.Choice(["stdio", "streamable-http", "sse"])


@click.command("demo-server", epilog=examples(
    "mcpreel demo-server  # stdio: give this as a client's server command",
    "mcpreel demo-server --transport streamable-http --listen 127.0.0.1:8000",
))
@click.option("--transport", type=_TRANSPORTS, default="stdio", show_default=True,
              help="stdio, Streamable HTTP (POST /mcp, SSE responses) or legacy HTTP+SSE (GET /sse).")
@listen_options(8000, "HTTP transports: ")
@click.option("--allow-origin", "allow_origins", multiple=True, metavar="ORIGIN",
              help="HTTP transports: accept requests from this non-loopback Origin ('*' for any; repeatable).")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="HTTP transports: a Host name a loopback listener accepts beyond the loopback names "
                   "(others are refused 421: DNS rebinding; repeatable).")
@limit_options("HTTP transports: ")
@output.run_command
def demo_server_command(transport: str, host: str, port: int, allow_origins: tuple[str, ...],
                        allow_hosts: tuple[str, ...], max_body: int, max_header: int, header_timeout: float) -> None:
    """Run mcpreel's demo MCP server (echo, add, divide, lookup_customer, countdown, ask_llm)."""
    from mcpreel.demo.server import serve

    if transport != "stdio":
        output.warn_exposed(host, "other machines can reach this demo server (foreign Origins are still refused)")
    if transport == "stdio" and sys.stdin.isatty():
        output.info("mcpreel demo server speaking MCP on stdin/stdout (for a client to start it); "
                    "--transport streamable-http serves HTTP instead. Ctrl-D ends it.")
    try:
        serve(transport, host, port, ready=lambda url: output.info(f"mcpreel demo server ({transport}) on {url}"),
              allow_origins=allow_origins, allow_hosts=allow_hosts,
              limits=limits_of(max_body, max_header, header_timeout))
    except KeyboardInterrupt:
        pass


@click.command("demo", epilog=examples(
    "mcpreel demo",
    "mcpreel demo -o /tmp/mcpreel-demo",
))
@click.option("-o", "--output", "out_dir", **hidden("--out"), type=click.Path(file_okay=False), default="demo-output", show_default=True,
              help="Where the demo leaves its files.")
@click.option("--tag", "tags", multiple=True, metavar="KEY=VALUE",
              help="A tag written into the header of both recordings (as `mcpreel record --tag`; repeatable).")
@output.run_command
def demo_command(out_dir: str, tags: tuple[str, ...]) -> None:
    """The main job on the built-in demo server: record, convert, record over HTTP, check.

    Leaves in --output the reel, the qai session file, the Assay V2 trace, the HTML report (report.html),
    the HTTP transcript envelope of a Streamable HTTP run and the check report; prints the inspect summary,
    where each file is and the next three commands to try.
    """
    from rich.console import Console

    from mcpreel.demo.run import DEMO_FILES, next_commands, run_demo
    from mcpreel.record.options import parse_tags

    tagged = parse_tags(tags)
    console = Console(highlight=False, soft_wrap=True)
    result = run_demo(out_dir, on_step=lambda text: console.print(("  " if text[:1] not in "1234" else "") + text,
                                                                  markup=False), tags=tagged)
    if result.inspect_report is not None:
        console.print()
        console.print("What the reel holds (mcpreel inspect --summary):", style="bold")
        from mcpreel.render.inspect import plain_lines, renderables

        if console.is_terminal:
            output.show(renderables(result.inspect_report, rows=False), console)
        else:
            for line in plain_lines(result.inspect_report, rows=False):
                console.print(line, markup=False)
    console.print()
    console.print(f"Files in {result.out_dir}/:", style="bold")
    for key, (name, what) in DEMO_FILES.items():
        path = result.files.get(key)
        mark = "" if path is not None else "  (not written)"
        console.print(f"  {name:<26} {what}{mark}", markup=False)
    console.print()
    if result.check_report is not None:
        from mcpreel.render.check import verdict

        console.print(f"check: {verdict(result.check_report)}", markup=False)
    for problem in result.problems:
        output.warning(problem)
    console.print(f"demo finished in {result.seconds:.1f} s" + ("" if result.ok else " with problems"))
    report = result.files.get("report")
    if report is not None:
        console.print(f"Open {report} in a browser to look at the session.", markup=False)
    console.print()
    console.print("Next:", style="bold")
    for command, why in next_commands(result.out_dir):  # a shell comment above each: pasted whole, it still runs
        console.print(f"  # {why}\n  {command}", markup=False)
    if not result.ok:
        raise DifferenceFound()
