"""Each implementation of the platform seam (``mcpreel._infra.platform``), its OS calls faked at the boundary.

Linux's own paths run for real here; the others (Windows' Job object and console events, macOS's
``LOCAL_PEERCRED`` and ``getpeereid``, the runtime folders, private files without modes, binary stdio) are
driven by taking the Linux attribute away and giving a fake of the other system's in its place.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import stat
import struct
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest

from mcpreel._infra import platform
from mcpreel.errors import UsageError

LINUX = hasattr(socket, "SO_PEERCRED") and hasattr(os, "killpg")
linux_only = pytest.mark.skipif(not LINUX, reason="runs Linux's own calls for real")


@pytest.fixture
def said(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The notice lines, each key fresh."""
    lines: list[str] = []
    monkeypatch.setattr(platform, "_said", {})
    monkeypatch.setattr(platform, "_sink", lines.append)
    return lines


# -- notices -------------------------------------------------------------------------------------------
def test_a_notice_is_said_once(said: list[str]) -> None:
    platform.notice("k", "mcpreel: note: one")
    platform.notice("k", "mcpreel: note: one")
    platform.notice("other", "mcpreel: note: two")
    assert said == ["mcpreel: note: one", "mcpreel: note: two"]
    assert platform.notices() == {"k": "mcpreel: note: one", "other": "mcpreel: note: two"}


# -- signals -------------------------------------------------------------------------------------------
def test_stop_signals_are_the_ones_the_system_has(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(signal, "SIGHUP", raising=False)
    monkeypatch.setattr(signal, "SIGBREAK", 21, raising=False)
    assert platform._signals("SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK") == (signal.SIGINT, signal.SIGTERM, 21)


def test_linux_stops_with_sighup_too() -> None:
    if hasattr(signal, "SIGHUP"):
        assert signal.SIGHUP in platform.STOP_SIGNALS
    assert {signal.SIGINT, signal.SIGTERM} <= set(platform.STOP_SIGNALS)


# -- a child and its group -----------------------------------------------------------------------------
def test_child_options_posix_and_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert platform.child_options(False) == {}
    if hasattr(os, "setpgid"):
        assert platform.child_options(True) == {"process_group": 0}
    monkeypatch.delattr(os, "setpgid", raising=False)
    monkeypatch.setattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200, raising=False)
    assert platform.child_options(True) == {"creationflags": 0x200}


class _Calls:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def killpg(self, pid: int, sig: int) -> None:
        self.calls.append(("killpg", pid, sig))

    def kill(self, pid: int, sig: int) -> None:
        self.calls.append(("kill", pid, sig))


