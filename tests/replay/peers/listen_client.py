"""The official SDK client (2026-07-28) listening for tool changes while it calls ``reload`` (JSON on stdout).

    python listen_client.py "CMD ARGS..." | http://127.0.0.1:PORT/mcp

It opens ``client.listen(tools_list_changed=True)`` (entering waits for the acknowledgement), calls
``reload``, waits up to 3 s for a change event, then leaves the stream (the SDK sends the client's
``notifications/cancelled``). It prints the protocol, the honoured filter, the events and the answer.
"""

import asyncio
import json
import os
import shlex
import sys

from mcp import Client, StdioServerParameters


async def main() -> None:
    target = sys.argv[1]
    if target.startswith("http"):
        where: object = target
    else:
        argv = shlex.split(target)
        where = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    events: list[str] = []
    async with Client(where) as client:
        async with client.listen(tools_list_changed=True) as sub:
            honored = sub.honored.model_dump(by_alias=True, exclude_none=True) if sub.honored else None
            r = await client.call_tool("reload", {})

            async def first() -> None:
                async for event in sub:
                    events.append(type(event).__name__)
                    return

            try:
                await asyncio.wait_for(first(), 3)
            except TimeoutError:
                pass
        print(json.dumps({"protocol": client.protocol_version, "honored": honored, "events": events,
                          "text": r.content[0].text}))


asyncio.run(main())
