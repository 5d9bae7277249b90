"""End to end with real peers: the official SDK client drives a session through `mcpreel record`.

Targets: an SDK MCPServer written for these tests (echo, progress, sampling, a tool error, a JSON-RPC
error) and server-everything from npm. The client's results through the proxy must equal a direct
run's, and the reel must hold every message both ways.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.session import ClientRequestContext
from mcp.types import CreateMessageRequestParams, CreateMessageResult, TextContent

from tests.record.stdio.helpers import SDK, record_argv, reel_lines

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


async def sampling(ctx: ClientRequestContext, params: CreateMessageRequestParams) -> CreateMessageResult:
    asked = params.messages[0].content.text
    return CreateMessageResult(role="assistant", model="fake", content=TextContent(type="text", text=f"42 ({asked})"))


def dump(result: Any) -> Any:
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def drive(argv: list[str], errlog: Path, steps) -> dict[str, Any]:
    """Run one session against ``argv``; returns what the client saw."""
    notes: list[str] = []
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_message(msg: Any) -> None:
        root = getattr(msg, "root", msg)
        notes.append(getattr(root, "method", type(root).__name__))

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append((p, total, message))

    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(errlog.parent))
    with open(errlog, "w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write, sampling_callback=sampling, message_handler=on_message) as session:
                seen = {"initialize": dump(await session.initialize())}
                seen.update(await steps(session, on_progress))
    seen["progress"] = progress
    seen["notifications"] = sorted(set(notes))
    return seen


async def sdk_steps(session: ClientSession, on_progress) -> dict[str, Any]:
    out: dict[str, Any] = {"tools": sorted(t.name for t in (await session.list_tools()).tools)}
    out["echo"] = dump(await session.call_tool("echo", {"text": "héllo"}))
    out["slow"] = dump(await session.call_tool("slow", {"steps": 3}, progress_callback=on_progress))
    out["ask"] = dump(await session.call_tool("ask", {"question": "meaning of life?"}))
    out["fail"] = dump(await session.call_tool("fail", {"reason": "no way"}))
    out["big"] = len((await session.call_tool("big", {"size": 200_000})).content[0].text)
    with pytest.raises(MCPError) as err:
        await session.get_prompt("no-such-prompt")
    out["error"] = (err.value.error.code, err.value.error.message)
    return out


def check_reel(path: Path) -> list[dict[str, Any]]:
    """The reel is whole, ordered by seq, and every request in either direction has its response."""
    lines = reel_lines(path)
    assert lines[0]["type"] == "meta" and lines[-1]["type"] == "end" and lines[-1]["exitCode"] == 0
    body = lines[1:-1]
    assert [x["seq"] for x in body] == list(range(len(body)))
    assert not [x for x in body if x.get("type") == "invalid"]
    requests = {(x["dir"], x["raw"]["id"]) for x in body if "raw" in x and "method" in x["raw"] and "id" in x["raw"]}
    answers = {(x["dir"], x["raw"]["id"]) for x in body if "raw" in x and "method" not in x["raw"]}
    assert {("out" if d == "in" else "in", i) for d, i in requests} == answers
    return body


def methods(body: list[dict[str, Any]], direction: str) -> Counter[str]:
    return Counter(x["raw"]["method"] for x in body if x.get("dir") == direction and "method" in x.get("raw", {}))


async def test_sdk_server_session_through_the_proxy_equals_a_direct_run(tmp_path):
    direct = await drive(SDK, tmp_path / "direct.err", sdk_steps)
    out = tmp_path / "sdk.jsonl"
    proxied = await drive(record_argv(out) + SDK, tmp_path / "proxied.err", sdk_steps)
    assert proxied == direct
    assert direct["progress"] == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
    assert direct["ask"]["content"][0]["text"] == "llm said: 42 (meaning of life?)"
    assert direct["fail"]["isError"] is True

    body = check_reel(out)
    assert methods(body, "in") == Counter({"initialize": 1, "notifications/initialized": 1, "tools/list": 1,
                                           "tools/call": 5, "prompts/get": 1})
    assert methods(body, "out") == Counter({"notifications/progress": 3, "sampling/createMessage": 1})
    sampled = [x for x in body if x.get("dir") == "in" and "result" in x.get("raw", {})
               and x["raw"]["result"].get("model") == "fake"]
    assert sampled and sampled[0]["raw"]["result"]["content"]["text"] == "42 (meaning of life?)"
    error = [x["raw"]["error"] for x in body if x.get("dir") == "out" and "error" in x.get("raw", {})]
    assert [e["code"] for e in error] == [direct["error"][0]]
    assert [x["text"] for x in body if x.get("type") == "stderr"][:1] == ["sdk server ready"]
    assert "sdk server ready" in (tmp_path / "proxied.err").read_text()  # and passed on to the client's errlog


async def test_sdk_server_crashing_mid_call(tmp_path):
    out = tmp_path / "crash.jsonl"

    async def steps(session: ClientSession, on_progress) -> dict[str, Any]:
        await session.list_tools()
        with pytest.raises(MCPError):
            await session.call_tool("crash", {}, read_timeout_seconds=10)
        return {}

    try:
        await drive(record_argv(out) + SDK, tmp_path / "crash.err", steps)
    except Exception:  # the transport may also report the closed pipe as it shuts down
        pass
    lines = reel_lines(out)
    assert lines[-1]["type"] == "end" and lines[-1]["exitCode"] == 3
    calls = [x["raw"] for x in lines if x.get("dir") == "in" and x.get("raw", {}).get("method") == "tools/call"]
    assert [c["params"]["name"] for c in calls] == ["crash"]  # the call in flight is kept
    assert "crashing now" in [x["text"] for x in lines if x.get("type") == "stderr"]


async def everything_steps(session: ClientSession, on_progress) -> dict[str, Any]:
    out: dict[str, Any] = {"tools": sorted(t.name for t in (await session.list_tools()).tools)}
    out["echo"] = dump(await session.call_tool("echo", {"message": "hi"}))
    out["sum"] = dump(await session.call_tool("get-sum", {"a": 2, "b": 40}))
    out["long"] = dump(await session.call_tool("trigger-long-running-operation", {"duration": 0.4, "steps": 2},
                                               progress_callback=on_progress))
    out["sampling"] = dump(await session.call_tool("trigger-sampling-request", {"prompt": "hello", "maxTokens": 7}))
    out["bad"] = dump(await session.call_tool("get-sum", {"a": "x"}))
    return out


async def test_server_everything_session_through_the_proxy_equals_a_direct_run(tmp_path, everything_js):
    server = ["node", str(everything_js), "stdio"]
    direct = await drive(server, tmp_path / "direct.err", everything_steps)
    out = tmp_path / "everything.jsonl"
    proxied = await drive(record_argv(out) + server, tmp_path / "proxied.err", everything_steps)
    assert proxied == direct
    assert direct["echo"]["content"][0]["text"] == "Echo: hi"
    assert len(direct["progress"]) == 2 and direct["bad"]["isError"] is True
    assert "trigger-sampling-request" in direct["tools"]

    body = check_reel(out)
    assert methods(body, "in")["tools/call"] == 5
    assert methods(body, "out")["notifications/progress"] == 2
    assert methods(body, "out")["sampling/createMessage"] == 1
    assert os.path.getsize(out) > 0 and (os.stat(out).st_mode & 0o777) == 0o600