def test_interrupt_group_posix(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _Calls()
    monkeypatch.setattr(os, "killpg", fake.killpg, raising=False)
    monkeypatch.setattr(os, "kill", fake.kill)
    platform.interrupt_group(42, signal.SIGINT)
    assert fake.calls == [("killpg", 42, signal.SIGINT)]


def test_interrupt_group_falls_back_to_the_child_when_the_group_is_not_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _Calls()

    def refused(pid: int, sig: int) -> None:
        raise PermissionError

    monkeypatch.setattr(os, "killpg", refused, raising=False)
    monkeypatch.setattr(os, "kill", fake.kill)
    platform.interrupt_group(42, signal.SIGTERM)
    assert fake.calls == [("kill", 42, signal.SIGTERM)]


def test_interrupt_group_of_a_gone_child_is_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def gone(pid: int, sig: int) -> None:
        raise ProcessLookupError

    monkeypatch.setattr(os, "killpg", gone, raising=False)
    monkeypatch.setattr(os, "kill", gone)
    platform.interrupt_group(42, signal.SIGTERM)  # no exception


def test_windows_interrupts_with_ctrl_break_and_kills_with_terminate(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _Calls()
    monkeypatch.delattr(os, "killpg", raising=False)
    monkeypatch.delattr(signal, "SIGKILL", raising=False)
    monkeypatch.setattr(signal, "CTRL_BREAK_EVENT", 1, raising=False)
    monkeypatch.setattr(os, "kill", fake.kill)
    ended: list[str] = []
    tie = platform.Tie(42, "job", "job-handle")
    monkeypatch.setattr(tie, "end_all", lambda: ended.append("job"))
    monkeypatch.setitem(platform._ties, 42, tie)
    platform.interrupt_group(42, signal.SIGINT)
    platform.terminate_group(42)
    platform.kill_group(42)
    assert fake.calls == [("kill", 42, 1), ("kill", 42, 1), ("kill", 42, signal.SIGTERM)]
    assert ended == ["job"]


def test_without_groups_or_console_events_the_child_gets_the_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _Calls()
    monkeypatch.delattr(os, "killpg", raising=False)
    monkeypatch.delattr(signal, "CTRL_BREAK_EVENT", raising=False)
    monkeypatch.setattr(os, "kill", fake.kill)
    platform.interrupt_group(42, signal.SIGINT)
    assert fake.calls == [("kill", 42, signal.SIGINT)]


# -- dying with us -------------------------------------------------------------------------------------
def test_parent_death_asks_prctl_where_libc_has_it(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, ...]] = []
    monkeypatch.setattr(os, "fork", lambda: 0, raising=False)  # a preexec_fn needs fork (POSIX)
    monkeypatch.setattr(platform, "_libc", lambda: types.SimpleNamespace(prctl=lambda *a: calls.append(a)))
    preexec = platform.parent_death_preexec()
    assert preexec is not None
    preexec()
    assert calls == [(1, int(signal.SIGTERM), 0, 0, 0)]  # PR_SET_PDEATHSIG


def test_no_prctl_no_preexec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform, "_libc", lambda: types.SimpleNamespace())
    assert platform.parent_death_preexec() is None
    monkeypatch.setattr(platform, "_libc", lambda: None)
    assert platform.parent_death_preexec() is None


class _Kernel32:
    """kernel32's Job object calls, recorded; ``fail`` names one that returns 0 (FALSE/NULL)."""

    def __init__(self, fail: str = "") -> None:
        self.fail = fail
        self.calls: list[tuple[Any, ...]] = []
        self.flags: int | None = None

    def _ok(self, name: str, value: Any, *args: Any) -> Any:
        self.calls.append((name, *args))
        return 0 if name == self.fail else value

    def CreateJobObjectW(self, attributes: Any, name: Any) -> Any:
        return self._ok("CreateJobObjectW", 1001)

    def SetInformationJobObject(self, job: Any, klass: int, info: Any, size: int) -> Any:
        self.flags = info._obj.BasicLimitInformation.LimitFlags
        return self._ok("SetInformationJobObject", 1, job, klass, size)

    def OpenProcess(self, access: int, inherit: bool, pid: int) -> Any:
        return self._ok("OpenProcess", 2002, access, inherit, pid)

    def AssignProcessToJobObject(self, job: Any, process: Any) -> Any:
        return self._ok("AssignProcessToJobObject", 1, job, process)

    def TerminateJobObject(self, job: Any, code: int) -> Any:
        return self._ok("TerminateJobObject", 1, job, code)

    def CloseHandle(self, handle: Any) -> Any:
        return self._ok("CloseHandle", 1, handle)


def _windll(monkeypatch: pytest.MonkeyPatch, kernel32: _Kernel32) -> None:
    monkeypatch.setattr(ctypes, "windll", types.SimpleNamespace(kernel32=kernel32), raising=False)


