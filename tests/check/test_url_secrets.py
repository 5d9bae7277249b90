"""``mcpreel check 'URL?api_key=K'`` never writes K (issue 28, item 4): the target is named as the recorders
name a URL (``api_key=[REDACTED]``) in the table, the report file of every format, SARIF, and the one line
of an unreachable server; a ``--command`` with ``--token X`` is named with X redacted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.check.servers import SeedServer, serve_app
from tests.conftest import free_port

KEY = "k3y-0f-the-check-91827364"


def mcpreel(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mcpreel", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "160"})


@pytest.fixture(scope="module")
def base():
    with serve_app(SeedServer().app()) as url:
        yield url


@pytest.mark.parametrize("fmt", ["text", "json", "junit"])
def test_the_key_of_the_url_is_in_no_output(base: str, tmp_path: Path, fmt: str) -> None:
    out, sarif = tmp_path / f"report.{fmt}", tmp_path / "report.sarif"
    p = mcpreel("check", f"{base}/ok/mcp?api_key={KEY}&mode=x", "--format", fmt, "--out", str(out),
                "--sarif", str(sarif))
    assert p.returncode in (0, 1), p.stderr
    written = [p.stdout, p.stderr, out.read_text(), sarif.read_text()]
    assert all(KEY not in text for text in written)
    # the target is still named, its other parameters kept
    assert "api_key=[REDACTED]" in out.read_text() and "mode=x" in out.read_text()


def test_an_unreachable_url_is_named_without_its_key() -> None:
    p = mcpreel("check", f"http://127.0.0.1:{free_port()}/mcp?api_key={KEY}")
    assert p.returncode == 2
    assert KEY not in p.stdout + p.stderr and "api_key=[REDACTED]" in p.stderr


def test_a_command_is_named_without_its_token() -> None:
    server = f"{sys.executable} -c 'import sys; sys.exit(3)' --token {KEY}"
    p = mcpreel("check", "--command", server)
    assert p.returncode == 2
    assert KEY not in p.stdout + p.stderr and "--token" in p.stderr
