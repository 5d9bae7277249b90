"""Issue 11's rules, unit by unit: the sessions inside a recording, their eras, the translations between
eras, what is never a difference, and a mock that answers a client of either era."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpreel.compare.normalize import canonical_params, comparable
from mcpreel.eras import (
    discover_result_from_initialize,
    initialize_result_from_discover,
    protocol_of_request,
    to_legacy_request,
    to_legacy_result,
    to_modern_request,
    to_modern_result,
)
from mcpreel.mock.engine import Mock
from mcpreel.model import Kind, Message
from mcpreel.operations.cassette import build
from mcpreel.operations.sessions import split_sessions, split_sessions_streaming
from tests.replay.helpers import INIT, INIT_OK, call, err, note, req, res, session, text

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "modern-client", "version": "2"},
        "io.modelcontextprotocol/clientCapabilities": {}}
DISCOVER = req(1, "server/discover", {"_meta": META})
DISCOVER_OK = res(1, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "resultType": "complete",
                      "ttlMs": 0, "cacheScope": "private",
                      "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}})


def modern_call(id_: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    m = call(id_, name, arguments)
    m["params"]["_meta"] = dict(META)
    return m


def modern_session():
    return session(("in", DISCOVER), ("out", DISCOVER_OK),
                   ("in", modern_call(2, "echo", {"t": "x"})), ("out", res(2, {**text("x"), "resultType": "complete"})))


def legacy_session():
    return session(("in", INIT), ("out", INIT_OK), ("in", note("notifications/initialized")),
                   ("in", call(2, "echo", {"t": "x"})), ("out", res(2, text("x"))))


# -- sessions and eras -----------------------------------------------------------------------------

def test_one_conversation_is_one_session_with_its_era():
    (m,) = split_sessions(modern_session())
    assert (m.era, m.protocol, m.client, m.requests) == ("modern", "2026-07-28", "modern-client 2", 2)
    (legacy,) = split_sessions(legacy_session())
    assert (legacy.era, legacy.protocol, legacy.client) == ("legacy", "2025-11-25", "t 1")


def test_a_refused_discover_then_initialize_is_one_handshake_era_session():
    s = session(("in", DISCOVER), ("out", err(1, -32601, "Method not found")), ("in", {**INIT, "id": 2}),
                ("out", {**INIT_OK, "id": 2}), ("in", call(3, "echo", {"t": "x"})), ("out", res(3, text("x"))))
    (only,) = split_sessions(s)
    assert only.era == "legacy" and only.requests == 3


def test_each_later_handshake_opens_a_session_of_its_own():
    s = session(("in", INIT), ("out", INIT_OK), ("in", call(2, "echo", {"t": "a"})), ("out", res(2, text("a"))),
                ("in", DISCOVER), ("out", DISCOVER_OK), ("in", modern_call(2, "echo", {"t": "b"})),
                ("out", res(2, text("b"))), ("in", INIT), ("out", INIT_OK))
    parts = split_sessions(s)
    assert [p.era for p in parts] == ["legacy", "modern", "legacy"]
    assert [len(p.records) for p in parts] == [4, 4, 2]


def test_http_sessions_are_kept_apart_by_their_session_id_even_interleaved():
    def rec(direction, msg, sid=None, exchange=None):
        ctx = {"exchange": exchange, "headers": {"Mcp-Session-Id": sid} if sid else {}}
        return Message(direction, msg, 0, ctx=ctx)

    s = session(rec("in", INIT, exchange=1), rec("out", INIT_OK, "A", 1),
                rec("in", INIT, exchange=2), rec("out", INIT_OK, "B", 2),
                rec("in", call(2, "echo", {"t": "a"}), "A", 3), rec("in", call(2, "echo", {"t": "b"}), "B", 4),
                rec("out", res(2, text("b")), exchange=4), rec("out", res(2, text("a")), exchange=3))
    s.info.transport = "streamable-http"
    a, b = split_sessions(s)
    assert (a.http_session, b.http_session) == ("A", "B")
    assert [m.raw.get("result", {}).get("content", [{}])[0].get("text") for m in a.records if m.dir == "out"] == [None, "a"]
    assert [m.raw.get("result", {}).get("content", [{}])[0].get("text") for m in b.records if m.dir == "out"] == [None, "b"]


def test_a_merged_reel_keeps_its_files_apart():
    def rec(direction, msg, f):
        return Message(direction, msg, 0, extra={"file": f})

    s = session(rec("in", INIT, "fs.jsonl"), rec("in", INIT, "web.jsonl"), rec("out", INIT_OK, "web.jsonl"),
                rec("out", INIT_OK, "fs.jsonl"))
    parts = split_sessions(s)
    assert [(p.source_file, len(p.records)) for p in parts] == [("fs.jsonl", 2), ("web.jsonl", 2)]


# -- translations ---------------------------------------------------------------------------------

def test_requests_translate_both_ways_and_keep_what_they_ask():
    legacy = call(5, "echo", {"t": "x"}, progressToken=5)
    modern = to_modern_request(legacy, {"name": "c", "version": "1"}, {})
    assert protocol_of_request(modern) == "2026-07-28"
    assert modern["params"]["_meta"]["progressToken"] == 5
    back = to_legacy_request(modern)
    assert back == legacy
    assert to_legacy_request(DISCOVER) == {"jsonrpc": "2.0", "id": 1, "method": "server/discover"}


def test_handshake_answers_translate_both_ways():
    init = initialize_result_from_discover(DISCOVER_OK["result"], "2025-06-18")
    assert init == {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "s", "version": "1"}}
    disc = discover_result_from_initialize(INIT_OK["result"])
    assert disc["supportedVersions"] == ["2026-07-28"] and disc["resultType"] == "complete"
    assert disc["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "s", "version": "1"}


def test_results_in_each_era():
    modern = {"tools": [], "resultType": "complete", "ttlMs": 5, "cacheScope": "public"}
    assert to_legacy_result(modern) == {"tools": []}
    assert to_modern_result({"tools": []}, "tools/list") == {"tools": [], "resultType": "complete", "ttlMs": 0,
                                                             "cacheScope": "private"}
    assert to_modern_result(text("x"), "tools/call") == {**text("x"), "resultType": "complete"}


def test_volatile_protocol_fields_are_never_a_difference():
    a = res(1, {**text("x"), "resultType": "complete", "ttlMs": 10, "cacheScope": "private", "requestState": "s1",
                "_meta": {"io.modelcontextprotocol/serverInfo": {}}})
    assert comparable(a) == comparable(res(9, text("x")))
    assert comparable(res(1, {"resultType": "input_required"})) != comparable(res(1, {}))


def test_protocol_meta_is_not_part_of_a_match():
    assert canonical_params(modern_call(1, "echo", {"t": "x"})["params"]) == canonical_params(call(1, "echo", {"t": "x"})["params"])


# -- a mock any client can use ----------------------------------------------------------------------

def _answers(mock: Mock, *messages: dict[str, Any]) -> list[Any]:
    conn = mock.connection()
    out: list[Any] = []

    async def main() -> None:
        for m in messages:
            pending = conn.receive(m, out.append)
            if pending is not None:
                await pending

    asyncio.run(main())
    return out


def test_a_modern_recording_answers_a_handshake_era_client():
    mock = Mock(build(modern_session()))
    init, echo = _answers(mock, {**INIT, "params": {**INIT["params"], "protocolVersion": "2025-06-18"}},
                          note("notifications/initialized"), call(7, "echo", {"t": "x"}))
    assert init["result"]["protocolVersion"] == "2025-06-18"  # negotiated as a real server would
    assert init["result"]["serverInfo"] == {"name": "s", "version": "1"}
    assert echo == res(7, text("x"))  # no 2026 members for a handshake-era client


def test_a_handshake_era_recording_answers_a_modern_client():
    mock = Mock(build(legacy_session()))
    disc, echo = _answers(mock, {**DISCOVER, "id": 3}, modern_call(4, "echo", {"t": "x"}))
    assert disc["result"]["supportedVersions"] == ["2026-07-28"] and disc["id"] == 3
    assert echo == res(4, {**text("x"), "resultType": "complete"})


def test_an_unsupported_version_gets_the_recorded_one():
    mock = Mock(build(legacy_session()))
    (init,) = _answers(mock, {**INIT, "params": {**INIT["params"], "protocolVersion": "2099-01-01"}})
    assert init["result"]["protocolVersion"] == "2025-11-25"


@pytest.mark.parametrize("method", ["ping", "logging/setLevel"])
def test_housekeeping_the_recording_lacks_is_answered(method):
    mock = Mock(build(legacy_session()))
    answers = _answers(mock, INIT, req(9, method, {"level": "info"} if method != "ping" else None))
    assert answers[-1] == res(9, {})
    assert not mock.stats.misses


def test_each_client_is_served_from_the_session_that_matches_it():
    both = session(("in", INIT), ("out", INIT_OK), ("in", call(2, "echo", {"t": "x"})), ("out", res(2, text("legacy"))),
                   ("in", DISCOVER), ("out", DISCOVER_OK), ("in", modern_call(2, "echo", {"t": "x"})),
                   ("out", res(2, {**text("modern"), "resultType": "complete"})))
    parts = split_sessions(both)
    mock = Mock(build(both), sessions=[(build(p.as_session(both.info)), p.era, p.client) for p in parts])
    modern = _answers(mock, {**DISCOVER, "id": 1}, modern_call(2, "echo", {"t": "x"}))
    assert modern[-1]["result"]["content"][0]["text"] == "modern"
    legacy = _answers(mock, INIT, call(2, "echo", {"t": "x"}))
    assert legacy[-1]["result"]["content"][0]["text"] == "legacy"


# -- the splitter's fast lane ----------------------------------------------------------------------

_PIECES = [("in", INIT), ("out", INIT_OK), ("in", note("notifications/initialized")), ("in", DISCOVER),
           ("out", DISCOVER_OK), ("out", err(1, -32601, "no discover")), ("in", call(2, "echo", {"t": "x"})),
           ("in", modern_call(3, "echo", {"t": "y"})), ("out", res(2, text("x"))),
           ("out", res(3, {"protocolVersion": "1999-01-01"})), ("in", req(4, "tools/list")),
           ("in", [call(5, "a", {}), note("notifications/progress")]), ("out", note("notifications/message")),
           ("in", {"jsonrpc": "2.0", "id": 6, "method": 7})]


def _described(sessions: list[Any]) -> list[tuple[Any, ...]]:
    return [(s.index, s.era, s.protocol, s.client, s.requests) for s in sessions]


@given(st.lists(st.tuples(st.sampled_from(range(len(_PIECES))), st.booleans()), max_size=40))
@settings(max_examples=300, deadline=None)
def test_the_fast_lane_splits_and_describes_as_the_general_path(picks: list[tuple[int, bool]]) -> None:
    """A record of the session already open takes the splitter's fast lane, and the describer stops once
    nothing can change; over any order of handshakes, discovers, calls, answers, batches and stderr lines
    both give what the general path gives: the same sessions, eras, protocols, clients and counts."""
    records: list[Any] = []
    for i, stderr in picks:
        records.append(Message(None, None, None, kind=Kind.STDERR, text="log") if stderr else _PIECES[i])
    whole = session(*[r if isinstance(r, Message) else (r[0], copy.deepcopy(r[1])) for r in records])
    streamed = split_sessions_streaming(whole)
    general = split_sessions(whole)
    assert _described(streamed) == _described(general)


def test_the_handshake_answer_names_the_protocol_and_a_later_result_does_not():
    """A tool's result that happens to carry a ``protocolVersion`` member is not a negotiation."""
    s = session(("in", INIT), ("out", INIT_OK), ("in", call(2, "version", {})),
                ("out", res(2, {"protocolVersion": "1999-01-01", "content": []})))
    for split in (split_sessions, split_sessions_streaming):
        (only,) = split(s)
        assert (only.era, only.protocol, only.client) == ("legacy", "2025-11-25", "t 1")
