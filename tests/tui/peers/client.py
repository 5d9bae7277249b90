"""The MCP client of the terminal end-to-end test: the official SDK client over stdio through
``mcpreel record --intercept tool:echo`` to the SDK test server, in one tmux window, while ``mcpreel tui``
decides in another.

    python client.py OUT.jsonl RESULTS.txt [legacy|auto]

Each answer (or JSON-RPC error) the client gets is appended to RESULTS as one line, so the test reads what
the client saw.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp import Client, MCPError, StdioServerParameters

from tests.peers import SDK_SERVER


async def main(out: str, results: str, mode: str) -> None:
    # the whole environment: the SDK passes a child only a few variables unless told, and the proxy needs
    # this checkout's PYTHONPATH and the test's MCPREEL_RUNTIME_DIR
    server = StdioServerParameters(command=sys.executable, env=dict(os.environ), args=[
        "-m", "mcpreel", "record", "-q", "--out", out, "--intercept", "tool:echo", "--",
        sys.executable, str(SDK_SERVER), "--as", "proxy"])
    async with Client(server, mode=mode) as client:  # type: ignore[call-arg]
        for text in ("as sent", "drop me"):
            try:
                answer = await client.call_tool("echo", {"text": text})
                line = f"answer: {answer.content[0].text}"
            except MCPError as exc:
                line = f"error: {exc.error.code} {exc.error.message}"
            with open(results, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "auto")
