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
    from mcpreel.replay import ReplayOptions, ReplayPlan, ReplayReport
    from mcpreel.replay.results import RequestResult


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
    compare_rules: str | None = None
    # many recordings (the fleet: mcpreel.cli.replay_fleet)
    db: str | None = None
    server_name: str | None = None
    tool: str | None = None
    client: str | None = None
    since: str | None = None
    failed: bool = False
    jobs: int | None = None
    executor: str = "local"
    ray_address: str | None = None
    fail_on: tuple[str, ...] = ()
    # samples and learned noise (mcpreel.replay.noise)
    repeat: int = 1
    baseline_command: str | None = None
    baseline_url: str | None = None
    learn_noise: str | None = None
    noise: str | None = None


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
    from mcpreel.replay import ReplayHooks, ReplayTarget, replay_file

    options = replay_options(args)
    out_json, junit, html, all_rows, redact = args.out_json, args.junit, args.html, args.all_rows, args.redact
    json_spool = render.JsonSpool() if out_json else None
    junit_spool = JunitSpool() if junit else None
    kept: list = []
    started = False
    said: list[bool] = []

    def start(plan: ReplayPlan) -> None:
        output.show(render.heading(plan))
        said.append(True)

    def sink(result: RequestResult) -> None:
        nonlocal started  # redacted already, unless --no-redact (ReplayOptions.redact)
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

    from mcpreel.formats.reel import raw_marks, raw_note

    transport = args.transport
    if transport == "auto" and args.target_command and "h2" in raw_marks(session):
        transport = "stdio-v2"  # the recording's stdio pipe spoke HTTP/2: so does the replay
    raw = raw_note(session, "replay", speaks_h2=transport == "stdio-v2")  # said in one line, not a failure
    if raw is not None:
        output.warning(raw)
    try:
        with output.byte_progress(output.file_size(session), "replaying") as progress:
            target = ReplayTarget(args.target_command, args.target_url, transport, parse_headers(args.headers))
            hooks = ReplayHooks(on_event=output.warning, sink=sink, on_progress=progress, on_start=start)
            report = replay_file(session, target, format=args.fmt, options=options, hooks=hooks)
        output.show(render.closing(report, heading_said=bool(said)))
        if args.learn_noise is not None and report.learned is not None:
            _write_noise(args.learn_noise, report, session)
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
    from mcpreel.replay.fleet import FailOn

    return report.exit_for(fail_on_flaky=FailOn.parse(args.fail_on).flaky)


def _write_noise(path: str, report: ReplayReport, session: str) -> None:
    """Write what the sampled replay learned (``--learn-noise``), 0600 and atomically, and say so."""
    from mcpreel._infra import jsonio
    from mcpreel.replay.noise import noise_document

    assert report.learned is not None
    doc = noise_document(report.learned, recording=session)
    output.save(path, lambda fh: fh.write(jsonio.dumps_indented(doc) + b"\n"))
    n = len(report.learned.entries)
    output.info(f"noise learned: {n} path{'s' if n != 1 else ''} that vary, written to {path}"
                + (f" (server {report.learned.server})" if report.learned.server else ""))


def replay_options(args: ReplayArgs) -> ReplayOptions:
    """The replay options every session of the run is replayed with (one file or the fleet); checks that a
    target was given."""
    from mcpreel.replay import IgnorePath, ReplayOptions

    if (args.target_command is None) == (args.target_url is None):
        raise UsageError("give the server to replay against: --target-command \"CMD\" or --target-url URL")
    rules = None
    if args.compare_rules is not None:
        from mcpreel.compare.rules import load_compare_rules

        rules = load_compare_rules(args.compare_rules)
    from mcpreel.replay.noise import Sampling, load_noise

    if args.baseline_command is not None and args.baseline_url is not None:
        raise UsageError("give one baseline: --baseline-command \"CMD\" or --baseline-url URL")
    learn = args.learn_noise is not None
    repeat = args.repeat
    if learn and repeat == 1 and args.baseline_command is None and args.baseline_url is None:
        repeat = LEARN_REPEAT  # one run against the recording shows nothing that varies
    sampling = Sampling(repeat, args.baseline_command, args.baseline_url, learn=learn)
    return ReplayOptions(ignore_paths=[IgnorePath(p) for p in args.ignore_paths], original=args.original,
                         timeout=args.timeout, era=args.era, pace=args.pace, session_index=args.session_index,
                         source=args.source, rules=rules, sampling=sampling if sampling.needed else None,
                         noise=load_noise(args.noise) if args.noise is not None else None, redact=args.redact)


