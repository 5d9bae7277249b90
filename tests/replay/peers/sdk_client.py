"""Drive a server with the official SDK client and print what it got (JSON on stdout).

    python sdk_client.py stdio "CMD ARGS..." | streamable-http URL | sse URL  [peer|everything] [--era auto|legacy]

``peer`` (our SDK server): list_tools, echo, add, fail, ask (the sampling request answered "42").
``everything`` (server-everything): list_tools, echo, get-sum, trigger-sampling-request.

Without ``--era`` the low-level ``ClientSession`` does the handshake (2025-11-25). With ``--era`` the
high-level ``mcp.Client`` is used as users use it: ``auto`` (its default) speaks 2026-07-28 to a modern
server (``server/discover``, per-request ``_meta``), ``legacy`` the handshake era. A 2026 client has no
back-channel for sampling, so ``ask`` is left out there.
"""

import asyncio
import json
import shlex
import subprocess
import sys

import httpx2
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
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


async def run_client(client: Client, everything: bool) -> dict:
    out = {"server": client.server_info.name if client.server_info else None, "protocol": client.protocol_version}
    out["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
    calls = [("echo", {"text": "hello"}), ("add", {"a": 2, "b": 3}), ("fail", {"reason": "nope"})]
    if everything:
        calls = [("echo", {"message": "hi"}), ("get-sum", {"a": 2, "b": 3})]
    for name, arguments in calls:
        r = await client.call_tool(name, arguments)
        out[name] = {"text": r.content[0].text if r.content else None, "isError": r.is_error}
    return out


async def main() -> None:
    args = [a for a in sys.argv[1:]]
    era = None
    if "--era" in args:
        i = args.index("--era")
        era = args[i + 1]
        del args[i:i + 2]
    sys.argv[1:] = args
    mode, target = sys.argv[1], sys.argv[2]
    if era is not None:
        everything = len(sys.argv) > 3 and sys.argv[3] == "everything"
        if mode == "stdio":
            argv = shlex.split(target)
            where = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(__import__("os").environ))
        elif mode == "sse":
            where = sse_client(target)
        else:
            where = target
        kwargs = {} if era == "auto" else {"mode": era}
        async with Client(where, sampling_callback=sampling, **kwargs) as client:
            print(json.dumps(await run_client(client, everything)))
        return
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
