"""``mcpreel record``: put the recorder where a client expects its server.

``mcpreel record [-o F] -- CMD ARGS...`` runs a stdio server behind the recording proxy; with
``--transport streamable-http|sse --target-url URL`` the HTTP recorder (``cli/record_http.py``) takes over.
``mcpreel proxy start`` (seed 003's spelling) calls the same :func:`run_record`.

stdout belongs to the MCP client: everything this command says goes to stderr.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.limit_options import LIMIT_FLAGS, limit_options, limits_of
from mcpreel.cli.vocabulary import hidden
from mcpreel.errors import UsageError

__all__ = ["record_command", "record_options", "run_record"]

TRANSPORTS = ("stdio", "streamable-http", "sse")
DEFAULT_LISTEN = "127.0.0.1:8765"
_HTTP_ONLY = ("listen", "keep_secrets", "envelope", "allow_origins", "allow_hosts", *LIMIT_FLAGS)
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
                     help="HTTP transports: keep Authorization, cookies and API keys in the recorded headers, and "
                          "secret query parameters (?api_key=, ?token=, …) in the URLs written and printed."),
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
    ]
    for decorate in reversed(decorators):
        fn = decorate(fn)
    return limit_options("HTTP transports: ")(fn)


def _given(ctx: click.Context, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source not in (click.core.ParameterSource.DEFAULT,
                                                 click.core.ParameterSource.DEFAULT_MAP)


def interceptors(rules: Any, control: Any) -> Any:
    """What decides on the forwarding path: ``--rules`` first, then a person at the control channel."""
    if rules is None:
        return control
    if control is None:
        return rules
    from mcpreel.record.intercept import Interceptors

    return Interceptors([rules, control])


def run_record(
    ctx: click.Context,
    *,
    transport: str,
    command: Sequence[str],
    target: str | None,
    out: str | None,
    label: str | None,
    session_file: str | None,
    save_every: float,
    redact: bool,
    listen: str,
    keep_secrets: bool,
    envelope: str | None,
    allow_origins: Sequence[str],
    quiet: bool,
    allow_hosts: Sequence[str] = (),
    command_flag: str = "-- CMD",
    target_flag: str = "--target-url",
    out_dir: str | None = None,
    otlp_endpoint: str | None = None,
    intercept: str | None = None,
    intercept_timeout: float | None = None,
    no_control: bool = False,
    rules_file: str | None = None,
    max_body: int | None = None,
    max_header: int | None = None,
    header_timeout: float | None = None,
    tui: bool = False,
) -> None:
    """Check the words of the call, pick the defaults, run the recorder of ``transport``, exit with its code."""
    from mcpreel.record import ServerStartError, default_label, default_out_path, record_stdio

    say = (lambda text: None) if quiet else (lambda text: output.info(f"mcpreel: {text}"))
    if tui and no_control:
        raise UsageError("--tui needs the control channel: drop --no-control")
    if transport == "stdio":
        if tui:
            raise UsageError("--tui is for HTTP transports: a stdio proxy's stdin and stdout belong to the MCP "
                             "client; run `mcpreel tui` in another terminal, it attaches to this proxy")
        if target:
            raise UsageError(f"{target_flag} is for --transport streamable-http|sse; stdio runs a command ({command_flag})")
        for name in _HTTP_ONLY:
            if _given(ctx, name):
                raise UsageError(f"{_HTTP_FLAGS[name]} applies to HTTP transports only (--transport streamable-http|sse)")
        if not command:
            raise UsageError(f"no server command: give it after {command_flag}")
        label = label or default_label(command)
    else:
        if command:
            raise UsageError(f"--transport {transport} records a server at a URL ({target_flag}), not a command")
        if not target:
            raise UsageError(f"--transport {transport} needs {target_flag} URL")
        from mcpreel.record.http_proxy import parse_target

        parse_target(target)  # a bad URL is refused before a label or a file is made of it
        label = label or default_label(url=target)
    from mcpreel._infra.fileio import refuse_symlink
    from mcpreel.record.naming import check_writable

    if out:
        refuse_symlink(out)  # one line before anything starts (the writers refuse it again)
    for path, what in ((session_file, "session file"), (envelope, "envelope")):
        if path:
            check_writable(path, what)  # before a default file is claimed or anything starts
    redactor = None
    if redact:
        from mcpreel.redact import Redactor

        redactor = Redactor()
    if otlp_endpoint is not None:
        from mcpreel.otel.export import endpoint_url

        endpoint_url(otlp_endpoint)  # a bad URL is refused before anything starts
    rules = None
    if rules_file is not None:
        from mcpreel.rules import RuleSet, load_rules
        from mcpreel.rules.intercept import RulesInterceptor, check_for_recording

        ruleset = RuleSet(load_rules(rules_file), rules_file)
        check_for_recording(ruleset, transport)
        rules = RulesInterceptor(ruleset)
    if transport != "stdio":
        from mcpreel.cli.record_http import run_http_record

        assert target is not None  # checked above: an HTTP transport needs one
        # the default file is claimed there, once --listen and the target are known to be good
        sys.exit(run_http_record(
            transport=transport, target=target, listen=listen, out=Path(out) if out else None, label=label,
            session_file=session_file, save_every=save_every, redactor=redactor, keep_secrets=keep_secrets,
            envelope=envelope, allow_origins=list(allow_origins), otlp_endpoint=otlp_endpoint,
            allow_hosts=list(allow_hosts), control=dict(intercept=intercept, intercept_timeout=intercept_timeout,
                                                        no_control=no_control, quiet=quiet),
            rules=rules, quiet=quiet, tui=tui,
            limits=None if max_body is None or max_header is None or header_timeout is None
            else limits_of(max_body, max_header, header_timeout),
        ))

    if out_dir and out:
        raise UsageError("give --output or --out-dir, not both")
    out_path = Path(out) if out else default_out_path(label, directory=Path(out_dir).expanduser()) if out_dir \
        else default_out_path(label)  # ~: what a wrapped entry of a committed file says
    shown = list(command)
    if redactor is not None:
        shown = Redactor().command(shown)  # a redactor of its own: the recording counts only what it records
    from mcpreel.cli.record_control import start_control

    control = start_control(transport="stdio", reel=out_path, intercept=intercept, intercept_timeout=intercept_timeout,
                            no_control=no_control, quiet=quiet)
    say(f"recording {shlex.join(shown)} -> {out_path}")
    try:
        result = record_stdio(
            command, out_path, label=label, session_file=session_file, save_every=save_every,
            redactor=redactor, warn=output.warning, otlp_endpoint=otlp_endpoint,
            addons=[control] if control is not None else (), interceptor=interceptors(rules, control),
        )
    except ServerStartError:
        say(f"session recorded in {out_path}" + (f" and {session_file}" if session_file else ""))
        raise
    finally:
        if control is not None:
            control.close()
    files = f"{result.out}" + (f" and {result.session_file}" if result.session_file else "")
    notes = [f"{result.invalid} invalid lines"] if result.invalid else []
    if result.redacted is not None:
        notes.append(f"{result.redacted} secrets redacted")
    extra = f" ({', '.join(notes)})" if notes else ""
    say(f"recorded {result.messages} messages{extra} -> {files}; {result.reason}")
    sys.exit(result.exit_code)


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
    if out_dir and options["transport"] != "stdio":
        raise UsageError("--out-dir is for stdio servers; HTTP transports take --output")
    run_record(ctx, command=command, target=target, out_dir=out_dir, **options)
