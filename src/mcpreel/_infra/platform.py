"""What differs between Linux, macOS (and the BSDs) and Windows: one seam, feature-detected.

Every call that exists on one desktop and not on another goes through here, so the rest of mcpreel
never asks which system it runs on, and a missing feature costs one line on stderr, never a traceback.
Each answer is found by looking for the feature itself (``hasattr``/``getattr`` on ``os``, ``signal``,
``socket``, ``ctypes``), not at ``sys.platform``: a BSD with ``getpeereid`` gets live view as macOS does,
and the test suite can take a feature away (``tests/platform``) to see what a system without it does.

- **Signals** (:data:`STOP_SIGNALS`): the ways a user or a client asks a process to stop; what the
  early-signal latch keeps and a proxy forwards. Windows has no ``SIGHUP``; its Ctrl+Break is ``SIGBREAK``.
- **A child and its group** (:func:`child_options`, :func:`interrupt_group`, :func:`terminate_group`,
  :func:`kill_group`): POSIX starts the child in a process group of its own and signals the group
  (``killpg``); Windows starts it in a new process group (``CREATE_NEW_PROCESS_GROUP``), asks it to stop
  with Ctrl+Break and ends it with ``TerminateProcess``.
- **Dying with us** (:func:`parent_death_preexec`, :func:`tie_to_us`): Linux asks the kernel
  (``prctl(PR_SET_PDEATHSIG)``); Windows puts the child in a Job object that kills what it holds when
  its last handle closes (the proxy's, at its death, even ``taskkill /f``); other POSIX systems (macOS, the
  BSDs) start a small watchdog process that holds the read end of a pipe whose write end only the proxy
  has: when the proxy dies, even by ``kill -9``, the pipe ends and the watchdog ends the child's group.
- **Who is at the other end of the control socket** (:func:`peer_uid`, :func:`control_auth`):
  Linux ``SO_PEERCRED``, macOS/BSD ``LOCAL_PEERCRED`` or ``getpeereid`` on a Unix socket. Where none
  exists, or there are no Unix sockets (Windows), the channel is a loopback TCP socket and a viewer's first
  line must carry the run's secret, kept in a file only the user can read.
- **The runtime folder** (:func:`runtime_base`): ``$XDG_RUNTIME_DIR`` when it is ours, else ``$TMPDIR``
  when it is a folder only we may enter (macOS's per-user ``/var/folders/...``), else ``%LOCALAPPDATA%``
  where there are no uids (Windows), else ``/tmp/mcpreel-<uid>``.
- **Private files** (:func:`make_private`, :data:`NOFOLLOW`): mode 0600 where modes mean something; on
  Windows a file is as private as the folder it is in (a profile folder is its user's alone), said once.
- **stdio** (:func:`binary_stdio`): the MCP stream is bytes with ``\\n`` framing; on Windows the standard
  descriptors are put in binary mode so no ``\\r`` is added or taken away.

The library never prints: a feature that is missing is reported through :func:`notice`, once per
process, to the sink the command line installs (:func:`set_notice_sink`); with no sink it is only kept
(:func:`notices`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import stat
import sys
import threading
from collections.abc import Callable

TYPE_CHECKING = False  # not typing's: importing typing costs the latch milliseconds (mypy knows the name)
if TYPE_CHECKING:
    import socket
    from pathlib import Path
    from typing import Any

# ctypes, pathlib, socket and subprocess are imported where they are used: the early-signal latch imports this
# module first thing, and every millisecond before it is in place is one a stop signal can kill us in

__all__ = [
    "NOFOLLOW",
    "STOP_SIGNALS",
    "Tie",
    "binary_stdio",
    "child_options",
    "control_auth",
    "control_unavailable",
    "tcp_peer_uid",
    "has_file_modes",
    "interrupt_group",
    "kill_group",
    "make_private",
    "notice",
    "notices",
    "parent_death_preexec",
    "peer_uid",
    "pid_alive",
    "runtime_base",
    "set_mode",
    "set_notice_sink",
    "terminate_group",
    "tie_to_us",
    "untie",
    "user_id",
]


# -- notices: a missing feature, once, in one line -----------------------------------------------------
_sink: Callable[[str], None] | None = None
_said: dict[str, str] = {}
_said_lock = threading.Lock()


def set_notice_sink(sink: Callable[[str], None] | None) -> None:
    """Where :func:`notice` lines go (the command line: stderr); None keeps them only."""
    global _sink
    _sink = sink


def notice(key: str, text: str) -> None:
    """Say once per process (per ``key``) that a feature is missing here; ``text`` is the whole line."""
    with _said_lock:
        if key in _said:
            return
        _said[key] = text
    if _sink is not None:
        with contextlib.suppress(Exception):
            _sink(text)


def notices() -> dict[str, str]:
    """What :func:`notice` said so far, by key (for tests and reports)."""
    return dict(_said)


# -- signals -------------------------------------------------------------------------------------------
def _signals(*names: str) -> tuple[int, ...]:
    return tuple(getattr(signal, name) for name in names if hasattr(signal, name))


#: the ways a user or a client asks a process to stop: latched early, forwarded to a child
#: (no ``SIGHUP`` on Windows; ``SIGBREAK`` is its Ctrl+Break)
STOP_SIGNALS: tuple[int, ...] = _signals("SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK")


# -- a child and its group -----------------------------------------------------------------------------
def child_options(group: bool) -> dict[str, Any]:
    """:class:`subprocess.Popen` options that start a child in a process group of its own.

    POSIX: ``process_group=0`` (a Ctrl+C in the terminal reaches mcpreel once; mcpreel decides what the
    child gets). Windows: ``CREATE_NEW_PROCESS_GROUP`` (Ctrl+Break can then be sent to the child alone).
    """
    import subprocess

    if not group:
        return {}
    if hasattr(os, "setpgid"):
        return {"process_group": 0}
    flag = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", None)
    return {"creationflags": flag} if flag is not None else {}


def _kill(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, OSError):
        os.kill(pid, signum)


def interrupt_group(pid: int, signum: int) -> None:
    """Pass a stop signal we received on to the child's group (the child and what it started).

    POSIX: ``killpg`` (else the child alone). Windows: Ctrl+Break to the child's process group, whatever
    the signal was: ``CTRL_C_EVENT`` cannot be aimed at one group (it goes to every process of the console,
    us included) and a new process group starts with Ctrl+C disabled. Without a console (a GUI client
    started us) the event cannot be sent; :func:`kill_group` then ends the child after the grace period.
    """
    killpg = getattr(os, "killpg", None)
    if killpg is not None:
        try:
            killpg(pid, signum)
            return
        except ProcessLookupError:
            return
        except PermissionError:
            pass
    ctrl_break = getattr(signal, "CTRL_BREAK_EVENT", None)
    if ctrl_break is not None:
        _kill(pid, ctrl_break)
        return
    _kill(pid, signum)


def terminate_group(pid: int) -> None:
    """The polite end: SIGTERM to the group (POSIX), Ctrl+Break to the group (Windows)."""
    interrupt_group(pid, signal.SIGTERM)


def kill_group(pid: int) -> None:
    """The end that cannot be refused: SIGKILL to the group; where there is none (Windows), the child's
    Job object is ended (the child and what it started) and the child terminated (``TerminateProcess``)."""
    sigkill = getattr(signal, "SIGKILL", None)
    if sigkill is not None:
        interrupt_group(pid, sigkill)
        return
    tie = _ties.get(pid)
    if tie is not None:
        tie.end_all()
    _kill(pid, signal.SIGTERM)  # Windows: TerminateProcess


def pid_alive(pid: int) -> bool:
    """Is there a process ``pid``? POSIX: ``kill(pid, 0)``. Windows: ``OpenProcess`` and its exit code
    (``os.kill(pid, 0)`` there would send Ctrl+C to the whole console)."""
    if pid <= 0:
        return False
    import ctypes

    windll = getattr(ctypes, "windll", None)
    if windll is not None:
        k32 = windll.kernel32
        handle = k32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        try:
            code = ctypes.c_ulong()
            return bool(k32.GetExitCodeProcess(handle, ctypes.byref(code))) and code.value == 259  # STILL_ACTIVE
        finally:
            k32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # none, or a number no process can have
        return False
    except OSError:
        return True  # someone else's: alive
    return True


# -- dying with us -------------------------------------------------------------------------------------
_PR_SET_PDEATHSIG = 1


@functools.cache
def _libc() -> Any:
    """The C library (None where it cannot be found): looked up once, ``find_library`` runs a program."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name, use_errno=True)
    except OSError:
        return None


