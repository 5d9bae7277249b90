"""A server whose answers vary from call to call, as real ones do (issue 34's "server of our own"):
a timestamp, an id and a random pick, alone and inside a text, beside answers that never vary.

    python varying_server.py [stdio|streamable-http] [PORT]

Tools: ``now()`` (the time, ISO 8601), ``new_id()`` (a UUID), ``pick()`` (one of 1,000 words, drawn at
random: few enough to be a pick, enough that two draws agree only once in a thousand), ``report()`` (a
text with all three inside: "report 6f1c... made at 2026-...Z: lucky word sky-417"), ``add(a, b)`` (the
same answer every time: the change a gate must still see). A resource ``varying://status`` says when it
was read. SDK 2.3's ``MCPServer``: both protocol eras.
"""

from __future__ import annotations

import random
import sys
import uuid
from datetime import UTC, datetime

from mcp.server import MCPServer

WORDS = [f"{w}-{n}" for w in ("sky", "sea", "oak", "ash", "elm") for n in range(200)]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def build() -> MCPServer:
    mcp = MCPServer("varying-peer", log_level="WARNING")

    @mcp.tool()
    def now() -> str:
        """The server's clock."""
        return _now()

    @mcp.tool()
    def new_id() -> str:
        """A fresh id."""
        return str(uuid.uuid4())

    @mcp.tool()
    def pick() -> str:
        """A word drawn at random."""
        return random.choice(WORDS)

    @mcp.tool()
    def report() -> str:
        """A text with an id, a time and a random word inside."""
        return f"report {uuid.uuid4()} made at {_now()}: lucky word {random.choice(WORDS)}"

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """The sum: the same every time."""
        return a + b

    @mcp.resource("varying://status")
    def status() -> str:
        """When the status was read."""
        return f"status: up, read at {_now()}"

    return mcp


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    server = build()
    if mode == "stdio":
        server.run()
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
