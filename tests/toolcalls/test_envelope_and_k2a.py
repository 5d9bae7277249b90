"""The HTTP transcript envelope's rules and the K2-A authorization-discovery summary."""

from __future__ import annotations

import json

import pytest

from mcpreel.errors import FormatError

from .helpers import call, ok, run_import


def envelope(tmp_path, entries, transport="streamable-http", name="e.json", **top):
    p = tmp_path / name
    p.write_text(json.dumps({"transport": transport, **top, "entries": entries}))
    return p


@pytest.mark.parametrize("slots", [[], ["request", "response"], ["request", "sse"]])
def test_exactly_one_slot_per_entry(tmp_path, slots):
    bad = {s: (call(1) if s == "request" else ok(1) if s == "response" else {"data": ok(1)}) for s in slots}
    p = envelope(tmp_path, [{"request": call(1)}, bad])
    with pytest.raises(FormatError, match="streamable-http entry 2 must contain exactly one of request, response, or sse"):
        run_import(p)


def test_unknown_entry_member_names_the_entry(tmp_path):
    p = envelope(tmp_path, [{"request": call(1), "extra": 1}])
    with pytest.raises(FormatError, match="entry 1 has unknown member 'extra'"):
        run_import(p)


def test_transport_must_match_the_label(tmp_path):
    p = envelope(tmp_path, [{"request": call(1)}], transport="http-sse")
    with pytest.raises(FormatError, match='streamable-http transport must be "streamable-http", found "http-sse"'):
        run_import(p, fmt="streamable-http")
    events, *_ = run_import(p, fmt="sse-legacy")  # the CLI alias
    assert events[1]["name"] == "t"


def test_sse_message_string_data_and_transport_only_events(tmp_path):
    entries = [
        {"timestamp_ms": 1, "sse": {"event": "endpoint", "id": "e0", "data": "/messages?session=x"}},
        {"timestamp_ms": 2, "request": call("c")},
        {"timestamp_ms": 3, "sse": {"data": json.dumps(json.dumps(ok("c", {"n": 1})))}},  # double-encoded, default event
        {"timestamp_ms": 4, "sse": {"event": "ping", "data": json.dumps(ok("c", {"n": 2}))}},  # not a message event
        {"timestamp_ms": 5, "sse": {"event": "message", "data": "keep-alive"}},  # not JSON: transport only
    ]
    events, report, warnings, _ = run_import(envelope(tmp_path, entries, transport="http-sse"))
    calls = [e for e in events if e["type"] == "tool_call"]
    assert calls[0]["result"] == {"n": 1}
    assert report.orphans == 0 and report.messages == 2
    assert events[-1]["final_output"] == '{"n":1}'


def test_transport_context_never_changes_semantics(tmp_path):
    plain = envelope(tmp_path, [{"request": call(1)}, {"response": ok(1)}], name="a.json")
    ctx = {"headers": {"Mcp-Session-Id": "s", "MCP-Protocol-Version": "2025-06-18", "Last-Event-ID": "9"}}
    rich = envelope(tmp_path, [{"request": call(1), "transport_context": ctx}, {"response": ok(1), "transport_context": ctx}],
                    name="b.json", transport_context=ctx)
    a, b = run_import(plain)[0], run_import(rich)[0]
    assert a[1:] == b[1:] and a[0]["meta"] == b[0]["meta"]


def _k2a(tmp_path, ctx, slot="response", name="k.json"):
    entry = {slot: {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "unauthorized"}}, "transport_context": ctx}
    if slot == "sse":
        entry = {"sse": {"data": entry.pop("sse")}, "transport_context": ctx}
    p = envelope(tmp_path, [{"request": call(1)}, entry], name=name)
    events, *_ = run_import(p)
    return events, events[0]["meta"]["mcp"]["authorization_discovery"]


