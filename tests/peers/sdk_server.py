"""The one official-SDK server (MCPServer) the tests talk to, as most users write one.

    python tests/peers/sdk_server.py [stdio|sse|streamable-http] [PORT] [--as replay|check|proxy] [--changed]

The tools are written once; ``--as`` picks which of them a folder's tests see, and under which name, because
those tests assert the exact tool list and server name they get:

* ``replay`` (the default): ``replay-peer`` with echo, add, fail and ask (sampling). ``--changed`` is its "new
  version": echo shouts, add returns one more member, fail stops failing and brand_new appears.
* ``check``: ``sdk-peer`` 1.2.3 with echo and info, plain-text and dict tools (check calls what it finds).
* ``proxy``: ``proxy-peer`` with echo, fail, slow (progress), ask, big and crash, and it says
  ``sdk server ready`` on stderr, so the recording proxy's tests see a server's stderr passed on.

The tests that serve it in-thread import :func:`build` instead.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import SamplingMessage, TextContent


def _tools(changed: bool) -> dict[str, Callable[..., Any]]:
    """Every tool any test needs, by name; ``changed`` gives the replay tests' new version of each."""

    def echo(text: str) -> str:
        """Echo the text back."""
        return text.upper() if changed else text

    # the bare ``dict`` of info and add is the point: the SDK then sends no structuredContent, as the
    # sessions the tests recorded (and assert on) have none for them
    def info(verbose: bool = False) -> dict:
        """Facts about the server, as a JSON object."""
        return {"name": "sdk-peer", "verbose": verbose}

    def add(a: int, b: int) -> dict:
        """Add two numbers; the answer is JSON text."""
        out: dict[str, Any] = {"sum": a + b, "inputs": [a, b]}
        if changed:
            out["note"] = "v2"
        return out

    def fail(reason: str = "boom") -> str:
        """Always fails (in the first version)."""
        if changed:
            return "fine"
        raise ToolError(reason)

    async def ask(question: str, ctx: Context) -> str:
        """Ask the client's model (a server -> client sampling request)."""
        res = await ctx.session.create_message(
            [SamplingMessage(role="user", content=TextContent(type="text", text=question))],
            max_tokens=50, related_request_id=ctx.request_id)
        return f"llm said: {res.content.text}"

    async def slow(steps: int, ctx: Context) -> str:
        """Reports progress once a step, then says it is done."""
        for i in range(1, steps + 1):
            await ctx.report_progress(i, steps, f"step {i}")
        return f"done {steps}"

    def big(size: int) -> str:
        """A text of ``size`` characters (larger than a pipe's buffer)."""
        return "x" * size

    def crash() -> str:
        """Dies mid-call, exit status 3, after a line on stderr (and one in $SDK_PEER_SIDE_EFFECTS: what it did)."""
        if os.environ.get("SDK_PEER_SIDE_EFFECTS"):
            with open(os.environ["SDK_PEER_SIDE_EFFECTS"], "a") as done:
                done.write("crash\n")
        sys.stderr.write("crashing now\n")
        sys.stderr.flush()
        os._exit(3)

    def brand_new(x: int) -> int:
        """Only in the new version."""
        return x * 2

    return {f.__name__: f for f in (echo, info, add, fail, ask, slow, big, crash, brand_new)}


#: per ``--as``: the server's name and version ("" is the SDK's default), and its tools in the order they are listed
FLAVOURS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "replay": ("replay-peer", "", ("echo", "add", "fail", "ask")),
    "check": ("sdk-peer", "1.2.3", ("echo", "info")),
    "proxy": ("proxy-peer", "", ("echo", "fail", "slow", "ask", "big", "crash")),
}


def build(flavour: str, *, changed: bool = False) -> MCPServer:
    """The server of one flavour; ``changed`` adds brand_new and switches each tool to its new version."""
    name, version, names = FLAVOURS[flavour]
    mcp = MCPServer(name, version=version, log_level="WARNING")
    tools = _tools(changed)
    for tool in (*names, "brand_new") if changed else names:
        mcp.tool()(tools[tool])
    return mcp


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("transport", nargs="?", default="stdio", choices=("stdio", "sse", "streamable-http"))
    parser.add_argument("port", nargs="?", type=int)
    parser.add_argument("--as", dest="flavour", default="replay", choices=sorted(FLAVOURS))
    parser.add_argument("--changed", action="store_true", help="the replay tests' new version")
    args = parser.parse_args(argv)
    mcp = build(args.flavour, changed=args.changed)
    if args.flavour == "proxy":
        sys.stderr.write("sdk server ready\n")
        sys.stderr.flush()
    if args.transport == "stdio":
        mcp.run()
    else:
        mcp.run(args.transport, host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main(sys.argv[1:])
