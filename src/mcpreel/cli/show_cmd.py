"""``mcpreel show ID [--db FILE]``: an indexed operation's request and answer, read from its file."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.query_cmd import DB_HELP


@click.command("show", epilog=examples(
    "mcpreel show 4242  # an id from mcpreel sessions or mcpreel query",
    "mcpreel show 4242 --db team.duckdb --no-redact",
))
@click.argument("op_id", metavar="ID", type=int)
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), help=DB_HELP)
@click.option("--redact/--no-redact", default=True, show_default=True,
              help="Redact secrets in what is shown (the rules of `mcpreel redact`); --no-redact shows them as "
                   "recorded.")
@output.run_command
def show_command(op_id: int, db: Path | None, redact: bool) -> None:
    """Print operation ID of the index (its row, then each request and answer with its line) as JSON."""
    from mcpreel._infra import jsonio
    from mcpreel.corpus.db import default_db
    from mcpreel.corpus.show import show_operation

    doc = show_operation(db or default_db(), op_id, redact=redact)
    sys.stdout.buffer.write(jsonio.dumps_indented(doc) + b"\n")
    sys.stdout.flush()
