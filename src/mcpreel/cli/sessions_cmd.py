"""``mcpreel sessions [--server-name NAME] [--tool NAME] [--failed] [--since WHEN] [--until WHEN] [--client NAME]``: find sessions.

``--server`` (the issue's spelling) parses as a hidden alias: on the command line ``--server`` is the live
server's URL's old name (:mod:`mcpreel.cli.vocabulary`), so the help shows ``--server-name``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from mcpreel.cli import output
from mcpreel.cli.calls_cmd import clock_option, read_bounds
from mcpreel.cli.helptext import examples
from mcpreel.cli.query_cmd import DB_HELP, FORMATS, write_result
from mcpreel.cli.vocabulary import hidden
from mcpreel.corpus.when import WHEN_HELP


@click.command("sessions", epilog=examples(
    "mcpreel sessions --failed --since yesterday",
    "mcpreel sessions --server-name github --tool create_issue --client claude-code",
    "mcpreel sessions --since 2026-11-01 --format csv --db team.duckdb",
))
@click.option("--server-name", "server", **hidden("--server"), metavar="NAME",
              help="Sessions with this server (serverInfo.name; * is a wildcard).")
@click.option("--tool", metavar="NAME", help="Sessions that called this tool (the line is its first call).")
@click.option("--failed", is_flag=True, help="Sessions with a failed operation (the line is the first one).")
@click.option("--since", metavar="WHEN", help=f"Sessions that started since: {WHEN_HELP}.")
@click.option("--until", metavar="WHEN", help="Sessions that started before (a day counts whole: --until yesterday "
                                               "ends at midnight): the same forms as --since.")
@click.option("--client", metavar="NAME", help="Sessions of this client (clientInfo.name; * is a wildcard).")
@click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N", help="At most N sessions.")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), help=DB_HELP)
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True, help="How the rows are written.")
@clock_option
@output.run_command
def sessions_command(db: Path | None, fmt: str, **options: Any) -> None:
    """List the indexed client sessions that match, newest first, each with the file and line to open
    (and the id of the matching operation, for `mcpreel show`; the operations themselves: `mcpreel calls`)."""
    from mcpreel.corpus.db import default_db
    from mcpreel.corpus.query import sessions

    since, until, _ = read_bounds(options["since"], options["until"], options["now"])
    write_result(sessions(db or default_db(), server=options["server"], tool=options["tool"], failed=options["failed"],
                          since=since, until=until, client=options["client"], limit=options["limit"]), fmt)
