"""A server whose answers vary on every call, as real ones do: the noise replay must learn, not report.

    python volatile_server.py [stdio|streamable-http] [PORT] [--changed]

Written with the official SDK (``MCPServer``), as a user writes one. Tools:

* ``now``: a sentence holding the current time (a timestamp inside a text);
* ``ticket``: a JSON object with a fresh UUID and a fixed kind (JSON inside a text, one member varies);
* ``pick``: a random pick out of 900 words (the whole value varies);
* ``where``: a Python-like object address inside a text (``<Ticket object at 0x7f...>``);
* ``add``: the sum of two numbers -- stable; ``--changed`` is the new version whose ``add`` is off by one
  (a real change, which must still be named ``changed``).
"""

from __future__ import annotations

import datetime
import json
import random
import sys
import uuid

from mcp.server import MCPServer

_LEFT = ("amber", "brisk", "calm", "dusty", "eager", "faint", "gentle", "hollow", "icy", "jolly", "keen", "lush",
         "mellow", "narrow", "odd", "pale", "quiet", "rapid", "sharp", "tidy", "upper", "vast", "warm", "young",
         "zesty", "bold", "crisp", "deep", "even", "fresh")
_RIGHT = ("apple", "birch", "cedar", "delta", "ember", "fjord", "grove", "heron", "inlet", "jetty", "kiln", "larch",
          "maple", "nettle", "otter", "pebble", "quail", "reed", "sparrow", "thistle", "umber", "vale", "willow",
          "yarrow", "zephyr", "brook", "cliff", "dune", "elm", "fern")


def build(changed: bool = False) -> MCPServer:
    """The server; ``changed`` is its next version (``add`` off by one)."""
    mcp = MCPServer("volatile-peer", log_level="WARNING")

    @mcp.tool()
    def now() -> str:
        """The current time, in a sentence."""
        return f"It is {datetime.datetime.now(datetime.UTC).isoformat()} on this server."

    @mcp.tool()
    def ticket() -> str:
        """A fresh ticket, as JSON text."""
        return json.dumps({"id": str(uuid.uuid4()), "kind": "ticket", "open": True})

    @mcp.tool()
    def pick() -> str:
        """A random word pair."""
        return f"{random.choice(_LEFT)} {random.choice(_RIGHT)}"

    @mcp.tool()
    def where() -> str:
        """Where a new object lives (an address, as repr shows one)."""
        return f"made <Ticket object at 0x7f{random.getrandbits(40):010x}> for you"

    @mcp.tool()
    def add(a: int, b: int) -> str:
        """Add two numbers."""
        return str(a + b + (1 if changed else 0))

    return mcp


def main(argv: list[str]) -> None:
    changed = "--changed" in argv
    rest = [a for a in argv if a != "--changed"]
    transport = rest[0] if rest else "stdio"
    mcp = build(changed)
    if transport == "stdio":
        mcp.run()
    else:
        mcp.run(transport, host="127.0.0.1", port=int(rest[1]))


if __name__ == "__main__":
    main(sys.argv[1:])
