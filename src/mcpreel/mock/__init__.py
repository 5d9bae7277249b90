"""The mock: a recording served as an MCP server (``mcpreel serve``, cassettes in tests).

:mod:`.engine` answers a client from a recording, free of I/O (:mod:`.matcher` finds the recorded
exchange that answers a request); :mod:`.server` puts it on stdio, Streamable HTTP or legacy HTTP+SSE;
:mod:`.forward` passes misses to a live server and keeps its answers. :func:`serve_file` is the library's
entry point: it serves until the client leaves (stdio) or the server is stopped (HTTP), and never prints.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpreel.clients import open_target
from mcpreel.drafts import STDIO_V2_TRANSPORT
from mcpreel.errors import UsageError
from mcpreel.formats import open_session
from mcpreel.mock.engine import ON_MISS, ConnectionFactory, Mock, MockOptions, MockStats
from mcpreel.mock.matcher import MATCH_MODES
from mcpreel.model import Session
from mcpreel.operations.cassette import build
from mcpreel.operations.sessions import split_sessions
from mcpreel.serving.listen import Listener

__all__ = ["MATCH_MODES", "ON_MISS", "ForwardTarget", "Listener", "Mock", "MockOptions", "MockStats", "ServeHooks",
           "serve_file"]


@dataclass(frozen=True)
class ForwardTarget:
    """The live server a miss is passed to with ``on_miss="forward"`` (exactly one of ``command`` and
    ``url``), and what the recording file is rewritten with once it has learned an answer.

    One record, because these only make sense together: a target without ``on_miss="forward"`` is
    refused, and ``redact`` only applies to a file a forward rewrites."""

    command: str | None = None
    url: str | None = None
    #: how ``url`` is reached (``auto``: Streamable HTTP, falling back to legacy SSE)
    transport: str = "auto"
    #: what the file is rewritten with instead of the session (a redacted copy of it)
    redact: Callable[[Session], Session] | None = None


@dataclass(frozen=True)
class ServeHooks:
    """What a front end is told while a recording is served (the library never prints): each is optional.

    ``on_event`` gets one line per thing worth saying (a miss, a forward, a rule that acted);
    ``on_ready(mock, where)`` is called once a client can connect (``where``: ``"stdio"`` or a URL);
    ``on_progress`` gets the bytes of the file read while it is loaded (before ``on_ready``)."""

    on_event: Callable[[str], None] | None = None
    on_ready: Callable[[Mock, str], None] | None = None
    on_progress: Callable[[int], None] | None = None


def serve_file(
    path: str | Path,
    *,
    format: str = "auto",
    source: str | None = None,
    options: MockOptions | None = None,
    listener: Listener | None = None,
    forward: ForwardTarget | None = None,
    connection: ConnectionFactory | None = None,
    hooks: ServeHooks | None = None,
) -> Mock:
    """Serve the session in ``path`` until the client leaves (stdio) or the server is stopped (HTTP).

    Returns the :class:`Mock`, whose ``stats`` say what was answered and missed. A merged file holds
    several servers: ``source`` names the one to serve (:func:`mcpreel.merge.select_source`); a merged
    file of several sources without it is refused, because one mock serving them all would advertise one
    server's tools and answer another's. ``listener`` says how clients reach the mock (stdio by default;
    HTTP bound to loopback, with the one Origin/Host policy and request limits of :mod:`mcpreel.serving`).
    ``connection`` is the seam an addon plugs into (``serve --rules``:
    :func:`mcpreel.rules.mock.ruled_connections`); the mock does not know its addons.
    """
    from mcpreel.mock.compact import load_compact
    from mcpreel.mock.forward import CassetteFile, Forwarder

    options = options or MockOptions()
    listener = listener or Listener()
    hooks = hooks or ServeHooks()
    forward = forward or ForwardTarget()
    on_event = hooks.on_event
    session, detection = open_session(path, format, on_progress=hooks.on_progress)
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
        if forward.command is not None or forward.url is not None:
            raise UsageError("--target-command/--target-url serve only --on-miss forward")
        mock = Mock(compact, options, on_event=on_event)
        mock.connection_factory = connection
        try:
            _serve(mock, None, listener, hooks.on_ready)
        finally:
            compact.close()
        return mock
    cassette = build(session)
    forwarder = None
    if options.on_miss == "forward":
        if (forward.command is None) == (forward.url is None):
            raise UsageError("--on-miss forward needs a live server: give --target-command or --target-url")
        cassette_file = CassetteFile(path, session, detection.format, forward.redact)
        forwarder = Forwarder(lambda: open_target(forward.command, forward.url, transport=forward.transport),
                              cassette_file, on_event=on_event)
    elif forward.command is not None or forward.url is not None:
        raise UsageError("--target-command/--target-url serve only --on-miss forward")
    parts = split_sessions(session)
    sessions = [(build(part.as_session(session.info)), part.era, part.client) for part in parts] if len(parts) > 1 else None
    mock = Mock(cassette, options, on_event=on_event, forwarder=forwarder, sessions=sessions)
    mock.connection_factory = connection
    _serve(mock, forwarder, listener, hooks.on_ready)
    return mock


def _serve(mock: Mock, forwarder: Any, listener: Listener, on_ready: Callable[[Mock, str], None] | None) -> None:
    """Serve ``mock`` as ``listener`` says until the client leaves (stdio) or the server is stopped (HTTP)."""
    from mcpreel.mock.server import http_app, serve_stdio
    from mcpreel.serving.loop import Server, run

    async def main(server: Server | None) -> None:
        try:
            if server is None:
                if on_ready is not None:
                    on_ready(mock, "stdio")
                await serve_stdio(mock)
            else:
                where = "/sse" if listener.transport == "sse" else "/mcp"

                def ready(h: str, p: int) -> None:
                    if on_ready is not None:
                        shown = f"[{h}]" if ":" in h else h
                        on_ready(mock, f"http://{shown}:{p}{where}")

                await server.serve(ready=ready)
        finally:
            if forwarder is not None:
                await forwarder.close()

    transport = listener.transport
    if transport not in ("stdio", "streamable-http", "sse", STDIO_V2_TRANSPORT):
        raise UsageError(f"unknown transport {transport!r} (known: stdio, streamable-http, sse, {STDIO_V2_TRANSPORT})")
    if transport == "stdio":
        asyncio.run(main(None))
    elif transport == STDIO_V2_TRANSPORT:  # the mock's Streamable HTTP app, as HTTP/2 on stdin/stdout (a draft)
        from mcpreel.serving.stdio_h2 import serve_asgi_stdio_h2

        async def main_h2() -> None:
            try:
                if on_ready is not None:
                    on_ready(mock, f"stdio ({STDIO_V2_TRANSPORT}: HTTP/2)")
                await serve_asgi_stdio_h2(http_app(mock, host="127.0.0.1"))
            finally:
                if forwarder is not None:
                    await forwarder.close()

        asyncio.run(main_h2())
    else:  # bound before anything is served (a taken port fails first), on the serving loop's event loop
        app = http_app(mock, allow_origins=listener.allow_origins, host=listener.host, allow_hosts=listener.allow_hosts)
        run(main(Server(app, listener.host, listener.port, graceful_timeout=1, limits=listener.limits)))


def _one_source(session: Session, source: str | None, path: str) -> Session:
    from mcpreel.merge import merged_sources, select_source

    if source is not None:
        return select_source(session, source, path)
    names = merged_sources(session)
    if len(names) > 1:
        raise UsageError(f"{path} merges {len(names)} servers ({', '.join(names)}): serve one of them with "
                         f"--source NAME (one mock per source: each on its own port)")
    return session
