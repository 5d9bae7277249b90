"""Drive a server with the official SDK client and print what it got (JSON on stdout).

    python sdk_client.py stdio "CMD ARGS..." | streamable-http URL | sse URL  [peer|everything]

``peer`` (our SDK server): list_tools, echo, add, fail, ask (the sampling request answered "42").
``everything`` (server-everything): list_tools, echo, get-sum, trigger-sampling-request.
"""

import asyncio
import json
import shlex
import subprocess
import sys

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CreateMessageResult, TextContent


async def sampling(ctx, params):
    return CreateMessageResult(role="assistant", model="fake", content=TextContent(type="text", text="42"))


async def run(session: ClientSession) -> dict:
    init = await session.initialize()
    out = {"server": init.server_info.name, "protocol": init.protocol_version}
    out["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
    calls = [("echo", {"text": "hello"}), ("add", {"a": 2, "b": 3}), ("fail", {"reason": "nope"}),
             ("ask", {"question": "meaning?"})]
    if len(sys.argv) > 3 and sys.argv[3] == "everything":
        calls = [("echo", {"message": "hi"}), ("get-sum", {"a": 2, "b": 3}),
                 ("trigger-sampling-request", {"prompt": "hello", "maxTokens": 7})]
    for name, arguments in calls:
        r = await session.call_tool(name, arguments)
        out[name] = {"text": r.content[0].text if r.content else None, "isError": r.is_error}
    return out


async def main() -> None:
    mode, target = sys.argv[1], sys.argv[2]
    if mode == "stdio":
        argv = shlex.split(target)
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(__import__("os").environ))
        async with stdio_client(params, errlog=subprocess.DEVNULL) as (r, w):
            async with ClientSession(r, w, sampling_callback=sampling) as s:
                result = await run(s)
    elif mode == "sse":
        async with sse_client(target) as (r, w):
            async with ClientSession(r, w, sampling_callback=sampling) as s:
                result = await run(s)
    else:
        async with httpx2.AsyncClient() as http:
            async with streamable_http_client(target, http_client=http) as (r, w):
                async with ClientSession(r, w, sampling_callback=sampling) as s:
                    result = await run(s)
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
