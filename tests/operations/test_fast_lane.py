"""The walk's fast lane (``Walker._plain``: a plain request, its plain answer) hands out exactly what the
general path does: the same steps, exchanges and operations, field for field, on arbitrary sessions
(every shape the walk knows: tasks, listen streams, retries, progress tokens, marks, batches, reused and
odd ids, several client sessions) and on the shared fixtures."""

from __future__ import annotations

from dataclasses import fields
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel.model import Kind, Message
from mcpreel.operations.facts import META_RELATED_TASK, META_SUBSCRIPTION_ID
from mcpreel.operations.walk import Exchange, Operation, Step, Walker

FIXTURES = Path("/work/shared/fixtures")


class GeneralWalker(Walker):
    """The walk without its fast lane: every record through the general path."""

    def _plain(self, index: int, msg: Message, raw: dict[str, Any], d: str, session: int) -> list[Step] | None:
        return None


class CountingWalker(Walker):
    """The walk, counting the records its fast lane took."""

    taken = 0

    def _plain(self, index: int, msg: Message, raw: dict[str, Any], d: str, session: int) -> list[Step] | None:
        steps = Walker._plain(self, index, msg, raw, d, session)
        self.taken += steps is not None
        return steps


def _walk(walker: Walker, messages: list[Message]) -> tuple[list[Step], list[Step], Walker]:
    fed: list[Step] = []
    for index, msg in enumerate(messages):
        fed.extend(walker.feed(index, msg))
    return fed, walker.finish(), walker


def _value(v: Any, ids: dict[int, int]) -> Any:
    """A field's value with the walk's own objects named by their numbers, messages by their position."""
    if isinstance(v, Exchange):
        return ("exchange", v.n)
    if isinstance(v, Operation):
        return ("operation", v.n)
    if isinstance(v, Message):
        return ("record", ids[id(v)])
    if isinstance(v, list):
        return [_value(x, ids) for x in v]
    if isinstance(v, tuple):
        return tuple(_value(x, ids) for x in v)
    if isinstance(v, dict):
        return ("payload", id(v))  # the very object: the walk never copies a message
    return (type(v).__name__, v)


def _fields(obj: Any, ids: dict[int, int]) -> dict[str, Any]:
    return {f.name: _value(getattr(obj, f.name), ids) for f in fields(obj)}


def _picture(steps: list[Step], ids: dict[int, int]) -> list[Any]:
    """Every step, and the full state of every exchange and operation it names, as plain values."""
    out: list[Any] = []
    for step in steps:
        out.append(_fields(step, ids))
        for ex in (step.exchange, step.related):
            if ex is not None:
                out.append(_fields(ex, ids))
        if step.operation is not None:
            out.append(_fields(step.operation, ids))
            out.extend(_fields(ex, ids) for ex in (*step.operation.exchanges, *step.operation.children))
    return out


def assert_same(messages: list[Message]) -> int:
    """Walk ``messages`` both ways and compare; return how many records took the fast lane."""
    ids = {id(m): i for i, m in enumerate(messages)}
    fast, fast_end, fw = _walk(Walker(), messages)
    general, general_end, gw = _walk(GeneralWalker(), messages)
    # the pictures are taken after the whole walk: later answers have changed the objects
    assert _picture(fast, ids) == _picture(general, ids)
    assert _picture(fast_end, ids) == _picture(general_end, ids)
    assert [(s.index, s.era, s.protocol, s.client, s.requests, s.http_session) for s in fw.client_sessions()] == \
        [(s.index, s.era, s.protocol, s.client, s.requests, s.http_session) for s in gw.client_sessions()]
    counted = CountingWalker()
    _walk(counted, messages)
    return counted.taken


# -- arbitrary sessions --------------------------------------------------------------------------------
IDS = st.sampled_from([1, 2, 3, "1", "a", 1.0, True, None, [1]])
METHODS = st.sampled_from(["tools/call", "tools/list", "initialize", "server/discover", "tasks/get", "tasks/result",
                           "tasks/cancel", "tasks/update", "subscriptions/listen", "sampling/createMessage",
                           "roots/list", "resources/read", "prompts/get"])
NOTES = st.sampled_from(["notifications/cancelled", "notifications/progress", "notifications/tasks/status",
                         "notifications/tools/list_changed", "notifications/message"])
