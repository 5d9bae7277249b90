"""``mcpreel mcp-server [--db FILE] [--listen HOST:PORT]``: the corpus as an MCP server, for an agent.

stdio by default (a client starts it as its server command); ``--listen`` serves Streamable HTTP
instead, on loopback unless told otherwise, with the ``Origin``/``Host`` policy of every mcpreel listener.
The tools: :mod:`mcpreel.corpus.mcp_server`; the guide: ``docs/guides/corpus-mcp-server.md``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.limit_options import limit_options, limits_of
from mcpreel.cli.listen_options import ListenAddress
from mcpreel.cli.query_cmd import DB_HELP
from mcpreel.cli.records import options_record


@dataclass(frozen=True)
class HttpArgs:
    """The HTTP listener's options, as one record (:func:`mcpreel.cli.records.options_record`): None
    ``listen`` is stdio."""

    listen: tuple[str, int] | None
    allow_origins: tuple[str, ...]
    allow_hosts: tuple[str, ...]
    max_body: int
    max_header: int
    header_timeout: float


@click.command("mcp-server", epilog=examples(
    "mcpreel mcp-server  # stdio: give this as an agent's MCP server command",
    "mcpreel mcp-server --db team.duckdb --max-rows 200  # e.g. claude mcp add corpus -- mcpreel mcp-server ...",
    "mcpreel mcp-server --listen 127.0.0.1:8766  # Streamable HTTP on http://127.0.0.1:8766/mcp",
))
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), help=DB_HELP)
@click.option("--listen", type=ListenAddress(), default=None, metavar="HOST:PORT",
              help="Serve Streamable HTTP (POST /mcp) on this address instead of stdio (PORT alone: on 127.0.0.1; "
                   "0 picks a free port).")
@click.option("--allow-origin", "allow_origins", multiple=True, metavar="ORIGIN",
              help="--listen: accept requests from this non-loopback Origin ('*' for any; repeatable).")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="--listen: a Host name a loopback listener accepts beyond the loopback names (others are refused "
                   "421: DNS rebinding; repeatable).")
@click.option("--redact/--no-redact", default=True, show_default=True,
              help="Redact secrets in the messages show_operation quotes (the rules of `mcpreel redact`); the agent "
                   "cannot turn it off, only this option.")
@click.option("--max-rows", type=click.IntRange(1, 100_000), default=500, show_default=True, metavar="N",
              help="The most rows any answer holds (a query, sessions, replay results); an agent asks for fewer.")
@click.option("--query-timeout", type=click.FloatRange(min=0.1), default=30.0, show_default=True, metavar="SECONDS",
              help="A query running longer is stopped (its answer says so).")
@limit_options("--listen: ")
@options_record(HttpArgs, "http")
@output.run_command
def mcp_server_command(db: Path | None, redact: bool, max_rows: int, query_timeout: float, http: HttpArgs) -> None:
    """Serve the corpus index to an agent over MCP: find sessions, show an operation's request and answer
    (redacted), run read-only SQL, read replay runs and a tool's definitions over time; every row says
    which file and line to open. Read-only: the index is opened read-only and sandboxed."""
    from mcpreel.corpus.db import default_db
    from mcpreel.corpus.mcp_server import SDK_MISSING, CorpusServerOptions, check_index, sdk_missing
    from mcpreel.errors import UsageError
    from mcpreel.serving.listen import Listener

    options = CorpusServerOptions(db=db or default_db(), redact=redact, max_rows=max_rows,
                                  query_timeout_s=query_timeout)
    check_index(options)
    try:
        from mcpreel.corpus.mcp_tools import run
    except ImportError as exc:
        if not sdk_missing(exc):
            raise
        raise UsageError(SDK_MISSING) from exc
    listener = None
    if http.listen is not None:
        host, port = http.listen
        output.warn_exposed(host, "other machines can query your corpus (foreign Origins are still refused)")
        listener = Listener(transport="streamable-http", host=host, port=port, allow_origins=http.allow_origins,
                            allow_hosts=http.allow_hosts,
                            limits=limits_of(http.max_body, http.max_header, http.header_timeout))
    elif sys.stdin.isatty():
        output.info(f"mcpreel corpus server ({options.db}) speaking MCP on stdin/stdout, for an agent to start it; "
                    f"--listen HOST:PORT serves HTTP instead. Ctrl-D ends it.")
    try:
        run(options, listener, ready=lambda url: output.info(f"mcpreel corpus server ({options.db}) on {url}"))
    except KeyboardInterrupt:
        pass
