"""Every child process mcpreel starts (a server command, a cassette server) is started and ended here.

One policy, so the recorder, replay, ``serve --on-miss forward``, ``check --command`` and the cassette
fixture agree on what a child is and how it goes away:

- **Start**: :func:`spawn` (a :class:`subprocess.Popen`, for threads) or :func:`spawn_async` (an
  asyncio process) with three pipes. A command that cannot start raises :class:`ServerStartError`,
  the one start error: exit 127, as a shell says it. Callers for whom "cannot start" means "cannot
  reach" (replay, check) re-word it into their own error; the recording proxy passes it on.
- **Its own process group**: a Ctrl-C in the terminal reaches mcpreel once, and mcpreel decides
  what the child gets (:func:`forward_signals`, :func:`signal_group`), to the child and whatever it
  started, as a terminal would.
- **Dying with us** (``die_with_parent``): a ``kill -9`` of mcpreel leaves no server behind, even one
  that ignores the end of its stdin: Linux's parent-death signal, a Job object on Windows, a watchdog
  process elsewhere (:mod:`mcpreel._infra.platform`, :func:`~mcpreel._infra.platform.tie_to_us`).
- **Stop**: :func:`stop` / :func:`stop_async` close stdin first (a well-behaved server exits on EOF),
  then SIGTERM after a grace period, then SIGKILL (Windows: Ctrl+Break, then the process and its Job
  ended).
- **Exit status**: :func:`exit_status` maps a return code to what a shell reports (``-N`` -> 128+N).

What differs between systems (signals, groups, dying with us) is asked of the platform seam,
:mod:`mcpreel._infra.platform`, never here.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import FrameType
from typing import IO, TYPE_CHECKING, Any

from mcpreel._infra import platform
from mcpreel.errors import TransportError

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "FORWARDED_SIGNALS",
    "ServerStartError",
    "command_argv",
    "exit_status",
    "forward_signals",
    "parent_death_signal",
    "signal_group",
    "signal_name",
    "spawn",
    "spawn_async",
    "stop",
    "stop_async",
    "wait_async",
    "with_environ",
]

#: what a proxy forwards to its child: the ways a user or a client asks a process to stop (the ones this
#: system has: no SIGHUP on Windows)
FORWARDED_SIGNALS = platform.STOP_SIGNALS
#: how long a SIGKILLed child is waited for (the kernel reaps it at once; this only bounds a hang)
_KILL_WAIT = 5.0

#: a file argument of :func:`spawn`: a pipe, ``DEVNULL``, a file object, a descriptor or inherited
Stream = int | IO[Any] | None


class ServerStartError(TransportError):
    """A command could not be started (not found, not executable): exit 127, like a shell.

    ``command`` is what was run (its ``argv[0]``), ``reason`` why it did not start (the system's
    words, e.g. ``No such file or directory``); the ``OSError`` behind it is ``__cause__``.
    """

    exit_code = 127

    def __init__(self, message: str, *, command: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.command = command
        self.reason = reason


def command_argv(command: str | Sequence[str]) -> list[str]:
    """A command line as an argv: a string is split as a POSIX shell would, a sequence taken as it is."""
    return shlex.split(command) if isinstance(command, str) else [str(a) for a in command]


def with_environ(extra: Mapping[str, str] | None) -> dict[str, str]:
    """Our environment plus ``extra``: what a child gets when a caller names only what to add."""
    env = dict(os.environ)
    if extra:
        env.update(extra)
    return env


def exit_status(returncode: int) -> int:
    """A return code as a shell reports it: ``-N`` (killed by signal N) -> ``128+N``."""
    return 128 - returncode if returncode < 0 else returncode


def signal_name(signum: int) -> str:
    """``SIGTERM`` for 15; ``signal 99`` for a number the platform has no name for."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def parent_death_signal() -> Callable[[], None] | None:
    """A ``preexec_fn`` asking the kernel to SIGTERM the child when its parent thread ends (Linux's
    ``prctl``; None where there is none: :func:`spawn` then ties the child to us another way)."""
    return platform.parent_death_preexec()


def _start_error(argv: Sequence[str], exc: BaseException) -> ServerStartError:
    why = (exc.strerror or str(exc)) if isinstance(exc, OSError) else str(exc)
    error = ServerStartError(f"cannot start {argv[0]!r}: {why}", command=argv[0], reason=why)
    error.__cause__ = exc
    return error


def _group_options(group: bool, die_with_parent: bool) -> dict[str, Any]:
    options = platform.child_options(group)
    if die_with_parent:
        preexec = parent_death_signal()
        if preexec is not None:
            options["preexec_fn"] = preexec
    return options


def _tie(pid: int, group: bool, die_with_parent: bool) -> None:
    """Where the kernel was not asked (no ``prctl``), tie the child to us the platform's way."""
    if die_with_parent and parent_death_signal() is None:
        platform.tie_to_us(pid, group=group)


