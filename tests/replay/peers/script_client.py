"""The official SDK's default client (``mcp.Client``) running a script of requests against a server, as a
user's program would: what the noise tests record (issue 34).

    python script_client.py stdio "CMD ARGS..." | streamable-http URL  SCRIPT_JSON  [--era auto|legacy]

SCRIPT_JSON: ``{"calls": [[tool, arguments], ...], "resources": [uri, ...], "list": ["tools", "resources"]}``
(every key optional). ``auto`` (the SDK's default) speaks 2026-07-28 to a server that can, ``legacy`` the
handshake era. The client is the SDK's default one: no callbacks, so no capabilities declared (a client
that declares roots is asked for them by server-everything at a moment of the server's choosing, which a
short script may end before). Prints what it got (JSON): the protocol, the tools listed, each call's text.

The SDK gives a slow server 10 s to answer its ``server/discover`` probe, then falls back to the handshake
and re-probes when the server, modern after all, refuses it: a Python server that takes 10 s to start (a
loaded CI machine) is then recorded doing that dance. The wait is raised to 120 s here, so what is recorded
is what an unloaded machine records (the timeout itself is never on the wire).
"""

import asyncio
import json
import os
import shlex
import sys

import mcp.client.session
from mcp import Client, StdioServerParameters

mcp.client.session.DISCOVER_TIMEOUT_SECONDS = 120.0


async def main() -> None:
    args = sys.argv[1:]
    era = "auto"
    if "--era" in args:
        i = args.index("--era")
        era = args[i + 1]
        del args[i:i + 2]
    mode, target, script = args[0], args[1], json.loads(args[2])
    if mode == "stdio":
        argv = shlex.split(target)
        where = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    else:
        where = target
    kwargs = {} if era == "auto" else {"mode": era}
    out: dict = {}
    async with Client(where, **kwargs) as client:
        out["protocol"] = client.protocol_version
        if "tools" in script.get("list", ["tools"]):
            out["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
        if "resources" in script.get("list", []):
            out["resources"] = sorted(str(r.uri) for r in (await client.list_resources()).resources)
        for uri in script.get("resources", []):
            r = await client.read_resource(uri)
            out[uri] = getattr(r.contents[0], "text", None)
        for name, arguments in script.get("calls", []):
            r = await client.call_tool(name, arguments)
            text = next((c.text for c in r.content if getattr(c, "text", None) is not None), None)
            out.setdefault("calls", []).append({"tool": name, "text": text, "isError": r.is_error})
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