def _fleet_wanted(paths: tuple[str, ...], args: ReplayArgs) -> bool:
    """Whether the run is the fleet's: not exactly one file, or what only the fleet does (``--db``, Ray,
    ``--fail-on slower:F``). One file otherwise keeps replay's own output (:func:`run_replay`)."""
    import os

    if len(paths) != 1 or not os.path.isfile(paths[0]) or args.db is not None or args.executor != "local":
        return True
    return any(v.strip().startswith("slower") for v in args.fail_on)


def run_fleet(paths: tuple[str, ...], args: ReplayArgs) -> int:
    """Many recordings (:mod:`mcpreel.cli.replay_fleet`): the same options, each session a job."""
    from pathlib import Path

    from mcpreel.cli.replay_fleet import FleetCommand, Selection, run_fleet_command
    from mcpreel.replay import ReplayTarget
    from mcpreel.replay.fleet import FailOn, FleetRun, default_jobs

    if args.session_index is not None or args.source is not None:
        raise UsageError("--session and --source pick inside one file: give that one file")
    if args.learn_noise is not None:
        raise UsageError("--learn-noise learns from one recording: give that one file")
    options = replay_options(args)
    cmd = FleetCommand(
        paths=paths, options=options, fmt=args.fmt, out_json=args.out_json, junit=args.junit, html=args.html,
        target=ReplayTarget(args.target_command, args.target_url, args.transport, parse_headers(args.headers)),
        run=FleetRun(args.executor, args.jobs or default_jobs(), ray_address=args.ray_address),
        db=Path(args.db) if args.db else None, fail_on=FailOn.parse(args.fail_on), all_rows=args.all_rows,
        selection=Selection(args.server_name, args.tool, args.client, args.since, args.failed), redact=args.redact,
        baseline=args.baseline_url or args.baseline_command)
    return run_fleet_command(cmd)


#: the runs --learn-noise takes against the target when neither --repeat nor a baseline says
LEARN_REPEAT = 3

_TRANSPORTS = click.Choice(["auto", "streamable-http", "sse", "stdio-v2"])


@click.command("replay", epilog=examples(
    'mcpreel replay baseline.jsonl --target-command "python server_v2.py" -o results.json --junit replay.xml',
    'mcpreel replay cassettes/ --target-url http://127.0.0.1:8000/mcp --jobs 8 --junit fleet.xml --html fleet.html',
    'mcpreel replay --db team.duckdb --server-name github --since 7d --target-command "github-mcp-server stdio"',
))
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--target-command", metavar='"CMD ARGS"', help="Run this server command and replay over its stdio.")
@click.option("--target-url", metavar="URL", help="Replay against this Streamable HTTP or legacy SSE URL.")
@click.option("--transport", type=_TRANSPORTS, default="auto", show_default=True,
              help="For --target-url: auto means legacy SSE if the path ends in /sse, else Streamable HTTP.")
@click.option("-H", "--header", "headers", multiple=True, metavar="'NAME: VALUE'", help="Extra HTTP header (repeatable).")
@click.option("--format", "fmt", type=FORMAT_AUTO, default="auto", show_default=True, help="The session's format.")
@click.option("--ignore-path", "ignore_paths", multiple=True, metavar="PATH",
              help="Leave this path out of every comparison, e.g. '$.result.content[0].text.timestamp', '$..createdAt' "
                   "or '$.result.tools[name=add].description' (repeatable).")
