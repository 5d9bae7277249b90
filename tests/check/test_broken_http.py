"""``mcpreel check`` against HTTP servers the tests write: a correct seed-002 server passes every check,
and each defect switched on is found by the check that names it."""

from __future__ import annotations

import pytest

from mcpreel.check import FAIL, PASS, SKIP, WARN, CheckOptions, run_check
from tests.check.servers import SeedServer, seed_example_app, serve_app


@pytest.fixture(scope="module")
def seed_server():
    server = SeedServer()
    with serve_app(server.app()) as base:
        yield base, server


def check(base: str, defects: str, profile: str = "sse", **kw):
    kw.setdefault("call_all", not kw.get("no_call"))  # these servers' tools are safe to call, annotated or not
    return run_check(f"{base}/{defects}/mcp", options=CheckOptions(profile=profile, timeout=5, **kw))


def statuses(report) -> dict[str, str]:
    return {r.id: r.status for r in report.results}


def test_a_correct_seed_server_passes_every_check(seed_server):
    base, server = seed_server
    report = check(base, "ok")
    assert statuses(report) == {
        "http-post": PASS, "sse-content-type": PASS, "sse-framing": PASS, "initialize": PASS,
        "version-negotiation": PASS, "tools-list": PASS, "tool-schemas": PASS,
        "tools-call:lookup_customer": PASS, "tools-call:add": PASS, "notifications": PASS, "jsonrpc-ids": PASS,
        "unknown-method": PASS, "parse-error": PASS, "session-id": PASS, "origin": PASS,
        "protocol-version-header": PASS, "stdout-clean": SKIP,
    }
    assert report.exit_code == 0
    assert report.server_info == {"name": "seed-server", "version": "1.0.0"}
    assert report.protocol_version == "2024-11-05"
    # the tools were called with arguments made from their schemas (required only, bounds met)
    assert {"name": "add", "arguments": {"a": 5, "b": 1}} in server.calls
    assert {"name": "lookup_customer", "arguments": {"customer_id": "example"}} in server.calls


def test_not_streaming_fails_the_seed_profile_and_passes_mcp(seed_server):
    base, _ = seed_server
    report = check(base, "json_responses")
    r = report.get("sse-content-type")
    assert r.status == FAIL and r.issue == "Response Not Streaming"
    assert "application/json" in r.summary and "initialize" in r.summary
    assert r.fix and "text/event-stream" in r.fix
    assert r.received.startswith("200 application/json")
    assert report.get("sse-framing").status == SKIP
    assert report.exit_code == 1
    mcp = check(base, "json_responses", profile="mcp")
    assert mcp.get("sse-content-type").status == PASS
    assert mcp.exit_code == 0


def test_tools_not_found(seed_server):
    base, _ = seed_server
    report = check(base, "tools_not_found")
    r = report.get("tools-list")
    assert r.status == FAIL and r.issue == "Tools Not Found"
    assert r.summary == "result.tools is missing"
    # what depends on the tool list says why it did not run
    assert report.get("tool-schemas").status == SKIP and "tools/list failed" in report.get("tool-schemas").summary
    assert report.get("tools-call").status == SKIP


def test_bad_tool_schemas_are_each_named(seed_server):
    base, _ = seed_server
    r = check(base, "bad_tools", no_call=True).get("tool-schemas")
    assert r.status == FAIL
    text = "\n".join(r.details)
    assert "'no_description': description is missing or empty" in text
    assert "'wrong_type': inputSchema.type is \"array\", not \"object\"" in text
    assert "'undeclared_required': inputSchema.required names 'b', not in properties" in text
    assert "'invalid_schema': inputSchema is not a valid JSON Schema" in text
    # under the MCP profile a missing description and an undeclared required name are warnings only
    mcp = check(base, "bad_tools", profile="mcp", no_call=True).get("tool-schemas")
    assert mcp.status == FAIL  # the wrong type and the invalid schema still fail
    assert any(d.startswith("warn: 'no_description'") for d in mcp.details)


def test_raw_object_in_text(seed_server):
    base, _ = seed_server
    report = check(base, "raw_object_text", profile="mcp")
    r = report.get("tools-call:lookup_customer")
    assert r.status == FAIL and r.issue == "Invalid JSON in Response"
    assert "raw object" in r.summary and "json.dumps" in r.fix


def test_text_that_is_not_json_fails_only_the_seed_profile(seed_server):
    base, _ = seed_server
    r = check(base, "non_json_text").get("tools-call:add")
    assert r.status == FAIL and r.issue == "Invalid JSON in Response"
    assert "not JSON: plain words" in r.summary
    assert check(base, "non_json_text", profile="mcp").get("tools-call:add").status == PASS


