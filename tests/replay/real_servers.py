"""Where the real servers of issue 34's evidence live (installed by `make peers`: its upgrade-peers target),
and how a test asks for one: skipped, saying which target installs it, when the install was not possible
(the Makefile then warned that these tests would be skipped)."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import EVERYTHING_JS, ROOT

PEERS = ROOT / ".peers"
_NPM = "node_modules/@modelcontextprotocol"
_BIN = "Scripts" if sys.platform == "win32" else "bin"

#: the current releases (the main npm prefix and the new Python servers' virtualenv)
EVERYTHING = EVERYTHING_JS
FILESYSTEM = PEERS / _NPM / "server-filesystem" / "dist" / "index.js"
MEMORY = PEERS / "npm-memory" / _NPM / "server-memory" / "dist" / "index.js"
TIME = PEERS / "py-servers" / _BIN / "mcp-server-time"
FETCH = PEERS / "py-servers" / _BIN / "mcp-server-fetch"
GIT = Path(sys.executable).parent / "mcp-server-git"  # a dev dependency, beside the tests' interpreter
#: the 2025 releases (their own npm prefix; their own virtualenv, with the 1.x SDK they were written for)
OLD_EVERYTHING = PEERS / "npm-old" / _NPM / "server-everything" / "dist" / "index.js"
OLD_FILESYSTEM = PEERS / "npm-old" / _NPM / "server-filesystem" / "dist" / "index.js"
OLD_MEMORY = PEERS / "npm-old" / _NPM / "server-memory" / "dist" / "index.js"
OLD_TIME = PEERS / "py-servers-old" / _BIN / "mcp-server-time"
OLD_GIT = PEERS / "py-servers-old" / _BIN / "mcp-server-git"
OLD_FETCH = PEERS / "py-servers-old" / _BIN / "mcp-server-fetch"


def need(path: Path) -> str:
    """``path`` as a command word, or the test is skipped (node missing, or the peer not installed)."""
    if path.suffix == ".js" and shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not path.is_file():
        pytest.skip(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} is not installed "
                    "(`make peers` installs it; its install warned that these tests would be skipped)")
    return f"node {shlex.quote(str(path))}" if path.suffix == ".js" else shlex.quote(str(path))
