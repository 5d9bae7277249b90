"""A server for the fleet's tests and benchmark: every call may sleep, so waiting is what a replay does.

    python nap_server.py [stdio|streamable-http] [PORT] [--delay-ms N] [--tag TEXT]

Tools: ``echo(text)`` (answers the text, after ``--delay-ms``) and ``nap(seconds)`` (sleeps that long,
then answers ``"rested"``): a recording that calls ``nap(600)`` keeps its replay busy until it is stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from mcp.server import MCPServer


def build(delay_ms: float) -> MCPServer:
    mcp = MCPServer("nap-peer")

    @mcp.tool()
    async def echo(text: str) -> str:
        """Echo the text back (after the server's delay)."""
        if delay_ms:
            await asyncio.sleep(delay_ms / 1000)
        return text

    @mcp.tool()
    async def nap(seconds: float) -> str:
        """Sleep, then say so."""
        await asyncio.sleep(seconds)
        return "rested"

    return mcp


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("transport", nargs="?", default="stdio", choices=("stdio", "streamable-http"))
    parser.add_argument("port", nargs="?", type=int)
    parser.add_argument("--delay-ms", type=float, default=0.0)
    parser.add_argument("--tag", help="ignored: lets a test find its servers among the processes")
    args = parser.parse_args(argv)
    mcp = build(args.delay_ms)
    if args.transport == "stdio":
        mcp.run()
    else:
        mcp.run(args.transport, host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main(sys.argv[1:])
