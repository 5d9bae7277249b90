"""Rules on the mock engine, in memory: what a ruled connection emits, batches included."""

from __future__ import annotations

import asyncio

from mcpreel.mock.engine import Mock
from mcpreel.operations.cassette import build
from mcpreel.rules import RuleSet, parse_rules
from mcpreel.rules.mock import CLOSE, RawLine, ruled_connections
from tests.replay.helpers import call, handshake, res, session, text


def mock_with(*rules: dict) -> Mock:
    mock = Mock(build(session(*handshake(), ("in", call(2, "echo", {"t": "x"})), ("out", res(2, text("x"))))))
    mock.connection_factory = ruled_connections(RuleSet(parse_rules(list(rules))))
    return mock


def run(mock: Mock, *messages) -> list:
    out: list = []

    async def main():
        conn = mock.connection()
        for m in messages:
            pending = conn.receive(m, out.append)
            if pending is not None:
                await pending

    asyncio.run(main())
    return out


def test_each_member_of_a_batch_meets_the_rules_and_the_batch_is_answered_as_one():
    mock = mock_with({"name": "down", "match": {"tool": "echo"}, "error": {"code": -32050, "message": "down"},
                      "times": 1})
    out = run(mock, [call(5, "echo", {"t": "x"}), call(6, "echo", {"t": "x"})])
    assert out == [[{"jsonrpc": "2.0", "id": 5, "error": {"code": -32050, "message": "down"}},
                    {"jsonrpc": "2.0", "id": 6, "result": {"content": [{"type": "text", "text": "x"}],
                                                           "isError": False}}]]


def test_malformed_and_close_reach_the_io_layer_as_markers_and_nothing_follows_a_close():
    mock = mock_with({"name": "broken", "match": {"id": 5, "direction": "server_to_client"}, "malformed": "{x"},
                     {"name": "gone", "match": {"id": 6}, "close": True})
    out = run(mock, call(5, "echo", {"t": "x"}), call(6, "echo", {"t": "x"}), call(7, "echo", {"t": "x"}))
    assert out == [RawLine(b"{x"), CLOSE]
    assert isinstance(out[0], RawLine)


def test_a_delayed_answer_is_awaited_by_the_returned_coroutine():
    mock = mock_with({"name": "slow", "match": {"direction": "server_to_client", "id": 5}, "delay": 0.2})

    async def main():
        conn = mock.connection()
        out: list = []
        pending = conn.receive(call(5, "echo", {"t": "x"}), out.append)
        assert pending is not None and out == []  # not yet
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await pending
        return out, loop.time() - t0

    out, waited = asyncio.run(main())
    assert out[0]["id"] == 5 and waited >= 0.19
