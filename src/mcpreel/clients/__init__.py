"""Client-side transports: how mcpreel talks to a live MCP server.

One shape (:class:`Transport`): ``start()``, ``send(message)``, iterate or ``receive()`` what comes
back as :class:`~mcpreel.model.Message` records, ``close()``. Used by ``replay`` (the server under test)
and by ``serve --on-miss forward`` (the live server behind a cassette).

- :class:`StdioTransport`: a subprocess, newline-delimited JSON-RPC on its stdin/stdout
- :class:`StreamableHTTPTransport`: POST per message, JSON or SSE answers, ``Mcp-Session-Id``
- :class:`LegacySSETransport`: ``GET`` an SSE stream, ``POST`` to its ``endpoint``
- :class:`MemoryTransport` / :func:`memory_pair`: two ends joined in memory (tests, in-process mocks)

:func:`open_target` picks one from what the user named: a command or a URL.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from urllib.parse import urlsplit

from mcpreel.errors import UsageError
from mcpreel.clients.base import Transport
from mcpreel.clients.http import LegacySSETransport, StreamableHTTPTransport
from mcpreel.clients.memory import MemoryTransport, memory_pair
from mcpreel.clients.stdio import StdioTransport

__all__ = [
    "LegacySSETransport",
    "MemoryTransport",
    "StdioTransport",
    "StreamableHTTPTransport",
    "Transport",
    "memory_pair",
    "open_target",
]

#: the names ``--transport`` accepts for a URL
HTTP_TRANSPORTS = ("auto", "streamable-http", "sse")


def open_target(
    command: str | Sequence[str] | None = None,
    url: str | None = None,
    *,
    transport: str = "auto",
    headers: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    timeout: float = 30.0,
) -> Transport:
    """A (not yet started) transport to a server given as a command line or a URL.

    For a URL, ``auto`` means legacy SSE when the path ends in ``/sse`` and Streamable HTTP otherwise.
    """
    if (command is None) == (url is None):
        raise UsageError("give exactly one target: a server command or a URL")
    if command is not None:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise UsageError("the target command is empty")
        return StdioTransport(argv, env=env, cwd=cwd)
    assert url is not None
    if transport not in HTTP_TRANSPORTS:
        raise UsageError(f"unknown transport {transport!r} for a URL (known: {', '.join(HTTP_TRANSPORTS)})")
    if transport == "auto":
        transport = "sse" if urlsplit(url).path.rstrip("/").endswith("/sse") else "streamable-http"
    if transport == "sse":
        return LegacySSETransport(url, headers=headers, timeout=timeout)
    return StreamableHTTPTransport(url, headers=headers, timeout=timeout)
