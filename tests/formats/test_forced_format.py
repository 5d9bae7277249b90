"""Issue 11 item 6: a format forced with --format that the file does not have is an input error (exit 2,
one line naming what the content looks like, no output), never a trace of unknown calls."""

from __future__ import annotations

import subprocess
import sys

import pytest

MCPREEL = [sys.executable, "-m", "mcpreel"]


@pytest.mark.parametrize("fixture,forced,looks", [
    ("qai/qai_session_minimal.json", "inspector", "qai"),
    ("mcp-replay-v1/readme-minimal.jsonl", "jsonrpc", "reel"),
])
def test_a_wrong_forced_format_is_refused(fixtures_dir, tmp_path, fixture, forced, looks):
    out = tmp_path / "t.jsonl"
    for argv in (["import", str(fixtures_dir / fixture), "--format", forced, "--out-trace", str(out)],
                 ["trace", "import-mcp", "--input", str(fixtures_dir / fixture), "--format", forced,
                  "--out-trace", str(out)]):
        r = subprocess.run([*MCPREEL, *argv], capture_output=True, text=True, timeout=60)
        assert r.returncode == 2, r.stdout + r.stderr
        lines = [line for line in r.stderr.splitlines() if line.startswith("error:")]
        assert len(lines) == 1 and "Traceback" not in r.stderr
        assert f"the content looks like {looks}" in lines[0] and fixture.split("/")[-1] in lines[0]
        assert not out.exists()


def test_the_right_forced_format_still_reads(fixtures_dir, tmp_path):
    out = tmp_path / "t.jsonl"
    r = subprocess.run([*MCPREEL, "import", str(fixtures_dir / "qai" / "qai_session_minimal.json"), "--format", "qai",
                        "--out-trace", str(out)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and out.exists()
