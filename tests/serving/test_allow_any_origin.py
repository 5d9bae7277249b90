"""``--allow-origin '*'`` works for every server mcpreel runs, not only for ``record``: ``serve`` and
``demo-server`` answer a foreign Origin with it, and refuse it without (and a rebound Host always)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import httpx2

MCPREEL = [sys.executable, "-m", "mcpreel"]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
FOREIGN = "https://evil.example"


@contextmanager
def running(args: list[str], says: str) -> Iterator[str]:
    """Run ``mcpreel ARGS``; yield the URL its ``says`` line names once it is ready."""
    proc = subprocess.Popen([*MCPREEL, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        m = re.search(says + r" on (http://127\.0\.0\.1:\d+/mcp)$", line.rstrip("\n"))
        assert m, line
        yield m.group(1)
    finally:
        proc.terminate()
        proc.wait(10)


def _initialize(url: str, origin: str, host: str | None = None) -> int:
    headers = {**HEADERS, "origin": origin} | ({"host": host} if host else {})
    return httpx2.post(url, json=INIT, headers=headers, timeout=10).status_code


def test_serve_answers_every_origin_with_a_star(fixtures_dir) -> None:
    session = str(fixtures_dir / "qai" / "qai_session_minimal.json")
    serve = ["serve", session, "--transport", "streamable-http", "--port", "0"]
    with running([*serve, "--allow-origin", "*"], "serving .*") as url:
        assert _initialize(url, FOREIGN) == 200
    with running(serve, "serving .*") as url:
        assert _initialize(url, FOREIGN) == 403
        assert _initialize(url, "http://localhost:6274") == 200
        # a rebound name is refused on a loopback listener, whatever its Origin
        assert _initialize(url, "http://attacker.example:1", host="attacker.example:1") == 421


def test_demo_server_answers_every_origin_with_a_star() -> None:
    demo = ["demo-server", "--transport", "streamable-http", "--port", "0"]
    with running([*demo, "--allow-origin", "*"], r"mcpreel demo server \(streamable-http\)") as url:
        assert _initialize(url, FOREIGN) == 200
    with running(demo, r"mcpreel demo server \(streamable-http\)") as url:
        assert _initialize(url, FOREIGN) == 403
        assert _initialize(url, "http://localhost:6274") == 200
        # a rebound name is refused on a loopback listener, whatever its Origin
        assert _initialize(url, "http://attacker.example:1", host="attacker.example:1") == 421