def test_image_content_fails_only_the_seed_profile(seed_server):
    base, _ = seed_server
    r = check(base, "image_content").get("tools-call:add")
    assert r.status == FAIL and "type 'image'" in r.summary
    assert check(base, "image_content", profile="mcp").get("tools-call:add").status == PASS


def test_bad_ids(seed_server):
    base, _ = seed_server
    r = check(base, "bad_ids").get("jsonrpc-ids")
    assert r.status == FAIL
    assert "sent id 1 (int), got '1' (str)" in r.summary


def test_no_method_not_found(seed_server):
    base, _ = seed_server
    r = check(base, "no_method_not_found").get("unknown-method")
    assert r.status == FAIL and r.summary == "no -32601: an unknown method got a result"


def test_no_parse_error(seed_server):
    base, _ = seed_server
    r = check(base, "no_parse_error").get("parse-error")
    assert r.status == FAIL and "no -32700" in r.summary


def test_notifications_answered(seed_server):
    base, _ = seed_server
    r = check(base, "answer_notifications").get("notifications")
    assert r.status == FAIL and r.summary.startswith("notifications answered")


def test_session_id_not_issued_is_a_warning(seed_server):
    base, _ = seed_server
    report = check(base, "no_session")
    r = report.get("session-id")
    assert r.status == WARN and "no Mcp-Session-Id" in r.summary
    assert report.exit_code == 0
    assert check(base, "no_session", strict=True).exit_code == 1


def test_session_id_not_required(seed_server):
    base, _ = seed_server
    r = check(base, "session_not_required").get("session-id")
    assert r.status == FAIL
    assert "without Mcp-Session-Id was accepted" in r.summary
    assert any("made-up Mcp-Session-Id was accepted" in d for d in r.details)


def test_origin_not_validated(seed_server):
    base, _ = seed_server
    r = check(base, "no_origin_check").get("origin")
    assert r.status == WARN and r.summary.startswith("Origin not validated")
    assert "[Origin: http://mcpreel-check.invalid]" in r.sent


def test_protocol_version_header_not_honoured(seed_server):
    base, _ = seed_server
    r = check(base, "no_version_header_check").get("protocol-version-header")
    # the server speaks 2025-06-18 (seen in the negotiation), so ignoring the header is a failure
    assert r.status == FAIL and "2025-06-18" in r.summary


def test_sse_framing_defects(seed_server):
    base, _ = seed_server
    r = check(base, "no_event_line").get("sse-framing")
    assert r.status == FAIL and "no 'event: message' line" in r.summary
    assert check(base, "no_event_line", profile="mcp").get("sse-framing").status == PASS
    r = check(base, "no_blank_line", profile="mcp").get("sse-framing")
    assert r.status == FAIL and "without the blank line" in r.summary


def test_bad_initialize_and_version_echo(seed_server):
    base, _ = seed_server
    r = check(base, "bad_initialize").get("initialize")
    assert r.status == FAIL
    assert "capabilities.tools is missing" in r.summary and "serverInfo.version is missing" in r.summary
    r = check(base, "echo_version").get("version-negotiation")
    assert r.status == FAIL and "2099-01-01, a version that does not exist" in r.summary


def test_calls_given_and_no_call(seed_server):
    base, server = seed_server
    server.calls.clear()
    report = check(base, "ok", calls={"add": {"a": 7, "b": 8}}, no_call=True)
    assert [r.id for r in report.results if r.id.startswith("tools-call")] == ["tools-call:add"]
    assert server.calls == [{"name": "add", "arguments": {"a": 7, "b": 8}}]
    skipped = check(base, "ok", no_call=True).get("tools-call")
    assert skipped.status == SKIP and "--no-call" in skipped.summary


def test_the_seed_example_server_as_written():
    """Seed 002's own example passes the seed's four tests and fails JSON-RPC hygiene."""
    with serve_app(seed_example_app()) as base:
        report = run_check(f"{base}/mcp", options=CheckOptions(profile="sse", timeout=5, call_all=True))
    s = statuses(report)
    for passing in ("http-post", "sse-content-type", "initialize", "tools-list", "tool-schemas",
                    "tools-call:example_tool"):
        assert s[passing] == PASS, passing
    # notifications and unknown methods get "data: null"; malformed JSON crashes the handler
    assert s["notifications"] == FAIL
    assert s["unknown-method"] == FAIL
    assert s["parse-error"] == FAIL and "500" in report.get("parse-error").summary
    assert s["sse-framing"] == FAIL and "not a JSON-RPC 2.0 message: null" in report.get("sse-framing").summary
    assert s["session-id"] == WARN and s["origin"] == WARN
    assert report.exit_code == 1
