"""An official-SDK server whose tool ``reload`` tells the listen streams that its tools changed.

    python listen_server.py [stdio|streamable-http] [PORT] [--changed]

``--changed`` is the regression: ``reload`` still answers, but no longer sends
``notifications/tools/list_changed``.
"""

import sys

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

mcp = MCPServer("listen-peer", log_level="WARNING")
CHANGED = "--changed" in sys.argv


@mcp.tool()
async def reload(ctx: Context) -> str:
    """Reloads the tools (and says so on every listen stream)."""
    if not CHANGED:
        await ctx.notify_tools_changed()
    return "reloaded"


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    transport = args[0] if args else "stdio"
    if transport == "stdio":
        mcp.run()
    else:
        mcp.run(transport, host="127.0.0.1", port=int(args[1]))
