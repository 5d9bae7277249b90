"""The write-only formats: HAR 1.2 and the traces through convert."""

from __future__ import annotations

import json

from mcpreel.convert import convert
from mcpreel.model import Kind, Message
from mcpreel.toolcalls.importer import ImportOptions, import_session

from .support import fixture, note, read, req, resp, session_of, write


def _har(path):
    doc = json.loads(path.read_text())
    log = doc["log"]
    assert log["version"] == "1.2" and log["creator"]["name"] == "mcpreel"
    for e in log["entries"]:
        # the members HAR 1.2 requires
        assert {"startedDateTime", "time", "request", "response", "cache", "timings"} <= set(e)
        assert {"method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"} <= set(e["request"])
        assert {"status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize",
                "bodySize"} <= set(e["response"])
        assert all(k.startswith("_") for k in e if k not in ("startedDateTime", "time", "request", "response", "cache", "timings"))
    return log


def test_stdio_session_one_entry_per_pair(tmp_path):
    log = _har(write(read(fixture("qai/qai_session_fastmcp.json")), tmp_path / "s.har", "har"))
    entries = log["entries"]
    assert {e["request"]["url"] for e in entries} == {"stdio://python%20servers.py%20fastmcp"}
    facts = [(e["_mcp"]["direction"], e["_mcp"].get("method"), e["response"]["status"]) for e in entries]
    assert facts[:3] == [("client_to_server", "initialize", 200), ("client_to_server", "notifications/initialized", 204),
                         ("client_to_server", "tools/list", 200)]
    assert ("server_to_client", "sampling/createMessage", 200) in facts
    edited = next(e for e in entries if e["_mcp"].get("modified"))
    assert edited["_mcp"]["original"]["params"]["arguments"] == {"message": "original"}
    error = next(e for e in entries if e["_mcp"].get("method") == "no/such_method")
    assert error["_mcp"]["error"]["code"] == -32602
    body = json.loads(edited["request"]["postData"]["text"])
    assert body["params"]["arguments"] == {"message": "MODIFIED"}
    assert edited["time"] == 3  # 46.314246 -> 46.317138, in whole ms


def test_http_session_sse_and_legacy_endpoint(tmp_path):
    log = _har(write(read(fixture("assay-docs/import-formats@HEAD__05.json")), tmp_path / "s.har", "har"))
    stream, post = log["entries"]
    assert stream["request"]["method"] == "GET" and stream["response"]["content"]["mimeType"] == "text/event-stream"
    assert "event: endpoint" in stream["response"]["content"]["text"]
    assert post["request"]["url"].endswith("/mcp/messages?session=legacy-session")
    assert post["response"]["status"] == 202 and post["_mcp"]["answered_on"] == "stream"


def test_exchanges_grouped_by_the_recorders_exchange_id(tmp_path):
    s = session_of(
        Message("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a", "arguments": {}}}, 10,
                ctx={"method": "POST", "path": "/mcp", "headers": {"Authorization": "[REDACTED]"}, "exchange": 7}),
        Message("out", {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}, 12,
                ctx={"status": 200, "sse": {"event": "message", "id": "e1"}, "exchange": 7}),
        Message("out", {"jsonrpc": "2.0", "id": 1, "result": {"isError": True, "content": []}}, 15,
                ctx={"status": 200, "sse": {"event": "message", "id": "e2"}, "exchange": 7,
                     "headers": {"Content-Type": "text/event-stream"}}),
        Message("in", None, 20, kind=Kind.TRANSPORT, ctx={"method": "DELETE", "path": "/mcp", "status": 200, "exchange": 8}),
        Message(None, None, 21, kind=Kind.STDERR, text="bye"),
        transport="streamable-http", url="http://127.0.0.1:9/mcp",
    )
    log = _har(write(s, tmp_path / "s.har", "har"))
    call, delete = log["entries"]
    assert call["request"]["headers"] == [{"name": "Authorization", "value": "[REDACTED]"}]
    assert call["response"]["headers"] == [{"name": "Content-Type", "value": "text/event-stream"}]
    assert call["response"]["content"]["text"].count("event: message") == 2
    assert call["_mcp"]["isError"] is True and call["_mcp"]["server_messages"] == 1 and call["time"] == 5
    assert delete["request"]["method"] == "DELETE" and delete["response"]["status"] == 200
    assert log["_mcp"]["stderr"] == [{"t": "1970-01-01T00:00:00.021Z", "text": "bye"}]


def test_unanswered_request_has_status_0(tmp_path):
    log = _har(write(session_of(req("in", 1, "ping", 5), note("in", "notifications/initialized", 6)), tmp_path / "s.har", "har"))
    assert [e["response"]["status"] for e in log["entries"]] == [0, 204]
    assert log["entries"][0]["_mcp"]["unanswered"] is True
    write(session_of(req("in", 1, "ping", 5), resp("out", 1, t=9)), tmp_path / "t.har", "har")


def test_convert_writes_the_same_trace_as_import(tmp_path):
    src = fixture("assay-docs/edge_case.json")
    via_convert = tmp_path / "a.trace.jsonl"
    result = convert(src, via_convert)
    assert result.to == "assay-v2" and result.output_choice.obvious
    assert any("orphan" in w for w in result.warnings)
    via_import = tmp_path / "b.trace.jsonl"
    import_session(src, via_import, options=ImportOptions(episode_id="edge_case"))
    assert via_convert.read_bytes() == via_import.read_bytes()
    simple = tmp_path / "c.jsonl"
    convert(src, simple, to="simple")
    lines = [json.loads(x) for x in simple.read_text().splitlines()]
    assert {x["type"] for x in lines} == {"tool_call", "tool_result"}
