"""``mcpreel query "SQL" [--db FILE] [--format table|json|csv]``: any SQL on the corpus index."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples

DB_HELP = "The index database [default: ~/.mcpreel/corpus.duckdb]."
FORMATS = click.Choice(["table", "json", "csv"])


@click.command("query", epilog=examples(
    "mcpreel query \"SELECT tool, count(*) FROM operations WHERE failed GROUP BY tool\"",
    "mcpreel query \"SELECT path, error FROM files WHERE status = 'error'\" --format csv",
    "mcpreel query \"SELECT * FROM sessions WHERE id = 'abc'\" --db team.duckdb --format json",
))
@click.argument("sql")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), help=DB_HELP)
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True, help="How the rows are written.")
@output.run_command
def query_command(sql: str, db: Path | None, fmt: str) -> None:
    """Run SQL (DuckDB's dialect) on the corpus index, read-only: tables files, sessions, operations, tools
    (their columns: `mcpreel help corpus`)."""
    from mcpreel.corpus.db import default_db
    from mcpreel.corpus.query import run_sql

    write_result(run_sql(db or default_db(), sql), fmt)


def write_result(result: Any, fmt: str) -> None:
    """The rows to stdout as a table, one JSON array, or CSV with a header line."""
    from mcpreel.corpus.query import table_lines, to_csv, to_json

    out = sys.stdout.buffer
    if fmt == "json":
        from mcpreel.render.terminal_safe import json_terminal_safe

        out.write(json_terminal_safe(to_json(result).decode("utf-8", "surrogateescape")).encode(
            "utf-8", "surrogateescape") + b"\n")
    elif fmt == "csv":
        text = to_csv(result)
        if sys.stdout.isatty():  # CSV to a file stays the data; on a terminal, nothing it would obey
            from mcpreel.render.terminal_safe import terminal_safe

            text = terminal_safe(text)
        out.write(text.encode("utf-8", "backslashreplace"))
    else:
        # a terminal gets long cells cut to fit (…tail); a pipe (a CI log, grep) every cell whole, as `calls` does
        fitted = table_lines(result) if sys.stdout.isatty() else table_lines(result, max_width=sys.maxsize)
        out.write(("\n".join(fitted) + "\n").encode("utf-8", "backslashreplace"))
    out.flush()