def parent_death_preexec() -> Callable[[], None] | None:
    """A ``preexec_fn`` asking the kernel to SIGTERM the child when the thread that started it ends
    (``prctl(PR_SET_PDEATHSIG)``: Linux), or None where the C library has no ``prctl``."""
    libc = _libc()
    if libc is None or not hasattr(os, "fork"):
        return None
    try:
        prctl = libc.prctl
    except AttributeError:
        return None
    sigterm = int(signal.SIGTERM)

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, sigterm, 0, 0, 0)

    return preexec


class Tie:
    """What keeps a child from outliving us where the kernel does not: a Job object (Windows) or a
    watchdog process (other POSIX). :meth:`release` once the child was ended (or ended by itself)."""

    def __init__(self, pid: int, kind: str, handle: Any) -> None:
        self.pid = pid
        self.kind = kind
        self._handle = handle

    def release(self) -> None:
        """The child is ended: the watchdog leaves without a signal; the Job's handle is closed."""
        handle, self._handle = self._handle, None
        _ties.pop(self.pid, None)
        if handle is None:
            return
        if self.kind == "watchdog":  # one byte, then it leaves by itself (never waited on: stop_async calls this)
            with contextlib.suppress(OSError, ValueError):
                handle.stdin.write(b"x")
                handle.stdin.close()
        elif self.kind == "job":
            _windows().close(handle)

    def end_all(self) -> None:
        """End every process of the Job (Windows); a watchdog has nothing to add to ``killpg``."""
        if self.kind == "job" and self._handle is not None:
            _windows().terminate(self._handle)


