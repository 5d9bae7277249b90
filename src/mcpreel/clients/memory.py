"""Two transports joined in memory, for tests and for running a mock server in-process.

``client, server = memory_pair()``: what one end sends, the other receives (as a copy made through
JSON, so neither side can change the other's objects). Closing either end ends both streams, as
closing a pipe would.
"""

from __future__ import annotations

from typing import Any

from mcpreel._infra import jsonio
from mcpreel.errors import TransportError
from mcpreel.clients.base import Transport

__all__ = ["MemoryTransport", "memory_pair"]


class MemoryTransport(Transport):
    name = "memory"

    def __init__(self, receive_dir: str = "out"):
        super().__init__()
        self.receive_dir = receive_dir
        self.peer: MemoryTransport | None = None

    async def send(self, message: Any) -> None:
        self.send_nowait(message)

    def send_nowait(self, message: Any) -> None:
        """Deliver at once (the other end sees messages in the order they were sent)."""
        peer = self.peer
        if peer is None or self._finished or peer._finished:
            raise TransportError("the other end is closed")
        peer._deliver_json(jsonio.loads(jsonio.dumps(message)))

    async def close(self) -> None:
        self._finish("closed")
        if self.peer is not None:
            self.peer._finish("the other end closed")


def memory_pair() -> tuple[MemoryTransport, MemoryTransport]:
    """(client end, server end): the client end receives ``out`` records, the server end ``in`` ones."""
    client, server = MemoryTransport("out"), MemoryTransport("in")
    client.peer, server.peer = server, client
    return client, server
