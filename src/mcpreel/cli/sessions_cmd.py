"""``mcpreel sessions [--server-name NAME] [--tool NAME] [--failed] [--since 2d] [--client NAME]``: find sessions.

``--server`` (the issue's spelling) parses as a hidden alias: on the command line ``--server`` is the live
server's URL's old name (:mod:`mcpreel.cli.vocabulary`), so the help shows ``--server-name``."""

from __future__ import annotations

from pathlib import Path

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.query_cmd import DB_HELP, FORMATS, write_result
from mcpreel.cli.vocabulary import hidden


@click.command("sessions", epilog=examples(
    "mcpreel sessions --failed --since 2d",
    "mcpreel sessions --server-name github --tool create_issue --client claude-code",
    "mcpreel sessions --since 2026-11-01 --format csv --db team.duckdb",
))
@click.option("--server-name", "server", **hidden("--server"), metavar="NAME",
              help="Sessions with this server (serverInfo.name; * is a wildcard).")
@click.option("--tool", metavar="NAME", help="Sessions that called this tool (the line is its first call).")
@click.option("--failed", is_flag=True, help="Sessions with a failed operation (the line is the first one).")
@click.option("--since", metavar="WHEN", help="Sessions that started since: 30m, 2h, 2d, 1w, or an ISO date or time.")
@click.option("--client", metavar="NAME", help="Sessions of this client (clientInfo.name; * is a wildcard).")
@click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N", help="At most N sessions.")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), help=DB_HELP)
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True, help="How the rows are written.")
@output.run_command
def sessions_command(server: str | None, tool: str | None, failed: bool, since: str | None, client: str | None,
                     limit: int | None, db: Path | None, fmt: str) -> None:
    """List the indexed client sessions that match, newest first, each with the file and line to open
    (and the id of the matching operation, for `mcpreel show`)."""
    from mcpreel.corpus.db import default_db
    from mcpreel.corpus.query import sessions

    write_result(sessions(db or default_db(), server=server, tool=tool, failed=failed, since=since, client=client,
                          limit=limit), fmt)
