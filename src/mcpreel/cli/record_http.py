"""The HTTP side of ``mcpreel record`` / ``mcpreel proxy start`` (``--transport streamable-http|sse``).

The ``record`` command (``cli/record_cmd.py``) checks the words of the call and hands the HTTP transports
to :func:`run_http_record`, which builds the proxy's configuration, calls the library
(:func:`mcpreel.record.http_session.record_http`) and says on stderr where to point the client and what
was recorded. stdout is left alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcpreel.cli import output
from mcpreel.record.http_proxy import ProxyConfig, parse_listen
from mcpreel.record.http_session import HttpRecordResult, record_http
from mcpreel.record.intercept import Interceptor
from mcpreel.redact import Redactor
from mcpreel.redact.urls import redact_url
from mcpreel.serving.limits import Limits

__all__ = ["run_http_record", "summary"]

_NAMES = {"streamable-http": "Streamable HTTP", "sse": "legacy HTTP+SSE"}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def summary(result: HttpRecordResult) -> str:
    """The closing line: what was recorded, where."""
    s = result.stats
    unanswered = f", {result.unanswered} unanswered" if result.unanswered else ""
    invalid = f", {s.invalid} invalid" if s.invalid else ""
    redacted = f", {result.redacted} secrets redacted" if result.redacted is not None else ""
    files = str(result.out)
    if result.session_file is not None:
        files += f" and {result.session_file}"
    text = (f"{_count(s.messages, 'message')} in {_count(s.exchanges, 'HTTP exchange')} "
            f"({_count(s.requests, 'request')}{unanswered}{invalid}{redacted}) recorded -> {files}; {result.reason}")
    if result.envelope is not None:
        text += f"; envelope -> {result.envelope}"
    return text


def run_http_record(
    *,
    transport: str,
    target: str,
    listen: str = "127.0.0.1:8765",
    out: Path | None = None,
    label: str | None = None,
    session_file: str | Path | None = None,
    save_every: float | None = None,
    redactor: Redactor | None = None,
    keep_secrets: bool = False,
    envelope: str | Path | None = None,
    allow_origins: Sequence[str] = (),
    otlp_endpoint: str | None = None,
    allow_hosts: Sequence[str] = (),
    control: dict[str, Any] | None = None,
    rules: Interceptor | None = None,
    quiet: bool = False,
    limits: Limits | None = None,
    tui: bool = False,
) -> int:
    """Record an HTTP MCP session until SIGINT/SIGTERM; returns the exit code (0 after a clean stop).

    ``control``: the ``--intercept`` / ``--intercept-timeout`` / ``--no-control`` / ``-q`` words
    (:func:`mcpreel.cli.record_control.start_control`); ``rules``: the ``--rules`` interceptor, which decides
    before the control channel's person. ``quiet`` (``record -q``) silences the three lines of the
    recorder's own (warnings still show). The target and the client's URL are printed with their secret
    query parameters redacted unless ``keep_secrets``; a listener on every address (``0.0.0.0``, ``::``) is
    shown as a URL a client can use.
    """
    from mcpreel.record.naming import default_label, default_out_path

    config = ProxyConfig(transport, target, allow_origins=tuple(allow_origins), keep_secrets=keep_secrets,
                         allow_hosts=tuple(allow_hosts), limits=limits)
    host, port = parse_listen(listen)
    output.warn_exposed(host, "other machines can reach this proxy and, through it, the target "
                              "(foreign Origins are still refused)")
    label = label or default_label(url=target)
    out_path = Path(out) if out is not None else default_out_path(label)  # last: every word was checked

    from mcpreel.cli.record_cmd import interceptors
    from mcpreel.cli.record_control import say as say_control
    from mcpreel.cli.record_control import start_control

    say = (lambda text: None) if quiet else (lambda text: output.info(f"mcpreel: {text}"))
    shown_target = config.shown_target
    words = dict(control or {})
    server = start_control(transport=transport, reel=out_path, intercept=words.get("intercept"),
                           intercept_timeout=words.get("intercept_timeout"),
                           no_control=bool(words.get("no_control")), quiet=quiet or bool(words.get("quiet")),
                           announce=False)

    def publish(url: str) -> None:
        if server is not None:
            server.listen = url
            server.write_info()

    def ready(url: str) -> None:
        publish(url)
        if server is not None and not (quiet or words.get("quiet")):
            say_control(server)
        shown = client_url(url if keep_secrets else redact_url(url), host)
        note = "" if shown == url or keep_secrets else " with the secret parameters of --target-url"
        say(f"recording {_NAMES[transport]} {shown_target} -> {out_path}")
        say(f"point your MCP client at {shown}{note}  (Ctrl+C to stop)")

    def run(**how: Any) -> HttpRecordResult:
        return record_http(
            config, out_path, host=host, port=port, label=label, session_file=session_file,
            save_every=save_every, redactor=redactor, envelope=envelope, otlp_endpoint=otlp_endpoint,
            addons=[server] if server is not None else (), interceptor=interceptors(rules, server), **how,
        )

    try:
        if tui:
            from mcpreel.cli.record_tui import record_under_viewer

            assert server is not None, "record_cmd refuses --tui with --no-control"
            output.info(f"mcpreel: recording {_NAMES[transport]} {shown_target} -> {out_path} (the viewer takes the terminal)")
            result = record_under_viewer(run, server.socket_path, publish=publish, say=output.info)
        else:
            result = run(ready=ready, warn=output.warning)
    finally:
        if server is not None:
            server.close()
    say(summary(result))
    return result.exit_code


def client_url(url: str, host: str) -> str:
    """``url`` as a client can use it: a wildcard listener (``0.0.0.0``, ``::``) is reached at this host's
    name (or 127.0.0.1 when the name does not resolve here), never at the wildcard itself."""
    if host not in ("0.0.0.0", "::", ""):
        return url
    import socket

    name = socket.gethostname()
    try:
        socket.getaddrinfo(name, None)
    except OSError:
        name = "127.0.0.1"
    wildcard = "[::]" if host == "::" else host
    return url.replace(f"//{wildcard}:", f"//{name or '127.0.0.1'}:", 1)
