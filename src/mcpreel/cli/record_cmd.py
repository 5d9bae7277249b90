"""``mcpreel record``: put the recorder where a client expects its server.

``mcpreel record [-o F] -- CMD ARGS...`` runs a stdio server behind the recording proxy; with
``--transport streamable-http|sse --target-url URL`` the HTTP recorder (``cli/record_http.py``) takes over.
``mcpreel proxy start`` (seed 003's spelling) calls the same :func:`run_record`. Both turn their words into
the one :class:`~mcpreel.record.RecordOptions` of the library (:func:`options_of`) and call
:func:`mcpreel.record.record`.

stdout belongs to the MCP client: everything this command says goes to stderr.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.limit_options import LIMIT_FLAGS, limit_options, limits_of
from mcpreel.cli.vocabulary import hidden
from mcpreel.errors import ServerExited, UsageError

if TYPE_CHECKING:  # the recording library is imported when a recording runs, not for every command line
    from mcpreel.record.options import RecordOptions

__all__ = ["RecordWords", "ServerWords", "options_of", "record_command", "record_options", "run_record"]

TRANSPORTS = ("stdio", "streamable-http", "sse")
DEFAULT_LISTEN = "127.0.0.1:8765"
_HTTP_ONLY = ("listen", "envelope", "allow_origins", "allow_hosts", *LIMIT_FLAGS)
_HTTP_FLAGS = {"listen": "--listen", "keep_secrets": "--keep-secrets", "envelope": "--envelope",
               "allow_origins": "--allow-origin", "allow_hosts": "--allow-host", **LIMIT_FLAGS}


def record_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The options ``record`` and ``proxy start`` share (both transports)."""
    decorators = [
        click.option("--transport", type=click.Choice(TRANSPORTS), default="stdio", show_default=True,
                     help="How the client and the server talk."),
        click.option("-o", "--output", "out", **hidden("--out"), type=click.Path(dir_okay=False),
                     help="The reel to write; an existing reel gets the new session appended "
                          "[default: ./mcpreel-sessions/<label>-<UTC time>.jsonl]."),
        click.option("--label", help="A short name for the session [default: from the server command or URL]."),
        click.option("--session-file", type=click.Path(dir_okay=False),
                     help="Also keep a qai session file (JSON), saved at exit and every --save-every seconds."),
        click.option("--save-every", type=click.FloatRange(min=0), default=10.0, show_default=True,
                     metavar="SECONDS", help="How often the session file is saved while recording (0: only at exit)."),
        click.option("--redact", is_flag=True,
                     help="Redact secrets in what is recorded; what is forwarded never changes."),
        click.option("--listen", default=DEFAULT_LISTEN, show_default=True, metavar="HOST:PORT",
                     help="HTTP transports: where the proxy listens."),
        click.option("--keep-secrets", is_flag=True,
                     help="Keep Authorization, cookies and API keys in the recorded headers, and secret query "
                          "parameters (?api_key=, ?token=, …) in the URLs written and printed; stdio: also keep the "
                          "raw bytes copy (HTTP/2 over stdio, binary) exactly as it crossed."),
        click.option("--envelope", type=click.Path(dir_okay=False),
                     help="HTTP transports: also write the HTTP transcript envelope (JSON)."),
        click.option("--allow-origin", "allow_origins", multiple=True, metavar="ORIGIN",
                     help="HTTP transports: an Origin the proxy's listener accepts (repeatable)."),
        click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
                     help="HTTP transports: a Host name a loopback listener accepts beyond the loopback names "
                          "(others are refused 421: DNS rebinding; repeatable)."),
        click.option("--rules", "rules_file", type=click.Path(dir_okay=False), metavar="FILE",
                     help="Fault injection: a rules file (JSON or YAML) whose rules delay, rewrite, drop, fail or "
                          "close what is relayed; each action is recorded with decided_by rules:NAME."),
        click.option("--tui", is_flag=True,
                     help="HTTP transports: watch (and steer) the session in this terminal with mcpreel tui, the "
                          "proxy running behind it; quitting the viewer stops the recording. Not for stdio: its "
                          "stdin and stdout are the client's (run mcpreel tui in another terminal)."),
        click.option("-q", "--quiet", is_flag=True, help="Say nothing of the recorder's own on stderr (warnings still)."),
        click.option("--intercept", is_flag=False, flag_value="", default=None, metavar="[FILTER]",
                     help="Hold messages matching FILTER (filter tokens: method:tools/call tool:NAME dir:c2s ...; "
                          "default: every request from the client) until a viewer (mcpreel tui) forwards, edits "
                          "or drops them."),
        click.option("--intercept-timeout", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
                     help="With --intercept: a held message goes on unchanged after SECONDS (default: it waits)."),
        click.option("--no-control", is_flag=True,
                     help="Run no control socket (no live viewer, no --intercept)."),
        click.option("--otlp-endpoint", metavar="URL",
                     help="Also export spans live to this OTLP/HTTP collector (batched, off the forwarding path; "
                          "a dead collector costs one warning). Needs mcpreel[otel]."),
        click.option("--tag", "tags", multiple=True, metavar="KEY=VALUE",
                     help="A tag written into the session header (the reel's meta line, the session file's "
                          "metadata.tags; repeatable)."),
    ]
    for decorate in reversed(decorators):
        fn = decorate(fn)
    return limit_options("HTTP transports: ")(fn)


