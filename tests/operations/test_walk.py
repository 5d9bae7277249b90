"""The operations walk on sessions built by hand: tasks (both forms), listen streams, multi-round-trip
requests, client sessions that reuse ids, the control channel's marks, nested server requests; and, on
arbitrary message lists, that it never raises and accounts for every JSON-RPC member exactly once."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel.model import Kind, Message
from mcpreel.operations.facts import META_RELATED_TASK, META_SUBSCRIPTION_ID
from mcpreel.operations.walk import Operation, Step, Walker

from .helpers import T0, c, err, note, ok, req, s


class Walked:
    def __init__(self, messages: list[Message]) -> None:
        w = Walker()
        self.steps: list[Step] = []
        for index, msg in enumerate(messages):
            self.steps.extend(w.feed(index, msg))
        self.fed = len(self.steps)
        self.steps.extend(w.finish())
        self.sessions = w.client_sessions()
        self.ops: list[Operation] = [st.operation for st in self.steps if st.kind == "operation" and st.operation]

    def kinds(self, *kinds: str) -> list[Step]:
        return [st for st in self.steps if st.kind in kinds]

    def op(self, method: str, n: int = 0) -> Operation:
        """The ``n``-th operation of ``method`` in the order opened (``ops`` is the order handed out)."""
        return sorted((o for o in self.ops if o.method == method), key=lambda o: o.n)[n]


INIT = [c(req(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {"tasks": {}},
                                 "clientInfo": {"name": "t", "version": "1"}})),
        s(ok(1, {"protocolVersion": "2025-11-25", "capabilities": {"tasks": {"requests": {"tools": {"call": {}}}}},
                 "serverInfo": {"name": "srv", "version": "1"}}), 5),
        c(note("notifications/initialized"), 6)]


# -- tasks ------------------------------------------------------------------------------------------------

def _task(status: str, **more: Any) -> dict[str, Any]:
    return {"taskId": "T1", "status": status, "ttl": 60000, "createdAt": "2026-01-01T00:00:00Z",
            "lastUpdatedAt": "2026-01-01T00:00:00Z", "pollInterval": 500, **more}


def test_a_2025_11_25_task_is_one_operation_with_its_polls_status_and_result():
    final = {"content": [{"type": "text", "text": "report"}], "_meta": {META_RELATED_TASK: {"taskId": "T1"}}}
    w = Walked([*INIT,
                c(req(2, "tools/call", {"name": "research", "arguments": {"topic": "x"}, "task": {"ttl": 60000}}), 10),
                s(note("notifications/tasks/status", _task("working")), 11),
                s(ok(2, {"task": _task("working")}), 12),
                c(req(3, "tasks/get", {"taskId": "T1"}), 500),
                s(ok(3, _task("working")), 502),
                s(note("notifications/tasks/status", _task("completed")), 900),
                c(req(4, "tasks/get", {"taskId": "T1"}), 1000),
                s(ok(4, _task("completed")), 1003),
                c(req(5, "tasks/result", {"taskId": "T1"}), 1010),
                s(ok(5, final), 1020)])
    assert [o.method for o in w.ops] == ["initialize", "tools/call"]
    task = w.op("tools/call")
    assert task.kind == "task" and task.task_id == "T1" and task.target == "research"
    assert [(ex.method, ex.role) for ex in task.exchanges] == [
        ("tools/call", "call"), ("tasks/get", "poll"), ("tasks/get", "poll"), ("tasks/result", "result")]
    assert task.polls == 2 and task.rounds == 1
    assert [n["method"] for _, n in task.notes] == ["notifications/tasks/status"] * 2
    assert task.task_statuses[-1] == "completed" and task.task_status == "completed"
    assert task.complete and task.ended_by == "task-result"
    assert task.status() == ("ok", None, None) and task.result == ok(5, final)
    assert task.latency_ms == 1010  # from the call to the answer that carries the result, not the handle's 2 ms
    # every poll is a request and a response of the walk, but no operation of its own
    assert not w.kinds("orphan", "unanswered")
    assert len(w.kinds("request")) == 5 and len(w.kinds("response")) == 5
    # the step that completed it hands it out then, once
    (done,) = [st for st in w.steps if st.kind == "operation" and st.operation is task]
    assert done.index == 12


def test_a_task_the_client_cancels_ends_at_the_cancel_and_failed_ones_fail():
    w = Walked([*INIT,
                c(req(2, "tools/call", {"name": "research", "arguments": {}, "task": {}}), 10),
                s(ok(2, {"task": _task("working")}), 12),
                c(req(3, "tasks/cancel", {"taskId": "T1"}), 20),
                s(ok(3, _task("cancelled")), 25)])
    task = w.op("tools/call")
    assert task.kind == "task" and [ex.role for ex in task.exchanges] == ["call", "cancel"]
    assert task.complete and task.ended_by == "cancel" and task.task_status == "cancelled"
    assert task.status() == ("error", None, "task cancelled")
    failed = Walked([*INIT,
                     c(req(2, "tools/call", {"name": "research", "arguments": {}, "task": {}}), 10),
                     s(ok(2, {"task": _task("working")}), 12),
                     s(note("notifications/tasks/status", _task("failed")), 30)])
    task = failed.op("tools/call")
    assert task.status() == ("error", None, "task failed") and not task.complete
    (open_step,) = [st for st in failed.steps[failed.fed:] if st.kind == "operation"]
    assert open_step.operation is task  # handed out at the end, still open


def test_a_task_id_joins_only_its_own_client_session():
    """Two clients whose tasks both got id T1 (two servers behind one file): polls join their own task."""
    second = [c(req(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}), 2000),
              s(ok(1, {"protocolVersion": "2025-11-25", "capabilities": {}}), 2001)]
    w = Walked([*INIT,
                c(req(2, "tools/call", {"name": "a", "task": {}}), 10), s(ok(2, {"task": _task("working")}), 11),
                *second,
                c(req(2, "tools/call", {"name": "b", "task": {}}), 2010), s(ok(2, {"task": _task("working")}), 2011),
                c(req(3, "tasks/result", {"taskId": "T1"}), 2020), s(ok(3, {"content": []}), 2030)])
    a, b = w.op("tools/call"), w.op("tools/call", 1)
    assert (a.session, b.session) == (1, 2) and len(w.sessions) == 2
    assert [ex.role for ex in a.exchanges] == ["call"] and not a.complete
    assert [ex.role for ex in b.exchanges] == ["call", "result"] and b.complete


def test_a_2026_07_28_task_extension_ends_at_the_tasks_get_that_carries_the_result():
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    w = Walked([c(req(1, "server/discover", {"_meta": meta})), s(ok(1, {"supportedVersions": ["2026-07-28"]}), 3),
                c(req(2, "tools/call", {"name": "render", "arguments": {}, "_meta": meta}), 10),
                s(ok(2, {"resultType": "task", "taskId": "X9", "status": "working", "pollInterval": 100}), 12),
                c(req(3, "tasks/get", {"taskId": "X9", "_meta": meta}), 120),
                s(ok(3, {"taskId": "X9", "status": "working"}), 121),
                c(req(4, "tasks/get", {"taskId": "X9", "_meta": meta}), 240),
                s(ok(4, {"taskId": "X9", "status": "completed",
                         "result": {"content": [{"type": "text", "text": "boom"}], "isError": True}}), 250)])
    task = w.op("tools/call")
    assert task.kind == "task" and task.task_id == "X9" and task.polls == 2
    assert task.complete and task.ended_by == "terminal-status"
    assert task.status() == ("isError", None, "boom")  # the outcome inside the terminal tasks/get
    assert task.latency_ms == 240 and task.final is task.exchanges[-1]
    assert [o.method for o in w.ops] == ["server/discover", "tools/call"]


# -- listen streams ------------------------------------------------------------------------------------------

def _tagged(method: str, sub: Any, **params: Any) -> dict[str, Any]:
    return note(method, {**params, "_meta": {META_SUBSCRIPTION_ID: sub}})


def test_a_listen_stream_holds_its_ack_and_notifications_and_ends_at_the_clients_cancel():
    w = Walked([c(req(1, "server/discover", {})), s(ok(1, {"supportedVersions": ["2026-07-28"]}), 2),
                c(req("listen-1", "subscriptions/listen", {"notifications": {"toolsListChanged": True}}), 10),
                s(_tagged("notifications/subscriptions/acknowledged", "listen-1", notifications={"toolsListChanged": True}), 11),
                c(req(2, "tools/call", {"name": "touch", "arguments": {}}), 20),
                s(_tagged("notifications/tools/list_changed", "listen-1"), 21),
                s(ok(2, {"content": []}), 22),
                c(note("notifications/cancelled", {"requestId": "listen-1", "reason": "done"}), 30)])
    stream = w.op("subscriptions/listen")
    assert stream.kind == "listen" and [ex.role for ex in stream.exchanges] == ["listen"]
    assert [n["method"] for _, n in stream.notes] == ["notifications/subscriptions/acknowledged",
                                                      "notifications/tools/list_changed"]
    assert stream.complete and stream.ended_by == "cancel"
    assert stream.status()[0] == "ended" and stream.latency_ms is None
    call = w.op("tools/call")
    assert call.notes == [] and call.status()[0] == "ok"  # the tagged change belongs to the stream
    # at the end the stream is "ended", never "unanswered"
    assert [st.kind for st in w.steps[w.fed:] if st.exchange is not None] == ["ended"]
    assert not w.kinds("unanswered", "orphan")
    changed = [st for st in w.kinds("notification") if st.member["method"] == "notifications/tools/list_changed"]
    assert changed[0].operation is stream and changed[0].related is stream.opening


def test_over_http_a_listen_stream_ends_when_the_client_closes_its_stream():
    """The SDK ends a listen over Streamable HTTP by closing the listen request's SSE response (closing is
    cancelling there); the recorder writes a transport record naming the request ids left unanswered."""
    w = Walked([c(req("listen-1", "subscriptions/listen", {"notifications": {}}), 10, ctx=_http(None, 2)),
                s(_tagged("notifications/subscriptions/acknowledged", "listen-1"), 11, ctx={"exchange": 2, "stream": 2}),
                c(req(2, "tools/call", {"name": "slow"}), 12, ctx=_http(None, 3)),
                Message("in", None, t=T0 + 20, kind=Kind.TRANSPORT,
                        ctx={"method": "POST", "exchange": 2, "closed": "client", "unanswered": ["listen-1"]}),
                Message("in", None, t=T0 + 21, kind=Kind.TRANSPORT,
                        ctx={"method": "POST", "exchange": 3, "closed": "client", "unanswered": ["2"]})])
    stream, call = w.op("subscriptions/listen"), w.op("tools/call")
    assert stream.complete and stream.ended_by == "cancel" and stream.status()[0] == "ended"
    assert call.opening.cancelled and call.status()[0] == "cancelled"
    assert [st.kind for st in w.steps[w.fed:] if st.exchange is not None] == ["ended", "unanswered"]
    closing = [st for st in w.steps[:w.fed] if st.index == 3]
    assert [st.kind for st in closing] == ["record", "operation"] and closing[1].operation is stream


def test_a_listen_stream_never_cancelled_is_unanswered():
    w = Walked([c(req("L", "subscriptions/listen", {"notifications": {}}), 10),
                s(_tagged("notifications/subscriptions/acknowledged", "L"), 11)])
    stream = w.op("subscriptions/listen")
    assert stream.status()[0] == "unanswered" and not stream.complete
    assert [st.kind for st in w.steps[w.fed:] if st.exchange is not None] == ["unanswered"]


# -- multi-round-trip -----------------------------------------------------------------------------------------

def test_an_input_required_answer_and_its_retry_are_one_operation_of_two_rounds():
    w = Walked([c(req(1, "tools/call", {"name": "greet", "arguments": {}}), 0),
                s(ok(1, {"resultType": "input_required", "requestState": "S1",
                         "inputRequests": {"who": {"method": "elicitation/create", "params": {}}}}), 5),
                c(req(2, "tools/call", {"name": "greet", "arguments": {}, "requestState": "S1",
                                        "inputResponses": {"who": {"action": "accept", "content": {"name": "Bob"}}}}), 40),
                s(ok(2, {"content": [{"type": "text", "text": "hello Bob"}], "resultType": "complete"}), 45),
                c(req(3, "tools/call", {"name": "greet", "arguments": {}, "requestState": "S1"}), 50),
                s(ok(3, {"content": []}), 51)])
    greet = w.op("tools/call")
    assert greet.kind == "multi-round-trip" and greet.rounds == 2
    assert [(ex.id, ex.role) for ex in greet.exchanges] == [(1, "call"), (2, "round")]
    assert greet.complete and greet.ended_by == "answer" and greet.status()[0] == "ok"
    assert greet.latency_ms == 45 and greet.final is greet.exchanges[1]
    # a requestState already used opens a new operation: a state joins one retry only
    again = w.op("tools/call", 1)
    assert again.kind == "request" and again.rounds == 1
    assert len(w.ops) == 2


# -- client sessions ------------------------------------------------------------------------------------------

def _http(session_id: str | None, exchange: int) -> dict[str, Any]:
    headers = {"mcp-session-id": session_id} if session_id else {}
    return {"method": "POST", "path": "/mcp", "exchange": exchange, "headers": headers}


def test_two_http_sessions_reusing_id_1_are_answered_each_by_its_own_server_session():
    init = {"protocolVersion": "2025-11-25", "capabilities": {}}
    w = Walked([c(req(1, "initialize", init), 0, ctx=_http(None, 1)),
                s(ok(1, {"protocolVersion": "2025-11-25"}), 1, ctx=_http("A", 1)),
                c(req(1, "initialize", init), 2, ctx=_http(None, 2)),
                s(ok(1, {"protocolVersion": "2025-11-25"}), 3, ctx=_http("B", 2)),
                c(req(2, "tools/call", {"name": "a"}), 10, ctx=_http("A", 3)),
                c(req(2, "tools/call", {"name": "b"}), 11, ctx=_http("B", 4)),
                s(ok(2, {"content": [{"type": "text", "text": "for b"}]}), 20, ctx=_http("B", 4)),
                s(ok(2, {"content": [{"type": "text", "text": "for a"}]}), 30, ctx=_http("A", 3))])
    assert len(w.sessions) == 2 and [x.http_session for x in w.sessions] == ["A", "B"]
    a, b = w.op("tools/call"), w.op("tools/call", 1)
    assert (a.target, a.session, a.latency_ms) == ("a", 1, 20)
    assert (b.target, b.session, b.latency_ms) == ("b", 2, 9)
    assert a.result["result"]["content"][0]["text"] == "for a"
    assert not w.kinds("orphan", "unanswered")


def test_a_second_initialize_on_stdio_opens_a_second_client_session_whose_ids_start_again():
    init = {"protocolVersion": "2025-11-25", "capabilities": {}}
    w = Walked([c(req(1, "initialize", init), 0), s(ok(1, {}), 1),
                c(req(2, "tools/call", {"name": "x"}), 2), s(err(2), 3),
                c(req(1, "initialize", init), 10), s(ok(1, {}), 11),
                c(req(2, "tools/call", {"name": "y"}), 12), s(ok(2, {"content": []}), 14)])
    assert len(w.sessions) == 2
    assert [(o.method, o.session, o.status()[0]) for o in w.ops] == [
        ("initialize", 1, "ok"), ("tools/call", 1, "error"), ("initialize", 2, "ok"), ("tools/call", 2, "ok")]


# -- the control channel ------------------------------------------------------------------------------------

def test_a_dropped_request_is_paired_with_the_answer_the_proxy_injected():
    w = Walked([c(req(1, "tools/list"), 0), s(ok(1, {"tools": []}), 1),
                c(req(5, "tools/call", {"name": "rm"}), 10, dropped=True),
                s(err(5, -32000, "dropped by the proxy"), 11, injected=True),
                c(req(6, "tools/call", {"name": "ls", "arguments": {"a": 2}}), 20, modified=True,
                  original=req(6, "tools/call", {"name": "ls", "arguments": {"a": 1}})),
                s(ok(6, {"content": []}), 21)])
    dropped = w.op("tools/call")
    ex = dropped.opening
    assert ex.dropped and ex.response_injected and ex.response == err(5, -32000, "dropped by the proxy")
    assert dropped.marks == ["dropped", "injected"] and dropped.dropped
    assert dropped.status()[0] == "error" and dropped.complete
    edited = w.op("tools/call", 1)
    assert edited.marks == ["edited"] and edited.opening.original["params"]["arguments"] == {"a": 1}
    assert not w.kinds("orphan", "unanswered")


def test_a_server_answer_to_a_dropped_request_that_the_proxy_did_not_make_is_an_orphan():
    w = Walked([c(req(5, "tools/call", {"name": "rm"}), 10, dropped=True), s(ok(5, {"content": []}), 11)])
    assert [st.kind for st in w.steps if st.kind in ("orphan", "response")] == ["orphan"]


# -- server requests -----------------------------------------------------------------------------------------

def test_server_requests_nest_under_the_call_that_caused_them_and_others_stand_alone():
    w = Walked([*INIT,
                s(req(1, "roots/list"), 7), c(ok(1, {"roots": []}), 8),
                c(req(2, "tools/call", {"name": "ask", "_meta": {"progressToken": 2}}), 10),
                s(note("notifications/progress", {"progressToken": 2, "progress": 1}), 11),
                s(req(2, "sampling/createMessage", {"messages": [], "maxTokens": 5}), 12),
                c(ok(2, {"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "m"}), 15),
                s(ok(2, {"content": [{"type": "text", "text": "llm said 42"}]}), 20)])
    assert [o.method for o in w.ops] == ["initialize", "roots/list", "tools/call"]
    roots = w.op("roots/list")
    assert roots.kind == "server-request" and roots.dir == "out" and roots.complete
    call = w.op("tools/call")
    assert [(ch.method, ch.role, ch.dir) for ch in call.children] == [("sampling/createMessage", "server", "out")]
    assert call.children[0].response["result"]["content"]["text"] == "42"  # ids 2 both ways, never crossed
    assert call.result["result"]["content"][0]["text"] == "llm said 42" and call.latency_ms == 10
    assert [n["method"] for _, n in call.notes] == ["notifications/progress"]
    assert not w.kinds("orphan", "unanswered")


# -- every member accounted for, whatever the input --------------------------------------------------------

_METHODS = ["initialize", "server/discover", "tools/call", "tools/list", "tasks/get", "tasks/result",
            "tasks/cancel", "tasks/update", "tasks/list", "subscriptions/listen", "sampling/createMessage",
            "notifications/cancelled", "notifications/tasks/status", "notifications/progress",
            "notifications/subscriptions/acknowledged", "notifications/tools/list_changed", 7, None]
_ids = st.one_of(st.integers(0, 3), st.sampled_from(["a", "T1", "listen-1"]), st.none(), st.booleans(),
                 st.just([1]), st.just({"x": 1}))
_scalars = st.one_of(st.integers(-1, 3), st.sampled_from(["T1", "S1", "a", "listen-1", "working", "completed",
                                                          "cancelled", "failed", "input_required", "task"]),
                     st.none(), st.booleans())
_keys = st.sampled_from(["taskId", "status", "requestState", "resultType", "task", "requestId", "progressToken",
                         "name", "uri", "_meta", "result", "error", "isError", "content",
                         META_SUBSCRIPTION_ID, META_RELATED_TASK])
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=2),
                                                         st.dictionaries(_keys, inner, max_size=4)), max_leaves=8)
_bodies = st.one_of(st.dictionaries(_keys, _values, max_size=5), _values)


@st.composite
def _members(draw: Any) -> Any:
    shape = draw(st.sampled_from(["request", "notification", "result", "error", "other", "junk"]))
    if shape == "junk":
        return draw(st.one_of(st.integers(), st.text(max_size=3), st.none()))
    out: dict[str, Any] = {"jsonrpc": "2.0"}
    if shape in ("request", "notification"):
        out["method"] = draw(st.sampled_from(_METHODS))
        if draw(st.booleans()):
            out["params"] = draw(_bodies)
    if shape in ("request", "result", "error", "other") and draw(st.integers(0, 5)):
        out["id"] = draw(_ids)
    if shape == "result":
        out["result"] = draw(_bodies)
    elif shape == "error":
        out["error"] = draw(st.one_of(st.dictionaries(st.sampled_from(["code", "message"]), _scalars), _scalars))
    return out


@st.composite
def _records(draw: Any) -> Message:
    kind = draw(st.sampled_from([Kind.MESSAGE] * 6 + [Kind.STDERR, Kind.TRANSPORT, Kind.EVENT, Kind.INVALID]))
    d = draw(st.sampled_from(["in", "out", None]))
    if kind == Kind.TRANSPORT and draw(st.booleans()):  # a client closing an HTTP stream (a cancel)
        return Message("in", None, kind=kind, ctx={"exchange": draw(st.integers(0, 3)), "closed": "client",
                                                   "unanswered": draw(st.lists(st.sampled_from(["0", "1", "a"]), max_size=2))})
    if kind != Kind.MESSAGE:
        return Message(d, None, kind=kind, text="x")
    raw = draw(st.one_of(_members(), st.lists(_members(), max_size=3)))
    ctx = None
    if draw(st.integers(0, 3)) == 0:
        ctx = {"exchange": draw(st.integers(0, 3)), "method": draw(st.sampled_from(["POST", "GET"])),
               "headers": draw(st.sampled_from([{}, {"Mcp-Session-Id": "A"}, {"mcp-session-id": "B"}]))}
    extra = {"file": draw(st.sampled_from(["f1", "f2"]))} if draw(st.integers(0, 5)) == 0 else None
    t = draw(st.one_of(st.none(), st.integers(0, 10_000)))
    return Message(d, raw, t=t, ctx=ctx, extra=extra, dropped=draw(st.integers(0, 6)) == 0,
                   injected=draw(st.integers(0, 6)) == 0, modified=draw(st.integers(0, 6)) == 0)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_records(), max_size=30))
def test_the_walk_never_raises_and_accounts_for_every_member_once(records):
    w = Walked(records)
    per_record = Counter()
    for st_ in w.steps[:w.fed]:
        assert st_.msg is records[st_.index]
        if st_.kind in ("request", "response", "notification", "orphan", "other"):
            per_record[(st_.index, id(st_.member))] += 1
    for index, msg in enumerate(records):
        raw = msg.raw
        members = [raw] if isinstance(raw, dict) else [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []
        if msg.kind != Kind.MESSAGE:
            members = []
        for m in members:
            assert per_record.pop((index, id(m)), 0) == 1, (index, m)
        if not members:  # a record with no JSON-RPC member is said once, as a record
            assert sum(1 for x in w.steps[:w.fed] if x.index == index and x.kind != "operation") == 1
    assert not per_record
    # every request joins exactly one operation, and every operation is handed out once
    handed = [op.n for op in w.ops]
    assert len(handed) == len(set(handed))
    placed = Counter(id(ex) for op in w.ops for ex in (*op.exchanges, *op.children))
    for st_ in w.kinds("request"):
        assert placed[id(st_.exchange)] == 1 and st_.operation is not None
    for st_ in w.steps[w.fed:]:
        if st_.kind in ("unanswered", "ended"):
            assert st_.exchange.response is None
    for op in w.ops:  # what the verbs ask of an operation never raises either
        assert op.status()[0] and op.rounds >= 0 and op.polls >= 0
        _ = (op.latency_ms, op.final, op.result, op.marks, op.t_end, op.target)
