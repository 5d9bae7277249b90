"""Shared test fixtures: where the real files and the real peers are."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _default_signals() -> None:
    """SIGINT and SIGHUP as a terminal gives them, however the suite was started.

    `nohup make test` ignores SIGHUP, and a shell's background job (`make test &`) ignores SIGINT; the
    children the tests start inherit that, so a test that stops a recorder with a signal, or checks the
    early-signal latch (which rightly leaves an ignored signal ignored), would wait for nothing.
    """
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    sighup = getattr(signal, "SIGHUP", None)  # none on Windows
    if sighup is not None and signal.getsignal(sighup) == signal.SIG_IGN:
        signal.signal(sighup, signal.SIG_DFL)


_default_signals()


#: the tests ``make check`` leaves out (need no peer, but take long): written by ``tools/slow_tests.py``
SLOW_LIST = Path(__file__).resolve().parent / "slow.txt"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests listed in ``tests/slow.txt`` ``slow`` (``make check`` runs ``-m "not e2e and not slow"``)."""
    try:
        listed = {line.strip() for line in SLOW_LIST.read_text().splitlines() if line.strip() and line[0] != "#"}
    except OSError:
        return
    slow = pytest.mark.slow
    for item in items:
        if item.nodeid in listed:
            item.add_marker(slow)
#: the spec's repository, beside the project (``../shared``); ``MCPREEL_SHARED`` points elsewhere
SHARED = Path(os.environ.get("MCPREEL_SHARED") or ROOT.parent / "shared").resolve()
FIXTURES = SHARED / "fixtures"
#: why a test that reads the spec's fixtures is skipped in a clone without them
NO_SHARED = f"../shared/fixtures not found at {FIXTURES}: the spec's fixtures are beside the project in CI"
#: marks a test (or a module, as ``pytestmark``) that reads ``FIXTURES`` without the ``fixtures_dir`` fixture
needs_shared = pytest.mark.skipif(not FIXTURES.is_dir(), reason=NO_SHARED)
#: node preload that keeps server-everything (which has no HOST option) on 127.0.0.1
LISTEN127 = ROOT / "tests" / "peers" / "listen127.cjs"
EVERYTHING_JS = ROOT / ".peers" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(NO_SHARED)
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


def wait_port(port: int, timeout: float = 15.0) -> None:
    """Until something listens on 127.0.0.1:``port`` (``TimeoutError`` after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.03)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


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


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """A clone without ../shared runs everything else: say once how many tests that skipped, and why."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if NO_SHARED in str(r.longrepr)]
    if skipped:
        terminalreporter.write_line(f"{len(skipped)} tests skipped: {NO_SHARED}", yellow=True)