def spawn(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stdin: Stream = subprocess.PIPE,
    stdout: Stream = subprocess.PIPE,
    stderr: Stream = subprocess.PIPE,
    group: bool = True,
    die_with_parent: bool = False,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` (unbuffered pipes by default); :class:`ServerStartError` if it cannot start.

    ``env`` is the child's whole environment (None: ours; :func:`with_environ` adds to ours).
    ``group``: in a process group of its own. ``die_with_parent``: ended when the calling thread
    ends (Linux; call it from the thread that lives as long as the child, the main thread) or when
    this process does (elsewhere: :func:`mcpreel._infra.platform.tie_to_us`).
    """
    if not argv:
        raise ServerStartError("no server command given")
    try:
        proc = subprocess.Popen(
            list(argv), stdin=stdin, stdout=stdout, stderr=stderr, bufsize=0,
            env=dict(env) if env is not None else None, cwd=cwd, **_group_options(group, die_with_parent),
        )
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        raise _start_error(argv, exc) from exc
    _tie(proc.pid, group, die_with_parent)
    return proc


async def spawn_async(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    limit: int = 1 << 16,
) -> asyncio.subprocess.Process:
    """:func:`spawn` for asyncio: three pipes, lines of up to ``limit`` bytes, a process group of its own."""
    import asyncio  # here, not at the top: the threaded recording proxy starts faster without it

    if not argv:
        raise ServerStartError("no server command given")
    pipe = asyncio.subprocess.PIPE
    try:
        return await asyncio.create_subprocess_exec(
            *argv, stdin=pipe, stdout=pipe, stderr=pipe, env=dict(env) if env is not None else None, cwd=cwd,
            limit=limit, **platform.child_options(True),
        )
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        raise _start_error(argv, exc) from exc


def signal_group(pid: int, signum: int) -> None:
    """Send ``signum`` to the child's process group (the child and what it started), else to the child
    (Windows: Ctrl+Break to its group; :func:`mcpreel._infra.platform.interrupt_group`)."""
    platform.interrupt_group(pid, signum)


def _end(pid: int, hard: bool, group: bool) -> None:
    if group:
        (platform.kill_group if hard else platform.terminate_group)(pid)
        return
    hard_signal = getattr(signal, "SIGKILL", signal.SIGTERM)  # Windows: SIGTERM is TerminateProcess
    with contextlib.suppress(ProcessLookupError, OSError):
        os.kill(pid, hard_signal if hard else signal.SIGTERM)


def stop(proc: subprocess.Popen[bytes], grace: float, *, group: bool = True) -> int | None:
    """End a child: EOF on its stdin pipe (if it has one), SIGTERM after ``grace`` s, SIGKILL after another.

    ``group``: signal its process group (it was started with one). Returns its return code (None
    only if even SIGKILL left it running).
    """
    if proc.poll() is not None:
        platform.untie(proc.pid)
        return proc.returncode
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            return _ended(proc.pid, proc.wait(grace))
    for hard in (False, True):
        _end(proc.pid, hard, group)
        with contextlib.suppress(subprocess.TimeoutExpired):
            return _ended(proc.pid, proc.wait(_KILL_WAIT if hard else grace))
    return None


def _ended(pid: int, code: int | None) -> int | None:
    if code is not None:
        platform.untie(pid)
    return code


async def wait_async(proc: asyncio.subprocess.Process, timeout: float) -> int | None:
    """The return code once the process has ended, or None if it is still running after ``timeout`` s."""
    import asyncio

    with contextlib.suppress(asyncio.TimeoutError):
        return await asyncio.wait_for(proc.wait(), timeout)
    return None


async def stop_async(proc: asyncio.subprocess.Process, grace: float, *, group: bool = True) -> int | None:
    """:func:`stop` for an asyncio process."""
    if proc.returncode is not None:
        platform.untie(proc.pid)
        return proc.returncode
    if proc.stdin is not None:
        with contextlib.suppress(Exception):
            proc.stdin.close()
        code = await wait_async(proc, grace)
        if code is not None:
            return _ended(proc.pid, code)
    for hard in (False, True):
        _end(proc.pid, hard, group)
        code = await wait_async(proc, _KILL_WAIT if hard else grace)
        if code is not None:
            return _ended(proc.pid, code)
    return None


@contextlib.contextmanager
def forward_signals(pid: int, on_signal: Callable[[int], None] | None = None) -> Iterator[None]:
    """While inside, the stop signals sent to us (:data:`FORWARDED_SIGNALS`) go on to the child's group.

    Handlers can only be installed from the main thread; elsewhere (a library caller's worker
    thread) nothing is installed and the caller keeps its own handling. A signal the user chose to
    ignore (``nohup``, a background job) stays ignored.
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
            continue
        with contextlib.suppress(OSError, ValueError):
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            with contextlib.suppress(OSError, ValueError, TypeError):
                signal.signal(sig, old)
