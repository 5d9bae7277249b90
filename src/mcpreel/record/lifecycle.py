"""Process hygiene for the stdio proxy (spec 03, section 9).

- The server runs in its own process group, so a Ctrl-C in the terminal reaches the proxy once and
  the proxy forwards it once (to the whole group, as a terminal would): no double signals.
- On Linux the server is asked to get SIGTERM when the proxy dies (``PR_SET_PDEATHSIG``): after a
  ``kill -9`` of the proxy no server is left behind, even one that ignores the end of its stdin.
- The proxy exits with the server's exit code; 128+N when a signal N ended it; 127 when the command
  could not start (:class:`ServerStartError`, raised only after the session file was completed).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import FrameType

from mcpreel.errors import TransportError

__all__ = ["FORWARDED_SIGNALS", "ServerStartError", "exit_status", "forward_signals", "signal_name", "spawn_server"]

#: what a proxy forwards: the ways a user or a client asks a process to stop
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_PR_SET_PDEATHSIG = 1


class ServerStartError(TransportError):
    """The server command could not be started (not found, not executable): exit 127, like a shell."""

    exit_code = 127


def exit_status(returncode: int) -> int:
    """A ``Popen.returncode`` as a shell reports it: ``-N`` (killed by signal N) -> ``128+N``."""
    return 128 - returncode if returncode < 0 else returncode


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _parent_death_signal() -> Callable[[], None] | None:
    """A ``preexec_fn`` that asks Linux to SIGTERM the child when the proxy dies (None elsewhere)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)

    return preexec


def spawn_server(
    argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None
) -> subprocess.Popen[bytes]:
    """Start the server with three pipes, in its own process group; :class:`ServerStartError` if it cannot start.

    Call it from the thread that lives as long as the server (the main thread): Linux sends the
    parent-death signal when the *thread* that forked the child ends.
    """
    if not argv:
        raise ServerStartError("no server command given (put it after --)")
    try:
        return subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            process_group=0,
            preexec_fn=_parent_death_signal(),
        )
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise ServerStartError(f"cannot start {argv[0]!r}: {why}") from exc
    except (ValueError, subprocess.SubprocessError) as exc:
        raise ServerStartError(f"cannot start {argv[0]!r}: {exc}") from exc


def signal_group(pid: int, signum: int) -> None:
    """Send ``signum`` to the server's process group (the server and what it started), else to the server."""
    try:
        os.killpg(pid, signum)
    except ProcessLookupError:
        pass
    except PermissionError:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)


@contextlib.contextmanager
def forward_signals(pid: int, on_signal: Callable[[int], None] | None = None) -> Iterator[None]:
    """While inside, SIGINT/SIGTERM/SIGHUP sent to the proxy go on to the server's process group.

    Handlers can only be installed from the main thread; elsewhere (a library caller's worker
    thread) nothing is installed and the caller keeps its own handling.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: FrameType | None) -> None:
        if on_signal is not None:
            on_signal(signum)
        signal_group(pid, signum)

    previous = {}
    for sig in FORWARDED_SIGNALS:
        if signal.getsignal(sig) == signal.SIG_IGN:
            continue  # started under nohup or as a background job: the user chose to ignore it
        with contextlib.suppress(OSError, ValueError):
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            with contextlib.suppress(OSError, ValueError, TypeError):
                signal.signal(sig, old)