def test_windows_ties_the_child_to_a_kill_on_close_job(monkeypatch: pytest.MonkeyPatch, said: list[str]) -> None:
    k32 = _Kernel32()
    _windll(monkeypatch, k32)
    tie = platform.tie_to_us(4242)
    assert tie is not None and tie.kind == "job" and platform._ties[4242] is tie
    size = ctypes.sizeof(platform._Windows.limit_information())
    assert k32.calls == [("CreateJobObjectW",), ("SetInformationJobObject", 1001, 9, size),
                         ("OpenProcess", 0x0101, False, 4242), ("AssignProcessToJobObject", 1001, 2002),
                         ("CloseHandle", 2002)]
    assert k32.flags == 0x2000  # JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
    assert size in (144, 112)  # JOBOBJECT_EXTENDED_LIMIT_INFORMATION on 64 and 32 bits
    tie.end_all()
    platform.untie(4242)
    assert k32.calls[-2:] == [("TerminateJobObject", 1001, 1), ("CloseHandle", 1001)]
    assert 4242 not in platform._ties and said == []


def test_windows_a_job_that_cannot_be_made_is_one_note(monkeypatch: pytest.MonkeyPatch, said: list[str]) -> None:
    k32 = _Kernel32(fail="AssignProcessToJobObject")
    _windll(monkeypatch, k32)
    assert platform.tie_to_us(4242) is None
    assert ("CloseHandle", 1001) in k32.calls  # the job is not leaked
    assert len(said) == 1 and "may outlive mcpreel" in said[0]


def test_nothing_to_tie_with_is_one_note(monkeypatch: pytest.MonkeyPatch, said: list[str]) -> None:
    monkeypatch.delattr(ctypes, "windll", raising=False)
    monkeypatch.setattr(platform, "_watchdog_possible", lambda: False)
    assert platform.tie_to_us(1) is None
    assert platform.tie_to_us(2) is None
    assert len(said) == 1


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], process_group=0)


def _gone_within(proc: subprocess.Popen[bytes], seconds: float) -> bool:
    try:
        proc.wait(seconds)
        return True
    except subprocess.TimeoutExpired:
        return False


