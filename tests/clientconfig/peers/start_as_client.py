"""Start a server entry of a client config the way the client does, and drive it with the official SDK ``Client``.

    python start_as_client.py CONFIG SERVERS_KEY NAME auto|legacy TOOL JSON_ARGS

Like Claude Desktop and the SDK's stdio client, the child gets only the entry's ``command``, ``args`` and
``env`` (merged into the SDK's minimal default environment: HOME, PATH, ...), never our environment.
Prints {"protocol", "tools", "text"} as JSON.
"""

import asyncio
import json
import sys
import tomllib

from mcp import Client, StdioServerParameters


async def main() -> None:
    config, key, name, mode, tool, args = sys.argv[1:7]
    text = open(config, encoding="utf-8").read()
    doc = tomllib.loads(text) if config.endswith(".toml") else json.loads(text)
    entry = doc[key][name]
    params = StdioServerParameters(command=entry["command"], args=entry.get("args", []), env=entry.get("env"),
                                   cwd=entry.get("cwd"))
    async with Client(params, mode=mode) as c:
        tools = sorted(t.name for t in (await c.list_tools()).tools)
        r = await c.call_tool(tool, json.loads(args))
        print(json.dumps({"protocol": c.protocol_version, "tools": tools,
                          "text": r.content[0].text if r.content else None}))


if __name__ == "__main__":
    asyncio.run(main())
