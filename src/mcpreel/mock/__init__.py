"""The mock: a recording served as an MCP server (``mcpreel serve``, cassettes in tests).

:mod:`.engine` answers a client from a recording, free of I/O (:mod:`.matcher` finds the recorded
exchange that answers a request); :mod:`.server` puts it on stdio, Streamable HTTP or legacy HTTP+SSE;
:mod:`.forward` passes misses to a live server and keeps its answers. :func:`serve_file` is the library's
entry point: it serves until the client leaves (stdio) or the server is stopped (HTTP), and never prints.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpreel.clients import open_target
from mcpreel.formats import open_session
from mcpreel.mock.engine import ON_MISS, Mock, MockOptions, MockStats
from mcpreel.mock.matcher import MATCH_MODES
from mcpreel.model import Session
from mcpreel.operations.cassette import build
from mcpreel.serving.limits import Limits
from mcpreel.sessions import split_sessions

if TYPE_CHECKING:
    from mcpreel.rules.engine import RuleSet

__all__ = ["MATCH_MODES", "ON_MISS", "Mock", "MockOptions", "MockStats", "serve_file"]


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
    allow_hosts: tuple[str, ...] = (),
    on_event: Callable[[str], None] | None = None,
    on_ready: Callable[[Mock, str], None] | None = None,
    source: str | None = None,
    rules: RuleSet | None = None,
    limits: Limits | None = None,
    on_progress: Callable[[int], None] | None = None,
    redact: Callable[[Session], Session] | None = None,
) -> Mock:
    """Serve the session in ``path`` until the client leaves (stdio) or the server is stopped (HTTP).

    ``on_progress`` gets the bytes of the file read while it is loaded (before ``on_ready``).

    Returns the :class:`Mock`, whose ``stats`` say what was answered and missed. A merged file holds
    several servers: ``source`` names the one to serve (:func:`mcpreel.merge.select_source`); a merged
    file of several sources without it is refused, because one mock serving them all would advertise one
    server's tools and answer another's. ``rules`` (``--rules``) act on what each client sends and is
    answered (:mod:`mcpreel.rules.mock`). ``limits`` bound each HTTP request
    (:mod:`mcpreel.serving.limits`; the defaults when None). ``redact``: with ``on_miss="forward"``, what
    the file is rewritten with instead of the session (a redacted copy of it).
    """
    from mcpreel.errors import UsageError
    from mcpreel.mock.compact import load_compact
    from mcpreel.mock.forward import CassetteFile, Forwarder

    options = options or MockOptions()
    session, detection = open_session(path, format, on_progress=on_progress)
    # a long line-based recording of one session is served from disk through a compact index (a merged
    # file of several sources is not one: load_compact says None, and _one_source decides)
    compact = (load_compact(path, session, options.match)
               if options.on_miss != "forward" and source is None else None)
    if compact is None:
        session.materialize()
        session = _one_source(session, source, str(path))
    for note in session.info.notes:  # "holds no MCP messages", say: a mock that answers nothing
        (on_event or (lambda line: None))(f"{path}: {note}")
    if compact is not None:
        if forward_command is not None or forward_url is not None:
            raise UsageError("--target-command/--target-url serve only --on-miss forward")
        mock = Mock(compact, options, on_event=on_event)
        mock.rules = rules
        try:
            _serve(mock, None, transport, host, port, allow_origins, allow_hosts, on_ready, limits)
        finally:
            compact.close()
        return mock
    cassette = build(session)
    forwarder = None
    if options.on_miss == "forward":
        if (forward_command is None) == (forward_url is None):
            raise UsageError("--on-miss forward needs a live server: give --target-command or --target-url")
        cassette_file = CassetteFile(path, session, detection.format, redact)
        forwarder = Forwarder(lambda: open_target(forward_command, forward_url, transport=forward_transport),
                              cassette_file, on_event=on_event)
    elif forward_command is not None or forward_url is not None:
        raise UsageError("--target-command/--target-url serve only --on-miss forward")
    parts = split_sessions(session)
    sessions = [(build(part.as_session(session.info)), part.era, part.client) for part in parts] if len(parts) > 1 else None
    mock = Mock(cassette, options, on_event=on_event, forwarder=forwarder, sessions=sessions)
    mock.rules = rules
    _serve(mock, forwarder, transport, host, port, allow_origins, allow_hosts, on_ready, limits)
    return mock


def _serve(mock: Mock, forwarder: Any, transport: str, host: str, port: int, allow_origins: tuple[str, ...],
           allow_hosts: tuple[str, ...], on_ready: Callable[[Mock, str], None] | None,
           limits: Limits | None = None) -> None:
    """Serve ``mock`` on ``transport`` until the client leaves (stdio) or the server is stopped (HTTP)."""
    from mcpreel.errors import UsageError
    from mcpreel.mock.server import http_app, serve_stdio
    from mcpreel.serving.loop import Server, run

    async def main(server: Server | None) -> None:
        try:
            if server is None:
                if on_ready is not None:
                    on_ready(mock, "stdio")
                await serve_stdio(mock)
            else:
                where = "/sse" if transport == "sse" else "/mcp"

                def ready(h: str, p: int) -> None:
                    if on_ready is not None:
                        shown = f"[{h}]" if ":" in h else h
                        on_ready(mock, f"http://{shown}:{p}{where}")

                await server.serve(ready=ready)
        finally:
            if forwarder is not None:
                await forwarder.close()

    if transport not in ("stdio", "streamable-http", "sse"):
        raise UsageError(f"unknown transport {transport!r} (known: stdio, streamable-http, sse)")
    if transport == "stdio":
        asyncio.run(main(None))
    else:  # bound before anything is served (a taken port fails first), on the serving loop's event loop
        run(main(Server(http_app(mock, allow_origins=allow_origins, host=host, allow_hosts=allow_hosts), host, port,
                        graceful_timeout=1, limits=limits)))


def _one_source(session: Session, source: str | None, path: str) -> Session:
    from mcpreel.errors import UsageError
    from mcpreel.merge import merged_sources, select_source

    if source is not None:
        return select_source(session, source, path)
    names = merged_sources(session)
    if len(names) > 1:
        raise UsageError(f"{path} merges {len(names)} servers ({', '.join(names)}): serve one of them with "
                         f"--source NAME (one mock per source: each on its own port)")
    return session
