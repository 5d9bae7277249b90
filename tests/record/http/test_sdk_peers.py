"""End to end with the official SDK on both sides: the same session directly and through the proxy.

For each transport (Streamable HTTP with SSE responses, with JSON responses, legacy HTTP+SSE) the client's
results must be equal, the reel must hold every message the client sent and one answer per request, and
the reel and the envelope written from it must import to the same T1 projection.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CreateMessageResult, TextContent

from mcpreel._infra import jsonio
from mcpreel.model import Kind

from .helpers import Posted, ThreadServer, messages, projection, proxy, sdk_server, transports

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.filterwarnings("ignore:The sampling capability is deprecated")]


async def _sampling(ctx: Any, params: Any) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", model="fake", content=TextContent(type="text", text="42"))


async def _drive(session: ClientSession, *, back_channel: bool) -> dict[str, Any]:
    init = await session.initialize()
    tools = sorted(t.name for t in (await session.list_tools()).tools)
    echo = await session.call_tool("echo", {"text": "héllo ✓"})
    fail = await session.call_tool("fail", {"reason": "nope"})
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append((p, total, message))

    slow = await session.call_tool("slow", {"steps": 3}, progress_callback=on_progress)
    out = {
        "protocol": init.protocol_version,
        "server": init.server_info.name,
        "tools": tools,
        "echo": (echo.content[0].text, echo.is_error, echo.structured_content),
        "fail": (fail.content[0].text, fail.is_error),
        "slow": slow.content[0].text,
        "progress": progress,
    }
    if back_channel:
        ask = await session.call_tool("ask", {"question": "meaning?"})
        out["ask"] = ask.content[0].text
    return out


async def streamable_session(url: str, *, back_channel: bool, headers: dict[str, str] | None = None) -> tuple[dict[str, Any], Posted]:
    posted = Posted()
    async with httpx2.AsyncClient(event_hooks={"request": [posted.hook]}, headers=headers,
                                  timeout=httpx2.Timeout(10, read=30)) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, sampling_callback=_sampling) as session:
                result = await _drive(session, back_channel=back_channel)
    return result, posted


async def sse_session(url: str) -> tuple[dict[str, Any], Posted]:
    posted = Posted()

    def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(headers=headers, timeout=timeout or httpx2.Timeout(10, read=30), auth=auth,
                                  event_hooks={"request": [posted.hook]})

    async with sse_client(url, httpx_client_factory=factory) as (read, write):
        async with ClientSession(read, write, sampling_callback=_sampling) as session:
            result = await _drive(session, back_channel=True)
    return result, posted


def check_reel(run: Any, posted: Posted, tmp: Path) -> list[Any]:
    """The reel holds what the client sent, an answer for every request, and imports like its envelope."""
    records = run.records()
    sent = messages(records, "in")
    assert sent == posted.messages  # every message the client POSTed, in order, byte-for-value
    got = messages(records, "out")
    # every request of either side got exactly one answer in the record
    asked = {("in", str(m["id"])) for m in sent if isinstance(m, dict) and "method" in m and "id" in m}
    asked |= {("out", str(m["id"])) for m in got if isinstance(m, dict) and "method" in m and "id" in m}
    answered = [("in", str(m["id"])) for m in got if isinstance(m, dict) and "method" not in m]
    answered += [("out", str(m["id"])) for m in sent if isinstance(m, dict) and "method" not in m and "id" in m]
    assert sorted(answered) == sorted(asked)
    assert run.result.unanswered == 0
    for rec in records:
        if rec.kind == Kind.MESSAGE:
            assert rec.ctx and isinstance(rec.ctx.get("exchange"), int)
    # T1: the reel and the envelope written from it import to the same projection
    envelope = tmp / "s.envelope.json"
    assert envelope.is_file() and (envelope.stat().st_mode & 0o777) == 0o600
    assert (run.out.stat().st_mode & 0o777) == 0o600
    p_reel = projection(run.out, tmp)
    p_env = projection(envelope, tmp)
    assert p_reel == p_env
    assert [c[1] for c in p_reel["calls"]] == [s[2] for s in p_reel["steps"] if s[2] not in ("tools/list", "tools/list.result")]
    return records


@pytest.mark.parametrize("json_response", [False, True], ids=["sse-responses", "json-responses"])
async def test_streamable_http_same_session_direct_and_proxied(tmp_path: Path, json_response: bool) -> None:
    app = sdk_server().streamable_http_app(json_response=json_response)
    with ThreadServer(app) as srv:
        direct, _ = await streamable_session(srv.url("/mcp"), back_channel=not json_response)
        with proxy("streamable-http", srv.url("/mcp"), tmp_path) as run:
            assert run.url.endswith("/mcp")
            proxied, posted = await streamable_session(run.url, back_channel=not json_response)
    assert proxied == direct
    if not json_response:
        assert len(direct["progress"]) == 3 and direct["ask"] == "llm said: 42"
    records = check_reel(run, posted, tmp_path)
    ctxs = transports(records)
    assert any(c.get("status") == 202 for c in ctxs)  # notifications/initialized -> 202, a transport line
    # the initialize answer's Mcp-Session-Id is in the record (response head), and the envelope's context
    heads = [c for c in ctxs if c.get("status") == 200 and c.get("headers")]
    assert any("mcp-session-id" in {k.lower() for k in c["headers"]} for c in heads) or any(
        "mcp-session-id" in {k.lower() for k in (r.ctx or {}).get("headers", {})} for r in records if r.kind == Kind.MESSAGE)
    env = jsonio.loads((tmp_path / "s.envelope.json").read_bytes())
    assert env["transport"] == "streamable-http"
    assert set(env["transport_context"]["headers"]) == {"MCP-Protocol-Version", "Mcp-Session-Id"}
    if not json_response:
        # progress and the sampling request rode SSE streams, with their event context
        sse_msgs = [r for r in records if r.kind == Kind.MESSAGE and r.ctx and "sse" in r.ctx]
        methods = [r.raw.get("method") for r in sse_msgs]
        assert methods.count("notifications/progress") == 3 and "sampling/createMessage" in methods
        assert all(r.ctx["sse"]["event"] == "message" and r.ctx["stream"] == r.ctx["exchange"] for r in sse_msgs)
        # the client's answer to the server's request was POSTed back through the proxy
        answer = [m for m in messages(records, "in") if "result" in m and "model" in m["result"]]
        assert answer and answer[0]["result"]["content"]["text"] == "42"


async def test_legacy_sse_same_session_direct_and_proxied(tmp_path: Path) -> None:
    with ThreadServer(sdk_server().sse_app()) as srv:
        direct, _ = await sse_session(srv.url("/sse"))
        with proxy("sse", srv.url("/sse"), tmp_path) as run:
            proxied, posted = await sse_session(run.url)
    assert proxied == direct
    records = check_reel(run, posted, tmp_path)
    endpoint = [c for c in transports(records) if c.get("sse", {}).get("event") == "endpoint"]
    assert len(endpoint) == 1 and endpoint[0]["data"].startswith("/messages/?session_id=")
    assert "forwarded" not in endpoint[0]  # relative: it already resolves against the proxy
    posts = [r for r in records if r.kind == Kind.MESSAGE and r.dir == "in"]
    assert all(r.ctx["path"].startswith("/messages/?session_id=") for r in posts)  # the client POSTed to the proxy
    assert sum(1 for c in transports(records) if c.get("status") == 202) == len(posts)
    env = jsonio.loads((tmp_path / "s.envelope.json").read_bytes())
    assert env["transport"] == "http-sse"
    first_sse = next(e for e in env["entries"] if "sse" in e)
    assert first_sse["sse"]["event"] == "endpoint" and isinstance(first_sse["sse"]["data"], str)


async def test_stateless_2026_era_headers_reach_the_server(tmp_path: Path) -> None:
    """The 2026 era (server/discover, no session, Mcp-Method/Mcp-Name headers) passes through untouched."""
    from mcp import Client

    async def run_client(url: str) -> dict[str, Any]:
        async with Client(url, mode="auto") as client:
            r = await client.call_tool("echo", {"text": "now"})
            return {"protocol": client.protocol_version, "echo": r.content[0].text}

    app = sdk_server().streamable_http_app(stateless_http=True, json_response=True)
    with ThreadServer(app) as srv:
        direct = await run_client(srv.url("/mcp"))
        with proxy("streamable-http", srv.url("/mcp"), tmp_path) as run:
            proxied = await run_client(run.url)
    assert proxied == direct and direct["protocol"] == "2026-07-28"
    records = run.records()
    sent = [r for r in records if r.kind == Kind.MESSAGE and r.dir == "in"]
    assert sent[0].raw["method"] == "server/discover"
    call = next(r for r in sent if r.raw.get("method") == "tools/call")
    headers = {k.lower(): v for k, v in call.ctx["headers"].items()}
    assert headers["mcp-method"] == "tools/call" and headers["mcp-name"] == "echo"
    assert not any(r.raw.get("method") == "initialize" for r in sent)
