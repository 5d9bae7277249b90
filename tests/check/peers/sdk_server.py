"""A server built on the official SDK (MCPServer), as most users write one: plain-text and dict tools.

``python sdk_server.py stdio`` serves stdio; the tests also import :func:`build` and serve it in-thread.
"""

import sys

from mcp.server import MCPServer


def build() -> MCPServer:
    mcp = MCPServer("sdk-peer", version="1.2.3", log_level="WARNING")

    @mcp.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @mcp.tool()
    def info(verbose: bool = False) -> dict:
        """Facts about the server, as a JSON object."""
        return {"name": "sdk-peer", "verbose": verbose}

    return mcp


if __name__ == "__main__":
    build().run(sys.argv[1] if len(sys.argv) > 1 else "stdio")
