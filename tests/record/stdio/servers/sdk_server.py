"""An official-SDK MCPServer for the proxy's end-to-end tests: echo, progress, sampling, errors, a crash."""

from __future__ import annotations

import os
import sys

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import SamplingMessage, TextContent

mcp = MCPServer("proxy-peer", log_level="WARNING")


@mcp.tool()
def echo(text: str) -> str:
    return text


@mcp.tool()
def fail(reason: str = "boom") -> str:
    raise ToolError(reason)


@mcp.tool()
async def slow(steps: int, ctx: Context) -> str:
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
    return f"done {steps}"


@mcp.tool()
async def ask(question: str, ctx: Context) -> str:
    res = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=question))],
        max_tokens=50, related_request_id=ctx.request_id)
    return f"llm said: {res.content.text}"


@mcp.tool()
def big(size: int) -> str:
    return "x" * size


@mcp.tool()
def crash() -> str:
    sys.stderr.write("crashing now\n")
    sys.stderr.flush()
    os._exit(3)


if __name__ == "__main__":
    sys.stderr.write("sdk server ready\n")
    sys.stderr.flush()
    mcp.run()
