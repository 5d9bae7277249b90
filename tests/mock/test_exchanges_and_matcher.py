"""Pairing a session into exchanges, and matching requests against them."""

from __future__ import annotations

from mcpreel.mock.matcher import INVALID_PARAMS, METHOD_NOT_FOUND, Matcher, Miss, RecordingIndex
from mcpreel.model import Message
from mcpreel.operations.cassette import build
from tests.replay.helpers import INIT, INIT_OK, call, handshake, note, req, res, session, text


def test_requests_pair_with_responses_by_direction_and_id():
    # the server's sampling request uses id 2 too: pairing must keep the two id spaces apart
    s = session(*handshake(),
                ("in", call(2, "ask", {"q": "?"})),
                ("out", req(2, "sampling/createMessage", {"messages": []})),
                ("in", res(2, {"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "m"})),
                ("out", res(2, text("llm said 42"))))
    cas = build(s)
    assert [ex.method for ex in cas.exchanges] == ["initialize", "tools/call"]
    ask = cas.exchanges[1]
    assert ask.response["result"]["content"][0]["text"] == "llm said 42"
    assert [m["method"] for m in ask.before] == ["sampling/createMessage"]
    (sx,) = cas.server_exchanges
    assert sx.response["result"]["model"] == "m"
    assert ask.latency_ms == 30


def test_server_messages_keep_their_position():
    s = session(("in", INIT), ("out", INIT_OK), ("in", note("notifications/initialized")),
                ("out", note("notifications/tools/list_changed")),
                ("in", call(2, "slow", {}, progressToken="p")), ("in", call(3, "fast", {})),
                ("out", note("notifications/progress", {"progressToken": "p", "progress": 1})),
                ("out", note("notifications/message", {"level": "info", "data": "x"})),
                ("out", res(3, text("fast"))), ("out", res(2, text("slow"))),
                ("out", note("notifications/resources/list_changed")))
    cas = build(s)
    initialized = cas.items[1]
    assert initialized.method == "notifications/initialized"
    assert [m["method"] for m in initialized.after] == ["notifications/tools/list_changed"]
    slow, fast = cas.exchanges[1], cas.exchanges[2]
    assert [m["method"] for m in slow.before] == ["notifications/progress"]  # by its token
    assert [m["method"] for m in fast.before] == ["notifications/message"]  # the last request waiting
    assert [m["method"] for m in fast.after + slow.after] == ["notifications/resources/list_changed"]
    # pacing: fast and slow were in flight together, so nothing waits between them
    assert slow.answered_before_item == fast.answered_before_item == len(cas.items)


def test_dropped_messages_are_skipped_and_edits_play_unless_original():
    edited = Message("in", call(2, "echo", {"text": "EDITED"}), 5, modified=True, original=call(2, "echo", {"text": "orig"}))
    dropped = Message("in", call(3, "echo", {"text": "never sent"}), 6, dropped=True)
    s = session(*handshake(), edited, ("out", res(2, text("EDITED"))), dropped)
    cas = build(s)
    assert cas.skipped_dropped == 1
    assert [ex.request["params"]["arguments"]["text"] for ex in cas.exchanges[1:]] == ["EDITED"]
    assert build(s, original=True).exchanges[1].request["params"]["arguments"]["text"] == "orig"


def test_batches_are_split_into_members():
    s = session(("in", [req(1, "ping"), req(2, "tools/list")]), ("out", [res(2, {"tools": []}), res(1, {})]))
    cas = build(s)
    assert [(ex.method, ex.response is not None) for ex in cas.exchanges] == [("ping", True), ("tools/list", True)]


def _index(*exchanges_msgs, mode="method-params"):
    records = []
    for request, result in exchanges_msgs:
        records += [("in", request), ("out", res(request["id"], result))]
    return RecordingIndex(build(session(*records)).exchanges, mode)


def test_identical_requests_answer_in_recorded_order_then_repeat_the_last():
    index = _index((call(1, "n", {}), text("one")), (call(2, "n", {}), text("two")))
    m = Matcher(index)
    got = [m.match(call(9, "n", {})).response["result"]["content"][0]["text"] for _ in range(3)]
    assert got == ["one", "two", "two"]
    m = Matcher(index, repeat=False)
    m.match(call(9, "n", {}))
    m.match(call(9, "n", {}))
    miss = m.match(call(9, "n", {}))
    assert isinstance(miss, Miss) and "--no-repeat" in miss.reason


def test_volatile_meta_does_not_matter_but_strict_mode_sees_it():
    index = _index((call(1, "echo", {"t": 1}, progressToken=1), text("x")))
    assert not isinstance(Matcher(index).match(call(5, "echo", {"t": 1}, progressToken=99, traceparent="z")), Miss)
    strict = _index((call(1, "echo", {"t": 1}, progressToken=1), text("x")), mode="strict")
    assert isinstance(Matcher(strict).match(call(5, "echo", {"t": 1}, progressToken=99)), Miss)
    assert not isinstance(Matcher(strict).match(call(5, "echo", {"t": 1}, progressToken=1)), Miss)


def test_initialize_matches_on_method_alone():
    index = _index((INIT, INIT_OK["result"]))
    other = req(7, "initialize", {"protocolVersion": "2024-11-05", "clientInfo": {"name": "someone else"}})
    assert Matcher(index).match(other).method == "initialize"


def test_a_miss_names_the_closest_recorded_request_and_the_difference():
    index = _index((call(1, "echo", {"text": "hello", "n": 1}), text("a")), (call(2, "echo", {"text": "zzz", "n": 2}), text("b")),
                   (call(3, "add", {"a": 1}), text("c")))
    miss = Matcher(index).match(call(9, "echo", {"text": "hello", "n": 5}))
    assert isinstance(miss, Miss) and miss.code == INVALID_PARAMS
    assert miss.closest.position == 0
    assert [(d.path, d.recorded, d.new) for d in miss.differences] == [("$.params.arguments.n", 1, 5)]
    assert "request #1 (line 2) tools/call echo" in miss.reason and "$.params.arguments.n: 1 -> 5" in miss.reason
    answer = miss.error(9)
    assert answer["id"] == 9 and answer["error"]["code"] == -32602
    assert answer["error"]["data"]["closest"]["params"]["arguments"]["text"] == "hello"
    unknown = Matcher(index).match(req(9, "prompts/list"))
    assert unknown.code == METHOD_NOT_FOUND and "tools/call" in unknown.reason


def test_a_miss_looks_for_the_closest_among_calls_of_the_same_tool_first():
    index = _index((call(1, "divide", {"a": 1, "b": 0}), text("x")), (call(2, "add", {"a": 10, "b": 20, "c": 1}), text("y")),
                   (call(3, "echo", {"text": "hi"}), text("z")))
    # "divide" differs from this call in fewer places than the recorded "add" does, but it is another tool
    miss = Matcher(index).match(call(9, "add", {"a": 1, "b": 1}))
    assert isinstance(miss, Miss) and miss.closest.subject == "add"
    assert miss.reason.startswith("no recorded tools/call matches these params; closest is request #2")
    # a tool the recording never called is said as such, with the tools it did call
    miss = Matcher(index).match(call(9, "countdown", {}))
    assert miss.code == INVALID_PARAMS
    assert miss.reason.startswith("no recorded tools/call of 'countdown' (the recording has tools/call of: "
                                  "divide, add, echo); closest is request #")


def test_a_miss_points_into_the_file_in_the_file_s_own_units(fixtures_dir):
    from mcpreel.formats import open_session

    qai, _ = open_session(fixtures_dir / "qai" / "qai_session_fastmcp.json")
    slow = next(ex for ex in build(qai).exchanges if ex.subject == "slow_progress")
    assert slow.label() == "request #5 (message 12) tools/call slow_progress"  # messages[11]: a JSON file has no lines
    envelope, _ = open_session(fixtures_dir / "assay-docs" / "import-formats@HEAD__03.json")
    assert "(entry " in build(envelope).exchanges[0].label()
    reel = session(("in", call(1, "echo", {})), ("out", res(1, text("x"))))
    assert build(reel).exchanges[0].label() == "request #1 (line 2) tools/call echo"


def test_sequential_mode_follows_recorded_order_whatever_the_params():
    index = _index((call(1, "a", {"x": 1}), text("first")), (req(2, "tools/list"), {"tools": []}),
                   (call(3, "b", {}), text("third")), mode="sequential")
    m = Matcher(index)
    assert m.match(call(7, "whatever", {"y": 2})).response["result"]["content"][0]["text"] == "first"
    miss = m.match(call(8, "b", {}))
    assert isinstance(miss, Miss) and "tools/list" in miss.reason
    assert m.match(req(8, "tools/list")).method == "tools/list"
    assert m.match(call(9, "b", {})).position == 2
