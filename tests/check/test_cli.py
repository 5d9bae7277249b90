"""``mcpreel check`` as a user runs it: exit codes 0/1/2, the three output formats, bad words."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from tests.check.servers import SeedServer, serve_app
from tests.conftest import free_port


@pytest.fixture(scope="module")
def base():
    with serve_app(SeedServer().app()) as url:
        yield url


def mcpreel(*args: str, cwd=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mcpreel", *args], capture_output=True, text=True, timeout=60,
                          cwd=cwd, env={**os.environ, "COLUMNS": "120"})


def test_exit_0_with_a_table(base):
    p = mcpreel("check", f"{base}/ok/mcp")
    assert p.returncode == 0, p.stderr
    assert "http-post" in p.stdout and "OK (exit 0)" in p.stdout
    assert p.stderr == ""


def test_exit_1_with_json(base):
    p = mcpreel("check", f"{base}/json_responses/mcp", "--format", "json")
    assert p.returncode == 1
    doc = json.loads(p.stdout)
    assert doc["ok"] is False
    assert next(c for c in doc["checks"] if c["id"] == "sse-content-type")["issue"] == "Response Not Streaming"


def test_junit_to_a_file(base, tmp_path):
    out = tmp_path / "report.xml"
    p = mcpreel("check", f"{base}/non_json_text/mcp", "--format", "junit", "--out", str(out),
                "--call", '{"add": {"a": 6, "b": 1}}', "--no-call")
    assert p.returncode == 1
    assert p.stdout == out.read_text()
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    root = ET.fromstring(p.stdout)
    assert root.get("failures") == "1"
    assert f"report written to {out}" in p.stderr


def test_a_report_that_cannot_be_written_is_one_line_and_exit_2(base, tmp_path):
    (tmp_path / "a-file").write_text("")
    out = tmp_path / "a-file" / "report.json"
    p = mcpreel("check", f"{base}/ok/mcp", "--no-call", "--format", "json", "--out", str(out))
    assert p.returncode == 2
    assert p.stderr.startswith(f"error: {out}: cannot write: ") and len(p.stderr.splitlines()) == 1
    assert "Traceback" not in p.stderr


def test_exit_2_when_unreachable():
    port = free_port()
    p = mcpreel("check", f"http://127.0.0.1:{port}/mcp")
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr.strip() == f"error: cannot reach http://127.0.0.1:{port}/mcp: [Errno 111] Connection refused"


def test_exit_2_for_a_stdio_command_that_fails():
    p = mcpreel("check", "--command", f"{sys.executable} -c 'import sys; sys.exit(\"no config\")'")
    assert p.returncode == 2
    assert p.stderr.strip().endswith("the server exited with code 1: no config before answering initialize")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), 'error: give a server URL or --target-command "CMD" (one of them)'),
        (("http://x/mcp", "--command", "y"), 'error: give a server URL or --target-command "CMD" (one of them)'),
        (("http://x/mcp", "--call", "{not json"), "Invalid value for '--call': not JSON"),
        (("http://x/mcp", "--call", '{"tool": 1}'), "expected a JSON object of tool name -> arguments object"),
        (("http://x/mcp", "--profile", "strictest"), "Invalid value for '--profile'"),
        (("http://x/mcp", "-H", "no-colon"), "expected 'Name: value'"),
        (("http://x/mcp", "--call-all", "--no-call"), "--call-all and --no-call contradict each other"),
        (("http://x/mcp", "--era", "2026"), "Invalid value for '--era'"),
    ],
)
def test_bad_words_exit_2(args, message):
    p = mcpreel("check", *args)
    assert p.returncode == 2
    assert message in p.stderr
    assert "Traceback" not in p.stderr


def test_the_strict_profile_by_its_name_and_its_old_one(base):
    for name in ("strict-sse", "sse"):
        p = mcpreel("check", f"{base}/ok/mcp", "--profile", name, "--format", "json")
        assert p.returncode == 0, p.stderr
        doc = json.loads(p.stdout)
        assert doc["profile"] == "strict-sse"
        # the seed server's tools say nothing of being read-only: listed, not called
        skipped = [c for c in doc["checks"] if c["id"].startswith("tools-call:")]
        assert skipped and all(c["status"] == "skip" and "--call-all" in c["summary"] for c in skipped)
