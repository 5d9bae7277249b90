"""The official SDK client calling one tool that needs input; prints what it got as JSON.

    python mrtr_input_client.py "CMD ARGS..." auto|legacy TOOL

It answers an elicitation with the name "Bob" and ``roots/list`` with no roots (what the MCP Inspector CLI
answers), so a recording it makes can be served to the Inspector and the TypeScript SDK client.
"""

import asyncio
import json
import os
import shlex
import sys

from mcp import Client, StdioServerParameters
from mcp.types import ElicitResult, ListRootsResult


async def elicit(ctx, params):
    return ElicitResult(action="accept", content={"name": "Bob"})


async def list_roots(ctx):
    return ListRootsResult(roots=[])


async def main() -> None:
    argv = shlex.split(sys.argv[1])
    kwargs = {} if sys.argv[2] == "auto" else {"mode": sys.argv[2]}
    where = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    async with Client(where, elicitation_callback=elicit, list_roots_callback=list_roots, **kwargs) as client:
        r = await client.call_tool(sys.argv[3], {})
        print(json.dumps({"protocol": client.protocol_version, "text": r.content[0].text}))


asyncio.run(main())
