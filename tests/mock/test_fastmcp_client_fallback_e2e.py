"""Issue 25, finding 3, with the FastMCP 4 client: a recording of a handshake-era server that refused
``server/discover`` (server-everything), served by ``mcpreel serve``. FastMCP's ``Client`` (default mode
``auto``) asks ``server/discover`` first; against the mock it must be refused as the real server refused
it and fall back to ``initialize``, so the handshake-era exchanges happen as recorded: the
``sampling/createMessage`` that ``trigger-sampling-request`` sends mid-call reaches its sampling handler
(a client that stayed in the 2026 era would never get it). Over stdio and over Streamable HTTP: what the
client gets from the mock is what it got from the real server, directly and through ``mcpreel record``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.suite import ERAS, FASTMCP_PYTHON, mock_server, real_server, recording_proxy
from tests.replay.e2e_helpers import MCPREEL

pytestmark = pytest.mark.e2e

CLIENT = Path(__file__).resolve().parents[1] / "peers" / "fastmcp_client.py"
EVERYTHING = ERAS["2025-11-25 everything"]


@pytest.fixture
def fastmcp() -> Path:
    if not FASTMCP_PYTHON.exists():
        pytest.fail(f"FastMCP is not installed at {FASTMCP_PYTHON}: run `make peers`")
    return FASTMCP_PYTHON


def _client(python: Path, mode: str, target: str) -> tuple[dict[str, Any], str]:
    proc = subprocess.run([str(python), str(CLIENT), mode, target], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def _check_fallback(direct: dict[str, Any], reel: Path) -> None:
    assert direct["protocol"] == "2025-11-25" and direct["server"] == "mcp-servers/everything"
    assert '"text": "42"' in direct["trigger-sampling-request"]["text"]  # the handshake-era sampling round trip
    lines = [json.loads(line) for line in reel.read_text().splitlines()]
    messages = [(r["dir"], r["raw"]) for r in lines if isinstance(r.get("raw"), dict)]
    assert messages[0][0] == "in" and messages[0][1]["method"] == "server/discover"  # FastMCP asks it first
    assert messages[1][0] == "out" and "error" in messages[1][1]  # server-everything refused it
    assert messages[2][1]["method"] == "initialize"  # and FastMCP fell back


def test_fastmcp_falls_back_from_a_stdio_mock_of_a_server_that_refused_discover(tmp_path: Path, fastmcp: Path,
                                                                                everything_js: Path) -> None:
    reel = tmp_path / "ev.jsonl"
    server = f"node {everything_js} stdio"
    direct, _ = _client(fastmcp, "stdio", server)
    recorded, _ = _client(fastmcp, "stdio", " ".join([*MCPREEL, "record", "-q", "--out", str(reel), "--", server]))
    assert recorded == direct
    _check_fallback(direct, reel)
    served, said = _client(fastmcp, "stdio", " ".join([*MCPREEL, "serve", str(reel)]))
    assert served == direct
    assert "0 missed" in said


def test_fastmcp_falls_back_from_an_http_mock_of_a_server_that_refused_discover(tmp_path: Path, fastmcp: Path,
                                                                               everything_js: Path) -> None:
    reel = tmp_path / "ev-http.jsonl"
    with real_server(EVERYTHING, tmp_path / "server.log") as url:
        direct, _ = _client(fastmcp, "streamable-http", url)
        with recording_proxy(url, reel, tmp_path / "record.log") as proxied:
            recorded, _ = _client(fastmcp, "streamable-http", proxied)
    assert recorded == direct
    _check_fallback(direct, reel)
    with mock_server(reel, tmp_path / "serve.log") as mocked:
        served, _ = _client(fastmcp, "streamable-http", mocked)
    assert served == direct
    assert "0 missed" in (tmp_path / "serve.log").read_text()
    assert os.stat(reel).st_mode & 0o777 == 0o600
