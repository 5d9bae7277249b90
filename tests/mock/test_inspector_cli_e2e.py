"""Issue 11: `mcpreel serve` answers the MCP Inspector CLI (2.12), a client that made none of the
recordings: it sends `logging/setLevel` after connecting, which no recording by another client holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.replay.e2e_helpers import SDK_SERVER, record

pytestmark = pytest.mark.e2e


def _serve_argv(path) -> list[str]:
    argv = [sys.executable, "-m", "mcpreel", "serve", "-q", str(path)]
    if os.environ.get("PYTHONPATH"):  # the Inspector gives its server a clean environment
        argv = ["env", f"PYTHONPATH={os.environ['PYTHONPATH']}", *argv]
    return argv


def _inspector(cli, path, *method: str) -> dict:
    r = subprocess.run([str(cli), "--cli", *_serve_argv(path), *method], capture_output=True, text=True, timeout=90)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return json.loads(r.stdout)


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_serve_answers_the_inspector_cli(tmp_path, inspector_cli, era):
    out = tmp_path / "s.jsonl"
    original = record(out, SDK_SERVER, era=era)
    listed = _inspector(inspector_cli, out, "--method", "tools/list")
    assert sorted(t["name"] for t in listed["tools"]) == original["tools"]
    called = _inspector(inspector_cli, out, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=hello")
    assert called["content"][0]["text"] == original["echo"]["text"] == "hello"
    assert "resultType" not in called  # a handshake-era client gets no 2026 members
