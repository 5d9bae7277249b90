"""mcpreel: record, import, inspect, convert, replay and check MCP sessions.

The library is organised in layers around one session model (:mod:`mcpreel.model`):

- ``formats/``  readers and writers, each speaking only to the model (readers -> model -> writers)
- ``trace/``    the normalizer that turns a session into the Assay V2 or the simple tool-call trace
- ``cli/``      the thin command line; the library itself never prints

The public API is re-exported here.
"""

from __future__ import annotations

import importlib

from mcpreel._version import __version__

TYPE_CHECKING = False  # not typing's: this package's import stays as light as the latch needs
if TYPE_CHECKING:
    from mcpreel.clients.memory import MemoryTransport, memory_pair
    from mcpreel.errors import FormatError, InputError, McpreelError, TransportError, UsageError
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


#: each public name and the module it lives in, loaded on first use: importing this package costs nothing
#: more, so ``python -m mcpreel`` reaches its entry point (and the early-signal latch, ``mcpreel.__main__``)
#: before anything slow, and the in-memory transport does not bring asyncio to every command
_HOMES = {
    "Direction": "mcpreel.model",
    "FormatError": "mcpreel.errors",
    "InputError": "mcpreel.errors",
    "McpreelError": "mcpreel.errors",
    "MemoryTransport": "mcpreel.clients.memory",
    "Message": "mcpreel.model",
    "Session": "mcpreel.model",
    "SessionInfo": "mcpreel.model",
    "TransportError": "mcpreel.errors",
    "UsageError": "mcpreel.errors",
    "memory_pair": "mcpreel.clients.memory",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
