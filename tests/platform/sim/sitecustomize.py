"""Make this Linux interpreter look like macOS or Windows to mcpreel: ``MCPREEL_SIMULATE=macos|windows|bsd``.

Put this folder first on ``PYTHONPATH``; Python runs it at start (``site``), before any of mcpreel. It takes
away what the named system lacks (the attributes of ``os``, ``signal``, ``socket``, ``select`` and the C
library's ``prctl``) and, for macOS, answers ``LOCAL_PEERCRED`` as macOS's kernel does (a ``struct xucred``
made from Linux's ``SO_PEERCRED``), so the code paths mcpreel takes there run here. What it cannot take away
is what the standard library needs on Linux to work at all (``SIGKILL`` for ``Popen.kill``, ``fork``, the
``AF_UNIX`` socketpair asyncio wakes itself with: ``socket.socketpair`` keeps working, as it does on Windows).
Every child Python process started with this ``PYTHONPATH`` is simulated too.
"""

from __future__ import annotations

import os

_WHO = os.environ.get("MCPREEL_SIMULATE", "")


def _drop(module: object, *names: str) -> None:
    for name in names:
        if hasattr(module, name):
            delattr(module, name)


def _no_prctl() -> None:
    import ctypes

    original = ctypes.CDLL.__getattr__

    def getattr_without_prctl(self: ctypes.CDLL, name: str) -> object:
        if name in ("prctl", "getpeereid"):
            raise AttributeError(name)
        return original(self, name)

    ctypes.CDLL.__getattr__ = getattr_without_prctl  # type: ignore[method-assign,assignment]


def _windows() -> None:
    import asyncio  # noqa: F401  (the standard library's own choices are made first, as on Linux)
    import select
    import selectors  # noqa: F401
    import signal
    import socket
    import subprocess  # noqa: F401

    _drop(signal, "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGWINCH")
    _drop(os, "killpg", "getpgid", "setpgid", "setsid", "getuid", "geteuid", "getgid", "fchmod", "O_NOFOLLOW")
    original_socketpair, af_unix = socket.socketpair, socket.AF_UNIX

    def socketpair(family: int | None = None, type: int = socket.SOCK_STREAM, proto: int = 0) -> object:
        return original_socketpair(af_unix if family is None else family, type, proto)

    socket.socketpair = socketpair  # type: ignore[assignment]
    _drop(socket, "AF_UNIX", "SO_PEERCRED", "MSG_DONTWAIT")
    _drop(select, "poll", "epoll")
    _no_prctl()


def _macos(peer_credentials: bool) -> None:
    import select
    import selectors  # noqa: F401
    import socket
    import struct

    _drop(select, "epoll")
    so_peercred = socket.SO_PEERCRED
    _drop(socket, "SO_PEERCRED")
    _no_prctl()
    if not peer_credentials:
        return
    socket.LOCAL_PEERCRED = 1  # type: ignore[attr-defined]
    socket.SOL_LOCAL = 0  # type: ignore[attr-defined]
    original = socket.socket.getsockopt

    def getsockopt(self: socket.socket, level: int, option: int, buflen: int | None = None) -> object:
        if level == 0 and option == 1 and self.family == socket.AF_UNIX:
            _pid, uid, _gid = struct.unpack("3i", original(self, socket.SOL_SOCKET, so_peercred, 12))
            return struct.pack("=Ii", 0, uid).ljust(buflen or 76, b"\0")  # struct xucred, XUCRED_VERSION 0
        return original(self, level, option) if buflen is None else original(self, level, option, buflen)

    socket.socket.getsockopt = getsockopt  # type: ignore[method-assign,assignment]


if _WHO == "windows":
    _windows()
elif _WHO == "macos":
    _macos(peer_credentials=True)
elif _WHO == "bsd":  # a POSIX system with no way to know a socket's peer: live view says it is not here
    _macos(peer_credentials=False)
