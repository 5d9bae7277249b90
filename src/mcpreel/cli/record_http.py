"""The HTTP side of ``mcpreel record`` / ``mcpreel proxy start`` (``--transport streamable-http|sse``).

The ``record`` command (``cli/record_cmd.py``) turns the words of the call into the recording's options and
hands the HTTP transports to :func:`run_http_record`, which calls the library (:func:`mcpreel.record.record`)
and says on stderr where to point the client and what was recorded. stdout is left alone. This module
imports nothing of ``record_cmd`` (one direction: the command calls this).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from mcpreel.cli import output
from mcpreel.errors import UsageError
from mcpreel.redact.urls import redact_url

if TYPE_CHECKING:
    from mcpreel.record.options import RecordOptions, RecordResult

__all__ = ["run_http_record", "summary"]

_NAMES = {"streamable-http": "Streamable HTTP", "sse": "legacy HTTP+SSE"}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def summary(result: RecordResult) -> str:
    """The closing line: what was recorded, where."""
    s = result.stats
    assert s is not None, "an HTTP recording has its stats"
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


def run_http_record(options: RecordOptions, *, quiet: bool = False, tui: bool = False) -> int:
    """Record an HTTP MCP session until SIGINT/SIGTERM; returns the exit code (0 after a clean stop).

    ``options`` come from the words of the call (:func:`mcpreel.cli.record_cmd.options_of`). ``quiet``
    (``record -q``) silences the lines of the recorder's own (warnings still show); ``tui`` runs the viewer
    in this terminal. The target and the client's URL are printed with their secret query parameters
    redacted unless ``--keep-secrets``; a listener on every address (``0.0.0.0``, ``::``) is shown as a URL a
    client can use.
    """
    from mcpreel.cli.record_control import say as say_control
    from mcpreel.record import HttpTarget, RecordHooks, record

    target = options.server
    assert isinstance(target, HttpTarget)
    config, host = target.config, target.host
    keep_secrets = config.keep_secrets
    transport, shown_target, out_path = config.transport, config.shown_target, options.out
    say = (lambda text: None) if quiet else (lambda text: output.info(f"mcpreel: {text}"))
    controls: list[Any] = []

    def on_control(server: Any) -> None:
        controls.append(server)
        if not quiet:
            say_control(server)

    def ready(url: str) -> None:
        shown = client_url(url if keep_secrets else redact_url(url), host)
        note = "" if shown == url or keep_secrets else " with the secret parameters of --target-url"
        say(f"recording {_NAMES[transport]} {shown_target} -> {out_path}")
        say(f"point your MCP client at {shown}{note}  (Ctrl+C to stop)")

    hooks = RecordHooks(warn=output.warning, note=lambda text: output.info(f"mcpreel: {text}"),
                        on_control=on_control)
    if tui:
        from mcpreel.cli.record_tui import record_under_viewer

        def run(**how: Any) -> RecordResult:
            return record(options, dataclasses.replace(hooks, on_control=controls.append, **how))

        output.info(f"mcpreel: recording {_NAMES[transport]} {shown_target} -> {out_path} (the viewer takes the terminal)")
        def socket_path() -> Any:
            if not controls:
                raise UsageError("--tui needs the control channel, and it could not start")
            return controls[0].socket_path

        result = record_under_viewer(run, socket_path, say=output.info)
    else:
        result = record(options, dataclasses.replace(hooks, ready=ready))
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
