"""The mock engine, driven in memory: answers, positions, server requests, misses."""

from __future__ import annotations

import asyncio

import pytest

from mcpreel.errors import UsageError
from mcpreel.mock.engine import Mock, MockOptions
from mcpreel.operations.cassette import build
from tests.replay.helpers import INIT, INIT_OK, call, handshake, note, req, res, session, text


def run(mock: Mock, *messages, answers: dict | None = None):
    """Feed messages to one connection; answer server requests from ``answers`` (method -> result)."""
    out: list = []

    async def main():
        conn = mock.connection()
        pending = []

        def emit(m):
            out.append(m)
            if isinstance(m, dict) and "method" in m and "id" in m and answers is not None:
                conn.receive(res(m["id"], answers[m["method"]]), emit)

        for m in messages:
            p = conn.receive(m, emit)
            if p is not None:
                pending.append(asyncio.ensure_future(p))
        if pending:
            await asyncio.gather(*pending)

    asyncio.run(main())
    return out


def test_answers_carry_the_incoming_id_and_the_recorded_result():
    mock = Mock(build(session(*handshake(), ("in", call(2, "echo", {"t": "x"})), ("out", res(2, text("x"))))))
    out = run(mock, req("abc", "initialize", {"clientInfo": {"name": "other"}}), call(77, "echo", {"t": "x"}))
    assert [m["id"] for m in out] == ["abc", 77]
    assert out[1]["result"] == text("x")
    assert mock.stats.answered == 2 and not mock.stats.misses


