"""``mcpreel check http://…/sse``: legacy HTTP+SSE servers (MCP 2024-11-05) are checked over their own
transport (GET the event stream, POST to the endpoint it names, answers on the stream).

Real peers: the official SDK's ``MCPServer`` in sse mode and server-everything's ``sse`` mode.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest

from mcpreel.check import PASS, SKIP, WARN, CheckOptions, Unreachable, run_check
from mcpreel.errors import UsageError
from tests.check.servers import SeedServer, serve_app
from tests.conftest import LISTEN127, free_port
from tests.peers.sdk_server import build

pytestmark = pytest.mark.e2e

PROTOCOL_CHECKS = ("initialize", "version-negotiation", "tools-list", "tool-schemas", "notifications", "jsonrpc-ids",
                   "unknown-method")
STREAMABLE_ONLY = ("http-post", "sse-content-type", "sse-framing", "session-id", "origin", "protocol-version-header")


def check_protocol_and_skips(report) -> None:
    assert report.transport == "sse"
    for check_id in PROTOCOL_CHECKS:
        assert report.get(check_id).status == PASS, (check_id, report.get(check_id).summary)
    for check_id in STREAMABLE_ONLY:
        r = report.get(check_id)
        assert r.status == SKIP and r.summary == "Streamable HTTP check: not run over legacy HTTP+SSE"
    assert report.eras[0] == "modern era (stateless, 2026-07-28): not checked (legacy HTTP+SSE speaks only the handshake era)"


def test_the_sdk_server_in_sse_mode():
    with serve_app(build("check").sse_app()) as base:
        report = run_check(f"{base}/sse", options=CheckOptions(profile="mcp", calls={"echo": {"text": "hi"}}))
    check_protocol_and_skips(report)
    assert report.get("tools-call:echo").status == PASS
    assert report.get("tools-call:info").status == SKIP  # not annotated read-only
    parse = report.get("parse-error")
    assert parse.status == WARN and parse.summary.startswith("no -32700: the POST answered 400 without")
    assert report.exit_code == 0
    assert report.server_info == {"name": "sdk-peer", "version": "1.2.3"}


@pytest.fixture(scope="module")
def everything_sse(everything_js):
    port = free_port()
    proc = subprocess.Popen(["node", "--require", str(LISTEN127), str(everything_js), "sse"],
                            env={**os.environ, "PORT": str(port)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        else:
            pytest.fail("server-everything (sse) did not start")
        yield f"http://127.0.0.1:{port}/sse"
    finally:
        proc.terminate()
        proc.wait(10)


def test_server_everything_in_sse_mode(everything_sse):
    quick = {"echo": {"message": "hi"}, "trigger-long-running-operation": {"duration": 0.2, "steps": 2}}
    report = run_check(everything_sse, options=CheckOptions(profile="mcp", calls=quick))
    check_protocol_and_skips(report)
    assert report.get("tools-call:echo").status == PASS
    assert report.server_info["name"] == "mcp-servers/everything"
    assert report.exit_code == 0


def test_a_url_that_is_no_event_stream_says_so_in_one_line():
    with serve_app(SeedServer().app()) as base:
        with pytest.raises(Unreachable) as info:
            run_check(f"{base}/ok/sse", options=CheckOptions(timeout=3))
    said = str(info.value)
    assert said.startswith(f"GET {base}/ok/sse answered 40") and "\n" not in said
    assert said.endswith("not a legacy HTTP+SSE stream (for Streamable HTTP give the POST endpoint, e.g. …/mcp)")


def test_a_streamable_url_that_is_refused_hints_at_sse():
    with serve_app(build("check").sse_app()) as base:
        report = run_check(f"{base}/mcp", options=CheckOptions(profile="mcp", era="legacy", timeout=3))
    r = report.get("http-post")
    assert r.summary == "initialize POST answered 404"
    assert "check its event stream URL instead: mcpreel check http://…/sse" in r.fix


def test_era_modern_is_refused_for_a_legacy_sse_url():
    with pytest.raises(UsageError, match="legacy HTTP\\+SSE URL: that transport has no 2026-07-28 era"):
        run_check("http://127.0.0.1:9/sse", options=CheckOptions(era="modern"))
