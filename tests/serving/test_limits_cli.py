"""``--max-body`` / ``--max-header`` / ``--header-timeout`` on every listener: ``record`` (HTTP), ``serve``,
``demo-server``. Real processes on 127.0.0.1 with ports they pick; the proxy records nothing of a refusal."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest

MCPREEL = [sys.executable, "-m", "mcpreel"]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
LIMITS = ["--max-body", "64K", "--max-header", "8K", "--header-timeout", "0.5"]

pytestmark = pytest.mark.timeout(120)


@contextmanager
def running(args: list[str], says: str) -> Iterator[str]:
    """Run ``mcpreel ARGS``; yield the URL its stderr names once it is ready (``says`` before it)."""
    proc = subprocess.Popen([*MCPREEL, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        for _ in range(5):
            line = proc.stderr.readline()
            m = re.search(says + r" (http://127\.0\.0\.1:\d+/(?:mcp|sse))", line)
            if m:
                break
        assert m, line
        yield m.group(1)
    finally:
        proc.terminate()
        proc.wait(20)


def _refusals(url: str) -> None:
    """The three limits, as any client meets them, and a request within them still answered."""
    ok = httpx2.post(url, json=INIT, headers={**HEADERS, "x-pad": "p" * 6000}, timeout=10)
    assert ok.status_code == 200, ok.text
    big_head = httpx2.post(url, json=INIT, headers={**HEADERS, "x-pad": "p" * 20000}, timeout=10)
    assert big_head.status_code == 431 and big_head.json()["error"]["code"] == -32600
    padded = {**INIT, "params": {**INIT["params"], "pad": "q" * 100_000}}
    big_body = httpx2.post(url, json=padded, headers=HEADERS, timeout=10)
    assert big_body.status_code == 413 and "64 KiB" in big_body.json()["error"]["message"]
    port = int(url.split(":")[2].split("/")[0])
    with socket.create_connection(("127.0.0.1", port), 5) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\n")
        began = time.monotonic()
        sock.settimeout(5)
        reply = sock.recv(4096)
        assert reply.startswith(b"HTTP/1.1 408 ") and time.monotonic() - began < 3, reply[:60]


def test_demo_server_limits() -> None:
    with running(["demo-server", "--transport", "streamable-http", "--port", "0", *LIMITS],
                 r"demo server \(streamable-http\) on") as url:
        _refusals(url)


def test_serve_limits(fixtures_dir: Path) -> None:
    session = str(fixtures_dir / "qai" / "qai_session_minimal.json")
    with running(["serve", session, "--transport", "streamable-http", "--port", "0", *LIMITS], "on") as url:
        _refusals(url)


def test_record_proxy_limits_and_records_nothing_of_a_refusal(tmp_path: Path) -> None:
    reel = tmp_path / "r.jsonl"
    with running(["demo-server", "--transport", "streamable-http", "--port", "0"],
                 r"demo server \(streamable-http\) on") as target, \
         running(["record", "--transport", "streamable-http", "--target", target, "--listen", "127.0.0.1:0",
                  "--out", str(reel), *LIMITS], "point your MCP client at") as url:
        _refusals(url)
    lines = [json.loads(line) for line in reel.read_text().splitlines()]
    text = reel.read_text()
    assert "q" * 1000 not in text and "p" * 20000 not in text
    statuses = [ln.get("ctx", {}).get("status") for ln in lines]
    assert 413 not in statuses and 431 not in statuses and 408 not in statuses
    assert lines[0]["type"] == "meta" and lines[-1]["type"] == "end"


def test_limit_flags_are_for_http_transports_only(tmp_path: Path) -> None:
    r = subprocess.run([*MCPREEL, "record", "--out", str(tmp_path / "r.jsonl"), "--max-body", "1M", "--",
                        sys.executable, "-c", "pass"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--max-body applies to HTTP transports only" in r.stderr
    r = subprocess.run([*MCPREEL, "demo-server", "--transport", "streamable-http", "--max-body", "lots"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "is not a size" in r.stderr


def test_sizes_are_read_as_users_write_them() -> None:
    from mcpreel.cli.limit_options import SIZE

    assert [SIZE.convert(v, None, None) for v in ("65536", "64K", "64k", "32M", "32MiB", "1G", "2mb")] == [
        65536, 65536, 65536, 32 << 20, 32 << 20, 1 << 30, 2 << 20]