TASKS = st.sampled_from(["t1", "t2", 7])
PARAMS = st.one_of(
    st.none(),
    st.just({"name": "echo"}),
    st.just({"uri": "file:///a"}),
    st.just("not an object"),
    st.builds(lambda token: {"name": "echo", "_meta": {"progressToken": token}}, st.sampled_from([1, "p", 2.5])),
    st.builds(lambda state: {"name": "echo", "requestState": state}, st.sampled_from(["s1", "s2", 3])),
    st.builds(lambda task: {"taskId": task}, TASKS),
    st.builds(lambda task: {"_meta": {META_RELATED_TASK: {"taskId": task}}}, TASKS),
    st.builds(lambda sub: {"_meta": {META_SUBSCRIPTION_ID: sub}}, IDS),
    st.builds(lambda rid: {"requestId": rid}, IDS),
    st.builds(lambda token: {"progressToken": token, "progress": 1}, st.sampled_from([1, "p"])),
    st.builds(lambda task, status: {"taskId": task, "status": status}, TASKS,
              st.sampled_from(["working", "completed", "failed", "cancelled"])),
)
RESULTS = st.one_of(
    st.just({}),
    st.just({"content": [{"type": "text", "text": "hi"}]}),
    st.just({"isError": True, "content": [{"type": "text", "text": "bad"}]}),
    st.builds(lambda state: {"resultType": "input_required", "requestState": state}, st.sampled_from(["s1", "s2", 3])),
    st.builds(lambda task: {"task": {"taskId": task, "status": "working"}}, TASKS),
    st.builds(lambda task: {"resultType": "task", "taskId": task, "status": "working"}, TASKS),
    st.builds(lambda status: {"status": status, "result": {"content": []}},
              st.sampled_from(["working", "completed", "failed", "cancelled"])),
    st.just({"resultType": "complete"}),
    st.just("not an object"),
)


@st.composite
def members(draw: Any) -> Any:
    shape = draw(st.sampled_from(["request", "request", "response", "response", "error", "note", "odd"]))
    out: dict[str, Any] = {"jsonrpc": "2.0"}
    if shape == "request":
        out["id"] = draw(IDS)
        out["method"] = draw(METHODS)
    elif shape == "note":
        out["method"] = draw(NOTES)
    elif shape == "response":
        if draw(st.booleans()):
            out["id"] = draw(IDS)
        out["result"] = draw(RESULTS)
        return out
    elif shape == "error":
        out["id"] = draw(IDS)
        out["error"] = draw(st.sampled_from([{"code": -32601, "message": "no"}, "text"]))
        return out
    else:
        out["id"] = draw(IDS)
        return out
    params = draw(PARAMS)
    if params is not None:
        out["params"] = params
    return out


@st.composite
def records(draw: Any) -> Message:
    kind = draw(st.sampled_from([Kind.MESSAGE] * 8 + [Kind.STDERR, Kind.TRANSPORT]))
    d = draw(st.sampled_from(["in", "out", "in", "out", "event"]))
    ctx = draw(st.sampled_from([None, None, {"exchange": 1}, {"exchange": 2, "method": "GET"},
                                {"exchange": 1, "headers": {"Mcp-Session-Id": "h1"}},
                                {"exchange": 3, "headers": {"mcp-session-id": "h2"}},
                                {"exchange": 1, "closed": "client", "unanswered": [1, "1"]}]))
    extra = draw(st.sampled_from([None, None, {"file": "a.reel.jsonl"}, {"file": "b.reel.jsonl"}, {"file": 3}]))
    t = draw(st.one_of(st.none(), st.integers(0, 10_000)))
    if kind != Kind.MESSAGE:
        return Message(d, None, t=t, kind=kind, ctx=ctx, text="x", extra=extra)
    raw: Any = draw(members())
    if draw(st.integers(0, 9)) == 0:
        raw = draw(st.lists(members(), max_size=3))
    marks = draw(st.sampled_from(["", "", "", "dropped", "modified", "injected"]))
    return Message(d, raw, t=t, ctx=ctx, extra=extra, source=draw(st.integers(1, 99)), dropped=marks == "dropped",
                   modified=marks == "modified", injected=marks == "injected",
                   original={"jsonrpc": "2.0", "id": 1, "method": "x"} if marks == "modified" else None)


