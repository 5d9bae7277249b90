"""The session -> spans mapping (GenAI MCP semantic conventions), rule by rule, and its OTLP JSON."""

from __future__ import annotations

import io
import json
import random

import pytest

from mcpreel.formats import open_session
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.otel.mapping import MAX_ROOT_EVENTS, parse_traceparent, spans

T0 = 1_767_000_000_000  # ms
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"


def ids():
    return random.Random(7).getrandbits


def m(d, raw, dt, **kw):
    return Message(d, raw, t=T0 + dt, **kw)


def legacy_session(**info) -> Session:
    msgs = [
        m("in", {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-11-25", "clientInfo": {"name": "cli", "version": "1"}}}, 0),
        m("out", {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25",
                                                       "serverInfo": {"name": "srv", "version": "9.9"}}}, 5),
        m("in", {"jsonrpc": "2.0", "method": "notifications/initialized"}, 6),
        m("in", {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "slow", "arguments": {"token": "Bearer abcdefghijklmnopqrstuvwxyz012345"},
                            "_meta": {"progressToken": 2}}}, 10),
        m("out", {"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": 2, "progress": 1, "total": 2, "message": "half"}}, 15),
        m("out", {"jsonrpc": "2.0", "id": 0, "method": "sampling/createMessage", "params": {"messages": []}}, 16),
        m("in", {"jsonrpc": "2.0", "id": 0, "result": {"model": "m", "role": "assistant",
                                                      "content": {"type": "text", "text": "42"}}}, 18),
        m("out", {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "done"}]}}, 30),
        m("in", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "fail", "arguments": {}}}, 31),
        m("out", {"jsonrpc": "2.0", "id": 3, "result": {"isError": True, "content": [{"type": "text", "text": "no way"}]}}, 33),
        m("in", {"jsonrpc": "2.0", "id": 4, "method": "prompts/get", "params": {"name": "nope"}}, 40),
        m("out", {"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "Unknown prompt"}}, 41),
        m("in", {"jsonrpc": "2.0", "id": 5, "method": "resources/read",
                 "params": {"uri": "res://motd", "_meta": {"traceparent": f"00-{TRACE}-{PARENT}-01",
                                                           "tracestate": "vendor=abc"}}}, 50),
        m("out", {"jsonrpc": "2.0", "id": 5, "result": {"contents": []}}, 52),
        m("out", {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}, 53),
        Message(None, None, t=T0 + 54, kind="stderr", text="log line"),
        m("in", {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "hang", "arguments": {}}}, 60),
        m("in", {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 6, "reason": "tired"}}, 70),
    ]
    return Session(SessionInfo(**{"id": "sess-1", "label": "demo", "transport": "stdio", "command": ["srv"], **info}), msgs)


def by_name(records):
    out = {}
    for r in records:
        out.setdefault(r.name, []).append(r)
    return out


def test_a_span_per_request_with_the_conventions_names_kinds_and_attributes():
    records = spans(legacy_session(), ids=ids())
    names = [r.name for r in records]
    assert names == ["initialize", "sampling/createMessage", "tools/call slow", "tools/call fail", "prompts/get nope",
                     "resources/read res://motd", "tools/call hang", "mcp session srv"]
    s = by_name(records)
    init = s["initialize"][0]
    assert init.kind == "client" and init.attributes["mcp.method.name"] == "initialize"
    assert init.attributes["jsonrpc.request.id"] == "1" and init.attributes["mcp.protocol.version"] == "2025-11-25"
    assert init.attributes["network.transport"] == "pipe" and init.attributes["mcp.session.id"] == "sess-1"
    slow = s["tools/call slow"][0]
    assert slow.attributes["gen_ai.tool.name"] == "slow" and slow.attributes["gen_ai.operation.name"] == "execute_tool"
    assert "gen_ai.tool.call.arguments" not in slow.attributes and "gen_ai.tool.call.result" not in slow.attributes
    assert s["sampling/createMessage"][0].kind == "server"  # server -> client request
    fail = s["tools/call fail"][0]
    assert fail.attributes["error.type"] == "tool_error" and fail.error == "no way"
    assert "rpc.response.status_code" not in fail.attributes
    nope = s["prompts/get nope"][0]
    assert nope.attributes["gen_ai.prompt.name"] == "nope"
    assert nope.attributes["rpc.response.status_code"] == "-32602" and nope.attributes["error.type"] == "-32602"
    assert nope.error == "Unknown prompt"
    assert s["resources/read res://motd"][0].attributes["mcp.resource.uri"] == "res://motd"
    assert slow.error is None and s["initialize"][0].error is None


