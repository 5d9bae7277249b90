"""``mcpreel proxy``: seed 003's surface (``proxy start``, ``proxy inspect``, ``proxy export``) on our engine.

``proxy start --transport stdio --target-command "python my_server.py" --session-file session.json``
is ``mcpreel record`` with qai's words: the same recorder, the same reel, the same exit codes.
"""

from __future__ import annotations

import shlex
from typing import Any

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.record_cmd import record_options, run_record
from mcpreel.errors import UsageError


@click.group("proxy", epilog=examples(
    'mcpreel proxy start --transport stdio --target-command "python my_server.py" --session-file session.json',
    "mcpreel proxy inspect --session-file session.json",
    'mcpreel proxy replay --session-file session.json --target-command "python server_v2.py" --output results.json',
))
def proxy_group() -> None:
    """The qai proxy commands: start a recording proxy, inspect or export its session file."""


@proxy_group.command("start", epilog=examples(
    'mcpreel proxy start --transport stdio --target-command "python my_server.py" --session-file session.json',
    "mcpreel proxy start --transport streamable-http --target-url http://127.0.0.1:8000/mcp --session-file s.json",
))
@record_options
@click.option("--target-command", metavar='"CMD ARGS"', help="stdio: the server command, one string (split like a shell).")
@click.option("--target-url", metavar="URL", help="HTTP transports: the server's URL.")
@click.pass_context
@output.run_command
def start(ctx: click.Context, target_command: str | None, target_url: str | None, **options: Any) -> None:
    """Start a recording proxy in front of a server (same engine as `mcpreel record`)."""
    try:
        command = shlex.split(target_command) if target_command else []
    except ValueError as exc:
        raise UsageError(f"--target-command: {exc}") from exc
    run_record(ctx, command=command, target=target_url, command_flag="--target-command",
               target_flag="--target-url", **options)


@proxy_group.command("inspect", epilog=examples(
    "mcpreel proxy inspect --session-file session.json",
    "mcpreel proxy inspect --session-file session.json -v",
))
@click.option("--session-file", "session_file", required=True, type=click.Path(dir_okay=False),
              help="The session file (qai JSON, or any format mcpreel reads).")
@click.option("-v", "--verbose", is_flag=True, help="Show each message's time and payload.")
@click.pass_context
def inspect(ctx: click.Context, session_file: str, verbose: bool) -> None:
    """Print a session's contents (`mcpreel inspect FILE`, with qai's words)."""
    from mcpreel.cli.inspect_cmd import inspect_command

    ctx.invoke(inspect_command, path=session_file, verbose=verbose)


class _ExportFormat(click.ParamType):
    """qai's ``--output-format`` words: ``json`` is the qai session file; any writable mcpreel format too."""

    name = "format"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        word = str(value).strip().lower()
        if word == "json":
            return "qai"
        from mcpreel.cli.params import FormatName

        return FormatName(allow_auto=False).convert(word, param, ctx)


@proxy_group.command("export", epilog=examples(
    "mcpreel proxy export --session-file session.json --output report.json --output-format json",
    "mcpreel proxy export --session-file session.json -o capture.har --output-format har",
))
@click.option("--session-file", "session_file", required=True, type=click.Path(dir_okay=False),
              help="The session file to export.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Where the export goes.")
@click.option("--output-format", "output_format", type=_ExportFormat(), default="json", show_default=True,
              help="json (a qai session file), reel, har, jsonrpc, inspector, streamable-http, assay-v2, ...")
@click.pass_context
def export(ctx: click.Context, session_file: str, output: str, output_format: str) -> None:
    """Export a session file to another format (`mcpreel convert`, with qai's words)."""
    from mcpreel.cli.convert_cmd import convert_command

    ctx.invoke(convert_command, input_path=session_file, output_path=output, to=output_format)


def _add_replay() -> None:
    """`proxy replay` is `mcpreel replay` with qai's words; it lives beside `replay` (cli/replay_cmd.py)."""
    from mcpreel.cli.replay_cmd import proxy_replay_command

    proxy_group.add_command(proxy_replay_command, "replay")


_add_replay()
