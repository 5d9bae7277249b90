"""The one client interface: every member a caller uses is on :class:`Transport`, on every transport."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from mcpreel.clients import (
    LegacySSETransport,
    MemoryTransport,
    StdioTransport,
    StreamableHTTPTransport,
    Transport,
    memory_pair,
    open_target,
)
from mcpreel.clients.process import ServerStartError
from mcpreel.errors import TransportError

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
ECHO = ("import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {}}), flush=True)\n")


@pytest.mark.parametrize("transport", [
    Transport(),
    MemoryTransport(),
    StdioTransport([sys.executable, "-c", "pass"]),
    StreamableHTTPTransport("http://127.0.0.1:9/mcp"),
    LegacySSETransport("http://127.0.0.1:9/sse"),
], ids=lambda t: type(t).__name__)
def test_every_transport_has_the_whole_interface(transport: Transport):
    for member in ("start", "send", "send_nowait", "receive", "close", "dead_reason", "__aiter__"):
        assert callable(getattr(transport, member))
    assert transport.ended is None


def test_the_base_knows_no_more_than_ended():
    async def main() -> tuple[str | None, str | None]:
        client, server = memory_pair()
        await server.close()
        return client.ended, client.dead_reason()

    assert asyncio.run(main()) == ("the other end closed", None)


def test_a_process_says_how_it_went_away():
    script = "import sys; print('bye: no database', file=sys.stderr, flush=True); sys.exit(3)"

    async def main() -> tuple[str | None, str | None]:
        t = StdioTransport([sys.executable, "-c", script])
        await t.start()
        async for _ in t:
            pass
        reason = t.dead_reason()
        await t.close()
        return t.ended, reason

    ended, reason = asyncio.run(main())
    assert ended == "the server exited (exit code 3)"
    assert reason == "the server exited (exit code 3); its last stderr line: bye: no database"


def test_send_nowait_on_a_process():
    async def main() -> Any:
        t = StdioTransport([sys.executable, "-c", ECHO])
        await t.start()
        try:
            t.send_nowait(PING)
            got = await asyncio.wait_for(t.receive(), 20)
        finally:
            await t.close()
        return got.raw if got is not None else None

    assert asyncio.run(main()) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_a_failed_background_send_is_dropped_quietly():
    class Gone(Transport):
        async def send(self, message: Any) -> None:
            raise TransportError("the peer is gone")

    async def main(loop_errors: list[dict[str, Any]]) -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: loop_errors.append(ctx))
        t = Gone()
        t.send_nowait(PING)
        await asyncio.sleep(0.05)

    errors: list[dict[str, Any]] = []
    asyncio.run(main(errors))
    assert errors == []


def test_a_command_that_cannot_start_is_unreachable_for_a_client():
    # replay and forwarding report it as a transport error (exit 2), not as the recorder's exit 127
    with pytest.raises(TransportError, match="cannot start server command '/no/such/server': not found") as info:
        asyncio.run(open_target(["/no/such/server"]).start())
    assert not isinstance(info.value, ServerStartError) and info.value.exit_code == 2
    assert isinstance(info.value.__cause__, FileNotFoundError)