def test_notifications_and_server_requests_go_out_in_their_recorded_position():
    s = session(*handshake(),
                ("out", note("notifications/tools/list_changed")),
                ("in", call(2, "ask", {"q": "?"}, progressToken=5)),
                ("out", note("notifications/progress", {"progressToken": 5, "progress": 1})),
                ("out", req(0, "sampling/createMessage", {"messages": []})),
                ("in", res(0, {"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "m"})),
                ("out", res(2, text("llm said 42"))))
    mock = Mock(build(s))
    out = run(mock, INIT, note("notifications/initialized"), call(9, "ask", {"q": "?"}, progressToken="mine"),
              answers={"sampling/createMessage": {"role": "assistant", "content": {"type": "text", "text": "x"}}})
    kinds = [m.get("method") or f"answer {m['id']}" for m in out]
    assert kinds == ["answer 1", "notifications/tools/list_changed", "notifications/progress",
                     "sampling/createMessage", "answer 9"]
    assert out[3]["id"] != 0  # our own id space, never a recorded id that could collide


def test_recorded_progress_follows_the_incoming_progress_token():
    # the SDK client uses its request id as progressToken: a served recording must report progress on the
    # token this client chose, or the client drops it; a client that asked for no progress gets none
    s = session(*handshake(),
                ("in", call(6, "countdown", {"steps": 2}, progressToken=6)),
                ("out", note("notifications/progress", {"progressToken": 6, "progress": 1, "total": 2})),
                ("out", note("notifications/message", {"level": "info", "data": "half"})),
                ("out", note("notifications/progress", {"progressToken": 6, "progress": 2, "total": 2})),
                ("out", res(6, text("done"))))
    mock = Mock(build(s))
    out = run(mock, INIT, call(2, "countdown", {"steps": 2}, progressToken=2))
    progress = [m["params"] for m in out if m.get("method") == "notifications/progress"]
    assert progress == [{"progressToken": 2, "progress": 1, "total": 2}, {"progressToken": 2, "progress": 2, "total": 2}]
    assert [m.get("method") or m["id"] for m in out[1:]] == [
        "notifications/progress", "notifications/message", "notifications/progress", 2]
    out = run(mock, INIT, call(3, "countdown", {"steps": 2}))
    assert [m.get("method") or m["id"] for m in out[1:]] == ["notifications/message", 3]
    # the recording itself is left as it was
    assert mock.cassette.exchanges[1].before[0]["params"]["progressToken"] == 6


def test_a_recorded_server_request_waits_for_the_client_then_gives_up():
    s = session(*handshake(), ("in", call(2, "ask", {})), ("out", req(0, "roots/list")),
                ("in", res(0, {"roots": []})), ("out", res(2, text("done"))))
    events: list[str] = []
    mock = Mock(build(s), MockOptions(answer_timeout=0.05), on_event=events.append)
    out = run(mock, INIT, call(3, "ask", {}))  # this client never answers roots/list
    assert out[-1] == res(3, text("done"))
    assert any("did not answer the recorded roots/list" in e for e in events)


def test_misses_are_errors_naming_the_closest_and_fail_mode_marks_the_run():
    s = session(*handshake(), ("in", call(2, "echo", {"t": "x"})), ("out", res(2, text("x"))))
    events: list[str] = []
    mock = Mock(build(s), MockOptions(on_miss="fail"), on_event=events.append)
    out = run(mock, INIT, call(5, "echo", {"t": "y"}), req(6, "resources/list"))
    assert out[1]["error"]["code"] == -32602 and "closest is request #2" in out[1]["error"]["message"]
    assert out[2]["error"]["code"] == -32601 and "resources/list" in out[2]["error"]["message"]
    assert len(mock.stats.misses) == 2 and mock.failed
    assert len(events) == 2 and events[0].startswith("miss: tools/call id=5")
    assert not Mock(build(s)).failed


def test_a_recording_without_initialize_still_lets_a_client_in():
    s = session(("in", call(2, "echo", {"t": "x"})), ("out", res(2, text("x"))), ("in", req(3, "resources/list")),
                ("out", res(3, {"resources": []})))
    out = run(Mock(build(s)), req(1, "initialize", {"protocolVersion": "2025-06-18"}), req(2, "ping"))
    result = out[0]["result"]
    assert result["protocolVersion"] == "2025-06-18"
    assert set(result["capabilities"]) == {"tools", "resources"}
    assert out[1] == res(2, {})  # ping is answered even though the recording has none


def test_unanswered_recorded_requests_stay_unanswered():
    s = session(*handshake(), ("in", call(2, "hang", {})))
    events: list[str] = []
    mock = Mock(build(s), on_event=events.append)
    out = run(mock, INIT, call(8, "hang", {}))
    assert [m["id"] for m in out] == [1]
    assert mock.stats.unanswered == 1 and "has no answer in the recording" in events[0]


def test_batches_get_one_batch_answer_and_bad_input_an_error():
    s = session(*handshake(), ("in", req(2, "tools/list")), ("out", res(2, {"tools": []})))
    out = run(Mock(build(s)), [req("a", "tools/list"), req("b", "ping")], "not an object")
    (batch,) = [m for m in out if isinstance(m, list)]
    assert batch == [res("a", {"tools": []}), res("b", {})]
    (bad,) = [m for m in out if isinstance(m, dict)]
    assert bad["error"]["code"] == -32600


def test_unknown_policy_is_refused_as_a_usage_error():
    with pytest.raises(UsageError, match="on-miss"):
        Mock(build(session(("in", INIT), ("out", INIT_OK))), MockOptions(on_miss="ignore"))


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                       max_leaves=10)
_messages = st.one_of(
    _values,
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": st.integers() | st.text(max_size=3),
                           "method": st.sampled_from(["initialize", "tools/call", "tools/list", "ping", "x/y"]),
                           "params": _values}),
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "method": st.text(max_size=10), "params": _values}),
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": _values, "result": _values}),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_messages, max_size=6))
def test_any_input_gets_answers_never_an_exception(messages):
    s = session(*handshake(), ("in", call(2, "echo", {"t": "x"})), ("out", res(2, text("x"))))
    out = run(Mock(build(s)), *messages)
    for m in out:
        assert isinstance(m, (dict, list))
    requests = [m for m in messages if isinstance(m, dict) and "method" in m and "id" in m]
    answered = [m for m in out if isinstance(m, dict) and "method" not in m]
    ids = [m["id"] for m in answered]
    for r in requests:  # every request gets an answer under its own id
        assert r["id"] in ids