_ties: dict[int, Tie] = {}


def untie(pid: int) -> None:
    """The child ``pid`` has ended (or was ended): release what tied it to us (:meth:`Tie.release`)."""
    tie = _ties.get(pid)
    if tie is not None:
        tie.release()

#: the watchdog (other POSIX): reads the pipe only the proxy holds; EOF without a byte means the proxy is
#: gone, so the child's group gets SIGTERM, then SIGKILL after ``grace``. It leaves by itself when the child
#: is gone. It imports nothing of mcpreel (it starts in tens of milliseconds) and ignores the terminal's
#: signals (its own process group; SIGINT/SIGHUP ignored): only the pipe decides.
_WATCHDOG = r"""
import os, select, signal, sys, time
pid, group, grace = int(sys.argv[1]), sys.argv[2] == "1", float(sys.argv[3])
for name in ("SIGINT", "SIGHUP"):
    if hasattr(signal, name):
        signal.signal(getattr(signal, name), signal.SIG_IGN)
def alive():
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
while True:
    ready = select.select([0], [], [], 0.5)[0]
    if ready:
        if os.read(0, 1):
            sys.exit(0)
        break
    if not alive():
        sys.exit(0)
kill = os.killpg if group else os.kill
for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 0)):
    try:
        kill(pid, sig)
    except OSError:
        pass
    end = time.monotonic() + wait
    while time.monotonic() < end and alive():
        time.sleep(0.05)
    if not alive():
        break
"""


