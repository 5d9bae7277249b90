"""What one recording is asked to do: the options record every front end fills, and what it gives back.

Every way into a recording — ``mcpreel record`` and ``proxy start`` (both transports), the pytest plugin
and the cassette flows (:mod:`mcpreel.cassette.run`), the demo (:mod:`mcpreel.demo.run`) — fills one
:class:`RecordOptions` and calls :func:`mcpreel.record.record`; :func:`mcpreel.record.addons.default_addons`
turns the options into the recording's addons (redaction, tags, the session file, live OTLP, the control
server, rules and intercept) for whichever transport runs it. A new recording option is a field here and
a few lines there, never an edit per transport or per front end (as mitmproxy's ``Options`` and pandoc's
``Opt`` are one record that every front end fills).

Two records beside the options: :class:`RecordHooks`, how a front end plugs into a run (callbacks, its own
addons; nothing a person chooses), and :class:`RecordResult`, how a recording ended, one type for every
transport.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpreel.errors import UsageError

if TYPE_CHECKING:
    from mcpreel.intercept import Interceptor
    from mcpreel.record.http_proxy import ProxyConfig
    from mcpreel.record.http_recorder import RecorderStats

__all__ = ["ControlOptions", "HttpTarget", "RecordHooks", "RecordOptions", "RecordResult", "StdioServer",
           "parse_tags"]

Warn = Callable[[str], None]


@dataclass(frozen=True)
class StdioServer:
    """stdio: the server's command, started by the proxy; ``fds`` are the client's side (stdin, stdout, stderr)."""

    command: tuple[str, ...]
    env: Mapping[str, str] | None = None
    cwd: str | os.PathLike[str] | None = None
    fds: tuple[int, int, int] = (0, 1, 2)
    #: keep credentials in the raw ``bytes`` copy and the decoded HTTP/2 headers (``--keep-secrets``)
    keep_secrets: bool = False

    @property
    def transport(self) -> str:
        return "stdio"


@dataclass(frozen=True)
class HttpTarget:
    """Streamable HTTP or legacy SSE: what the proxy forwards where, where it listens, and the envelope to write."""

    config: ProxyConfig
    host: str = "127.0.0.1"
    port: int = 8765
    envelope: Path | None = None

    @property
    def transport(self) -> str:
        return self.config.transport


@dataclass(frozen=True)
class ControlOptions:
    """The control channel (a viewer, ``mcpreel tui``, attaches; ``--intercept`` holds messages for it)."""

    intercept: str | None = None  # a filter of what is held (``""``: every request from the client)
    intercept_timeout: float | None = None  # a held message goes on unchanged after this many seconds


@dataclass(frozen=True)
class RecordOptions:
    """One recording, whatever its transport and its front end (see the module docstring).

    ``tags`` (``--tag KEY=VALUE``) go into the session header's ``metadata.tags`` — the reel's meta line
    and the qai file's ``metadata`` — as agent-vcr's ``metadata.tags`` does. ``control``: None runs no
    control server (the library's default; the CLI runs one unless ``--no-control``). ``rules`` (a
    :class:`mcpreel.rules.RuleSet`) decide on the forwarding path before a person at the control channel.
    """

    server: StdioServer | HttpTarget
    out: Path
    label: str | None = None
    session_file: Path | None = None
    save_every: float | None = 10.0  # seconds between the session file's saves (None or 0: only at the end)
    redact: bool = False
    otlp_endpoint: str | None = None
    tags: tuple[tuple[str, str], ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    control: ControlOptions | None = None
    rules: Any = None

    @property
    def transport(self) -> str:
        return self.server.transport


@dataclass(frozen=True)
class RecordHooks:
    """How a front end plugs into one run (none of it changes what is recorded by itself).

    ``warn``: each warning as it happens (they are also in the result). ``ready``: where the client
    reaches the recording — HTTP: the listening URL once a client can connect; stdio: ``"stdio"``, just
    before the server is started. ``on_server``: HTTP, the :class:`~mcpreel.record.http_proxy.ProxyServer`
    before it serves (to stop it from another thread). ``on_control``: the control server once it started
    (to say where it is). ``addons`` and ``interceptor``: the caller's own, after the built-in ones.
    ``handle_signals``: HTTP, stop on SIGINT/SIGTERM (only from the main thread). ``note``: what the
    recording says of its own that is no warning (a viewer of the control channel came or went).
    """

    warn: Warn | None = None
    note: Warn | None = None
    ready: Callable[[str], object] | None = None
    on_server: Callable[[Any], object] | None = None
    on_control: Callable[[Any], object] | None = None
    addons: tuple[object, ...] = ()
    interceptor: Interceptor | None = None
    handle_signals: bool = True


@dataclass
class RecordResult:
    """How a recording ended, for every transport: the exit status to pass on, why, and what was recorded where."""

    exit_code: int
    reason: str
    out: Path
    session_file: Path | None = None  # None also when it was asked for but could not be saved (warned)
    messages: int = 0
    invalid: int = 0
    stderr_lines: int = 0  # stdio
    redacted: int | None = None  # values the redactor replaced (None: no redaction)
    warnings: list[str] = field(default_factory=list)
    #: stdio: the client ended the session (closed its stdin, stopped reading, or signalled the proxy) rather
    #: than the server leaving on its own: what a cassette recorder calls a clean end. HTTP: always True
    client_ended: bool = False
    stats: RecorderStats | None = None  # HTTP: exchanges, requests, statuses
    unanswered: int = 0  # HTTP: requests no answer came to
    envelope: Path | None = None  # HTTP: the transcript envelope written


def parse_tags(words: Iterable[str], flag: str = "--tag") -> tuple[tuple[str, str], ...]:
    """``KEY=VALUE`` words -> ``(key, value)`` pairs, in order (a key given again: the last value wins)."""
    tags: dict[str, str] = {}
    for word in words:
        key, eq, value = word.partition("=")
        key = key.strip()
        if not eq or not key:
            raise UsageError(f"{flag} {word!r}: give KEY=VALUE (a non-empty key, then =)")
        tags[key] = value
    return tuple(tags.items())
