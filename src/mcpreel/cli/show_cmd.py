"""``mcpreel show ID [--db FILE] [--json]``: an indexed operation's request and answer, read from its file.

Readable by default (:mod:`mcpreel.render.show`: times on the reader's clock, the messages indented);
``--json`` prints the raw document (the index row as stored, epoch milliseconds)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.query_cmd import DB_HELP


@click.command("show", epilog=examples(
    "mcpreel show 4242  # an id from mcpreel calls, sessions or query",
    "mcpreel show 4242 --json  # the raw document: the index row, each message with its line",
    "mcpreel show 4242 --db team.duckdb --no-redact",
))
@click.argument("op_id", metavar="ID", type=int)
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), help=DB_HELP)
@click.option("--redact/--no-redact", default=True, show_default=True,
              help="Redact secrets in what is shown (the rules of `mcpreel redact`); --no-redact shows them as "
                   "recorded.")
@click.option("--json", "as_json", is_flag=True,
              help="The raw document as JSON: the index row as stored (epoch ms), each message with its line.")
@output.run_command
def show_command(op_id: int, db: Path | None, redact: bool, as_json: bool) -> None:
    """Show operation ID of the index: what was called, where and when, how it ended, then each request and
    answer (pretty-printed, redacted unless --no-redact)."""
    from mcpreel._infra import jsonio
    from mcpreel.corpus.db import default_db
    from mcpreel.corpus.show import show_operation

    doc = show_operation(db or default_db(), op_id, redact=redact)
    if as_json:
        from mcpreel.render.terminal_safe import json_terminal_safe

        text = json_terminal_safe(jsonio.dumps_indented(doc).decode("utf-8", "surrogateescape"))
        sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape") + b"\n")
        sys.stdout.flush()
        return
    from mcpreel.render.show import show_blocks

    blocks = show_blocks(doc)
    if not sys.stdout.isatty():  # plain lines, none broken (grepped, pasted into an issue)
        for block in blocks:
            output.echo(output.printable(block.text))
        return
    from rich.syntax import Syntax
    from rich.text import Text

    con = output.console()
    for block in blocks:
        if block.json:
            con.print(Syntax(block.text, "json", theme="ansi_dark", background_color="default", word_wrap=True))
        else:
            con.print(Text(block.text, style=block.style), soft_wrap=True)
