"""``mcpreel check`` against real servers: the official SDK's (Streamable HTTP with SSE or JSON
responses, stateless, stdio) and server-everything from npm (Streamable HTTP and stdio).

Both pass ``--profile mcp``. On ``--profile sse`` (seed 002's format) they fail where they are not in
that format, and the tests pin down exactly where: the SDK's ``-> str`` tools answer plain text (not
JSON), its ``json_response`` mode does not stream, server-everything's tools answer plain text and images.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from mcpreel.check import FAIL, PASS, SKIP, WARN, CheckOptions, run_check
from tests.check.servers import serve_app
from tests.conftest import LISTEN127, free_port
from tests.peers import SDK_SERVER
from tests.peers.sdk_server import build

pytestmark = pytest.mark.e2e

#: server-everything's tools that are quick and stay on this machine (gzip-file-as-resource fetches a URL)
EVERYTHING_CALLS = {
    "echo": {"message": "hi"},
    "get-sum": {"a": 1, "b": 2},
    "get-tiny-image": {},
    "trigger-long-running-operation": {"duration": 0.2, "steps": 2},
}


def statuses(report) -> dict[str, str]:
    return {r.id: r.status for r in report.results}


def not_passing(report) -> dict[str, str]:
    return {r.id: r.status for r in report.results if r.status not in (PASS, SKIP)}


@pytest.fixture(scope="module")
def sdk_urls():
    """One SDK server per HTTP mode, each in a thread."""
    with serve_app(build("check").streamable_http_app()) as sse_url, \
            serve_app(build("check").streamable_http_app(json_response=True)) as json_url, \
            serve_app(build("check").streamable_http_app(json_response=True, stateless_http=True)) as stateless_url:
        yield {"sse": f"{sse_url}/mcp", "json": f"{json_url}/mcp", "stateless": f"{stateless_url}/mcp"}


def test_sdk_streamable_http_passes_mcp_and_fails_the_seed_on_plain_text(sdk_urls):
    mcp = run_check(sdk_urls["sse"], options=CheckOptions(profile="mcp", call_all=True))
    assert mcp.exit_code == 0
    assert not_passing(mcp) == {}
    seed = run_check(sdk_urls["sse"], options=CheckOptions(profile="sse", call_all=True))
    assert not_passing(seed) == {"tools-call:echo": FAIL}
    r = seed.get("tools-call:echo")
    assert r.issue == "Invalid JSON in Response" and r.summary == "content[0].text is not JSON: example"
    # the dict tool answers JSON text: seed-compatible
    assert seed.get("tools-call:info").status == PASS
    assert seed.get("sse-framing").summary.endswith("well framed (CRLF line ends)")


def test_sdk_json_responses_are_not_streaming(sdk_urls):
    assert run_check(sdk_urls["json"], options=CheckOptions(profile="mcp")).exit_code == 0
    seed = run_check(sdk_urls["json"], options=CheckOptions(profile="sse", no_call=True))
    assert not_passing(seed) == {"sse-content-type": FAIL}
    assert seed.get("sse-content-type").issue == "Response Not Streaming"


def test_sdk_stateless_has_no_session(sdk_urls):
    mcp = run_check(sdk_urls["stateless"], options=CheckOptions(profile="mcp"))
    assert mcp.exit_code == 0
    assert not_passing(mcp) == {"session-id": WARN}


def test_sdk_stdio():
    cmd = f"{sys.executable} {SDK_SERVER} stdio --as check"
    mcp = run_check(command=cmd, options=CheckOptions(profile="mcp"))
    assert mcp.exit_code == 0
    # the SDK drops a malformed line silently on stdio: a warning, not a failure
    assert not_passing(mcp) == {"parse-error": WARN}


@pytest.fixture(scope="module")
def everything_url(everything_js):
    port = free_port()
    proc = subprocess.Popen(["node", "--require", str(LISTEN127), str(everything_js), "streamableHttp"],
                            env={**os.environ, "PORT": str(port)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        import socket

        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        else:
            pytest.fail("server-everything did not start")
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def test_everything_http_passes_mcp(everything_url):
    report = run_check(everything_url, options=CheckOptions(profile="mcp", calls=EVERYTHING_CALLS, no_call=True))
    assert report.exit_code == 0
    assert report.server_info["name"] == "mcp-servers/everything"
    # what the reference server does not do as MCP says: Origin is not validated, an unknown session is 400
    assert not_passing(report) == {"origin": WARN, "session-id": WARN}
    assert "got 400, not 404" in report.get("session-id").summary
    assert statuses(report)["tools-call:get-tiny-image"] == PASS


def test_everything_http_on_the_seed_profile(everything_url):
    report = run_check(everything_url, options=CheckOptions(profile="sse", calls=EVERYTHING_CALLS, no_call=True))
    assert not_passing(report) == {
        "tools-call:echo": FAIL,  # "Echo: hi" is not JSON
        "tools-call:get-sum": FAIL,  # "The sum of 1 and 2 is 3." neither
        "tools-call:get-tiny-image": FAIL,  # an image item where the seed wants text
        "tools-call:trigger-long-running-operation": FAIL,
        "origin": WARN,
        "session-id": WARN,
    }
    image = report.get("tools-call:get-tiny-image")
    assert "fail: content[1] is of type 'image'; the strict-sse profile accepts only type \"text\"" in image.details
    assert report.exit_code == 1


def test_everything_stdio_passes_mcp(everything_js):
    report = run_check(command=f"node {everything_js} stdio",
                       options=CheckOptions(profile="mcp", calls={"echo": {"message": "hi"}}, no_call=True))
    assert report.exit_code == 0
    assert not_passing(report) == {"parse-error": WARN}
    assert report.get("tool-schemas").summary == "13 tools, every schema valid"
