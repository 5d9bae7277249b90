"""Shared test fixtures: where the real files and the real peers are."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = (ROOT.parent / "shared" / "fixtures").resolve()
#: node preload that keeps server-everything (which has no HOST option) on 127.0.0.1
LISTEN127 = ROOT / "tests" / "peers" / "listen127.cjs"
EVERYTHING_JS = ROOT / ".peers" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    if not FIXTURES.is_dir():
        pytest.fail(f"../shared/fixtures not found at {FIXTURES}")
    return FIXTURES


@pytest.fixture(scope="session")
def everything_js() -> Path:
    """server-everything from the npm registry, installed by `make peers` (skip only if node is absent)."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not EVERYTHING_JS.is_file():
        pytest.fail(f"server-everything is not installed at {EVERYTHING_JS}: run `make peers`")
    return EVERYTHING_JS


INSPECTOR_CLI = ROOT / ".peers" / "node_modules" / ".bin" / "mcp-inspector"


@pytest.fixture(scope="session")
def inspector_cli() -> Path:
    """The MCP Inspector CLI from the npm registry (pinned 2.12), installed by `make peers`."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not INSPECTOR_CLI.exists():
        pytest.fail(f"the MCP Inspector CLI is not installed at {INSPECTOR_CLI}: run `make peers`")
    return INSPECTOR_CLI


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def recordings(tmp_path_factory) -> dict:
    """Real sessions made with ``mcpreel record`` (the report and OTLP tests read them): the SDK client drives
    ``tests/report/peers/server.py``, once with ``mode="legacy"`` and once in its default (2026-07-28) mode.
    ``{"legacy": Path, "modern": Path, "seen": what the client saw}``."""
    import json
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("recorded")
    drive = ROOT / "tests" / "report" / "peers" / "drive.py"
    proc = subprocess.run([sys.executable, str(drive), str(out)], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    return {"legacy": out / "legacy.jsonl", "modern": out / "modern.jsonl", "seen": json.loads(proc.stdout)}
