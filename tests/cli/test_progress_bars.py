"""Progress bars on a terminal's stderr for the long verbs (issue 13): `diff`, `replay`, `serve`'s load.

Each verb runs as a real process with stderr on a pseudo-terminal and stdout on a pipe (the way
`mcpreel diff a b > out.txt` runs in a shell). The bar must be drawn on the terminal, and what the verb
prints must still reach stdout, whole and free of the bar (rich would otherwise move it to stderr).
``MCPREEL_PROGRESS_MIN_BYTES=0`` lets a small file have a bar. With stderr not a terminal, no bar.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import orjson
import pytest

pty = pytest.importorskip("pty", reason="needs a pseudo-terminal (POSIX; not on Windows)")

PY = sys.executable


def _reel(path: Path, calls: int, answer: str = "ok") -> Path:
    lines = [{"v": 1, "type": "meta", "startedAt": "2026-11-24T00:00:00.000Z", "label": "bars", "command": ["x"]},
             {"t": "2026-11-24T00:00:00.001Z", "dir": "in", "raw": {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}},
             {"t": "2026-11-24T00:00:00.002Z", "dir": "out", "raw": {"jsonrpc": "2.0", "id": 0, "result": {
                 "protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}}},
             {"t": "2026-11-24T00:00:00.003Z", "dir": "in", "raw": {"jsonrpc": "2.0", "method": "notifications/initialized"}}]
    for i in range(1, calls + 1):
        lines.append({"t": "2026-11-24T00:00:01.000Z", "dir": "in", "raw": {"jsonrpc": "2.0", "id": i,
                      "method": "tools/call", "params": {"name": "echo", "arguments": {"i": i}}}})
        lines.append({"t": "2026-11-24T00:00:01.001Z", "dir": "out", "raw": {"jsonrpc": "2.0", "id": i,
                      "result": {"content": [{"type": "text", "text": f"{answer} {i}"}]}}})
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return path


def _run_on_terminal(args: list[str], cwd: Path, *, min_bytes: str = "0", timeout: float = 60) -> tuple[int, str, str]:
    """Run ``mcpreel ARGS`` with stderr on a pty: (exit code, stdout, what the terminal showed)."""
    master, slave = pty.openpty()
    env = {**os.environ, "MCPREEL_PROGRESS_MIN_BYTES": min_bytes, "COLUMNS": "100", "TERM": "xterm"}
    shown = bytearray()

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            shown.extend(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        proc = subprocess.run([PY, "-m", "mcpreel", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=slave, timeout=timeout)
    finally:
        os.close(slave)
        reader.join(5)
        os.close(master)
    return proc.returncode, proc.stdout.decode(), shown.decode(errors="replace")


def test_diff_draws_a_bar_on_the_terminal_and_keeps_its_rows_on_stdout(tmp_path: Path) -> None:
    a = _reel(tmp_path / "a.jsonl", 300)
    b = _reel(tmp_path / "b.jsonl", 300, answer="changed")
    code, out, shown = _run_on_terminal(["diff", str(a), str(b)], tmp_path)
    assert code == 1, (out, shown)
    assert "comparing" in shown  # the bar's description, on the terminal
    assert "300 changed" in out and "\x1b[" not in out and "comparing" not in out
    assert out.count("tools/call") >= 300  # every changed row reached stdout


def test_no_bar_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    a = _reel(tmp_path / "a.jsonl", 50)
    proc = subprocess.run([PY, "-m", "mcpreel", "diff", str(a), str(a)], cwd=tmp_path, capture_output=True, timeout=60,
                          env={**os.environ, "MCPREEL_PROGRESS_MIN_BYTES": "0"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b"" and b"50 calls the same" in proc.stdout


def test_no_bar_below_the_size(tmp_path: Path) -> None:
    a = _reel(tmp_path / "a.jsonl", 50)
    code, out, shown = _run_on_terminal(["diff", str(a), str(a)], tmp_path, min_bytes=str(1 << 30))
    assert code == 0 and "50 calls the same" in out
    assert "comparing" not in shown


def test_replay_draws_a_bar_and_its_results_reach_stdout(tmp_path: Path) -> None:
    recorded = _reel(tmp_path / "recorded.jsonl", 40)
    server = _reel(tmp_path / "server.jsonl", 40, answer="changed")
    code, out, shown = _run_on_terminal(
        ["replay", str(recorded), "--target-command", f"{PY} -m mcpreel serve {server}", "--timeout", "20"], tmp_path)
    assert code == 1, (out, shown)
    assert "replaying" in shown
    assert "\x1b[" not in out and out.count("tools/call") >= 40


def test_serve_draws_a_bar_while_it_loads_then_serves(tmp_path: Path) -> None:
    reel = _reel(tmp_path / "r.jsonl", 40)
    code, out, shown = _run_on_terminal(["serve", str(reel)], tmp_path)  # stdio; stdin at EOF: serves nobody
    assert code == 0, shown
    assert "loading" in shown and "serving" in shown
    assert out == ""  # the MCP channel stays clean


def test_a_fleet_draws_sessions_done_of_total_with_changed_and_flaky_so_far(tmp_path: Path) -> None:
    """`replay A B` (the fleet): the bar counts sessions done of the total and the changed ones so far, on
    the terminal; each session's lines still reach stdout whole, in the order of the inputs."""
    folder = tmp_path / "recordings"
    folder.mkdir()
    first = _reel(folder / "a.jsonl", 3)
    second = _reel(folder / "b.jsonl", 3)
    server = _reel(tmp_path / "server.jsonl", 3, answer="changed")
    code, out, shown = _run_on_terminal(
        ["replay", str(first), str(second), "--jobs", "2", "--target-command", f"{PY} -m mcpreel serve {server}",
         "--timeout", "20"], tmp_path, timeout=120)
    assert code == 1, (out, shown)
    assert "replaying" in shown and "2/2" in shown and "2 changed" in shown, shown
    assert "\x1b[" not in out and "replaying" not in out
    assert out.index("a.jsonl") < out.index("b.jsonl")
