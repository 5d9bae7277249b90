"""An official-SDK server whose one tool needs the client's roots before it can answer.

    python mrtr_roots_server.py

In the 2026-07-28 era the SDK answers the first ``tools/call roots`` with ``resultType: "input_required"``
(a ``roots/list`` in ``inputRequests``); in the handshake era it sends ``roots/list`` mid-call. The MCP
Inspector CLI declares the roots capability (not elicitation) and answers ``roots/list`` with no roots, so
this is the multi-round-trip tool the Inspector can call.
"""

from typing import Annotated

from mcp.server import MCPServer
from mcp.server.mcpserver import Resolve
from mcp.server.mcpserver.resolve import ListRoots
from mcp.types import ListRootsResult

mcp = MCPServer("mrtr-roots-peer", log_level="WARNING")


def ask_roots() -> ListRoots:
    return ListRoots()


@mcp.tool()
def roots(found: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    """Counts the client's roots."""
    return f"{len(found.roots)} roots"


if __name__ == "__main__":
    mcp.run()
