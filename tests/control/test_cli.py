"""``record`` / ``proxy start`` words of the control channel: what is said on stderr, what is refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.record.stdio.helpers import RAW

PY = sys.executable
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'


def run(tmp_path: Path, *words: str, stdin: bytes = PING) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, MCPREEL_RUNTIME_DIR=str(tmp_path / "rt"))
    return subprocess.run([PY, "-m", "mcpreel", *words], input=stdin, capture_output=True, timeout=60, env=env,
                          cwd=tmp_path)


def test_record_names_its_socket_on_stderr_and_removes_it(tmp_path: Path) -> None:
    done = run(tmp_path, "record", "--out", "s.jsonl", "--", PY, RAW, "answer")
    assert done.returncode == 0
    assert done.stdout == b'{"jsonrpc": "2.0", "id": 1, "result": {"method": "ping"}}\n'  # nothing of ours
    line = next(x for x in done.stderr.decode().splitlines() if "control:" in x)
    path = line.split("control: ", 1)[1].split(" (")[0]
    assert path.startswith(str(tmp_path / "rt")) and path.endswith(".sock")
    assert not os.path.exists(path) and list((tmp_path / "rt").iterdir()) == []


def test_quiet_and_no_control(tmp_path: Path) -> None:
    quiet = run(tmp_path, "record", "-q", "--out", "s.jsonl", "--", PY, RAW, "answer")
    assert quiet.returncode == 0 and quiet.stderr == b""
    (tmp_path / "x").mkdir()
    off = run(tmp_path / "x", "record", "--no-control", "--out", "s.jsonl", "--", PY, RAW, "answer")
    assert off.returncode == 0 and b"control:" not in off.stderr and not (tmp_path / "x" / "rt").exists()


@pytest.mark.parametrize(("words", "says"), [
    (["--intercept", "colour:red"], "--intercept: filter token 'colour:red': unknown key 'colour'"),
    (["--no-control", "--intercept"], "--intercept needs the control channel"),
    (["--intercept-timeout", "3"], "--intercept-timeout applies with --intercept"),
])
def test_bad_words_are_one_line(tmp_path: Path, words: list[str], says: str) -> None:
    done = run(tmp_path, "record", "--out", "s.jsonl", *words, "--", PY, RAW, "answer")
    assert done.returncode == 2
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and says in lines[0], done.stderr


def test_proxy_start_takes_intercept_too(tmp_path: Path) -> None:
    done = run(tmp_path, "proxy", "start", "--intercept", "method:tools/call", "--intercept-timeout", "1",
               "--out", "s.jsonl", "--target-command", f"{PY} {RAW} answer")
    assert done.returncode == 0, done.stderr
    assert b"intercept: holding method:tools/call (forwarded unchanged after 1s)" in done.stderr


def test_a_runtime_dir_open_to_others_is_refused_for_intercept_and_warned_otherwise(tmp_path: Path) -> None:
    (tmp_path / "rt").mkdir(mode=0o755)
    os.chmod(tmp_path / "rt", 0o755)
    held = run(tmp_path, "record", "--out", "s.jsonl", "--intercept", "--", PY, RAW, "answer")
    assert held.returncode == 2 and b"it must be 0700" in held.stderr
    plain = run(tmp_path, "record", "--out", "s.jsonl", "--", PY, RAW, "answer")
    assert plain.returncode == 0 and b"recording without a control channel" in plain.stderr


def test_the_socket_is_removed_when_the_server_cannot_start(tmp_path: Path) -> None:
    done = run(tmp_path, "record", "--intercept", "--out", "s.jsonl", "--", str(tmp_path / "no-such-server"))
    assert done.returncode == 127
    # "cannot start" is said first, before anything that reads like success (no "control: ..." line), and the
    # control socket made for the run is gone
    assert done.stderr.startswith(b"error: cannot start") and b"control:" not in done.stderr
    assert list((tmp_path / "rt").iterdir()) == []


def test_a_big_line_and_a_last_line_without_newline_pass_the_intercepting_pump(tmp_path: Path) -> None:
    big = b'{"jsonrpc":"2.0","method":"notifications/big","params":{"x":"' + b"a" * 3_000_000 + b'"}}\n'
    done = run(tmp_path, "record", "-q", "--intercept", "--intercept-timeout", "0", "--out", "s.jsonl", "--",
               PY, RAW, "echo", stdin=big + PING + b'{"jsonrpc":"2.0","method":"tail"}')
    assert done.returncode == 0
    assert done.stdout == big + PING + b'{"jsonrpc":"2.0","method":"tail"}'