@pytest.mark.parametrize(("ctx", "resource", "scope"), [
    ({"status": 401, "headers": {"WWW-Authenticate": 'Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="files:read"'}}, True, True),
    ({"status_code": "401", "headers": {"www-authenticate": 'Bearer resource_metadata="https://x/m"'}}, True, False),
    ({"http_status": 401, "WWW-Authenticate": "Bearer realm=x,scope=read"}, False, True),
    ({"response": {"status": 401, "headers": {"Www-Authenticate": "Bearer\tscope=a"}}}, False, True),
])
def test_k2a_positive(tmp_path, ctx, resource, scope):
    events, summary = _k2a(tmp_path, ctx)
    assert summary == {"visible": True, "source_kind": "www_authenticate", "resource_metadata_visible": resource,
                       "authorization_servers_visible": False, "scope_challenge_visible": scope}
    tc = [e for e in events if e["type"] == "tool_call"][0]
    assert tc["error"] == "mcp_error"  # visibility only: semantics unchanged


@pytest.mark.parametrize(("ctx", "slot"), [
    ({"status": 403, "headers": {"WWW-Authenticate": 'Bearer scope="a"'}}, "response"),  # not 401
    ({"status": 401, "headers": {"WWW-Authenticate": 'Bearer realm="x"'}}, "response"),  # no typed parameter
    ({"status": 401}, "response"),  # no challenge
    ({"status": 401, "headers": {"WWW-Authenticate": ["Bearer scope=a"]}}, "response"),  # not a string
    ({"status": 401, "headers": {"WWW-Authenticate": 'Bearer xscope="a"'}}, "response"),  # not at a boundary
    ({"status": 401, "headers": {"WWW-Authenticate": 'Bearer scope="a"'}}, "sse"),  # not a response slot
])
def test_k2a_negative(tmp_path, ctx, slot):
    _, summary = _k2a(tmp_path, ctx, slot)
    assert summary["visible"] is False and summary["source_kind"] == "unknown"


def test_k2a_ignores_the_transcript_level_context(tmp_path):
    top = {"status": 401, "headers": {"WWW-Authenticate": 'Bearer scope="a"'}}
    p = envelope(tmp_path, [{"request": call(1)}, {"response": ok(1)}], transport_context=top)
    events, *_ = run_import(p)
    assert events[0]["meta"]["mcp"]["authorization_discovery"]["visible"] is False


def test_k2a_flags_or_merge_across_entries(tmp_path):
    entries = [{"request": call(1)},
               {"response": ok(1), "transport_context": {"status": 401, "headers": {"WWW-Authenticate": 'Bearer scope="a"'}}},
               {"request": call(2)},
               {"response": ok(2), "transport_context": {"status": 401, "headers": {"WWW-Authenticate": 'Bearer resource_metadata="m"'}}}]
    events, *_ = run_import(envelope(tmp_path, entries))
    s = events[0]["meta"]["mcp"]["authorization_discovery"]
    assert s["resource_metadata_visible"] and s["scope_challenge_visible"]


def test_k2a_not_for_non_http_formats(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_text(json.dumps(call(1)) + "\n")
    events, *_ = run_import(p)
    assert events[0]["meta"]["mcp"]["authorization_discovery"]["visible"] is False


def test_an_entry_without_timestamp_takes_the_message_own_time(tmp_path):
    # the contract's order of times: the entry's timestamp_ms, else the message's own, else the format's
    entries = [{"request": {**call(1), "timestamp_ms": 5000}},
               {"sse": {"data": {**ok(1), "timestamp_ms": 6000}}},
               {"timestamp_ms": 7000, "request": {**call(2), "timestamp_ms": 1}}]
    events, *_ = run_import(envelope(tmp_path, entries))
    assert [e["timestamp"] for e in events] == [5000, 5000, 6000, 7000, 7000, 7000]


def test_a_null_sse_event_is_the_default_message_event(tmp_path):
    entries = [{"request": call(1)}, {"sse": {"event": None, "id": "e1", "data": ok(1, {"n": 1})}}]
    events, report, *_ = run_import(envelope(tmp_path, entries))
    assert events[2]["result"] == {"n": 1} and report.unanswered == 0


def test_k2a_status_order_is_context_then_headers_then_nested_response(tmp_path):
    challenge = {"WWW-Authenticate": 'Bearer scope="a"'}
    _, summary = _k2a(tmp_path, {"headers": {"status": "401", **challenge}, "response": {"status": 200}})
    assert summary["visible"] and summary["scope_challenge_visible"]
    _, summary = _k2a(tmp_path, {"status": 200, "headers": challenge, "response": {"status": 401}}, name="k2.json")
    assert summary["visible"] is False
