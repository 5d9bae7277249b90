"""A real MCP server (the official SDK's MCPServer) for the replay tests.

    python sdk_server.py stdio|sse|streamable-http [PORT] [--changed]

``--changed`` is the "new version": ``echo`` shouts, ``add`` returns a JSON text with one more
member, a new tool appears and ``fail`` stops failing.
"""

import sys

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import SamplingMessage, TextContent

CHANGED = "--changed" in sys.argv
args = [a for a in sys.argv[1:] if a != "--changed"]
mcp = MCPServer("replay-peer", log_level="WARNING")


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text.upper() if CHANGED else text


@mcp.tool()
def add(a: int, b: int) -> dict:
    """Add two numbers; the answer is JSON text."""
    out = {"sum": a + b, "inputs": [a, b]}
    if CHANGED:
        out["note"] = "v2"
    return out


@mcp.tool()
def fail(reason: str = "boom") -> str:
    """Always fails (in the first version)."""
    if CHANGED:
        return "fine"
    raise ToolError(reason)


@mcp.tool()
async def ask(question: str, ctx: Context) -> str:
    """Ask the client's model (a server -> client sampling request)."""
    res = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=question))],
        max_tokens=20, related_request_id=ctx.request_id)
    return f"llm said: {res.content.text}"


if CHANGED:
    @mcp.tool()
    def brand_new(x: int) -> int:
        """Only in the new version."""
        return x * 2


if __name__ == "__main__":
    mode = args[0] if args else "stdio"
    if mode == "stdio":
        mcp.run()
    else:
        mcp.run(mode, host="127.0.0.1", port=int(args[1]))