def _start_watchdog(pid: int, group: bool, grace: float) -> Tie | None:
    import subprocess

    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _WATCHDOG, str(pid), "1" if group else "0", f"{grace:g}"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            **child_options(True),
        )
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    return Tie(pid, "watchdog", proc)


def _watchdog_possible() -> bool:
    # select() on a pipe, and signals to a group: POSIX
    import select

    return hasattr(select, "poll") and hasattr(os, "killpg") and bool(sys.executable)


class _Windows:
    """The Job object calls of kernel32, through ctypes (faked in the tests at this boundary)."""

    KILL_ON_JOB_CLOSE = 0x2000
    EXTENDED_LIMIT_INFORMATION = 9
    PROCESS_SET_QUOTA = 0x0100
    PROCESS_TERMINATE = 0x0001

    def __init__(self, kernel32: Any) -> None:
        self.k32 = kernel32

    @staticmethod
    def limit_information() -> Any:
        """A JOBOBJECT_EXTENDED_LIMIT_INFORMATION with kill-on-job-close set (the layout of winnt.h)."""
        import ctypes

        class Basic(ctypes.Structure):
            _fields_ = [("PerProcessUserTimeLimit", ctypes.c_int64), ("PerJobUserTimeLimit", ctypes.c_int64),
                        ("LimitFlags", ctypes.c_uint32), ("MinimumWorkingSetSize", ctypes.c_size_t),
                        ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", ctypes.c_uint32),
                        ("Affinity", ctypes.c_size_t), ("PriorityClass", ctypes.c_uint32),
                        ("SchedulingClass", ctypes.c_uint32)]

        class Io(ctypes.Structure):
            _fields_ = [(name, ctypes.c_uint64) for name in (
                "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
                "ReadTransferCount", "WriteTransferCount", "OtherTransferCount")]

        class Extended(ctypes.Structure):
            _fields_ = [("BasicLimitInformation", Basic), ("IoInfo", Io),
                        ("ProcessMemoryLimit", ctypes.c_size_t), ("JobMemoryLimit", ctypes.c_size_t),
                        ("PeakProcessMemoryUsed", ctypes.c_size_t), ("PeakJobMemoryUsed", ctypes.c_size_t)]

        info = Extended()
        info.BasicLimitInformation.LimitFlags = _Windows.KILL_ON_JOB_CLOSE
        return info

    def job_for(self, pid: int) -> Any:
        """A Job object that kills ``pid`` (and what it starts from now on) when its last handle closes.

        A process the child started before it was assigned stays outside the Job (a few milliseconds).
        """
        import ctypes

        k32 = self.k32
        job = k32.CreateJobObjectW(None, None)
        if not job:
            raise OSError("CreateJobObjectW failed")
        info = self.limit_information()
        process = None
        try:
            if not k32.SetInformationJobObject(job, self.EXTENDED_LIMIT_INFORMATION, ctypes.byref(info),
                                               ctypes.sizeof(info)):
                raise OSError("SetInformationJobObject failed")
            process = k32.OpenProcess(self.PROCESS_SET_QUOTA | self.PROCESS_TERMINATE, False, pid)
            if not process or not k32.AssignProcessToJobObject(job, process):
                raise OSError("AssignProcessToJobObject failed")
        except BaseException:
            k32.CloseHandle(job)
            raise
        finally:
            if process:
                k32.CloseHandle(process)
        return job

    def terminate(self, job: Any) -> None:
        self.k32.TerminateJobObject(job, 1)

    def close(self, job: Any) -> None:
        self.k32.CloseHandle(job)


def _windows() -> _Windows:
    import ctypes

    windll = getattr(ctypes, "windll", None)
    if windll is None:
        raise OSError("no kernel32 here")
    return _Windows(windll.kernel32)


