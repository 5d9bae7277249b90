"""Two transports joined in memory: test your MCP client or server code with no process, port or file.

What httpx's ``MockTransport`` is to an HTTP client, :func:`memory_pair` is to MCP: ``client, server =
memory_pair()`` gives two ends of one :class:`~mcpreel.clients.Transport`. What one end sends, the
other receives, in order, as :class:`~mcpreel.model.Message` records (a copy made through JSON, so
neither side can change the other's objects, and what is not JSON fails at the sender). Closing either
end ends both streams, as closing a pipe would; ``ended`` then says which end went.

Play the server yourself::

    >>> import asyncio
    >>> from mcpreel.clients import memory_pair
    >>> async def main():
    ...     client, server = memory_pair()
    ...     await client.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    ...     request = await server.receive()
    ...     await server.send({"jsonrpc": "2.0", "id": request.raw["id"], "result": {}})
    ...     answer = await client.receive()
    ...     await client.close()
    ...     return request.dir, answer.dir, answer.raw, await server.receive(), server.ended
    >>> asyncio.run(main())
    ('in', 'out', {'jsonrpc': '2.0', 'id': 1, 'result': {}}, None, 'the other end closed')

Or put a recording behind the server end, as ``mcpreel serve`` would, and test your client against it::

    from mcpreel.clients import memory_pair
    from mcpreel.operations.cassette import build
    from mcpreel.formats import open_session
    from mcpreel.mock import Mock
    from mcpreel.mock.server import serve_transport

    async def test_my_client_against_a_recording():
        session, _ = open_session("tests/recordings/weather.jsonl")
        client, server = memory_pair()
        serving = asyncio.ensure_future(serve_transport(Mock(build(session)), server))
        await my_client(client)   # your code, speaking MCP over the client end
        await client.close()      # the mock's loop ends with the stream
        await serving
"""

from __future__ import annotations

from typing import Any

from mcpreel._infra import jsonio
from mcpreel.clients.base import Transport
from mcpreel.errors import TransportError

__all__ = ["MemoryTransport", "memory_pair"]


class MemoryTransport(Transport):
    """One end of a :func:`memory_pair`; ``peer`` is the other. Nothing to start."""

    name = "memory"

    def __init__(self, receive_dir: str = "out"):
        super().__init__()
        self.receive_dir = receive_dir
        self.peer: MemoryTransport | None = None

    async def send(self, message: Any) -> None:
        self.send_nowait(message)

    def send_nowait(self, message: Any) -> None:
        """Deliver at once (the other end sees messages in the order they were sent).

        Raises :class:`~mcpreel.errors.TransportError` once either end is closed.
        """
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
