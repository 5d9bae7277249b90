"""The one way mcpreel opens a TCP listener (the HTTP proxy, the mock server, the demo server).

The socket is made with ``IPPROTO_TCP`` on purpose: asyncio turns Nagle's algorithm off (TCP_NODELAY)
only on connections whose socket says it is TCP, and ``socket.create_server`` or
``socket.socket(family, SOCK_STREAM)`` leave the protocol 0 — every answer then waits ~40 ms for the
peer's delayed ACK (35x fewer answers per second, measured on the mock server).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

from mcpreel.serving.limits import Limits

__all__ = ["Listener", "listening_socket"]


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