def tie_to_us(pid: int, *, group: bool = True, grace: float = 2.0) -> Tie | None:
    """Make sure the child ``pid`` ends when we do, where :func:`parent_death_preexec` could not.

    Windows: a Job object with kill-on-close. Other POSIX: a watchdog process. None (and one notice)
    where neither is possible: then a ``kill -9`` of mcpreel may leave the child running.
    """
    import ctypes

    tie: Tie | None = None
    if hasattr(ctypes, "windll"):
        with contextlib.suppress(OSError, AttributeError):
            tie = Tie(pid, "job", _windows().job_for(pid))
    elif _watchdog_possible():
        tie = _start_watchdog(pid, group, grace)
    if tie is None:
        notice("die-with-parent", "mcpreel: note: a server started here may outlive mcpreel if mcpreel is "
                                  "killed (no parent-death signal, job object or watchdog on this system)")
        return None
    _ties[pid] = tie
    return tie


# -- the control channel: who is at the other end ------------------------------------------------------
#: struct xucred (macOS, the BSDs): version, uid, then groups (76 bytes); struct ucred (Linux): pid, uid, gid
_XUCRED = "=Ii"
_XUCRED_SIZE = 76
_UCRED = "=3i"


def _getpeereid() -> Any:
    libc = _libc()
    return getattr(libc, "getpeereid", None) if libc is not None else None


def _peer_method() -> str | None:
    import socket

    if hasattr(socket, "SO_PEERCRED"):
        return "SO_PEERCRED"
    if hasattr(socket, "LOCAL_PEERCRED"):
        return "LOCAL_PEERCRED"
    if _getpeereid() is not None:
        return "getpeereid"
    return None


def control_unavailable() -> str | None:
    """Why there is no control channel here (live view, ``--intercept``), or None when there is one.

    There always is one now: where the peer of a Unix socket cannot be known (Windows: no Unix sockets,
    no uids; a BSD without ``getpeereid``) the channel is a loopback TCP socket whose first line must carry
    the run's secret (:func:`control_auth`). Kept for callers that ask, and for a system without loopback TCP."""
    import socket

    if not hasattr(socket, "AF_INET"):
        return "live view is not available here (no sockets on this system)"
    return None