@linux_only
@pytest.mark.timeout(60)
def test_the_watchdog_ends_the_child_when_its_pipe_ends_without_a_word(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a kill -9 of the proxy does to the watchdog: the pipe's write end closes, nothing was written."""
    monkeypatch.delattr(ctypes, "windll", raising=False)
    child = _sleeper()
    try:
        tie = platform.tie_to_us(child.pid, grace=1.0)
        assert tie is not None and tie.kind == "watchdog"
        watchdog = tie._handle
        watchdog.stdin.close()  # the proxy is gone
        assert _gone_within(child, 10)
        assert child.returncode == -signal.SIGTERM
        assert _gone_within(watchdog, 10)
    finally:
        platform._ties.pop(child.pid, None)
        if child.poll() is None:
            child.kill()


@linux_only
@pytest.mark.timeout(60)
def test_a_released_watchdog_leaves_the_child_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(ctypes, "windll", raising=False)
    child = _sleeper()
    try:
        tie = platform.tie_to_us(child.pid)
        assert tie is not None
        watchdog = tie._handle
        platform.untie(child.pid)
        assert _gone_within(watchdog, 10) and watchdog.returncode == 0
        assert child.poll() is None
    finally:
        child.kill()
        child.wait()


@linux_only
@pytest.mark.timeout(60)
def test_the_watchdog_leaves_by_itself_when_the_child_is_gone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(ctypes, "windll", raising=False)
    child = subprocess.Popen([sys.executable, "-c", "pass"], process_group=0)
    try:
        tie = platform.tie_to_us(child.pid)
        assert tie is not None
        child.wait(30)
        assert _gone_within(tie._handle, 10)
    finally:
        platform._ties.pop(child.pid, None)


# -- the control channel: who is at the other end ------------------------------------------------------
@linux_only
def test_linux_names_the_peer_with_so_peercred() -> None:
    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        assert platform.peer_uid(a) == os.getuid()
    assert platform.control_unavailable() is None


class _FakeSocket:
    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.asked: list[tuple[int, int, int]] = []

    def getsockopt(self, level: int, option: int, size: int) -> bytes:
        self.asked.append((level, option, size))
        return self.answer

    def fileno(self) -> int:
        return 7


def test_macos_names_the_peer_with_local_peercred(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(socket, "SO_PEERCRED", raising=False)
    monkeypatch.setattr(socket, "LOCAL_PEERCRED", 1, raising=False)
    monkeypatch.setattr(socket, "SOL_LOCAL", 0, raising=False)
    sock = _FakeSocket(struct.pack("=Ii", 0, 501) + bytes(68))
    assert platform.peer_uid(sock) == 501  # type: ignore[arg-type]
    assert sock.asked == [(0, 1, 76)]
    with pytest.raises(OSError, match="xucred version"):
        platform.peer_uid(_FakeSocket(struct.pack("=Ii", 9, 501)))  # type: ignore[arg-type]


def test_the_bsds_name_the_peer_with_getpeereid(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(socket, "SO_PEERCRED", raising=False)
    monkeypatch.delattr(socket, "LOCAL_PEERCRED", raising=False)
    asked: list[int] = []

    def getpeereid(fd: int, uid: Any, gid: Any) -> int:
        asked.append(fd)
        uid._obj.value, gid._obj.value = 1001, 20
        return 0

    monkeypatch.setattr(platform, "_libc", lambda: types.SimpleNamespace(getpeereid=getpeereid))
    assert platform.peer_uid(_FakeSocket(b"")) == 1001  # type: ignore[arg-type]
    assert asked == [7]
    monkeypatch.setattr(platform, "_libc", lambda: types.SimpleNamespace(getpeereid=lambda *a: -1))
    with pytest.raises(OSError):
        platform.peer_uid(_FakeSocket(b""))  # type: ignore[arg-type]


def test_no_way_to_name_the_peer_means_the_secret_channel(monkeypatch: pytest.MonkeyPatch) -> None:
    assert platform.control_auth() == "peer"  # Linux: SO_PEERCRED
    monkeypatch.delattr(socket, "SO_PEERCRED", raising=False)
    monkeypatch.delattr(socket, "LOCAL_PEERCRED", raising=False)
    monkeypatch.setattr(platform, "_libc", lambda: types.SimpleNamespace())
    assert platform.control_unavailable() is None
    assert platform.control_auth() == "secret"
    with pytest.raises(OSError):
        platform.peer_uid(_FakeSocket(b""))  # type: ignore[arg-type]


def test_windows_has_the_secret_channel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(socket, "AF_UNIX", raising=False)
    assert platform.control_unavailable() is None
    assert platform.control_auth() == "secret"


def test_the_secret_channel_end_to_end(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The loopback channel on its own: a viewer with the run's secret gets hello and the records; one
    without it, or with another, gets nothing and is closed; the listing finds the proxy; the secret file is
    0600 and goes with the proxy."""
    from mcpreel.control import discovery
    from mcpreel.control.client import ControlClient, ControlError
    from mcpreel.control.server import ControlServer
    from mcpreel.model import Message

    monkeypatch.setattr(platform, "control_auth", lambda: "secret")
    notes: list[str] = []
    server = ControlServer(transport="stdio", directory=tmp_path, note=notes.append)
    try:
        where = server.start()
        assert where.suffix == ".json" and server.address is not None
        key = where.with_suffix(".key")
        assert key.stat().st_mode & 0o777 == 0o600 and not where.with_suffix(".sock").exists()
        listed = discovery.running(tmp_path)
        assert [p["socket"] for p in listed] == [str(where)] and listed[0]["address"] == server.address
        with ControlClient.connect(where) as client:
            assert client.hello["type"] == "hello"
            server.recorded(Message("in", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, 1_700_000_000_000, seq=0))
            got = client.wait_for("record", timeout=10)["record"]
            assert (got["seq"], got["dir"]) == (0, "in")
        raw = socket.create_connection(tuple(server.address), timeout=5)
        raw.sendall(b'{"type":"auth","secret":"nope"}\n')
        assert raw.recv(100) == b""  # closed before a byte of hello
        raw.close()
        assert any("did not give this recording's secret" in n for n in notes)
        key.write_text('{"secret": "stolen-but-wrong"}')
        with pytest.raises(ControlError):
            ControlClient.connect(where, timeout=5)
    finally:
        server.close()
    assert not where.exists() and not where.with_suffix(".key").exists()


def test_a_silent_connection_keeps_no_viewer_waiting_on_the_secret_channel(monkeypatch: pytest.MonkeyPatch,
                                                                         tmp_path: Path) -> None:
    """Loopback TCP: a local process that connects and says nothing used to hold the accept loop for the
    whole time a secret line may take (2 s); now each connection gives its secret on a thread of its own,
    so a viewer behind silent ones gets hello at once, and one more silent connection than the channel
    awaits at once of one uid closes the oldest of them straight away, with a note (issue 40: closing the
    newest locked the owner out behind 8 silent ones)."""
    from mcpreel.control import server as control_server
    from mcpreel.control.client import ControlClient
    from mcpreel.control.server import ControlServer

    monkeypatch.setattr(platform, "control_auth", lambda: "secret")
    monkeypatch.setattr(control_server, "_AUTH_SECONDS", 20.0)  # silence would hold the loop far past the asserts
    notes: list[str] = []
    server = ControlServer(transport="stdio", directory=tmp_path, note=notes.append)
    silent: list[socket.socket] = []
    try:
        where = server.start()
        assert server.address is not None
        for _ in range(control_server._AUTH_AT_ONCE):
            silent.append(socket.create_connection(tuple(server.address), timeout=5))
        t0 = time.monotonic()
        extra = socket.create_connection(tuple(server.address), timeout=5)
        silent.append(extra)
        assert silent.pop(0).recv(100) == b""  # the oldest closed at once, not after 20 s
        assert time.monotonic() - t0 < 10
        deadline = time.monotonic() + 10  # the note follows the close
        while not any("gave no secret: 8 more from" in n for n in notes):
            assert time.monotonic() < deadline, notes
            time.sleep(0.05)
        deadline = time.monotonic() + 10
        while True:
            t0 = time.monotonic()
            try:
                with ControlClient.connect(where, timeout=5) as client:
                    assert client.hello["type"] == "hello"
                break
            except Exception:  # the slot is freed once the closed one's thread has seen it go
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert time.monotonic() - t0 < 5  # not held behind the silent ones (they have 20 s)
    finally:
        for sock in silent:
            sock.close()
        server.close()


def test_the_control_server_client_and_list_say_so_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    from mcpreel.control import discovery
    from mcpreel.control.client import ControlClient, ControlError
    from mcpreel.control.server import ControlServer

    monkeypatch.setattr(platform, "control_unavailable", lambda: "live view is not available here (test)")  # no sockets
    server = ControlServer(transport="stdio", directory=tmp_path)
    try:
        with pytest.raises(UsageError, match="live view is not available here"):
            server.start()
    finally:
        server.close()
    with pytest.raises(ControlError, match="live view is not available here"):
        ControlClient.connect(tmp_path / "x.sock")
    assert discovery.running(tmp_path) == []


@linux_only
@pytest.mark.timeout(60)
def test_a_peer_the_system_cannot_name_is_refused_and_the_next_viewer_still_attaches(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Issue 30's macOS failure: the first viewer killed the control thread, and no viewer could attach."""
    from mcpreel.control.client import ControlClient, ControlError
    from mcpreel.control.server import ControlServer

    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    notes: list[str] = []
    server = ControlServer(transport="stdio", directory=runtime, note=notes.append)
    real = platform.peer_uid
    failures = iter([OSError("cannot tell")])

    def flaky(sock: socket.socket) -> int:
        for exc in failures:
            raise exc
        return real(sock)

    monkeypatch.setattr(platform, "peer_uid", flaky)
    path = server.start()
    try:
        with pytest.raises(ControlError):
            ControlClient.connect(path, timeout=5)
        client = ControlClient.connect(path, timeout=10)
        assert client.hello["type"] == "hello"
        client.close()
        assert any("refused a connection" in n for n in notes)
    finally:
        server.close()


# -- the runtime folder --------------------------------------------------------------------------------
def test_runtime_base_prefers_xdg_then_a_private_tmpdir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if platform.user_id() is None:
        pytest.skip("a system with uids")
    xdg, tmpdir, shared = tmp_path / "xdg", tmp_path / "tmpdir", tmp_path / "shared"
    for d, mode in ((xdg, 0o700), (tmpdir, 0o700), (shared, 0o755)):
        d.mkdir()
        d.chmod(mode)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(xdg))
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    assert platform.runtime_base() == xdg / "mcpreel"
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert platform.runtime_base() == tmpdir / "mcpreel"  # macOS: /var/folders/.../T/, 0700
    monkeypatch.setenv("TMPDIR", str(shared))  # others may enter: not for sockets
    assert platform.runtime_base() == Path(f"/tmp/mcpreel-{platform.user_id()}")
    monkeypatch.setattr(platform, "user_id", lambda: 123456)  # XDG and TMPDIR are not this user's
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(xdg))
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    assert platform.runtime_base() == Path("/tmp/mcpreel-123456")


def test_windows_runtime_base_is_local_app_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delattr(os, "getuid", raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path))
    assert platform.runtime_base() == tmp_path / "mcpreel" / "run"


# -- private files -------------------------------------------------------------------------------------
def test_private_files_are_0600_where_modes_exist(tmp_path: Path, said: list[str]) -> None:
    if not platform.has_file_modes():
        pytest.skip("a system with modes")
    path = tmp_path / "f"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        platform.make_private(fd)
    finally:
        os.close(fd)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and said == []


def test_windows_private_files_are_said_plainly_once(monkeypatch: pytest.MonkeyPatch, said: list[str]) -> None:
    chmods: list[int] = []
    monkeypatch.delattr(os, "getuid", raising=False)
    monkeypatch.setattr(os, "fchmod", lambda fd, mode: chmods.append(mode), raising=False)
    platform.make_private(3)
    platform.make_private(4)
    assert platform.set_mode(5, 0o644) is False
    assert chmods == []  # a Windows fchmod only toggles read-only: not called
    assert len(said) == 1 and "not made 0600" in said[0]


def test_atomic_output_goes_through_the_seam(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                             said: list[str]) -> None:
    from mcpreel._infra.fileio import atomic_output, open_private_append

    monkeypatch.delattr(os, "getuid", raising=False)
    monkeypatch.delattr(os, "fchmod", raising=False)
    monkeypatch.setattr(platform, "NOFOLLOW", 0)
    with atomic_output(tmp_path / "a.json") as fh:
        fh.write(b"{}")
    with open_private_append(tmp_path / "b.jsonl") as fh:
        fh.write(b"{}\n")
    assert (tmp_path / "a.json").read_bytes() == b"{}" and (tmp_path / "b.jsonl").read_bytes() == b"{}\n"
    assert len(said) == 1


# -- stdio ---------------------------------------------------------------------------------------------
def test_windows_stdio_is_put_in_binary_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int]] = []
    monkeypatch.setitem(sys.modules, "msvcrt", types.SimpleNamespace(setmode=lambda fd, mode: calls.append((fd, mode))))
    monkeypatch.setattr(os, "O_BINARY", 0x8000, raising=False)
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(fileno=lambda: 0))
    monkeypatch.setattr(sys, "stdout", types.SimpleNamespace(fileno=lambda: 1))
    platform.binary_stdio()
    assert calls == [(0, 0x8000), (1, 0x8000)]