@st.composite
def plain_pairs(draw: Any) -> list[Message]:
    """Mostly plain requests and their answers (the fast lane's case), some in disorder, among the rest."""
    out: list[Message] = [Message("in", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}, t=0)]
    for i in range(draw(st.integers(0, 12))):
        rid = draw(st.sampled_from([i + 1, str(i + 1), 1]))
        out.append(Message("in", {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": "a"}}, t=i))
        if draw(st.booleans()):
            out.append(draw(records()))
        if draw(st.integers(0, 4)):
            result = draw(RESULTS)
            out.append(Message("out", {"jsonrpc": "2.0", "id": rid, "result": result}, t=i + 1))
            if isinstance(result, dict) and draw(st.booleans()):  # what joins it later: a retry, a poll
                state, task = result.get("requestState"), result.get("taskId", result.get("task", {}).get("taskId"))
                later = {"requestState": state} if state is not None else {"taskId": task}
                method = "tools/call" if state is not None else draw(st.sampled_from(["tasks/get", "tasks/result"]))
                rid = f"r{i}"
                out.append(Message("in", {"jsonrpc": "2.0", "id": rid, "method": method, "params": later}, t=i + 2))
                out.append(Message("out", {"jsonrpc": "2.0", "id": rid, "result": draw(RESULTS)}, t=i + 3))
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(records(), max_size=30))
def test_fast_lane_matches_the_general_path_on_arbitrary_sessions(messages: list[Message]) -> None:
    assert_same(messages)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_pairs(), st.lists(records(), max_size=10))
def test_fast_lane_matches_the_general_path_on_mostly_plain_sessions(pairs: list[Message],
                                                                    rest: list[Message]) -> None:
    assert_same(pairs + rest + pairs)


def test_fast_lane_takes_the_plain_records_and_only_them() -> None:
    plain = [Message("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}}, t=1),
             Message("out", {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}, t=2),
             Message("in", {"jsonrpc": "2.0", "id": "x", "method": "tools/list"}, t=3),
             Message("out", {"jsonrpc": "2.0", "id": "x", "error": {"code": 1, "message": "m"}}, t=4)]
    assert assert_same(plain) == 4
    general = [Message("in", {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                              "params": {"name": "a", "_meta": {"progressToken": 1}}}, t=1),
               Message("out", {"jsonrpc": "2.0", "id": 2, "result": {"task": {"taskId": "t", "status": "working"}}}),
               Message("in", {"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": "t"}}),
               Message("in", {"jsonrpc": "2.0", "id": 4, "method": "subscriptions/listen"}),
               Message("in", {"jsonrpc": "2.0", "id": 5, "method": "tools/call"}, dropped=True),
               Message("out", {"jsonrpc": "2.0", "id": 6, "result": {}}),  # an orphan
               Message("out", {"jsonrpc": "2.0", "id": 7, "method": "roots/list"}),
               Message("in", {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}),
               Message("in", [{"jsonrpc": "2.0", "id": 8, "method": "tools/list"}])]
    assert assert_same(general) == 0


def _fixture_sessions() -> list[Path]:
    if not FIXTURES.is_dir():
        return []
    return sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json", ".har")
                  and p.stat().st_size < 5_000_000)


@pytest.mark.skipif(not _fixture_sessions(), reason="the shared fixtures are not here")
def test_fast_lane_matches_the_general_path_on_the_shared_fixtures() -> None:
    from mcpreel.formats import open_session

    walked = 0
    for path in _fixture_sessions():
        try:
            session, _ = open_session(path)
        except Exception:  # not a session file (a schema, a README's data): nothing to walk
            continue
        assert_same(list(session))
        walked += 1
    assert walked >= 5


# -- the lean walk's own lane (Walker(pairing_only=True)._feed_lean) -----------------------------------

class LeanWithoutLane(Walker):
    """The lean walk with every record through :meth:`Walker.feed` (its general path and ``_pair_plain``)."""

    def __init__(self) -> None:
        super().__init__(pairing_only=True)
        self.feed = partial(Walker.feed, self)  # type: ignore[method-assign]


