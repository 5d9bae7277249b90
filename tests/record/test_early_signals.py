"""A SIGINT/SIGTERM in the first moments of ``mcpreel record`` (stdio and HTTP) still leaves a whole reel.

The signal is sent at several moments after the process is spawned; whenever it lands once mcpreel's
first line ran, the reel exists, is 0600, starts with its ``meta`` line and ends with an ``end`` line
naming the signal, and the exit code is one a shell expects (never a death by the signal). The only
moment no code can cover is the interpreter's own start: a signal that lands before mcpreel installed its
latch (seen in ``/proc/PID/status``) must then have killed the process before any file was made.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcpreel._infra import signals as early_signals

SERVER = Path(__file__).parent / "stdio" / "servers" / "raw_server.py"
MOMENTS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
#: later moments, tried only while fewer than WHOLE signals have landed after mcpreel's start: a loaded
#: machine starts an interpreter in seconds, not tenths, and the test must still see signals it covers
LATE = (1.0, 2.0, 4.0, 8.0)
WHOLE = len(MOMENTS) - 2

pytestmark = [pytest.mark.timeout(300),
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/status")]


def _catches(pid: int, sig: int) -> bool:
    """Does the process have a handler for ``sig`` now (its ``SigCgt`` mask)?"""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next(int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(mask >> (sig - 1) & 1)


def _record(args: list[str], out: Path, sig: int, delay: float) -> tuple[int, bool, str]:
    proc = subprocess.Popen([sys.executable, "-m", "mcpreel", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    latched = _catches(proc.pid, signal.SIGTERM)  # SIGTERM: Python itself catches SIGINT from its start
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, latched, err


#: what Python's stderr says when a SIGINT lands in its own start, before it runs a line of mcpreel: in
#: ``site``'s import, or in the import of ``runpy`` that ``-m`` needs (then it exits 1, not by the signal;
#: a loaded CI machine once landed one there)
_START_MARKS = ("init_import_site", "Could not import runpy module")


def _interpreter_start(err: str) -> bool:
    """Whether ``err`` is the interpreter's own end in its start (a KeyboardInterrupt none of mcpreel's
    frames saw), in any of the forms Python prints it."""
    return any(mark in err for mark in _START_MARKS) or (
        "KeyboardInterrupt" in err and "mcpreel" not in err.replace(sys.executable, ""))


def _check(out: Path, sig: int, code: int, latched: bool, err: str, sane: tuple[int, ...]) -> bool:
    """True when the reel is whole; False only for a signal that beat mcpreel's first line."""
    if not out.exists() and not latched and code == -sig:
        return False  # the interpreter had not yet run mcpreel: the signal's default action, no file made
    if not out.exists() and not latched and sig == signal.SIGINT and _interpreter_start(err):
        return False  # Python's own SIGINT handler, during its start: it dies before mcpreel runs
    assert out.exists(), (code, err)
    assert (out.stat().st_mode & 0o777) == 0o600
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines and lines[0]["type"] == "meta", (code, err, lines)
    assert lines[-1]["type"] == "end", (code, err, lines)
    assert code in sane, (code, err)
    assert "Traceback" not in err.split("mcpreel: recorded")[0] or "raw_server.py" in err, err
    return True


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_stdio_record_keeps_its_reel_whenever_the_signal_comes(tmp_path: Path, sig: int) -> None:
    whole = 0
    for delay in MOMENTS + LATE:
        if delay in LATE and whole >= WHOLE:
            break
        out = tmp_path / f"r-{delay}.jsonl"
        code, latched, err = _record(["record", "--out", str(out), "--", sys.executable, str(SERVER)], out, sig, delay)
        # before the server started: 128+N; after it, the server's own end (killed: 128+N; a Python server
        # interrupted in its start may exit 1; one that saw its stdin close first ends cleanly, 0)
        whole += _check(out, sig, code, latched, err, (128 + sig, 1, 0))
    assert whole >= WHOLE  # at most the first moments can beat the interpreter's start


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_http_record_keeps_its_reel_whenever_the_signal_comes(tmp_path: Path, sig: int) -> None:
    whole = 0
    for delay in MOMENTS + LATE:
        if delay in LATE and whole >= WHOLE:
            break
        out = tmp_path / f"r-{delay}.jsonl"
        args = ["record", "--transport", "streamable-http", "--target", "http://127.0.0.1:9/mcp",
                "--listen", "127.0.0.1:0", "--out", str(out)]
        code, latched, err = _record(args, out, sig, delay)
        whole += _check(out, sig, code, latched, err, (0,))  # a signal is how an HTTP recording ends
        end = json.loads(out.read_text().splitlines()[-1]) if out.exists() else {}
        assert not out.exists() or signal.Signals(sig).name in json.dumps(end)
    assert whole >= WHOLE


def test_a_signal_before_the_reel_is_open_ends_it_with_its_name(tmp_path: Path) -> None:
    """Library level: a latched signal makes record_stdio write meta and end, and start no server."""
    from mcpreel.record import RecordOptions, StdioServer, record

    pid_file = tmp_path / "pid"
    early_signals.take()
    early_signals._note(signal.SIGTERM, None)
    result = record(RecordOptions(StdioServer((sys.executable, str(SERVER), "pid", str(pid_file))), tmp_path / "r.jsonl"))
    assert result.exit_code == 128 + signal.SIGTERM and result.reason == "SIGTERM before the server started"
    lines = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [line["type"] for line in lines] == ["meta", "end"]
    assert not pid_file.exists()  # the server was never started
    assert early_signals.take() == []


@pytest.mark.parametrize("err", [
    "Could not import runpy module\nTraceback (most recent call last):\n  File \"<frozen runpy>\", line 15, in "
    "<module>\nKeyboardInterrupt\n",
    "Fatal Python error: init_import_site: Failed to import the site module\nKeyboardInterrupt\n",
    "Traceback (most recent call last):\n  File \"<frozen importlib._bootstrap>\", line 1, in _find_and_load\n"
    "KeyboardInterrupt\n"])
def test_a_sigint_in_the_interpreters_own_start_is_told_apart(tmp_path: Path, err: str) -> None:
    """The escape clause knows every form Python's start prints (issue 40: "Could not import runpy module"
    failed a CI run), and still fails a signal that reached mcpreel and left no reel."""
    assert _check(tmp_path / "none.jsonl", signal.SIGINT, 1, False, err, (0,)) is False
    reached = "Traceback (most recent call last):\n  File \"/x/src/mcpreel/cli/record_cmd.py\", line 1\nKeyboardInterrupt\n"
    with pytest.raises(AssertionError):
        _check(tmp_path / "none.jsonl", signal.SIGINT, 1, False, reached, (0,))


def test_the_latch_is_installed_only_for_the_recording_commands() -> None:
    """The entry point (``mcpreel.__main__``) asks with ``sys.argv``: only ``record``/``proxy`` latch.
    (``import mcpreel`` never does: tests/platform/test_entry_point.py.)"""
    install = early_signals.install_for_cli
    before = {s: signal.getsignal(s) for s in early_signals.LATCHED}
    try:
        for argv in (["mcpreel", "inspect", "x"], ["mcpreel", "convert", "record"], ["mcpreel"]):
            install(argv)
            assert {s: signal.getsignal(s) for s in early_signals.LATCHED} == before
        install(["mcpreel", "record"])
        assert all(signal.getsignal(s) is early_signals._note for s in early_signals.LATCHED)
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
