"""The official SDK client (``mcp.Client``) calling tools one by one, saying what each call met (JSON on stdout).

    python rules_client.py stdio "CMD ARGS..." | streamable-http URL | sse URL   --era auto|legacy   CALL...

A CALL is ``tool`` or ``tool:JSON-arguments``. For each: ``{"tool", "text"|"error"|"exception", "seconds"}``;
``error`` is a JSON-RPC error the client got ({code, message}), ``exception`` the type and first line of
anything else (a connection that ended, a timeout of ``--timeout`` seconds). After an exception no more
calls are made: the connection is what broke.
"""

import asyncio
import json
import os
import shlex
import sys
import time

from mcp import Client, MCPError, StdioServerParameters
from mcp.client.sse import sse_client


async def main() -> None:
    args = sys.argv[1:]
    era = "auto"
    timeout = 5.0
    if "--era" in args:
        i = args.index("--era")
        era = args.pop(i + 1)
        args.pop(i)
    if "--timeout" in args:
        i = args.index("--timeout")
        timeout = float(args.pop(i + 1))
        args.pop(i)
    mode, target, calls = args[0], args[1], args[2:]
    if mode == "stdio":
        argv = shlex.split(target)
        where = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    elif mode == "sse":
        where = sse_client(target)
    else:
        where = target
    out: list[dict] = []
    kwargs = {} if era == "auto" else {"mode": era}
    try:
        async with Client(where, **kwargs) as client:
            for call in calls:
                name, _, raw = call.partition(":")
                t0 = time.monotonic()
                got: dict = {"tool": name}
                try:
                    r = await asyncio.wait_for(client.call_tool(name, json.loads(raw) if raw else {}), timeout)
                    got["text"] = r.content[0].text if r.content else None
                except MCPError as exc:
                    got["error"] = {"code": exc.error.code, "message": exc.error.message}
                except BaseException as exc:  # what the client met is the result
                    got["exception"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                got["seconds"] = round(time.monotonic() - t0, 3)
                out.append(got)
                if "exception" in got:
                    break
    except BaseException as exc:  # leaving a broken connection may raise too
        out.append({"exit": f"{type(exc).__name__}"})
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
