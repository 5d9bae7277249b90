"""Replay: verify a server against a recording, serve a recording as a server, diff two recordings.

One matching engine in the middle (:mod:`.cassette` pairs a session into exchanges, :mod:`.matcher`
finds the exchange that answers a request, :mod:`.normalize` and :mod:`.jsondiff` say what "the same"
means), used in both directions:

- :mod:`.verify` re-sends a recording's client side to a live server and judges every answer;
- :mod:`.mock` answers a live client from a recording, :mod:`.serve` puts it on stdio or HTTP, and
  :mod:`.forward` passes misses to a live server;
- :mod:`.diff` compares two recordings.

The functions here are the library's entry points (the CLI calls nothing else): they read the
session file, run, and return a report object; they never print.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from mcpreel.formats import open_session
from mcpreel.replay.cassette import Cassette, build
from mcpreel.replay.diff import DiffOptions, SessionDiff, diff_sessions
from mcpreel.replay.matcher import MATCH_MODES
from mcpreel.replay.mock import ON_MISS, Mock, MockOptions, MockStats
from mcpreel.replay.normalize import IgnorePath
from mcpreel.replay.verify import ReplayOptions, ReplayReport, replay
from mcpreel.transports import open_target

__all__ = [
    "MATCH_MODES",
    "ON_MISS",
    "Cassette",
    "DiffOptions",
    "IgnorePath",
    "Mock",
    "MockOptions",
    "MockStats",
    "ReplayOptions",
    "ReplayReport",
    "SessionDiff",
    "build",
    "diff_files",
    "diff_sessions",
    "replay",
    "replay_file",
    "serve_file",
]


def replay_file(
    path: str | Path,
    *,
    command: str | Sequence[str] | None = None,
    url: str | None = None,
    transport: str = "auto",
    headers: dict[str, str] | None = None,
    format: str = "auto",
    options: ReplayOptions | None = None,
    on_event: Callable[[str], None] | None = None,
) -> ReplayReport:
    """Replay the session in ``path`` against a server command or URL; return the report."""
    session, _ = open_session(path, format)
    session.materialize()
    target = open_target(command, url, transport=transport, headers=headers)
    shown = url if url is not None else (command if isinstance(command, str) else " ".join(command or []))
    return asyncio.run(replay(session, target, options, target=shown, on_event=on_event))


def serve_file(
    path: str | Path,
    *,
    transport: str = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    format: str = "auto",
    options: MockOptions | None = None,
    forward_command: str | None = None,
    forward_url: str | None = None,
    forward_transport: str = "auto",
    allow_origins: tuple[str, ...] = (),
    on_event: Callable[[str], None] | None = None,
    on_ready: Callable[[Mock, str], None] | None = None,
) -> Mock:
    """Serve the session in ``path`` until the client leaves (stdio) or the server is stopped (HTTP).

    Returns the :class:`Mock`, whose ``stats`` say what was answered and missed.
    """
    from mcpreel.errors import UsageError
    from mcpreel.replay.forward import CassetteFile, Forwarder
    from mcpreel.replay.serve import http_app, serve_http, serve_stdio

    options = options or MockOptions()
    session, detection = open_session(path, format)
    session.materialize()
    for note in session.info.notes:  # "holds no MCP messages", say: a mock that answers nothing
        (on_event or (lambda line: None))(f"{path}: {note}")
    cassette = build(session)
    forwarder = None
    if options.on_miss == "forward":
        if (forward_command is None) == (forward_url is None):
            raise UsageError("--on-miss forward needs a live server: give --target-command or --target-url")
        cassette_file = CassetteFile(path, session, detection.format)
        forwarder = Forwarder(lambda: open_target(forward_command, forward_url, transport=forward_transport),
                              cassette_file, on_event=on_event)
    elif forward_command is not None or forward_url is not None:
        raise UsageError("--target-command/--target-url serve only --on-miss forward")
    mock = Mock(cassette, options, on_event=on_event, forwarder=forwarder)

    async def main() -> None:
        try:
            if transport == "stdio":
                if on_ready is not None:
                    on_ready(mock, "stdio")
                await serve_stdio(mock)
            else:
                app = http_app(mock, allow_origins=allow_origins)
                where = "/sse" if transport == "sse" else "/mcp"

                def ready(h: str, p: int) -> None:
                    if on_ready is not None:
                        shown = f"[{h}]" if ":" in h else h
                        on_ready(mock, f"http://{shown}:{p}{where}")

                await serve_http(app, host, port, on_ready=ready)
        finally:
            if forwarder is not None:
                await forwarder.close()

    if transport not in ("stdio", "streamable-http", "sse"):
        raise UsageError(f"unknown transport {transport!r} (known: stdio, streamable-http, sse)")
    asyncio.run(main())
    return mock


def diff_files(a: str | Path, b: str | Path, *, format: str = "auto", options: DiffOptions | None = None) -> SessionDiff:
    """Compare the recordings in ``a`` and ``b`` (any readable formats)."""
    sa, _ = open_session(a, format)
    sb, _ = open_session(b, format)
    result = diff_sessions(sa.materialize(), sb.materialize(), options)
    result.notes = [f"{side}: {note}" for side, s in (("A", sa), ("B", sb)) for note in s.info.notes]
    return result
