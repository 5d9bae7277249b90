"""The one child-process module: start errors, process groups, stopping, exit statuses, signals."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time

import pytest

from mcpreel.clients.process import (
    ServerStartError,
    command_argv,
    exit_status,
    forward_signals,
    spawn,
    spawn_async,
    stop,
    stop_async,
    with_environ,
)
from mcpreel.errors import TransportError

PY = sys.executable
#: a child that exits when its stdin ends
ON_EOF = "import sys; sys.stdin.read()"
#: a child that ignores the end of its stdin and leaves on SIGTERM
IGNORES_EOF = "import sys, time; sys.stdin.read(); print('eof', flush=True); time.sleep(60)"
#: a child that ignores the end of its stdin and SIGTERM
STUBBORN = ("import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); "
            "sys.stdin.read(); time.sleep(60)")


def test_exit_status_is_what_a_shell_reports():
    assert exit_status(0) == 0
    assert exit_status(3) == 3
    assert exit_status(-signal.SIGTERM) == 143
    assert exit_status(-signal.SIGKILL) == 137


def test_a_command_that_cannot_start_is_exit_127():
    with pytest.raises(ServerStartError, match="cannot start 'no-such-server-x': No such file") as info:
        spawn(["no-such-server-x"])
    assert info.value.exit_code == 127
    assert isinstance(info.value, TransportError)
    assert info.value.command == "no-such-server-x" and info.value.reason == "No such file or directory"
    assert isinstance(info.value.__cause__, FileNotFoundError)
    with pytest.raises(ServerStartError, match="no server command"):
        spawn([])


def test_the_async_spawn_has_the_same_start_error():
    with pytest.raises(ServerStartError, match="cannot start 'no-such-server-x': No such file") as info:
        asyncio.run(spawn_async(["no-such-server-x"]))
    assert info.value.exit_code == 127


def test_the_server_runs_in_its_own_process_group():
    proc = spawn([PY, "-c", "import os; print(os.getpgrp(), os.getpid())"])
    out, _ = proc.communicate(timeout=20)
    pgrp, pid = out.split()
    assert pgrp == pid


def test_a_child_can_stay_in_our_process_group():
    proc = spawn([PY, "-c", "import os; print(os.getpgrp())"], group=False)
    out, _ = proc.communicate(timeout=20)
    assert int(out) == os.getpgrp()


def test_argv_and_environment():
    assert command_argv("srv --root '/a b'") == ["srv", "--root", "/a b"]
    assert command_argv(["srv", 3]) == ["srv", "3"]
    env = with_environ({"MCPREEL_TEST_EXTRA": "1"})
    assert env["MCPREEL_TEST_EXTRA"] == "1" and env["PATH"] == os.environ["PATH"]
    assert with_environ(None) == dict(os.environ)


def _started(proc: subprocess.Popen[bytes], word: bytes) -> None:
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == word


def test_stop_ends_a_well_behaved_child_by_closing_its_stdin():
    proc = spawn([PY, "-c", ON_EOF])
    assert stop(proc, 5.0) == 0


def test_stop_sends_sigterm_after_the_grace_period():
    proc = spawn([PY, "-c", IGNORES_EOF])
    t0 = time.monotonic()
    assert stop(proc, 0.3) == -signal.SIGTERM
    assert time.monotonic() - t0 >= 0.3


def test_stop_sends_sigkill_to_a_child_that_ignores_sigterm():
    proc = spawn([PY, "-c", STUBBORN])
    _started(proc, b"ready")
    assert stop(proc, 0.2) == -signal.SIGKILL


def test_stop_reaches_the_whole_process_group():
    # the child starts a grandchild that holds on; stopping the group ends both
    script = ("import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
              " print(p.pid, flush=True); time.sleep(60)")
    proc = spawn([PY, "-c", script])
    assert proc.stdout is not None
    grandchild = int(proc.stdout.readline())
    assert stop(proc, 0.2) == -signal.SIGTERM
    assert _gone(grandchild, 5.0)


def test_stop_async_is_the_same_policy():
    async def main() -> tuple[int | None, int | None]:
        polite = await spawn_async([PY, "-c", ON_EOF])
        stubborn = await spawn_async([PY, "-c", STUBBORN])
        assert stubborn.stdout is not None
        assert (await stubborn.stdout.readline()).strip() == b"ready"
        return await stop_async(polite, 5.0), await stop_async(stubborn, 0.2)

    assert asyncio.run(main()) == (0, -signal.SIGKILL)


def test_a_stopped_child_is_not_signalled_again():
    proc = spawn([PY, "-c", "pass"])
    proc.wait(20)
    assert stop(proc, 0.1) == 0


def test_signals_sent_to_us_are_forwarded_to_the_child_group():
    proc = spawn([PY, "-c", IGNORES_EOF])
    before = signal.getsignal(signal.SIGHUP)
    seen: list[int] = []
    with forward_signals(proc.pid, seen.append):
        os.kill(os.getpid(), signal.SIGHUP)
        code = proc.wait(20)
    assert seen == [signal.SIGHUP] and code == -signal.SIGHUP
    assert signal.getsignal(signal.SIGHUP) == before


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
def test_a_child_dies_with_the_parent_that_asked_for_it():
    # an intermediate parent starts a child that ignores its stdin's end; SIGKILL the parent: the child goes too
    script = ("import sys, time; from mcpreel.clients.process import spawn; "
              "p = spawn([sys.executable, '-c', 'import time; time.sleep(60)'], stdin=None, die_with_parent=True); "
              "print(p.pid, flush=True); time.sleep(60)")
    parent = subprocess.Popen([PY, "-c", script], stdout=subprocess.PIPE, env=os.environ.copy())
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        parent.kill()
        parent.wait(20)
        assert _gone(child, 5.0)
    finally:
        if parent.poll() is None:
            parent.kill()


def _gone(pid: int, within: float) -> bool:
    """Whether ``pid`` ended within ``within`` seconds (a zombie counts: here nobody may reap it)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return not sys.platform.startswith("linux")
