"""``mcpreel calls [--failed] [--tool NAME] [--server-name NAME] [--since WHEN] [--until WHEN] [--slower-than D]``:
the operations of every indexed session, one row each, newest first, each with the commands that open it.

``--since``/``--until`` read a typed time the one way ``sessions`` reads it (:mod:`mcpreel.corpus.when`);
``--now`` (hidden) freezes the instant they count from, for tests and for examples that must print the
same thing every day."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.query_cmd import DB_HELP
from mcpreel.cli.vocabulary import hidden
from mcpreel.corpus.when import WHEN_HELP

#: rows shown unless --limit says otherwise (the newest; the footer says how many more matched)
DEFAULT_LIMIT = 50


def clock_option(fn: Any) -> Any:
    """The hidden ``--now`` of the verbs that read ``--since``/``--until`` (``calls``, ``sessions``)."""
    return click.option("--now", "now", metavar="WHEN", hidden=True,
                        help="Count --since/--until from this ISO time (its offset is the day's zone): tests and "
                             "reproducible examples.")(fn)


def read_bounds(since: str | None, until: str | None, now: str | None) -> tuple[int | None, int | None, Any]:
    """``--since``/``--until`` as epoch ms, read against one clock (the machine's, or ``--now``'s), and
    that clock's time zone (None: the machine's)."""
    from datetime import datetime

    from mcpreel.corpus.when import Clock, parse_when
    from mcpreel.errors import UsageError

    clock = Clock.local()
    tz = None
    if now:
        try:
            moment = datetime.fromisoformat(now.strip().replace("Z", "+00:00"))
        except ValueError as exc:
            raise UsageError(f"--now {now!r}: give an ISO time such as 2026-11-26T09:00:00+00:00") from exc
        clock = Clock(moment if moment.tzinfo is not None else moment.astimezone())
        tz = clock.tz
    lo = parse_when(since, clock=clock, option="--since") if since else None
    hi = parse_when(until, clock=clock, end=True, option="--until") if until else None
    return lo, hi, tz


@click.command("calls", epilog=examples(
    "mcpreel calls --failed --since yesterday",
    "mcpreel calls --tool create_issue --server-name github --since 2d",
    "mcpreel calls --slower-than 2s --since 2026-11-20 --until 2026-11-25 --json --db team.duckdb",
))
@click.option("--failed", is_flag=True, help="Only failed calls (a JSON-RPC error, or a tool result with isError).")
@click.option("--tool", metavar="NAME", help="Only calls of this tool (* is a wildcard).")
@click.option("--server-name", "server", **hidden("--server"), metavar="NAME",
              help="Only calls to this server (serverInfo.name; * is a wildcard).")
@click.option("--method", metavar="METHOD", help="Only operations of this method (tools/call, resources/read, ...; "
                                                 "* is a wildcard).")
@click.option("--since", metavar="WHEN", help=f"Calls made since: {WHEN_HELP}.")
@click.option("--until", metavar="WHEN", help="Calls made before (a day counts whole: --until yesterday ends at "
                                               "midnight): the same forms as --since.")
@click.option("--slower-than", "slower", metavar="DURATION",
              help="Only calls answered after more than this (500ms, 2s, 1m), or never answered.")
@click.option("--limit", type=click.IntRange(min=1), default=DEFAULT_LIMIT, show_default=True, metavar="N",
              help="At most N calls (the newest).")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), help=DB_HELP)
@click.option("--json", "as_json", is_flag=True, help="One JSON array of the calls instead of the table.")
@clock_option
@output.run_command
def calls_command(db: Path | None, as_json: bool, **options: Any) -> None:
    """List the indexed operations that match, newest first: time (your clock), server, tool, status, latency and
    the error's first line, each followed by the commands that open it (mcpreel show ID; mcpreel tui FILE --at N).
    Index the sessions first: mcpreel index."""
    from mcpreel.corpus.calls import CallFilter, find_calls
    from mcpreel.corpus.db import default_db
    from mcpreel.corpus.when import parse_duration_ms
    from mcpreel.render import calls as render

    since, until, tz = read_bounds(options["since"], options["until"], options["now"])
    slower = parse_duration_ms(options["slower"]) if options["slower"] else None
    flt = CallFilter(failed=options["failed"], tool=options["tool"], method=options["method"], server=options["server"],
                     since_ms=since, until_ms=until, slower_than_ms=slower, limit=options["limit"])
    page = find_calls(db or default_db(), flt)
    if as_json:
        from mcpreel._infra import jsonio
        from mcpreel.render.terminal_safe import json_terminal_safe

        text = jsonio.dumps_indented(render.to_json(page, db)).decode("utf-8", "surrogateescape")
        sys.stdout.buffer.write(json_terminal_safe(text).encode("utf-8", "surrogateescape") + b"\n")
        sys.stdout.flush()
        return
    terminal = sys.stdout.isatty()
    if not page.calls:
        output.info("no calls match")
        return
    con = output.console()
    width = con.width if terminal else None
    for line in render.call_lines(page, width=width, db=db, tz=tz):
        if terminal:
            con.print(line, soft_wrap=True)
        else:
            output.echo(output.printable(line.plain))
    shown = len(page.calls)
    output.info(f"{shown:,} call{'s' if shown != 1 else ''}" if shown == page.total else
                f"the newest {shown:,} of {page.total:,} calls: --limit N for more")
