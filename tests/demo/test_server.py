"""The demo server: passes every check of ``--profile sse`` (HTTP and stdio), and its tools do what they
say with a real SDK client (progress, isError, sampling when the client supports it)."""

from __future__ import annotations

import json
import sys

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CreateMessageResult, TextContent

from mcpreel.check import PASS, SKIP, CheckOptions, run_check
from mcpreel.demo.server import serving


@pytest.fixture(scope="module")
def url():
    with serving("streamable-http") as u:
        yield u


def test_streamable_http_passes_every_seed_check_without_a_warning(url):
    report = run_check(url, options=CheckOptions(profile="sse", strict=True, call_all=True))
    assert {r.id: r.status for r in report.results if r.status != PASS} == {"stdout-clean": SKIP}
    assert report.exit_code == 0
    assert report.server_info["name"] == "mcpreel-demo"
    called = sorted(r.id for r in report.results if r.id.startswith("tools-call:"))
    assert called == ["tools-call:add", "tools-call:ask_llm", "tools-call:countdown", "tools-call:divide",
                      "tools-call:echo", "tools-call:lookup_customer"]


def test_stdio_passes_every_seed_check_that_applies():
    report = run_check(command=[sys.executable, "-m", "mcpreel", "demo-server"],
                       options=CheckOptions(profile="sse", strict=True, call_all=True))
    not_passing = {r.id: r.status for r in report.results if r.status != PASS}
    assert set(not_passing.values()) == {SKIP}
    assert set(not_passing) == {"http-post", "sse-content-type", "sse-framing", "session-id", "origin",
                                "protocol-version-header", "routing-headers"}
    assert report.get("parse-error").summary == "-32700 Parse error, id null"


async def _session(url: str, *, sampling: bool):
    answers: list[str] = []
    progress: list[float] = []

    async def on_sampling(ctx, params):
        answers.append(params.messages[0].content.text)
        return CreateMessageResult(role="assistant", model="test-model", content=TextContent(type="text", text="42"))

    async def on_progress(value, total, message):
        progress.append(value)

    out = {}
    async with httpx2.AsyncClient() as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write, sampling_callback=on_sampling if sampling else None) as s:
                await s.initialize()
                out["ask"] = json.loads((await s.call_tool("ask_llm", {"question": "6 x 7?"})).content[0].text)
                r = await s.call_tool("countdown", {"steps": 4, "delay_ms": 1}, progress_callback=on_progress)
                out["countdown"] = json.loads(r.content[0].text)
                r = await s.call_tool("divide", {"a": 1, "b": 0})
                out["divide"] = (r.is_error, json.loads(r.content[0].text))
                r = await s.call_tool("lookup_customer", {"customer_id": "cust_123"})
                out["lookup"] = (r.is_error, json.loads(r.content[0].text))
                r = await s.call_tool("lookup_customer", {"customer_id": "cust_999"})
                out["unknown"] = r.is_error
    return out, answers, progress


def test_tools_with_a_client_that_samples(url):
    out, answers, progress = anyio.run(lambda: _session(url, sampling=True))
    assert out["ask"] == {"question": "6 x 7?", "sampled": True, "answer": "42", "model": "test-model"}
    assert answers == ["6 x 7?"]
    assert progress == [1, 2, 3, 4] and out["countdown"] == {"steps": 4, "done": True}
    assert out["divide"] == (True, {"error": "division by zero", "a": 1.0, "b": 0.0})
    assert out["lookup"] == (False, {"id": "cust_123", "name": "Alice", "tier": "gold", "since": "2021-04-01"})
    assert out["unknown"] is True


def test_ask_llm_without_sampling_says_so(url):
    out, answers, _ = anyio.run(lambda: _session(url, sampling=False))
    assert out["ask"]["sampled"] is False and out["ask"]["reason"] == "the client declared no sampling capability"
    assert answers == []


def test_legacy_sse_transport():
    async def main(sse_url: str) -> str:
        async with sse_client(sse_url) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                names = [t.name for t in (await s.list_tools()).tools]
                assert "countdown" in names
                return (await s.call_tool("echo", {"text": "legacy"})).content[0].text

    with serving("sse") as sse_url:
        assert sse_url.endswith("/sse")
        assert json.loads(anyio.run(main, sse_url)) == {"text": "legacy", "length": 6}


def test_origin_guard_answers_403_on_any_host():
    """Bound beyond loopback the SDK stops checking Origin; the guard does not."""
    from mcpreel.demo.server import http_app

    async def main() -> tuple[int, int]:
        transport = httpx2.ASGITransport(app=http_app("streamable-http", host="0.0.0.0"))
        async with httpx2.AsyncClient(transport=transport, base_url="http://10.1.2.3:8000") as c:
            bad = await c.get("/elsewhere", headers={"Origin": "https://evil.example"})
            good = await c.get("/elsewhere", headers={"Origin": "http://10.1.2.3:8000"})
        return bad.status_code, good.status_code

    bad, good = anyio.run(main)
    assert bad == 403
    assert good == 404  # past the guard, to the router


def test_a_loopback_demo_server_refuses_rebound_hosts_unless_allowed() -> None:
    """``demo-server --allow-host`` reaches the Host check; other names are refused 421 (DNS rebinding)."""
    from mcpreel.demo.server import http_app

    async def main() -> tuple[int, int]:
        transport = httpx2.ASGITransport(app=http_app("streamable-http", "127.0.0.1", allow_hosts=("dev.example",)))
        async with httpx2.AsyncClient(transport=transport) as c:
            bad = await c.get("http://evil.example:8000/elsewhere")
            good = await c.get("http://dev.example:8000/elsewhere")
        return bad.status_code, good.status_code

    assert anyio.run(main) == (421, 404)
