"""The official SDK client calling ``greet`` and answering its elicitation with "Bob" (JSON on stdout).

    python mrtr_client.py "CMD ARGS..." auto|legacy
"""

import asyncio
import json
import os
import shlex
import sys

from mcp import Client, StdioServerParameters
from mcp.types import ElicitResult


async def elicit(ctx, params):
    return ElicitResult(action="accept", content={"name": "Bob"})


async def main() -> None:
    argv = shlex.split(sys.argv[1])
    kwargs = {} if sys.argv[2] == "auto" else {"mode": sys.argv[2]}
    where = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    async with Client(where, elicitation_callback=elicit, **kwargs) as client:
        r = await client.call_tool("greet", {})
        print(json.dumps({"protocol": client.protocol_version, "text": r.content[0].text}))


asyncio.run(main())
