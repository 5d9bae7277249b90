"""mcpreel: record, import, inspect, convert, replay and check MCP sessions.

The library is organised in layers around one session model (:mod:`mcpreel.model`):

- ``formats/``  readers and writers, each speaking only to the model (readers -> model -> writers)
- ``trace/``    the normalizer that turns a session into the Assay V2 or the simple tool-call trace
- ``cli/``      the thin command line; the library itself never prints

The public API is re-exported here.
"""

from mcpreel._version import __version__
from mcpreel.errors import (
    FormatError,
    InputError,
    McpreelError,
    TransportError,
    UsageError,
)
from mcpreel.model import Direction, Message, Session, SessionInfo

__all__ = [
    "Direction",
    "FormatError",
    "InputError",
    "McpreelError",
    "MemoryTransport",
    "Message",
    "Session",
    "SessionInfo",
    "TransportError",
    "UsageError",
    "__version__",
    "memory_pair",
]


def __getattr__(name: str) -> object:
    # the in-memory transport (for users' tests) loads on first use: every command imports this
    # package, and the recording proxy starts faster without asyncio
    if name in ("MemoryTransport", "memory_pair"):
        from mcpreel.clients import memory

        return getattr(memory, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
