"""An official-SDK MCPServer the report and OTLP tests record: tools that pass, fail, report progress and
ask the client to sample; a prompt and a resource (span targets other than tools)."""

from __future__ import annotations

import sys

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import SamplingMessage, TextContent

mcp = MCPServer("report-peer", log_level="WARNING")


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


@mcp.prompt()
def greet(name: str) -> str:
    return f"Say hello to {name}."


@mcp.resource("res://motd")
def motd() -> str:
    return "message of the day"


if __name__ == "__main__":
    sys.stderr.write("report peer ready\n")
    sys.stderr.flush()
    mcp.run()
