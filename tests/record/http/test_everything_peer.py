"""End to end with @modelcontextprotocol/server-everything (npm, node): the TypeScript SDK's server side.

Its Streamable HTTP mode is stateful with an event store (SSE ids on every event); its legacy mode posts
to ``/message?sessionId=`` (not Python's ``/messages/?session_id=``).
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

from mcpreel.model import Kind

from .helpers import Posted, everything, messages, projection, proxy, transports

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def _sampling(ctx: Any, params: Any) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", model="fake", content=TextContent(type="text", text="42"))


async def _drive(session: ClientSession) -> dict[str, Any]:
    await session.initialize()
    tools = sorted(t.name for t in (await session.list_tools()).tools)
    echo = await session.call_tool("echo", {"message": "hi"})
    total = await session.call_tool("get-sum", {"a": 2, "b": 40})
    progress: list[tuple[float, float | None]] = []

    async def on_progress(p: float, t: float | None, m: str | None) -> None:
        progress.append((p, t))

    await session.call_tool("trigger-long-running-operation", {"duration": 0.2, "steps": 2}, progress_callback=on_progress)
    sampled = await session.call_tool("trigger-sampling-request", {"prompt": "hello", "maxTokens": 7})
    return {"tools": tools, "echo": echo.content[0].text, "sum": total.content[0].text, "progress": progress,
            "sampled": "42" in str(sampled.content)}


async def streamable(url: str) -> tuple[dict[str, Any], Posted]:
    posted = Posted()
    async with httpx2.AsyncClient(event_hooks={"request": [posted.hook]}, timeout=httpx2.Timeout(10, read=30)) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, sampling_callback=_sampling) as session:
                return await _drive(session), posted


async def legacy(url: str) -> tuple[dict[str, Any], Posted]:
    posted = Posted()

    def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(headers=headers, timeout=timeout or httpx2.Timeout(10, read=30), auth=auth,
                                  event_hooks={"request": [posted.hook]})

    async with sse_client(url, httpx_client_factory=factory) as (read, write):
        async with ClientSession(read, write, sampling_callback=_sampling) as session:
            return await _drive(session), posted


async def test_everything_streamable_http(tmp_path: Path, everything_js: Path) -> None:
    with everything("streamableHttp", everything_js) as port:
        target = f"http://127.0.0.1:{port}/mcp"
        direct, _ = await streamable(target)
        with proxy("streamable-http", target, tmp_path) as run:
            proxied, posted = await streamable(run.url)
    assert proxied == direct
    assert direct["echo"] == "Echo: hi" and len(direct["progress"]) == 2 and direct["sampled"]
    records = run.records()
    assert messages(records, "in") == posted.messages
    assert run.result.unanswered == 0
    # the event store numbers every SSE event: the ids are in the record
    sse = [r for r in records if r.kind == Kind.MESSAGE and r.ctx and "sse" in r.ctx]
    assert sse and all(r.ctx["sse"].get("id") for r in sse)
    assert projection(run.out, tmp_path) == projection(tmp_path / "s.envelope.json", tmp_path)


async def test_everything_legacy_sse(tmp_path: Path, everything_js: Path) -> None:
    with everything("sse", everything_js) as port:
        target = f"http://127.0.0.1:{port}/sse"
        direct, _ = await legacy(target)
        with proxy("sse", target, tmp_path) as run:
            proxied, posted = await legacy(run.url)
    assert proxied == direct
    records = run.records()
    assert messages(records, "in") == posted.messages
    endpoint = [c for c in transports(records) if c.get("sse", {}).get("event") == "endpoint"]
    assert endpoint and endpoint[0]["data"].startswith("/message?sessionId=")
    assert all(r.ctx["path"].startswith("/message?sessionId=") for r in records if r.kind == Kind.MESSAGE and r.dir == "in")
    assert projection(run.out, tmp_path) == projection(tmp_path / "s.envelope.json", tmp_path)