def test_times_parents_and_the_session_root():
    records = spans(legacy_session(), ids=ids())
    root = records[-1]
    assert root.kind == "internal" and root.parent_id is None
    assert root.start_ns == T0 * 1_000_000 and root.end_ns == (T0 + 70) * 1_000_000
    s = by_name(records)
    slow = s["tools/call slow"][0]
    assert (slow.start_ns, slow.end_ns) == ((T0 + 10) * 1_000_000, (T0 + 30) * 1_000_000)
    for r in records[:-1]:
        if r.name.startswith("resources/read"):
            continue
        assert r.trace_id == root.trace_id and r.parent_id == root.span_id and not r.parent_remote
    assert len({r.span_id for r in records}) == len(records)
    assert root.attributes["mcpreel.requests"] == 7 and root.attributes["mcpreel.errors"] == 2
    assert root.attributes["mcpreel.stderr"] == 1 and root.attributes["mcpreel.unanswered"] == 1
    assert root.attributes["mcpreel.client"] == "cli 1" and root.attributes["mcp.protocol.version"] == "2025-11-25"


def test_traceparent_in_meta_is_the_parent_and_the_session_a_link():
    records = spans(legacy_session(), ids=ids())
    root = records[-1]
    read = by_name(records)["resources/read res://motd"][0]
    assert read.trace_id == int(TRACE, 16) and read.parent_id == int(PARENT, 16) and read.parent_remote
    assert read.trace_state == "vendor=abc" and read.trace_flags == 1
    assert [(link.trace_id, link.span_id) for link in read.links] == [(root.trace_id, root.span_id)]


@pytest.mark.parametrize("value", [None, 7, "", "00-xyz", f"ff-{TRACE}-{PARENT}-01", f"00-{'0' * 32}-{PARENT}-01",
                                   f"00-{TRACE}-{'0' * 16}-01", f"00-{TRACE}-{PARENT}"])
def test_a_bad_traceparent_is_ignored(value):
    assert parse_traceparent(value) is None


def test_notifications_are_events_on_the_request_they_name_or_on_the_session():
    records = spans(legacy_session(), ids=ids())
    s = by_name(records)
    slow = s["tools/call slow"][0]
    assert [(e.name, e.time_ns) for e in slow.events] == [("notifications/progress", (T0 + 15) * 1_000_000)]
    assert slow.events[0].attributes == {"mcp.method.name": "notifications/progress", "mcpreel.direction": "server_to_client",
                                         "mcp.progress": 1, "mcp.progress.total": 2, "mcp.progress.message": "half"}
    root = records[-1]
    assert [e.name for e in root.events] == ["notifications/initialized", "notifications/message"]
    hang = s["tools/call hang"][0]
    assert [e.name for e in hang.events] == ["notifications/cancelled"]
    assert hang.attributes["mcpreel.unanswered"] is True and hang.attributes["error.type"] == "cancelled"
    assert hang.end_ns == (T0 + 70) * 1_000_000
    assert "mcpreel.reason" not in hang.events[0].attributes  # content only when asked


def test_content_is_opt_in_and_redacted():
    records = spans(legacy_session(), include_content=True, ids=ids())
    slow = by_name(records)["tools/call slow"][0]
    args = json.loads(slow.attributes["gen_ai.tool.call.arguments"])
    assert args == {"token": "[REDACTED]"}
    assert json.loads(slow.attributes["gen_ai.tool.call.result"]) == {"content": [{"type": "text", "text": "done"}]}
    hang = by_name(records)["tools/call hang"][0]
    assert hang.events[0].attributes["mcpreel.reason"] == "tired"


def test_http_sessions_name_the_server_address():
    records = spans(legacy_session(url="https://mcp.example.com/mcp", transport="streamable-http"), ids=ids())
    init = records[0]
    assert init.attributes["network.transport"] == "tcp"
    assert init.attributes["server.address"] == "mcp.example.com" and init.attributes["server.port"] == 443
    assert init.attributes["network.protocol.name"] == "http"


def test_the_2026_era_discover_result_type_and_multi_round_trips():
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": {"name": "c"}}
    msgs = [
        m("in", {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": meta}}, 0),
        m("out", {"jsonrpc": "2.0", "id": 0, "result": {"resultType": "complete", "supportedVersions": ["2026-07-28"],
                                                       "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern"}}}}, 2),
        m("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "book", "arguments": {}, "_meta": meta}}, 10),
        m("out", {"jsonrpc": "2.0", "id": 1, "result": {
            "resultType": "input_required", "requestState": "st-1",
            "inputRequests": {"confirm": {"method": "elicitation/create", "params": {"message": "sure?"}}}}}, 12),
        m("in", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "book", "arguments": {}, "requestState": "st-1", "inputResponses": {"confirm": {"action": "accept"}},
            "_meta": meta}}, 20),
        m("out", {"jsonrpc": "2.0", "id": 2, "result": {"resultType": "complete", "content": []}}, 25),
    ]
    records = spans(Session(SessionInfo(transport="streamable-http", url="http://127.0.0.1:9/mcp"), msgs), ids=ids())
    discover, first, second, root = records
    assert discover.name == "server/discover" and discover.attributes["mcp.protocol.version"] == "2026-07-28"
    assert first.attributes["mcp.result.type"] == "input_required"
    assert first.attributes["mcp.input_required.methods"] == ["elicitation/create"]
    assert second.attributes["mcp.request.round"] == 2 and second.attributes["mcp.result.type"] == "complete"
    assert [(link.span_id, link.attributes) for link in second.links] == [(first.span_id, {"mcpreel.link": "previous_round"})]
    assert root.name == "mcp session modern" and root.attributes["network.transport"] == "tcp"


