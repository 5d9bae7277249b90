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