def assert_lean_same(messages: list[Message]) -> int:
    """The lean walk with and without its lane, compared field for field; how many records took the lane."""
    ids = {id(m): i for i, m in enumerate(messages)}
    lean = Walker(pairing_only=True)
    general_calls = 0
    place = lean._place

    def counted(msg: Message, http_ids: dict[Any, str]) -> Any:
        nonlocal general_calls
        general_calls += 1
        return place(msg, http_ids)

    lean._place = counted  # type: ignore[method-assign]  # only the general path places through it
    fast, fast_end, fw = _walk(lean, messages)
    general, general_end, gw = _walk(LeanWithoutLane(), messages)
    assert _picture(fast, ids) == _picture(general, ids)
    assert _picture(fast_end, ids) == _picture(general_end, ids)
    assert [(s.index, s.era, s.protocol, s.client, s.requests, s.http_session) for s in fw.client_sessions()] == \
        [(s.index, s.era, s.protocol, s.client, s.requests, s.http_session) for s in gw.client_sessions()]
    assert fw.splitter.counts == gw.splitter.counts
    assert {k: sorted(v) for k, v in fw.pending.items() if v} == {k: sorted(v) for k, v in gw.pending.items() if v}
    return len(messages) - general_calls


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(records(), max_size=30))
def test_lean_lane_matches_the_lean_general_path_on_arbitrary_sessions(messages: list[Message]) -> None:
    assert_lean_same(messages)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_pairs(), st.lists(records(), max_size=10))
def test_lean_lane_matches_the_lean_general_path_on_mostly_plain_sessions(pairs: list[Message],
                                                                          rest: list[Message]) -> None:
    assert_lean_same(pairs + rest + pairs)


def test_lean_lane_takes_plain_records_reused_ids_and_server_requests() -> None:
    init = [Message("in", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}, t=0),
            Message("out", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18"}}, t=0)]
    plain = [Message("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}}, t=1),
             Message("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "b"}}, t=2),
             Message("out", {"jsonrpc": "2.0", "id": 7, "method": "roots/list"}, t=3),
             Message("in", {"jsonrpc": "2.0", "id": 7, "result": {"roots": []}}, t=4),
             Message("out", {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}, t=5),
             Message("out", {"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "m"}}, t=6)]
    assert assert_lean_same(init + plain) == 1 + len(plain)  # the initialize's answer too
    # the lane pairs a reused pending id first in, first out, as the general path does
    w = Walker(pairing_only=True)
    answered = [(s.exchange.index, s.index) for i, m in enumerate(init + plain) for s in w.feed(i, m)
                if s.kind == "response" and s.exchange is not None]
    assert answered == [(0, 1), (4, 5), (2, 6), (3, 7)]


def test_lean_factories_make_what_the_classes_make() -> None:
    """:func:`_lean_exchange` and :func:`_lean_step` set every field as the dataclasses' own ``__init__``
    does (a field added to either class and not to its factory fails here)."""
    from mcpreel.operations.walk import _lean_exchange, _lean_step

    raw = {"jsonrpc": "2.0", "id": 3, "method": "tools/call"}
    msg = Message("in", raw, t=5, source=9)
    made = _lean_exchange(4, 2, "in", "tools/call", 3, raw, 5, 1, 9)
    want = Exchange(4, 2, "in", "tools/call", 3, raw, 5, 1, None, 9, None)
    assert {f.name: getattr(made, f.name) for f in fields(Exchange)} == \
        {f.name: getattr(want, f.name) for f in fields(Exchange)}
    step = _lean_step("request", 2, msg, raw, made, 1)
    assert {f.name: getattr(step, f.name) for f in fields(Step)} == \
        {f.name: getattr(Step("request", 2, msg, raw, made, None, 1), f.name) for f in fields(Step)}


@pytest.mark.skipif(not _fixture_sessions(), reason="the shared fixtures are not here")
def test_lean_lane_matches_the_lean_general_path_on_the_shared_fixtures() -> None:
    from mcpreel.formats import open_session

    walked = taken = 0
    for path in _fixture_sessions():
        try:
            session, _ = open_session(path)
        except Exception:  # not a session file (a schema, a README's data): nothing to walk
            continue
        taken += assert_lean_same(list(session))
        walked += 1
    assert walked >= 5 and taken > 0