@click.option("--compare-rules", "compare_rules", type=click.Path(dir_okay=False), metavar="FILE",
              help="A rules file (YAML or JSON) of paths to ignore or mask by a pattern, each for a method and tool "
                   "(the format: mcpreel help compare).")
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
@click.option("--db", type=click.Path(dir_okay=False), metavar="FILE",
              help="A corpus index: without paths, replay the indexed sessions the filters below pick; always, "
                   "append the run's verdicts to its `replays` table (`mcpreel query` reads them).")
@click.option("--server-name", metavar="NAME", help="With --db: sessions with this server (* is a wildcard).")
@click.option("--tool", metavar="NAME", help="With --db: sessions that called this tool.")
@click.option("--client", metavar="NAME", help="With --db: sessions of this client (* is a wildcard).")
@click.option("--since", metavar="WHEN", help="With --db: sessions that started since: 30m, 2h, 2d, 1w, today, yesterday, or an ISO date.")
@click.option("--failed", is_flag=True, help="With --db: sessions with a failed operation.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), metavar="N",
              help="Sessions replayed at once, each on its own connection (over stdio, its own server process) "
                   "[default: the CPUs, at most 8].")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Where the sessions run: local worker processes, or Ray tasks (pip install 'mcpreel[ray]'; "
                   "a local Ray, or the cluster of --ray-address / RAY_ADDRESS).")
@click.option("--ray-address", metavar="ADDRESS", help="With --executor ray: the Ray cluster to join (else RAY_ADDRESS).")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True, metavar="K",
              help="Replay K times against the target: a path whose answer varies between the runs is noise, and "
                   "its request is flaky, not changed.")
@click.option("--baseline-command", metavar='"CMD ARGS"',
              help="Also replay (K times) against this server, the old release, over its stdio: what varies within "
                   "it (the recording counts as one of its runs) is noise; changed is what differs from it.")
@click.option("--baseline-url", metavar="URL", help="Like --baseline-command, for a baseline server at this URL.")
@click.option("--learn-noise", "learn_noise", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write what varied (per server, method, tool and path: how often, a redacted example, a mask "
                   "for the part of a text that varies) to this noise file, for --noise (without --repeat or a baseline: "
                   "3 runs).")
@click.option("--noise", type=click.Path(dir_okay=False), metavar="FILE",
              help="Leave out what a --learn-noise run found to vary (the entries for the recording's server).")
@click.option("--fail-on", "fail_on", multiple=True, metavar="WHAT",
              help="Also exit 1 on this (repeatable): flaky (a flaky request), slower:F (a tool whose replayed "
                   "p95 grew past F times its recorded p95, e.g. slower:2.0).")
@click.pass_context
@output.run_command
@options_record(ReplayArgs)
def replay_command(ctx: click.Context, paths: tuple[str, ...], args: ReplayArgs) -> None:
    """Replay a recorded session against a server and compare every response.

    A file holding several client sessions is replayed session by session, each on a fresh connection
    (over stdio, a fresh server process), each in its own protocol era unless --era says otherwise.

    Says first what is replayed against what (and which sessions), then a row for each request whose answer
    is not the same (--all: every request), then a summary line.

    Several files, folders (every session file under them) or --db picks: the fleet -- each client
    session a job, --jobs at once, a line per session in a stable order, a table per tool, and the
    documents over the whole run (-o JSON, --junit a case per session, --html a page linking each session's).

    --repeat K (and --baseline-command/--baseline-url) take samples: a path that varies between runs is
    noise and its request flaky, not changed; --learn-noise FILE writes what varied, --noise FILE applies it.

    Exit 0 when nothing changed, 1 when a request changed or got no answer (--fail-on flaky: also when one
    is flaky), 2 when the replay could not run or the recording holds no answer to judge by.
    """
    if _fleet_wanted(paths, args):
        output.finish(run_fleet(paths, args))
        return
    output.finish(run_replay(paths[0], args))


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