def test_posix_stdio_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "msvcrt", None)  # import msvcrt raises ImportError
    platform.binary_stdio()


# -- a child stopped through the seam ------------------------------------------------------------------
@pytest.mark.timeout(60)
def test_stop_escalates_through_the_seam(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpreel.clients import process

    ends: list[str] = []
    real_terminate, real_kill = platform.terminate_group, platform.kill_group

    def terminate(pid: int) -> None:
        ends.append("terminate")
        real_terminate(pid)

    def kill(pid: int) -> None:
        ends.append("kill")
        real_kill(pid)

    monkeypatch.setattr(platform, "terminate_group", terminate)
    monkeypatch.setattr(platform, "kill_group", kill)
    deaf = ("import signal, time\n"
            "for name in ('SIGTERM', 'SIGBREAK'):\n"  # SIGBREAK: Windows' Ctrl+Break
            "    if hasattr(signal, name):\n"
            "        signal.signal(getattr(signal, name), signal.SIG_IGN)\n"
            "print('ready', flush=True)\n"
            "time.sleep(30)\n")
    proc = process.spawn([sys.executable, "-c", deaf], stdin=subprocess.DEVNULL)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    started = time.monotonic()
    code = process.stop(proc, grace=0.5)
    assert ends == ["terminate", "kill"] and time.monotonic() - started < 10
    if hasattr(signal, "SIGKILL"):
        assert code == -signal.SIGKILL


# -- is a process there --------------------------------------------------------------------------------
def test_pid_alive_posix() -> None:
    assert platform.pid_alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(30)
    assert not platform.pid_alive(child.pid)
    assert not platform.pid_alive(0)


def test_pid_alive_windows_asks_for_the_exit_code_never_sends_a_console_event(monkeypatch: pytest.MonkeyPatch) -> None:
    class K32:
        def __init__(self, code: int) -> None:
            self.code, self.closed = code, 0

        def OpenProcess(self, access: int, inherit: bool, pid: int) -> int:
            return 77 if pid == 42 else 0

        def GetExitCodeProcess(self, handle: int, ref: Any) -> int:
            ref._obj.value = self.code
            return 1

        def CloseHandle(self, handle: int) -> int:
            self.closed += 1
            return 1

    def no_kill(pid: int, sig: int) -> None:
        raise AssertionError("os.kill(pid, 0) is Ctrl+C to the whole console on Windows")

    monkeypatch.setattr(os, "kill", no_kill)
    running, ended = K32(259), K32(0)
    monkeypatch.setattr(ctypes, "windll", types.SimpleNamespace(kernel32=running), raising=False)
    assert platform.pid_alive(42) and not platform.pid_alive(43)
    monkeypatch.setattr(ctypes, "windll", types.SimpleNamespace(kernel32=ended), raising=False)
    assert not platform.pid_alive(42)
    assert running.closed == 1 and ended.closed == 1


# -- the seam is the one place ----------------------------------------------------------------------------
def test_no_module_outside_the_seam_asks_which_system_it_runs_on() -> None:
    """``sys.platform``, ``os.name`` and ``platform.system()`` are asked in ``_infra/platform.py`` alone: a
    check anywhere else is a second seam that the simulated-platform tests cannot reach."""
    import ast

    src = Path(platform.__file__).resolve().parents[1]
    found = []
    for path in sorted(src.rglob("*.py")):
        if path.name == "platform.py" and path.parent.name == "_infra":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (
                    (node.value.id, node.attr) in {("sys", "platform"), ("os", "name")}):
                found.append(f"{path.relative_to(src)}:{node.lineno}: {node.value.id}.{node.attr}")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "system"
                  and isinstance(node.func.value, ast.Name) and node.func.value.id == "platform"):
                found.append(f"{path.relative_to(src)}:{node.lineno}: platform.system()")
    assert not found, "ask mcpreel._infra.platform instead:\n" + "\n".join(found)


def test_the_seam_answers_what_was_asked_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    assert platform.system() == sys.platform
    assert platform.can_signal_processes() == (os.name == "posix")
    assert platform.pid_alive(os.getpid()) and not platform.pid_alive(10 ** 40)  # too big for any process
