"""The browser the page tests drive: Debian's Chromium (``make chromium``) through Playwright for Python.

Playwright's own browser download is never used. Where Chromium is missing the tests skip with a
warning that says how to get it.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
#: root needs --no-sandbox; the rest keep a headless run on a shared machine quiet and offline
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage",
                 "--disable-extensions", "--no-first-run"]


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        warnings.warn("browser tests skipped: /usr/bin/chromium is missing (`make chromium` installs it where apt works)",
                      stacklevel=1)
        pytest.skip("/usr/bin/chromium is missing: run `make chromium` (Debian's chromium package)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev,full]'; make test does)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=60_000)
        try:
            yield b
        finally:
            b.close()