def control_auth() -> str:
    """How the control channel knows a viewer is the user who started the recording: ``"peer"`` (a Unix
    socket in the 0700 runtime folder whose peer uid the kernel tells: Linux, macOS, the BSDs with
    ``getpeereid``) or ``"secret"`` (a loopback TCP socket; the first line a viewer sends must hold the
    per-run secret written to a file only the user can read: Windows, where ``%LOCALAPPDATA%`` is the
    user's own, and systems that cannot tell a socket's peer)."""
    import socket

    if hasattr(socket, "AF_UNIX") and hasattr(os, "getuid") and _peer_method() is not None:
        return "peer"
    return "secret"


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a connected Unix socket; :class:`OSError` when unknown."""
    import ctypes
    import socket
    import struct

    method = _peer_method()
    if method == "SO_PEERCRED":
        data = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize(_UCRED))
        return int(struct.unpack_from(_UCRED, data)[1])
    if method == "LOCAL_PEERCRED":
        level = getattr(socket, "SOL_LOCAL", 0)
        option = getattr(socket, "LOCAL_PEERCRED", 1)  # macOS and the BSDs (1 there)
        data = sock.getsockopt(level, option, _XUCRED_SIZE)
        version, uid = struct.unpack_from(_XUCRED, data)
        if version != 0:  # XUCRED_VERSION
            raise OSError(f"unknown xucred version {version}")
        return int(uid)
    if method == "getpeereid":
        uid, gid = ctypes.c_uint32(), ctypes.c_uint32()
        if _getpeereid()(sock.fileno(), ctypes.byref(uid), ctypes.byref(gid)) != 0:
            raise OSError(ctypes.get_errno(), "getpeereid failed")
        return int(uid.value)
    raise OSError("no way to know the peer of a socket here")


def user_id() -> int | None:
    """Our uid, or None where there are none (Windows)."""
    getuid = getattr(os, "getuid", None)
    return getuid() if getuid is not None else None


# -- the runtime folder --------------------------------------------------------------------------------
def _ours_alone(path: str) -> bool:
    uid = user_id()
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and uid is not None and st.st_uid == uid


def runtime_base() -> Path:
    """The folder the control runtime directory goes in (see the module docstring)."""
    from pathlib import Path

    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and _ours_alone(xdg):
        return Path(xdg) / "mcpreel"
    tmpdir = os.environ.get("TMPDIR")
    if tmpdir and _ours_alone(tmpdir) and not stat.S_IMODE(os.stat(tmpdir).st_mode) & 0o077:
        return Path(tmpdir) / "mcpreel"
    uid = user_id()
    if uid is None:
        base = os.environ.get("LOCALAPPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Local")
        return Path(base) / "mcpreel" / "run"
    return Path(f"/tmp/mcpreel-{uid}")


# -- private files -------------------------------------------------------------------------------------
#: ``os.open`` flag refusing a symbolic link as the last component (0 where there is none: the callers
#: look with ``lstat`` first as well)
NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)

PRIVATE_MODE = 0o600


def system() -> str:
    """Which desktop's folder conventions apply (``sys.platform``: ``linux``, ``darwin``, ``win32``, ...):
    asked only where a path is a convention rather than a feature (where a client keeps its config)."""
    return sys.platform


def can_signal_processes() -> bool:
    """Can a process be asked to stop with a signal it may catch (POSIX ``SIGTERM``)? Windows has no such
    signal to send to another process: ``os.kill`` there ends it outright."""
    return os.name == "posix"


def has_file_modes() -> bool:
    """Do POSIX permission bits mean something here (not on Windows, where ACLs decide)?"""
    return hasattr(os, "getuid")


def set_mode(fd: int, mode: int) -> bool:
    """``fchmod(fd, mode)`` where modes mean something; False (and nothing done) where they do not."""
    fchmod = getattr(os, "fchmod", None)
    if not has_file_modes() or fchmod is None:
        return False
    fchmod(fd, mode)
    return True


def make_private(fd: int, mode: int = PRIVATE_MODE) -> None:
    """Make the open file ``fd`` readable by its owner alone: mode 0600; on Windows it is as private as
    its folder (said once)."""
    if not set_mode(fd, mode):
        notice("private-files", "mcpreel: note: files are not made 0600 here; a session file is as private "
                                "as the folder it is written to (your profile's folders are yours alone)")


# -- stdio ---------------------------------------------------------------------------------------------
def binary_stdio() -> None:
    """Our stdin and stdout as bytes with ``\\n`` framing untouched: on Windows the descriptors are put in
    binary mode (CPython does it at start; an embedding interpreter may not), elsewhere nothing to do."""
    try:
        import msvcrt
    except ImportError:
        return
    for stream in (sys.stdin, sys.stdout):
        with contextlib.suppress(AttributeError, OSError, ValueError):
            msvcrt.setmode(stream.fileno(), os.O_BINARY)  # type: ignore[attr-defined]


def tcp_peer_uid(sock: socket.socket) -> int | None:
    """The uid owning the other end of an accepted loopback TCP connection, where the system tells (Linux:
    the peer's row in ``/proc/net/tcp``/``tcp6``, whose local port is our peer's and remote port ours), else
    None (Windows, macOS: the loopback control channel then counts every stranger as one)."""
    try:
        peer_port = sock.getpeername()[1]
        our_port = sock.getsockname()[1]
    except (OSError, IndexError):
        return None
    want_local, want_remote = f":{peer_port:04X}", f":{our_port:04X}"
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii", errors="replace") as fh:
                next(fh, None)  # the header
                for line in fh:
                    fields = line.split()
                    if (len(fields) > 7 and fields[1].endswith(want_local) and fields[2].endswith(want_remote)
                            and fields[7].isdigit()):
                        return int(fields[7])
        except OSError:
            continue
    return None
