"""``mcpreel serve``: a recording becomes an MCP server (stdio, Streamable HTTP or legacy SSE).

With ``--record-mode`` the recording is a cassette (:mod:`mcpreel.cassette.run`): replayed, recorded
from the real server, or both, as the mode says.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from mcpreel.cassette.mode import RecordMode
from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.limit_options import limit_options, limits_of
from mcpreel.cli.listen_options import listen_options
from mcpreel.cli.params import FORMAT_AUTO, SESSION_FILE
from mcpreel.cli.records import options_record
from mcpreel.errors import DifferenceFound, TransportError, UsageError
from mcpreel.serving.listen import Listener

if TYPE_CHECKING:
    from mcpreel.cassette.run import CassetteOptions


class RecordModeParam(click.ParamType):
    """A record mode, validated by :meth:`RecordMode.parse` (whose error lists the valid values)."""

    name = "record-mode"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(RecordMode.values()) + "]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> RecordMode:
        try:
            return RecordMode.parse(value)
        except UsageError as exc:
            self.fail(str(exc), param, ctx)


@dataclass(frozen=True)
class ServeArgs:
    """What ``serve``'s options said, as one record (:func:`mcpreel.cli.records.options_record`): the
    fields are the click parameter names, so a new option is a decorator line and a field here."""

    transport: str
    host: str
    port: int
    fmt: str
    match: str
    no_repeat: bool
    on_miss: str
    target_command: str | None
    target_url: str | None
    allow_origins: tuple[str, ...]
    allow_hosts: tuple[str, ...]
    answer_timeout: float
    record_mode: RecordMode | None
    rules_file: str | None
    report: str | None
    source_name: str | None
    redact: bool
    tags: tuple[str, ...]
    max_body: int
    max_header: int
    header_timeout: float

    def listener(self) -> Listener:
        """How clients reach what is served: the transport, the address and who may ask."""
        return Listener(transport=self.transport, host=self.host, port=self.port, allow_origins=self.allow_origins,
                        allow_hosts=self.allow_hosts,
                        limits=limits_of(self.max_body, self.max_header, self.header_timeout))


@click.command("serve", epilog=examples(
    "mcpreel serve session.jsonl  # stdio: point a client's server command here",
    "mcpreel serve session.jsonl --transport streamable-http --listen 127.0.0.1:8000",
    'mcpreel serve cassette.jsonl --record-mode once --target-command "python server.py"',
))
@click.argument("session", type=SESSION_FILE)
@click.option("--transport", type=click.Choice(["stdio", "streamable-http", "sse", "stdio-v2"]), default="stdio",
              show_default=True,
              help="stdio-v2: HTTP/2 on stdin/stdout (the Transports WG's draft; the default when the recording's "
                   "stdio pipe spoke it).")
@listen_options(8000, "HTTP: ")
@click.option("--format", "fmt", type=FORMAT_AUTO, default="auto", show_default=True, help="The session's format.")
@click.option("--match", "match", type=click.Choice(["method-params", "sequential", "strict"]),
              default="method-params", show_default=True,
              help="method-params: method + params without volatile _meta; strict: exact params; "
                   "sequential: recorded order.")
@click.option("--no-repeat", is_flag=True, help="Do not repeat the last answer once a request's answers are used up.")
@click.option("--on-miss", type=click.Choice(["error", "fail", "forward"]), default="error", show_default=True,
              help="error: answer with a JSON-RPC error; fail: the same, and exit 1 at the end; "
                   "forward: ask the live --target-… server and add its answer to the recording.")
@click.option("--target-command", metavar='"CMD ARGS"', help="With --on-miss forward or --record-mode: the live server command.")
@click.option("--target-url", metavar="URL", help="With --on-miss forward or --record-mode: the live server URL.")
@click.option("--allow-origin", "allow_origins", multiple=True, metavar="ORIGIN",
              help="Accept requests from this non-loopback Origin (HTTP; '*' for any; repeatable).")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="HTTP transports: a Host name a loopback listener accepts beyond the loopback names "
                   "(others are refused 421: DNS rebinding; repeatable).")
@click.option("--answer-timeout", type=click.FloatRange(min=0.01), default=10.0, show_default=True,
              help="Seconds a recorded server request waits for the client's answer.")
@click.option("--record-mode", type=RecordModeParam(), default=None,
              help="Treat SESSION as a cassette: once (record it if missing, else replay; misses fail), "
                   "new_episodes (replay; misses go to the real server and join it), none (replay only; "
                   "misses fail), all (record it again). The real server: --target-command (stdio) or "
                   "--target-url (HTTP).")
@click.option("--rules", "rules_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Fault injection: a rules file (JSON or YAML) whose rules delay, rewrite, drop, fail, "
                   "break or close what the client sends and is answered.")
@click.option("--report", type=click.Path(dir_okay=False), metavar="FILE",
              help="With --record-mode: append what happens (ready, misses, saved) to FILE as JSON lines.")
@click.option("--source", "source_name", metavar="NAME",
              help="A merged file: serve this source's server only (a file name of `mcpreel merge`; required "
                   "when the file merges several servers: run one serve per source, each on its own port).")
@click.option("--redact", is_flag=True,
              help="With --record-mode: write the cassette redacted, as `mcpreel redact` does (keyed markers; "
                   "the key: $MCPREEL_REDACT_KEY, else .mcpreel/redact.key here, created on first use).")
@click.option("--tag", "tags", multiple=True, metavar="KEY=VALUE",
              help="With --record-mode: a tag written into the recording's header (metadata.tags; repeatable).")
@limit_options("HTTP: ")
@click.pass_context
@output.run_command
@options_record(ServeArgs)
def serve_command(ctx: click.Context, session: str, args: ServeArgs) -> None:
    """Serve a recorded session as an MCP server (a mock for testing clients)."""
    from mcpreel.mock import ForwardTarget, Mock, MockOptions, ServeHooks, serve_file
    from mcpreel.rules import RuleSet, load_rules

    rules = RuleSet(load_rules(args.rules_file), args.rules_file) if args.rules_file is not None else None
    listener = args.listener()
    if args.record_mode is not None:
        for name, flag in (("on_miss", "--on-miss"), ("fmt", "--format")):
            source = ctx.get_parameter_source(name)
            if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
                raise UsageError(f"--record-mode decides what a miss does and reads the cassette itself: drop {flag}")
        if args.source_name is not None:
            raise UsageError("--source serves one server of a merged file; a cassette (--record-mode) is one server")
        redact_key = None
        if args.redact:  # the key is created only where something may be written
            from mcpreel.redact.keys import find_key, load_or_create_key

            redact_key = find_key() if args.record_mode is RecordMode.NONE else load_or_create_key()
        from mcpreel.cassette.run import CassetteOptions
        from mcpreel.record import parse_tags

        cassette_options = CassetteOptions(match=args.match, repeat=not args.no_repeat,
                                           answer_timeout=args.answer_timeout, report=args.report, rules=rules,
                                           redact_key=redact_key, tags=parse_tags(args.tags))
        _serve_cassette(session, args.record_mode, target_command=args.target_command, target_url=args.target_url,
                        listener=listener, options=cassette_options)
        return
    if args.tags:
        raise UsageError("--tag goes with --record-mode (it tags the recording written to the cassette)")
    if args.report is not None:
        raise UsageError("--report goes with --record-mode")
    if args.redact:
        raise UsageError("--redact goes with --record-mode (it redacts what is written to the cassette)")

    if args.transport not in ("stdio", "stdio-v2"):
        output.warn_exposed(args.host, "the recording is served to anyone who can reach it")
    from mcpreel.formats.reel import raw_marks, raw_note

    if "h2" in raw_marks(session) and ctx.get_parameter_source("transport") in (None, ParameterSource.DEFAULT):
        listener = dataclasses.replace(listener, transport="stdio-v2")  # it speaks what the recording spoke
    raw = raw_note(session, "serve", speaks_h2=listener.transport == "stdio-v2")  # said in one line, not a failure
    if raw is not None:
        output.warning(raw)

    loading = contextlib.ExitStack()  # the bar while the recording loads, closed once it is served

    def ready(mock: Mock, where: str) -> None:
        loading.close()
        n = mock.recorded_requests
        held = ", indexed on disk" if mock.compact else ""
        output.info(f"serving {session} ({n} recorded requests, match {args.match}{held}) on {where}")

    options = MockOptions(match=args.match, repeat=not args.no_repeat, on_miss=args.on_miss,
                          answer_timeout=args.answer_timeout)
    connection = None
    if rules is not None:  # the rules plug into the mock's seam; the mock does not know them
        from mcpreel.rules.mock import ruled_connections

        connection = ruled_connections(rules)
    with loading:
        progress = loading.enter_context(output.byte_progress(output.file_size(session), "loading"))
        mock = serve_file(session, format=args.fmt, source=args.source_name, options=options, listener=listener,
                          forward=ForwardTarget(command=args.target_command, url=args.target_url),
                          connection=connection,
                          hooks=ServeHooks(on_event=lambda line: output.info(f"serve: {line}"), on_ready=ready,
                                           on_progress=progress))
    stats = mock.stats
    asks = stats.asks_summary()
    output.info(f"served {stats.requests} requests: {stats.answered} answered from the recording, "
                f"{len(stats.misses)} missed, {stats.forwarded} forwarded" + (f"; {asks}" if asks else ""))
    if mock.failed:
        raise DifferenceFound(f"{len(stats.misses)} requests were not in the recording (--on-miss fail)")


def _serve_cassette(cassette: str, mode: RecordMode, *, target_command: str | None, target_url: str | None,
                    listener: Listener, options: CassetteOptions) -> None:
    from mcpreel.cassette.run import CassetteHooks, Plan, serve_cassette

    if listener.transport != "stdio":
        output.warn_exposed(listener.host, "the cassette is served to anyone who can reach it")

    def ready(plan: Plan, where: str) -> None:
        output.info(f"mcpreel: {plan.describe()}")
        if where != "stdio":
            output.info(f"mcpreel: point your MCP client at {where}  (Ctrl+C to stop)")

    hooks = CassetteHooks(on_event=lambda line: output.info(f"serve: {line}"), on_ready=ready, warn=output.warning)
    run = serve_cassette(cassette, mode, command=target_command, url=target_url, listener=listener, options=options,
                         hooks=hooks)
    if run.recording is not None:
        rec = run.recording
        if not rec.saved and not rec.clean:
            raise TransportError(rec.describe())
        output.info(f"mcpreel: {rec.describe()}")
        return
    stats = run.stats
    output.info(f"served {stats.requests} requests: {stats.answered} answered from the cassette, "
                f"{len(stats.misses)} missed, {stats.forwarded} forwarded")
    if run.failed:
        raise DifferenceFound(f"{len(stats.misses)} requests could not be answered from {cassette} "
                              f"(record mode {mode})")