def test_the_assay_era_vectors(fixtures_dir):
    base = fixtures_dir / "hub" / "assay"
    traced = spans(open_session(next(base.glob("*traceparent-present.json")))[0], ids=ids())
    assert traced[0].name == "tools/call Calc" and traced[0].trace_id == int(TRACE, 16)
    assert traced[0].parent_id == int(PARENT, 16)
    pending = spans(open_session(next(base.glob("*modern-input-required.json")))[0], ids=ids())
    assert pending[0].attributes["mcp.result.type"] == "input_required"


def test_a_flood_of_notifications_does_not_make_one_huge_span():
    msgs = [m("out", {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": i}}, i)
            for i in range(MAX_ROOT_EVENTS + 50)]
    (root,) = spans(Session(SessionInfo(), msgs), ids=ids())
    assert len(root.events) == MAX_ROOT_EVENTS and root.attributes["mcpreel.events_not_kept"] == 50


def test_otlp_json_has_hex_ids_kinds_times_and_the_resource():
    from mcpreel.otel.export import export_session

    buf = io.BytesIO()
    summary = export_session(legacy_session(), out=buf, ids=ids())
    assert summary.spans == 8 and summary.batches == 1
    doc = json.loads(buf.getvalue())
    (rs,) = doc["resourceSpans"]
    resource = {a["key"]: a["value"] for a in rs["resource"]["attributes"]}
    assert resource["service.name"] == {"stringValue": "srv"} and resource["service.version"] == {"stringValue": "9.9"}
    (scope,) = rs["scopeSpans"]
    assert scope["scope"]["name"] == "mcpreel"
    out = {s["name"]: s for s in scope["spans"]}
    root = out["mcp session srv"]
    assert root["kind"] == 1 and "parentSpanId" not in root and len(root["traceId"]) == 32 and len(root["spanId"]) == 16
    slow = out["tools/call slow"]
    assert slow["kind"] == 3 and slow["parentSpanId"] == root["spanId"] and slow["traceId"] == root["traceId"]
    assert slow["startTimeUnixNano"] == str((T0 + 10) * 1_000_000) and slow["events"][0]["name"] == "notifications/progress"
    assert out["sampling/createMessage"]["kind"] == 2
    read = out["resources/read res://motd"]
    assert read["traceId"] == TRACE and read["parentSpanId"] == PARENT and read["traceState"] == "vendor=abc"
    assert read["links"][0]["spanId"] == root["spanId"]
    assert out["tools/call fail"]["status"] == {"message": "no way", "code": 2}


def test_a_real_http_session_recorded_by_another_tool(fixtures_dir):
    """An mcp-replay reel of a public Streamable HTTP server: tcp, the server's address, every request a span;
    its two conversations (two ``initialize``, as ``inspect`` counts them) are two session roots."""
    path = fixtures_dir / "mcp-replay-v1" / "mcp-api-coingecko-com-2026-08-19T23-43-21-646Z.mcp.jsonl"
    session = open_session(path)[0]
    records = spans(session, ids=ids())
    roots = [r for r in records if r.kind == "internal"]
    assert [r.name for r in roots] == ["mcp session coingecko_coingecko_typescript_api"] * 2
    assert [r.attributes["mcpreel.requests"] for r in roots] == [2, 40]
    assert [r.attributes["mcpreel.session.index"] for r in roots] == [1, 2]
    for r in records:
        if r.kind != "internal":
            assert r.trace_id in {root.trace_id for root in roots}
    calls = [r for r in records if r.attributes.get("gen_ai.tool.name")]
    assert len(calls) == 37 and sum(1 for r in calls if r.attributes.get("error.type") == "tool_error") == 19
    for r in records:
        assert r.attributes["network.transport"] == "tcp" and r.attributes["server.address"] == "mcp.api.coingecko.com"
        assert r.attributes["server.port"] == 443 and r.end_ns >= r.start_ns
