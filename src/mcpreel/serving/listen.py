"""The one way mcpreel opens a TCP listener (the HTTP proxy, the mock server, the demo server).

The socket is made with ``IPPROTO_TCP`` on purpose: asyncio turns Nagle's algorithm off (TCP_NODELAY)
only on connections whose socket says it is TCP, and ``socket.create_server`` or
``socket.socket(family, SOCK_STREAM)`` leave the protocol 0 — every answer then waits ~40 ms for the
peer's delayed ACK (35x fewer answers per second, measured on the mock server).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

from mcpreel.errors import UsageError
from mcpreel.serving.limits import Limits

__all__ = ["Listener", "listening_socket", "parse_listen"]


@dataclass(frozen=True)
class Listener:
    """How clients reach something mcpreel serves: one record every front end fills the same way.

    ``transport`` is ``stdio`` (no listener: the client is this process's stdin and stdout; the rest is
    unused), ``streamable-http`` or ``sse``. An HTTP listener binds ``host``:``port`` (127.0.0.1 unless
    told otherwise; port 0 picks a free one), answers the loopback origins plus ``allow_origins`` and the
    loopback Host names plus ``allow_hosts`` (:mod:`mcpreel.serving.origin`), and bounds each request by
    ``limits`` (:mod:`mcpreel.serving.limits`; the defaults when None). Grouped so that a new listener
    setting is one field, not a parameter threaded through every serving function."""

    transport: str = "stdio"
    host: str = "127.0.0.1"
    port: int = 8000
    allow_origins: tuple[str, ...] = ()
    allow_hosts: tuple[str, ...] = ()
    limits: Limits | None = None


def listening_socket(host: str, port: int, *, backlog: int = 2048) -> socket.socket:
    """A bound, listening TCP socket on ``host:port`` (``port`` 0 picks one). Raises ``OSError``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock


def parse_listen(listen: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[::1]:PORT``, ``:PORT`` or ``PORT`` -> (host, port); the host defaults to 127.0.0.1."""
    text = listen.strip()
    host, port_text = "127.0.0.1", text
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or text[end + 1 : end + 2] != ":":
            raise UsageError(f"--listen must be HOST:PORT, got {listen!r}")
        host, port_text = text[1:end], text[end + 2 :]
    elif ":" in text:
        host, _, port_text = text.rpartition(":")
        host = host or "127.0.0.1"
    if not port_text.isdigit() or int(port_text) > 65535:
        raise UsageError(f"--listen must be HOST:PORT with a port from 0 to 65535, got {listen!r}")
    return host, int(port_text)
