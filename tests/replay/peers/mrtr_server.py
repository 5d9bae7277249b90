"""An official-SDK server whose one tool needs the user's input before it can answer.

    python mrtr_server.py [--changed]

In the 2026-07-28 era the SDK answers the first ``tools/call`` with ``resultType: "input_required"``
(an elicitation in ``inputRequests`` and an opaque ``requestState``) and the client retries under a new
id; in the handshake era it sends ``elicitation/create`` mid-call. ``--changed`` greets differently.
"""

import sys
from typing import Annotated

from mcp.server import MCPServer
from mcp.server.mcpserver import Resolve
from mcp.server.mcpserver.resolve import Elicit
from pydantic import BaseModel

mcp = MCPServer("mrtr-peer", log_level="WARNING")
GREETING = "hi" if "--changed" in sys.argv else "hello"


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("Your name?", Name)


@mcp.tool()
def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
    """Greets whoever the user names."""
    return f"{GREETING} {who.name}"


if __name__ == "__main__":
    mcp.run()
