"""Drive ``volatile_server.py`` with the official SDK's ``mcp.Client`` and print what it got (JSON).

    python volatile_client.py stdio "CMD ARGS..." | streamable-http URL  [--era auto|legacy]

``auto`` (the SDK's default) speaks 2026-07-28 to a modern server; ``legacy`` the handshake era. Each
volatile tool is called twice, ``add`` once.
"""

import asyncio
import json
import os
import shlex
import sys

from mcp import Client, StdioServerParameters


async def main() -> None:
    args = sys.argv[1:]
    era = "auto"
    if "--era" in args:
        i = args.index("--era")
        era = args[i + 1]
        del args[i:i + 2]
    mode, target = args[0], args[1]
    if mode == "stdio":
        argv = shlex.split(target)
        where = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    else:
        where = target
    kwargs = {} if era == "auto" else {"mode": era}
    out: dict = {}
    async with Client(where, **kwargs) as client:
        out["server"] = client.server_info.name if client.server_info else None
        out["protocol"] = client.protocol_version
        out["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
        for name, arguments in [("now", {}), ("ticket", {}), ("pick", {}), ("where", {}), ("add", {"a": 2, "b": 3}),
                                ("now", {}), ("ticket", {}), ("pick", {}), ("where", {})]:
            r = await client.call_tool(name, arguments)
            out.setdefault(name, []).append(r.content[0].text if r.content else None)
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