def _given(ctx: click.Context, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source not in (click.core.ParameterSource.DEFAULT,
                                                 click.core.ParameterSource.DEFAULT_MAP)


@dataclass(frozen=True)
class RecordWords:
    """The words of one ``record`` / ``proxy start`` call, as click parsed them: one field per option of
    :func:`record_options` (a new option is a field here, its decorator, and its line in :func:`options_of`)."""

    transport: str
    out: str | None
    label: str | None
    session_file: str | None
    save_every: float
    redact: bool
    listen: str
    keep_secrets: bool
    envelope: str | None
    allow_origins: tuple[str, ...]
    allow_hosts: tuple[str, ...]
    rules_file: str | None
    tui: bool
    quiet: bool
    intercept: str | None
    intercept_timeout: float | None
    no_control: bool
    otlp_endpoint: str | None
    tags: tuple[str, ...]
    max_body: int | None = None
    max_header: int | None = None
    header_timeout: float | None = None


@dataclass(frozen=True)
class ServerWords:
    """How the verb names the server: the flags its messages cite, and what was given."""

    command: tuple[str, ...]
    target: str | None
    command_flag: str = "-- CMD"
    target_flag: str = "--target-url"
    out_dir: str | None = None


def _check(ctx: click.Context, w: RecordWords, server: ServerWords) -> str:
    """Refuse what does not go together, in one line each, before anything starts; returns the label."""
    from mcpreel.record import default_label

    if w.tui and w.no_control:
        raise UsageError("--tui needs the control channel: drop --no-control")
    if w.transport == "stdio":
        if w.tui:
            raise UsageError("--tui is for HTTP transports: a stdio proxy's stdin and stdout belong to the MCP "
                             "client; run `mcpreel tui` in another terminal, it attaches to this proxy")
        if server.target:
            raise UsageError(f"{server.target_flag} is for --transport streamable-http|sse; stdio runs a command "
                             f"({server.command_flag})")
        for name in _HTTP_ONLY:
            if _given(ctx, name):
                raise UsageError(f"{_HTTP_FLAGS[name]} applies to HTTP transports only (--transport streamable-http|sse)")
        if not server.command:
            raise UsageError(f"no server command: give it after {server.command_flag}")
        if server.out_dir and w.out:
            raise UsageError("give --output or --out-dir, not both")
        return w.label or default_label(server.command)
    if server.out_dir:
        raise UsageError("--out-dir is for stdio servers; HTTP transports take --output")
    if server.command:
        raise UsageError(f"--transport {w.transport} records a server at a URL ({server.target_flag}), not a command")
    if not server.target:
        raise UsageError(f"--transport {w.transport} needs {server.target_flag} URL")
    from mcpreel.record.http_proxy import parse_target

    parse_target(server.target)  # a bad URL is refused before a label or a file is made of it
    return w.label or default_label(url=server.target)


def options_of(ctx: click.Context, w: RecordWords, server: ServerWords) -> RecordOptions:
    """The call's words as the one :class:`~mcpreel.record.RecordOptions` of the recording, every word checked
    (the default reel is claimed last, once nothing else can be refused)."""
    from mcpreel._infra.fileio import refuse_symlink
    from mcpreel.cli.record_control import control_options
    from mcpreel.record import HttpTarget, RecordOptions, StdioServer, default_out_path, parse_tags
    from mcpreel.record.naming import check_writable

    label = _check(ctx, w, server)
    if w.out:
        refuse_symlink(w.out)  # one line before anything starts (the writers refuse it again)
    for path, what in ((w.session_file, "session file"), (w.envelope, "envelope")):
        if path:
            check_writable(path, what)  # before a default file is claimed or anything starts
    if w.otlp_endpoint is not None:
        from mcpreel.otel.export import endpoint_url

        endpoint_url(w.otlp_endpoint)  # a bad URL is refused before anything starts
    rules = None
    if w.rules_file is not None:
        from mcpreel.rules import RuleSet, load_rules
        from mcpreel.rules.intercept import check_for_recording

        rules = RuleSet(load_rules(w.rules_file), w.rules_file)
        check_for_recording(rules, w.transport)
    tags = parse_tags(w.tags)
    control = control_options(w.intercept, w.intercept_timeout, w.no_control)
    target: StdioServer | HttpTarget
    if w.transport == "stdio":
        target = StdioServer(tuple(server.command), keep_secrets=w.keep_secrets)
        out = Path(w.out) if w.out else default_out_path(label, directory=Path(server.out_dir).expanduser()) \
            if server.out_dir else default_out_path(label)  # ~: what a wrapped entry of a committed file says
    else:
        from mcpreel.record.http_proxy import ProxyConfig
        from mcpreel.serving.listen import parse_listen

        assert server.target is not None  # checked: an HTTP transport needs one
        limits = None if w.max_body is None or w.max_header is None or w.header_timeout is None \
            else limits_of(w.max_body, w.max_header, w.header_timeout)
        config = ProxyConfig(w.transport, server.target, allow_origins=tuple(w.allow_origins),
                             keep_secrets=w.keep_secrets, allow_hosts=tuple(w.allow_hosts), limits=limits)
        host, port = parse_listen(w.listen)
        output.warn_exposed(host, "other machines can reach this proxy and, through it, the target "
                                  "(foreign Origins are still refused)")
        target = HttpTarget(config, host, port, Path(w.envelope) if w.envelope else None)
        out = Path(w.out) if w.out else default_out_path(label)  # last: every word was checked
    return RecordOptions(target, out, label=label, session_file=Path(w.session_file) if w.session_file else None,
                         save_every=w.save_every, redact=w.redact, otlp_endpoint=w.otlp_endpoint, tags=tags,
                         control=control, rules=rules)


def run_record(ctx: click.Context, words: RecordWords, server: ServerWords) -> None:
    """Check the words of the call, pick the defaults, run the recorder of the transport, exit with its code."""
    options = options_of(ctx, words, server)
    if options.transport != "stdio":
        from mcpreel.cli.record_http import run_http_record

        code = run_http_record(options, quiet=words.quiet, tui=words.tui)
    else:
        code = _run_stdio_record(options, quiet=words.quiet)
    if code:
        raise ServerExited(code)  # the one exit path (output.run_command) exits with the server's code


def startable(command: Any, env: Any = None) -> bool:
    """Whether ``command`` names a program that can be started (found on PATH, or a path to an
    executable file): what decides if ``record`` may say "recording" before it tries."""
    import os
    import shutil

    argv = [str(a) for a in command]
    if not argv:
        return False
    path = (env or os.environ).get("PATH", os.defpath) if env is not None else None
    return shutil.which(argv[0], path=path) is not None


def _run_stdio_record(options: RecordOptions, *, quiet: bool) -> int:
    from mcpreel.cli.record_control import say as say_control
    from mcpreel.record import RecordHooks, ServerStartError, StdioServer, record
    from mcpreel.redact import Redactor

    say = (lambda text: None) if quiet else (lambda text: output.info(f"mcpreel: {text}"))
    shown = list(options.server.command) if isinstance(options.server, StdioServer) else []
    if options.redact:
        shown = Redactor().command(shown)  # a redactor of its own: the recording counts only what it records

    # a command that will not start is said first: no "recording ... ->" or control line before it
    starts = isinstance(options.server, StdioServer) and startable(options.server.command, options.server.env)
    hooks = RecordHooks(warn=output.warning, note=lambda text: output.info(f"mcpreel: {text}"),
                        on_control=None if quiet or not starts else say_control,
                        ready=lambda where: say(f"recording {shlex.join(shown)} -> {options.out}") if starts else None)
    try:
        result = record(options, hooks)
    except ServerStartError as exc:
        output.error(str(exc))
        say(f"the failed start is recorded in {options.out}"
            + (f" and {options.session_file}" if options.session_file else ""))
        raise ServerExited(127) from exc
    files = f"{result.out}" + (f" and {result.session_file}" if result.session_file else "")
    notes = [f"{result.invalid} invalid lines"] if result.invalid else []
    if result.redacted is not None:
        notes.append(f"{result.redacted} secrets redacted")
    extra = f" ({', '.join(notes)})" if notes else ""
    say(f"recorded {result.messages} messages{extra} -> {files}; {result.reason}")
    return result.exit_code


@click.command(
    "record",
    context_settings={"allow_interspersed_args": False},
    epilog=examples(
        "mcpreel record -o session.jsonl -- python my_server.py",
        "mcpreel record --transport streamable-http --target-url http://127.0.0.1:8000/mcp -o s.jsonl",
        "mcpreel record --intercept 'tool:search' -o session.jsonl -- python my_server.py",
    ),
)
@record_options
@click.option("--target-url", "target", **hidden("--target"), metavar="URL", help="HTTP transports: the server's URL.")
@click.option("--out-dir", type=click.Path(file_okay=False),
              help="stdio: write the default-named reel into this folder (what `mcpreel wrap` uses).")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="[-- CMD [ARGS]...]")
@click.pass_context
@output.run_command
def record_command(ctx: click.Context, command: tuple[str, ...], target: str | None, out_dir: str | None,
                   **options: Any) -> None:
    """Record an MCP session: put this where the client expects the server.

    Every byte is forwarded unchanged; every line is recorded both ways with its time. The command
    exits with the server's exit code (128+N for signal N, 127 if it cannot start).
    """
    run_record(ctx, RecordWords(**options), ServerWords(command, target, out_dir=out_dir))
