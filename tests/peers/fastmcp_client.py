"""A FastMCP 4 ``Client`` (the ``fastmcp`` package, in its own virtualenv ``.peers/fastmcp``) driving
server-everything as FastMCP's users write it; prints what it got as JSON.

    .peers/fastmcp/bin/python tests/peers/fastmcp_client.py stdio "CMD ARGS..." | streamable-http URL

Its default mode (``auto``) asks ``server/discover`` first and falls back to ``initialize`` where the server
refuses it. It lists the tools, calls ``echo`` and ``get-sum``, and ``trigger-sampling-request``, whose
``sampling/createMessage`` mid-call (a handshake-era exchange) it answers "42": a client that wrongly stayed
in the 2026 era never gets that request.
"""

import asyncio
import json
import os
import shlex
import sys

from fastmcp import Client
from fastmcp.client.transports import StdioTransport


async def sampling(messages, params, context) -> str:
    return "42"


async def main() -> None:
    mode, target = sys.argv[1], sys.argv[2]
    if mode == "stdio":
        argv = shlex.split(target)
        where = StdioTransport(argv[0], argv[1:], env=dict(os.environ))
    else:
        where = target
    async with Client(where, sampling_handler=sampling, timeout=30) as client:
        out = {"server": client.server_info.name if client.server_info else None,
               "protocol": client.protocol_version}
        out["tools"] = sorted(t.name for t in await client.list_tools())
        for name, arguments in [("echo", {"message": "hi"}), ("get-sum", {"a": 2, "b": 3}),
                                ("trigger-sampling-request", {"prompt": "hello", "maxTokens": 7})]:
            r = await client.call_tool(name, arguments, raise_on_error=False)
            out[name] = {"text": r.content[0].text if r.content else None, "isError": r.is_error}
    print(json.dumps(out))


asyncio.run(main())
