"""The in-memory transport as users use it: its documented examples, run."""

from __future__ import annotations

import asyncio
import doctest
from pathlib import Path

import pytest

import mcpreel
from mcpreel.clients import MemoryTransport, memory, memory_pair
from mcpreel.errors import TransportError
from mcpreel.formats import open_session
from mcpreel.mock import Mock
from mcpreel.mock.server import serve_transport
from mcpreel.operations.cassette import build

#: a recording shipped with mcpreel (initialize, tools/list, a tools/call with progress)
EXAMPLE = Path(mcpreel.__file__).parent / "examples" / "session.http.json"


def test_the_docstring_example_runs():
    failed, tried = doctest.testmod(memory, raise_on_error=False)
    assert tried > 0 and failed == 0


def test_a_client_tested_against_a_recording_the_way_the_docstring_shows():
    async def my_client(client: MemoryTransport) -> list[object]:
        await client.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                           "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                      "clientInfo": {"name": "demo-client", "version": "1.0"}}})
        init = await client.receive()
        await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await client.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        tools = await client.receive()
        assert init is not None and tools is not None
        return [init.raw, tools.raw]

    async def test_my_client_against_a_recording() -> list[object]:
        session, _ = open_session(EXAMPLE)
        client, server = memory_pair()
        serving = asyncio.ensure_future(serve_transport(Mock(build(session)), server))
        got = await my_client(client)
        await client.close()
        await asyncio.wait_for(serving, 5)
        return got

    init, tools = asyncio.run(test_my_client_against_a_recording())
    assert init["result"]["serverInfo"] == {"name": "demo", "version": "1.0"}
    assert [t["name"] for t in tools["result"]["tools"]] == ["lookup_customer"]


def test_the_ends_are_joined_in_order_and_never_share_objects():
    async def main() -> None:
        client, server = memory_pair()
        sent = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"n": [1]}}
        await client.send(sent)
        client.send_nowait({"jsonrpc": "2.0", "method": "notifications/initialized"})
        sent["params"]["n"].append(2)
        first, second = await server.receive(), await server.receive()
        assert first is not None and second is not None
        assert first.raw["params"] == {"n": [1]} and first.dir == "in"
        assert second.raw["method"] == "notifications/initialized"
        await server.close()
        assert await client.receive() is None and client.ended == "the other end closed"
        with pytest.raises(TransportError, match="the other end is closed"):
            await client.send(sent)

    asyncio.run(main())


def test_the_memory_transport_is_public_api():
    assert {"MemoryTransport", "memory_pair"} <= set(mcpreel.clients.__all__)
    assert mcpreel.clients.memory_pair is memory_pair
    assert {"MemoryTransport", "memory_pair"} <= set(mcpreel.__all__)
    assert mcpreel.memory_pair is memory_pair and mcpreel.MemoryTransport is MemoryTransport
