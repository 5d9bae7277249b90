"""A FastMCP 4 server (the ``fastmcp`` package, in its own virtualenv ``.peers/fastmcp``), over Streamable HTTP.

    .peers/fastmcp/bin/python tests/peers/fastmcp_server.py PORT

A third real server for the conformance suite (tests/conformance): a tool, a prompt and a resource, written
as FastMCP's users write them. Listens on 127.0.0.1 only.
"""

from __future__ import annotations

import sys

from fastmcp import FastMCP

mcp = FastMCP("fastmcp-peer")


@mcp.tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@mcp.prompt
def greeting(name: str = "world") -> str:
    """A greeting."""
    return f"Hello, {name}!"


@mcp.resource("test://static-text")
def static_text() -> str:
    """A static text resource."""
    return "static"


if __name__ == "__main__":
    mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[1]), show_banner=False)
