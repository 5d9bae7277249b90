"""An official-SDK server for the operations recordings: a tool that changes the tool list (and says so).

    python ops_server.py [stdio|streamable-http] [PORT]

``touch`` calls ``ctx.notify_tools_changed()``, which a 2026-07-28 client hears on its
``subscriptions/listen`` stream; ``echo`` answers; ``fail`` is a failed tool (``isError``), so every
recording made with this server holds one failed operation to count.
"""

from __future__ import annotations

import sys

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

mcp = MCPServer("ops-peer", log_level="WARNING")


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@mcp.tool()
async def touch(ctx: Context) -> str:
    """Say the tool list changed (to every listen stream that asked for it)."""
    await ctx.notify_tools_changed()
    return "touched"


@mcp.tool()
def fail(reason: str = "boom") -> str:
    """Always fails."""
    raise ToolError(reason)


if __name__ == "__main__":
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if transport == "stdio":
        mcp.run()
    else:
        mcp.run(transport, host="127.0.0.1", port=int(sys.argv[2]))
