"""The one way mcpreel opens a TCP listener (the HTTP proxy, the mock server, the demo server).

The socket is made with ``IPPROTO_TCP`` on purpose: asyncio turns Nagle's algorithm off (TCP_NODELAY)
only on connections whose socket says it is TCP, and ``socket.create_server`` or
``socket.socket(family, SOCK_STREAM)`` leave the protocol 0 — every answer then waits ~40 ms for the
peer's delayed ACK (35x fewer answers per second, measured on the mock server).
"""

from __future__ import annotations

import socket

__all__ = ["listening_socket"]


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
