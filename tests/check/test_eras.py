"""``mcpreel check --era``: the 2026-07-28 era (``server/discover``) and the handshake era (``initialize``).

Real peers: the official SDK 2.3 ``MCPServer``, which speaks both eras (one per connection), over
Streamable HTTP and stdio, and server-everything, which speaks only the handshake era. A small server
written here breaks the 2026-07-28 rules the check enforces.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpreel.check import FAIL, PASS, SKIP, CheckOptions, run_check
from tests.check.servers import serve_app
from tests.peers import SDK_SERVER
from tests.peers.sdk_server import build

pytestmark = pytest.mark.e2e

MODERN_CHECKS = ("discover", "routing-headers", "unsupported-version")
HANDSHAKE_CHECKS = ("initialize", "version-negotiation", "session-id")


def statuses(report) -> dict[str, str]:
    return {r.id: r.status for r in report.results}


@pytest.fixture(scope="module")
def sdk_url():
    with serve_app(build("check").streamable_http_app()) as base:
        yield f"{base}/mcp"


def test_auto_checks_both_eras_of_the_sdk_server(sdk_url):
    report = run_check(sdk_url, options=CheckOptions(profile="mcp"))
    s = statuses(report)
    for check_id in (*MODERN_CHECKS, *HANDSHAKE_CHECKS):
        assert s[check_id] == PASS, (check_id, report.get(check_id).summary)
    assert report.eras == ["modern era (stateless, 2026-07-28): server/discover answered",
                           "legacy era (handshake): initialize answered 2025-11-25"]
    assert report.get("discover").summary == "supportedVersions 2026-07-28, server sdk-peer 1.2.3"
    assert report.get("unsupported-version").summary == "-32022, supported: 2026-07-28"
    assert report.get("routing-headers").summary == "a POST without Mcp-Method or Mcp-Name gets 400 and -32020"
    # every other check ran once, in the handshake era (no tool called twice)
    assert [r.id for r in report.results].count("tools-list") == 1
    assert report.protocol_version == "2025-11-25"


def test_modern_only_runs_every_check_in_2026_07_28(sdk_url):
    report = run_check(sdk_url, options=CheckOptions(profile="mcp", era="modern", calls={"echo": {"text": "hi"}}))
    s = statuses(report)
    assert report.exit_code == 0
    for check_id in (*MODERN_CHECKS, "http-post", "tools-list", "tool-schemas", "tools-call:echo", "jsonrpc-ids",
                     "unknown-method", "origin", "protocol-version-header", "parse-error", "notifications"):
        assert s[check_id] == PASS, (check_id, report.get(check_id).summary)
    for check_id in HANDSHAKE_CHECKS:
        assert s[check_id] == SKIP
        assert report.get(check_id).summary == "a rule of the initialize handshake era: not run (--era modern)"
    assert report.protocol_version == "2026-07-28" and report.server_info == {"name": "sdk-peer", "version": "1.2.3"}
    assert report.eras[1] == "legacy era (handshake): not checked (--era modern)"


def test_modern_over_stdio():
    report = run_check(command=[sys.executable, str(SDK_SERVER), "stdio", "--as", "check"],
                       options=CheckOptions(profile="mcp", era="modern", calls={"echo": {"text": "hi"}}))
    s = statuses(report)
    assert s["discover"] == PASS and s["unsupported-version"] == PASS and s["tools-call:echo"] == PASS
    assert s["routing-headers"] == SKIP  # HTTP headers: not a stdio rule
    assert report.exit_code == 0


def test_legacy_only_adds_nothing_of_the_new_era(sdk_url):
    report = run_check(sdk_url, options=CheckOptions(profile="mcp", era="legacy"))
    assert not set(MODERN_CHECKS) & set(statuses(report))
    assert report.eras[0] == "modern era (stateless, 2026-07-28): not checked (--era legacy)"


def test_a_handshake_only_server(everything_js):
    auto = run_check(command=f"node {everything_js} stdio", options=CheckOptions(profile="mcp", no_call=True))
    assert not set(MODERN_CHECKS) & set(statuses(auto))
    assert auto.eras[0] == "modern era (stateless, 2026-07-28): not offered (server/discover answered error -32601: Method not found)"
    modern = run_check(command=f"node {everything_js} stdio", options=CheckOptions(profile="mcp", era="modern"))
    r = modern.get("discover")
    assert r.status == FAIL and "does not speak 2026-07-28 (check it with --era legacy)" in r.summary
    assert modern.get("tools-list").summary == "not run: server/discover failed"
    assert modern.exit_code == 1


def lax_modern_app() -> Starlette:
    """A 2026-07-28 server that breaks the era's rules: it needs no routing headers, its discover result
    lacks resultType and serverInfo, and it answers an unknown version without naming the ones it knows.
    It does not speak the handshake era."""

    async def endpoint(request: Request) -> Response:
        msg: dict[str, Any] = json.loads(await request.body())
        if "id" not in msg:
            return Response(status_code=202)
        meta = (msg.get("params") or {}).get("_meta") or {}
        version = meta.get("io.modelcontextprotocol/protocolVersion")
        if msg["method"] == "initialize" or version is None:
            err = {"code": -32600, "message": "this server speaks 2026-07-28 only"}
            return JSONResponse({"jsonrpc": "2.0", "id": msg["id"], "error": err}, status_code=400)
        if version != "2026-07-28":
            err = {"code": -32022, "message": "Unsupported protocol version"}
            return JSONResponse({"jsonrpc": "2.0", "id": msg["id"], "error": err}, status_code=400)
        results = {"server/discover": {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}},
                   "tools/list": {"tools": [], "resultType": "complete"}}
        if msg["method"] in results:
            return JSONResponse({"jsonrpc": "2.0", "id": msg["id"], "result": results[msg["method"]]})
        if msg["method"] == "tools/call":
            return JSONResponse({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "content": [{"type": "text", "text": "no such tool"}], "isError": True, "resultType": "complete"}})
        return JSONResponse({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "not found"}},
                            status_code=404)

    return Starlette(routes=[Route("/mcp", endpoint, methods=["POST"])])


def test_a_server_that_breaks_the_2026_rules():
    with serve_app(lax_modern_app()) as base:
        report = run_check(f"{base}/mcp", options=CheckOptions(profile="mcp"))
    assert report.eras[1].startswith("legacy era (handshake): not offered (initialize answered error -32600")
    discover = report.get("discover")
    assert discover.status == FAIL and "result.resultType is missing" in discover.summary
    assert "io.modelcontextprotocol/serverInfo" in discover.summary
    headers = report.get("routing-headers")
    assert headers.status == FAIL
    assert headers.summary == "a tools/list POST without Mcp-Method was served: a server must reject it with -32020 (HTTP 400)"
    assert len(headers.details) == 2
    version = report.get("unsupported-version")
    assert version.status == FAIL and version.summary.startswith("-32022 without data.supported")
    # the handshake checks say why they did not run
    assert report.get("initialize").summary == ("a rule of the initialize handshake era: not run (the server speaks "
                                                "only 2026-07-28)")
    assert report.exit_code == 1
