"""The official SDK's high-level ``Client`` in either era, listing what the server offers and calling ``lookup``.

    python era_client.py auto|legacy "CMD ARGS..."

``auto`` (the SDK 2.3 default) speaks 2026-07-28 (server/discover) to a modern server; ``legacy`` does the
initialize handshake. Prints what it got as JSON.
"""

import asyncio
import json
import os
import shlex
import sys

from mcp import Client, StdioServerParameters


async def main() -> None:
    mode, argv = sys.argv[1], shlex.split(sys.argv[2])
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    async with Client(params, mode=mode) as c:
        tools = (await c.list_tools()).tools
        prompts = (await c.list_prompts()).prompts
        r = await c.call_tool("lookup", {"key": "k"})
        out = {"protocol": c.protocol_version, "tools": sorted(t.name for t in tools),
               "prompts": sorted(p.name for p in prompts), "text": r.content[0].text if r.content else None}
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
