"""The official SDK client calling one tool that needs input; prints what it got as JSON.

    python mrtr_input_client.py "CMD ARGS..." auto|legacy TOOL [--declare-nothing]

It answers an elicitation with the name "Bob" and ``roots/list`` with no roots (what the MCP Inspector CLI
answers), so a recording it makes can be served to the Inspector and the TypeScript SDK client.
``--declare-nothing``: no callbacks, so no client capabilities; an error is printed as ``{"protocol", "error":
CODE, "message"}``.
"""

import asyncio
import json
import os
import shlex
import sys

from mcp import Client, MCPError, StdioServerParameters
from mcp.types import ElicitResult, ListRootsResult


async def elicit(ctx, params):
    return ElicitResult(action="accept", content={"name": "Bob"})


async def list_roots(ctx):
    return ListRootsResult(roots=[])


async def main() -> None:
    argv = shlex.split(sys.argv[1])
    kwargs = {} if sys.argv[2] == "auto" else {"mode": sys.argv[2]}
    where = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    callbacks = {} if "--declare-nothing" in sys.argv else {"elicitation_callback": elicit,
                                                              "list_roots_callback": list_roots}
    async with Client(where, **callbacks, **kwargs) as client:
        try:
            r = await client.call_tool(sys.argv[3], {})
        except MCPError as e:
            print(json.dumps({"protocol": client.protocol_version, "error": e.error.code, "message": e.error.message}))
            return
        print(json.dumps({"protocol": client.protocol_version, "text": r.content[0].text}))


asyncio.run(main())
