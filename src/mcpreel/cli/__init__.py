"""The ``mcpreel`` command line: thin, one module per command, one exit path.

Each command parses its arguments, calls one library function and renders the result. Commands are
loaded lazily from :data:`COMMANDS`, so ``mcpreel import`` does not pay for the HTTP stack and the
recorder does not pay for rich. Every :class:`~mcpreel.errors.McpreelError` ends as one line on stderr
and its exit code (:func:`mcpreel.cli.output.run_command`).
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from mcpreel._version import __version__

#: command name -> "module:attribute" of its click command. One line a command.
COMMANDS: dict[str, str] = {
    "import": "mcpreel.cli.import_cmd:import_command",
    "trace": "mcpreel.cli.import_cmd:trace_group",
    "convert": "mcpreel.cli.convert_cmd:convert_command",
    "inspect": "mcpreel.cli.inspect_cmd:inspect_command",
    "report": "mcpreel.cli.report_cmd:report_command",
    "export": "mcpreel.cli.export_cmd:export_group",
    "merge": "mcpreel.cli.merge_cmd:merge_command",
    "redact": "mcpreel.cli.redact_cmd:redact_command",
    "replay": "mcpreel.cli.replay_cmd:replay_command",
    "serve": "mcpreel.cli.serve_cmd:serve_command",
    "diff": "mcpreel.cli.diff_cmd:diff_command",
    "record": "mcpreel.cli.record_cmd:record_command",
    "proxy": "mcpreel.cli.proxy_cmd:proxy_group",
    "check": "mcpreel.cli.check_cmd:check_command",
    "demo-server": "mcpreel.cli.demo_cmd:demo_server_command",
    "demo": "mcpreel.cli.demo_cmd:demo_command",
    "contract": "mcpreel.cli.contract_cmd:contract_group",
    "wrap": "mcpreel.cli.wrap_cmd:wrap_command",
    "unwrap": "mcpreel.cli.wrap_cmd:unwrap_command",
    "audit": "mcpreel.cli.audit_cmd:audit_command",
    "tui": "mcpreel.cli.tui_cmd:tui_command",
    "help": "mcpreel.cli.help_cmd:help_command",
    "index": "mcpreel.cli.index_cmd:index_command",
    "query": "mcpreel.cli.query_cmd:query_command",
    "sessions": "mcpreel.cli.sessions_cmd:sessions_command",
    "show": "mcpreel.cli.show_cmd:show_command",
    "mcp-server": "mcpreel.cli.mcp_server_cmd:mcp_server_command",
    "calls": "mcpreel.cli.calls_cmd:calls_command",
    "completion": "mcpreel.cli.completion_cmd:completion_command",
}


class LazyGroup(click.Group):
    """Commands loaded on first use, and listed by what a person wants to do (:data:`~.helptext.SECTIONS`)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands:
            return self.commands[name]
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, _, attr = target.partition(":")
        cmd = getattr(importlib.import_module(module), attr)
        from mcpreel.cli.option_groups import install

        self.add_command(install(cmd, name), name)
        return cmd

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        """A mistyped verb is refused with the verbs it is close to ("did you mean"), exit 2."""
        name = args[0] if args else None
        if name and not name.startswith("-") and self.get_command(ctx, name) is None \
                and not ctx.resilient_parsing:
            import difflib

            close = difflib.get_close_matches(name, self.list_commands(ctx), n=3, cutoff=0.6)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            ctx.fail(f"No such command {name!r}.{hint} (mcpreel --help lists them all)")
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """One section per task (record, look, convert, verify, serve, CI, configure), one line a verb; a
        verb no section names goes under "Other", with its own short help."""
        from mcpreel.cli.helptext import SECTIONS

        shown = {n: cmd for n in self.list_commands(ctx) if (cmd := self.get_command(ctx, n)) is not None
                 and not cmd.hidden}
        width = max(map(len, shown), default=0)
        lines = {n: line for _, verbs in SECTIONS for n, line in verbs}
        sections = [(title, [n for n, _ in verbs if n in shown]) for title, verbs in SECTIONS]
        sections.append(("Other", [n for n in shown if n not in lines]))
        for title, names in sections:
            if names:
                with formatter.section(title):
                    formatter.write_dl([(n.ljust(width), lines.get(n) or shown[n].get_short_help_str(80))
                                        for n in names], col_max=width + 2)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             epilog="\b\nEvery verb's help ends with examples: mcpreel VERB --help.\n"
                    "What a word means: mcpreel help formats|filters|rules|eras|names.")
@click.version_option(__version__, prog_name="mcpreel")
@click.option("-v", "--verbose", is_flag=True,
              help="Also show other libraries' log lines (uvicorn, OpenTelemetry, ...) on stderr.")
def cli(verbose: bool) -> None:
    """Record, import, inspect, convert, replay and check MCP sessions.

    A session file is any format mcpreel reads (mcpreel help formats); the live server is --target-url URL
    or --target-command "CMD ARGS"; what a verb writes is -o/--output.
    """
    from mcpreel.cli.output import other_loggers

    other_loggers(verbose)


def main(argv: Any = None) -> None:
    """The ``mcpreel`` entry point (``argv`` for tests; the process's arguments otherwise)."""
    # (`mcpreel record`/`proxy` latched their early signals when the package was imported: mcpreel._infra.signals)
    cli.main(args=argv, prog_name="mcpreel")
