"""The client side: how mcpreel talks to a live MCP server, and how it starts one.

One interface (:class:`Transport`, the httpx way): ``start()``, ``send(message)`` / ``send_nowait``,
iterate or ``receive()`` what comes back as :class:`~mcpreel.model.Message` records, ``close()``;
``ended`` and ``dead_reason()`` say why the peer went away. Replay (the server under test), ``serve
--on-miss forward`` (the live server behind a cassette) and the mock's in-memory connections use it.

- :class:`StdioTransport`: a subprocess, newline-delimited JSON-RPC on its stdin/stdout
- :class:`StreamableHTTPTransport`: POST per message, JSON or SSE answers, ``Mcp-Session-Id``
- :class:`LegacySSETransport`: ``GET`` an SSE stream, ``POST`` to its ``endpoint``
- :class:`MemoryTransport` / :func:`memory_pair`: two ends joined in memory, for your own tests

:func:`open_target` picks one from what the user named: a command or a URL.
:mod:`mcpreel.clients.process` starts, signals and stops every child process mcpreel runs.

The names load on first use, so the recording proxy (which needs only the process module) starts
without asyncio and the HTTP client.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from mcpreel._infra.lazy import lazy_exports
from mcpreel.errors import UsageError

if TYPE_CHECKING:
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

#: where each public name lives
_HOMES = {
    "LegacySSETransport": "mcpreel.clients.http",
    "StreamableHTTPTransport": "mcpreel.clients.http",
    "MemoryTransport": "mcpreel.clients.memory",
    "memory_pair": "mcpreel.clients.memory",
    "StdioTransport": "mcpreel.clients.stdio",
    "Transport": "mcpreel.clients.base",
}


__getattr__, __dir__ = lazy_exports(globals(), _HOMES, __all__)


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
        from mcpreel.clients.process import command_argv
        from mcpreel.clients.stdio import StdioTransport

        argv = command_argv(command)
        if not argv:
            raise UsageError("the target command is empty")
        if transport == "stdio-v2":  # HTTP/2 on the child's pipes (the Transports WG's draft)
            from mcpreel.clients.stdio_h2 import stdio_v2_transport

            return stdio_v2_transport(argv, env=env, cwd=cwd, timeout=timeout)
        return StdioTransport(argv, env=env, cwd=cwd)
    assert url is not None
    if transport not in HTTP_TRANSPORTS:
        raise UsageError(f"unknown transport {transport!r} for a URL (known: {', '.join(HTTP_TRANSPORTS)})")
    from mcpreel.clients.http import LegacySSETransport, StreamableHTTPTransport

    if transport == "auto":
        transport = "sse" if urlsplit(url).path.rstrip("/").endswith("/sse") else "streamable-http"
    if transport == "sse":
        return LegacySSETransport(url, headers=headers, timeout=timeout)
    return StreamableHTTPTransport(url, headers=headers, timeout=timeout)
