"""``mcpreel replay`` and ``mcpreel proxy replay`` (qai's spelling): verify a server against a recording."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.params import FORMAT_AUTO
from mcpreel.cli.records import options_record
from mcpreel.clients.headers import parse_headers
from mcpreel.errors import UsageError

if TYPE_CHECKING:
    from mcpreel.redact import Redactor
    from mcpreel.replay import ReplayPlan
    from mcpreel.replay.verify import RequestResult


@dataclass(frozen=True)
class ProxyReplayArgs:
    """``proxy replay``'s options (qai's spelling: fewer of them; the rest take ``replay``'s defaults)."""

    target_command: str | None
    target_url: str | None
    transport: str
    ignore_paths: tuple[str, ...]
    out_json: str | None
    junit: str | None
    original: bool
    timeout: float
    all_rows: bool


@dataclass(frozen=True)
class ReplayArgs(ProxyReplayArgs):
    """What ``replay``'s options said, as one record (:func:`mcpreel.cli.records.options_record`): the fields
    are the click parameter names, so a new option is a decorator line and a field here."""

    fmt: str = "auto"
    headers: tuple[str, ...] = ()
    html: str | None = None
    era: str = "auto"
    session_index: int | None = None
    source: str | None = None
    pace: str = "none"
    redact: bool = True


def run_replay(session: str, args: ReplayArgs) -> int:
    """Parse, run, render, write; returns the exit code (0 all same, 1 differences).

    The heading (what against what, which sessions) is said before the first request; then results are
    drawn as they are judged and not kept (unless --html, whose page holds them all): a row for each
    result that is not the same (every row with ``all_rows``), and into the --output and --junit spools on
    disk; then the summary; the documents are written once the run is over.
    """
    import sys

    from mcpreel.render import replay as render
    from mcpreel.render.junit import JunitSpool
    from mcpreel.replay import IgnorePath, ReplayHooks, ReplayOptions, ReplayTarget, replay_file

    if (args.target_command is None) == (args.target_url is None):
        raise UsageError("give the server to replay against: --target-command \"CMD\" or --target-url URL")
    options = ReplayOptions(ignore_paths=[IgnorePath(p) for p in args.ignore_paths], original=args.original,
                            timeout=args.timeout, era=args.era, pace=args.pace, session_index=args.session_index,
                            source=args.source)
    out_json, junit, html, all_rows, redact = args.out_json, args.junit, args.html, args.all_rows, args.redact
    json_spool = render.JsonSpool() if out_json else None
    junit_spool = JunitSpool() if junit else None
    kept: list = []
    started = False
    redactor = None
    if redact:  # what replay shows is shared (CI logs, artifacts): bodies and differences redacted
        from mcpreel.redact import Redactor

        redactor = Redactor()
    said: list[bool] = []

    def start(plan: ReplayPlan) -> None:
        output.show(render.heading(plan))
        said.append(True)

    def sink(result: RequestResult) -> None:
        nonlocal started
        if redactor is not None:
            _redact_result(result, redactor)
        if all_rows or result.status != "same":
            if not started:
                started = True
                sys.stdout.write("results" + ("" if all_rows else " that are not the same") + "\n")
            sys.stdout.write("\n".join(render.result_lines(result)) + "\n")
        if json_spool is not None:
            json_spool.add(result)
        if junit_spool is not None:
            junit_spool.add(render.junit_case(result, session))
        if html:
            kept.append(result)

    try:
        with output.byte_progress(output.file_size(session), "replaying") as progress:
            target = ReplayTarget(args.target_command, args.target_url, args.transport, parse_headers(args.headers))
            hooks = ReplayHooks(on_event=output.warning, sink=sink, on_progress=progress, on_start=start)
            report = replay_file(session, target, format=args.fmt, options=options, hooks=hooks)
        output.show(render.closing(report, heading_said=bool(said)))
        if json_spool is not None and out_json:
            output.save(out_json, lambda fh: json_spool.write(fh, report))
        if junit_spool is not None and junit:
            for case in render.server_cases(report):
                junit_spool.add(case)
            output.save(junit, lambda fh: junit_spool.write(fh, f"mcpreel replay {session}"))
    finally:
        for spool in (json_spool, junit_spool):
            if spool is not None:
                spool.close()
    if html:
        from mcpreel.report.compare_page import replay_page

        report.results, report.sink = kept, None
        output.save(html, lambda fh: fh.write(replay_page(report, redact=redact).encode("utf-8", "replace")))
    return report.exit_code


def _redact_result(result: RequestResult, redactor: Redactor) -> None:
    """A judged result with what it shows of the bodies redacted (its verdict is already made)."""
    result.diff = [redactor.difference(d) for d in result.diff]
    result.original_request = redactor.value(result.original_request)
    if result.sent_message is not None:
        result.sent_message = redactor.value(result.sent_message)
    if result.response is not None:
        result.response = redactor.value(result.response)
    if result.recorded_response is not None:
        result.recorded_response = redactor.value(result.recorded_response)
    if result.error:
        result.error = redactor.text(result.error)


_TRANSPORTS = click.Choice(["auto", "streamable-http", "sse"])


@click.command("replay", epilog=examples(
    'mcpreel replay baseline.jsonl --target-command "python server_v2.py" -o results.json --junit replay.xml',
    "mcpreel replay baseline.jsonl --target-url http://127.0.0.1:8000/mcp --ignore-path '$.result.content[0].text'",
    'mcpreel replay session.jsonl --target-command "python server.py" --era modern --session 2',
))
@click.argument("session", type=click.Path(dir_okay=False))
@click.option("--target-command", metavar='"CMD ARGS"', help="Run this server command and replay over its stdio.")
@click.option("--target-url", metavar="URL", help="Replay against this Streamable HTTP or legacy SSE URL.")
@click.option("--transport", type=_TRANSPORTS, default="auto", show_default=True,
              help="For --target-url: auto means legacy SSE if the path ends in /sse, else Streamable HTTP.")
@click.option("-H", "--header", "headers", multiple=True, metavar="'NAME: VALUE'", help="Extra HTTP header (repeatable).")
@click.option("--format", "fmt", type=FORMAT_AUTO, default="auto", show_default=True, help="The session's format.")
@click.option("--ignore-path", "ignore_paths", multiple=True, metavar="PATH",
              help="Leave this path out of every comparison, e.g. '$.result.content[0].text.timestamp' (repeatable).")
@click.option("-o", "--output", "out_json", type=click.Path(dir_okay=False), help="Write the results as JSON here.")
@click.option("--junit", type=click.Path(dir_okay=False), help="Write a JUnit XML report here.")
@click.option("--html", type=click.Path(dir_okay=False), help="Also write the results as a self-contained HTML page.")
@click.option("--original", is_flag=True, help="Replay the pre-edit payload of messages edited in intercept mode.")
@click.option("--timeout", type=click.FloatRange(min=0.01), default=30.0, show_default=True,
              help="Seconds to wait for each response.")
@click.option("--era", type=click.Choice(["auto", "legacy", "modern"]), default="auto", show_default=True,
              help="The protocol era to replay in: each session's own (auto), the handshake era (legacy) or "
                   "2026-07-28 (modern).")
@click.option("--session", "session_index", type=click.IntRange(min=1), metavar="N",
              help="Replay only the Nth client session of the file (`mcpreel inspect` lists them).")
@click.option("--source", metavar="NAME",
              help="A merged file: replay only this source's records (a file name of `mcpreel merge`), against "
                   "that server.")
@click.option("--all", "all_rows", is_flag=True, help="List every request's result, not only those that are not the same.")
@click.option("--pace", type=click.Choice(["none", "recorded"]), default="none", show_default=True,
              help="none: each message goes once the answers it waited for in the recording are in (the order, not "
                   "the clock); recorded: also no earlier than its recorded time after the first message.")
@click.option("--redact/--no-redact", default=True, show_default=True,
              help="Redact secrets in what is shown of the bodies (rows, --output, --junit, --html; the rules of "
                   "`mcpreel redact`); --no-redact shows them as recorded.")
@click.pass_context
@output.run_command
@options_record(ReplayArgs)
def replay_command(ctx: click.Context, session: str, args: ReplayArgs) -> None:
    """Replay a recorded session against a server and compare every response.

    A file holding several client sessions is replayed session by session, each on a fresh connection
    (over stdio, a fresh server process), each in its own protocol era unless --era says otherwise.

    Says first what is replayed against what (and which sessions), then a row for each request whose answer
    is not the same (--all: every request), then a summary line.

    Exit 0 when every response matches the recording, 1 on any difference, 2 when the replay could not run.
    """
    output.finish(run_replay(session, args))


@click.command("replay", epilog=examples(
    'mcpreel proxy replay --session-file baseline_v1.json --target-command "python server_v2.py" --output v2.json',
    "mcpreel proxy replay --session-file session.json --target-url http://127.0.0.1:8000/mcp --junit replay.xml",
))
@click.option("--session-file", "session", required=True, type=click.Path(dir_okay=False),
              help="The recorded session (any readable format).")
@click.option("--target-command", metavar='"CMD ARGS"', help="The server command to replay against (stdio).")
@click.option("--target-url", metavar="URL", help="The server URL to replay against.")
@click.option("--transport", type=_TRANSPORTS, default="auto", show_default=True)
@click.option("-o", "--output", "out_json", type=click.Path(dir_okay=False), help="Write the results as JSON here.")
@click.option("--junit", type=click.Path(dir_okay=False), help="Write a JUnit XML report here.")
@click.option("--ignore-path", "ignore_paths", multiple=True, metavar="PATH")
@click.option("--original", is_flag=True, help="Replay pre-edit payloads.")
@click.option("--timeout", type=click.FloatRange(min=0.01), default=30.0, show_default=True)
@click.option("--all", "all_rows", is_flag=True, help="List every request's result, not only those that are not the same.")
@click.pass_context
@output.run_command
@options_record(ProxyReplayArgs)
def proxy_replay_command(ctx: click.Context, session: str, args: ProxyReplayArgs) -> None:
    """Replay a saved session against a server (qai's spelling of `mcpreel replay`)."""
    output.finish(run_replay(session, ReplayArgs(**dataclasses.asdict(args))))
