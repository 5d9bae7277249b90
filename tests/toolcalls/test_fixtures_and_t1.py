"""The Assay documentation's own examples, and T1: one session in every encoding, one meaning."""

from __future__ import annotations

import json

import pytest

from .helpers import call, ok, projection, run_import

ASSAY = "assay-docs"


def fx(fixtures_dir, name):
    return fixtures_dir / ASSAY / name


@pytest.mark.parametrize(("name", "fmt"), [
    ("import-formats@HEAD__01.json", "streamable-http"),
    ("import-formats@HEAD__03.json", "streamable-http"),
    ("import-formats@HEAD__04.json", "streamable-http"),
    ("import-formats@HEAD__05.json", "http-sse"),
    ("import-formats@HEAD__06.jsonl", "jsonrpc"),
    ("import-formats@pre-T1__01.json", "inspector"),
    ("import-formats@pre-T1__02.json", "jsonrpc"),
    ("operator-proof-flow@HEAD__01.json", "streamable-http"),
    ("edge_case.json", "inspector"),
    ("inspector-array-session.json", "inspector"),
])
def test_every_assay_example_imports_with_its_format_and_auto(fixtures_dir, tmp_path, name, fmt):
    src = tmp_path / name
    src.write_bytes(fx(fixtures_dir, name).read_bytes())
    given = run_import(src, fmt=fmt)[0]
    auto = run_import(src)[0]
    assert given == auto
    assert given[0]["type"] == "episode_start" and given[-1]["type"] == "episode_end"


def test_canonical_envelope(fixtures_dir, tmp_path):
    events, report, warnings, _ = run_import(fx(fixtures_dir, "import-formats@HEAD__01.json"))
    tc = [e for e in events if e["type"] == "tool_call"]
    assert [(e["tool_name"], e["args"], e["result"]) for e in tc] == [("lookup_customer", {"id": "cust_123"}, {"name": "Alice"})]
    assert events[-1]["timestamp"] == 1002 and events[-1]["final_output"] == '{"name":"Alice"}'
    assert report.orphans == 0 and report.unanswered == 0


def test_edge_case(fixtures_dir):
    events, report, warnings, _ = run_import(fx(fixtures_dir, "edge_case.json"))
    calls = {e["tool_name"]: e for e in events if e["type"] == "tool_call"}
    assert calls["valid_tool"]["result"] == {"content": [{"type": "text", "text": "Result 1"}]}
    assert calls["orphan_request"]["error"] == "timeout/no_response"
    assert calls["complex_tool"]["args"] == {"active": True, "user": {"name": "Alice", "roles": ["admin", "editor"]}}
    assert report.orphans == 1 and any('"3"' in w for w in warnings)
    assert list(calls) == ["valid_tool", "complex_tool", "orphan_request"]  # unanswered flushed last


def test_inspector_array_session(fixtures_dir):
    events, *_ = run_import(fx(fixtures_dir, "inspector-array-session.json"), fmt="inspector")
    assert [e["name"] for e in events if e["type"] == "step"] == ["tools/list", "tools/list.result", "ApplyDiscount"]


def test_http_sse_fixture_endpoint_is_transport_only(fixtures_dir):
    events, report, *_ = run_import(fx(fixtures_dir, "import-formats@HEAD__05.json"))
    assert report.messages == 2 and report.orphans == 0
    assert [e["result"] for e in events if e["type"] == "tool_call"] == [{"sum": 3}]


# -- T1: the same session in every encoding ----------------------------------------------------------

SESSION = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}}},
    ok(1, {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}),
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ok(2, {"tools": [{"name": "Calculator", "description": "adds", "inputSchema": {"type": "object"}}]}),
    call("call-1", "Calculator", {"a": 1, "b": 2}),
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 50}},
    ok("call-1", {"content": [{"type": "text", "text": "{\"sum\": 3}"}]}),
    call(7, "Fail", {}),
    {"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "bad args"}},
    call(8, "Never", {"x": [1, 2]}),
    ok("ghost", {"late": True}),
]


def _is_client(m):
    return "method" in m and m["method"] != "notifications/progress"


def encodings(tmp_path):
    files = {}
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(m) + "\n" for m in SESSION))
    files["jsonrpc-jsonl"] = (tmp_path / "s.jsonl", "jsonrpc")
    (tmp_path / "arr.json").write_text(json.dumps(SESSION, indent=2))
    files["jsonrpc-array"] = (tmp_path / "arr.json", "jsonrpc")
    (tmp_path / "msgs.json").write_text(json.dumps({"messages": SESSION}))
    files["inspector-messages"] = (tmp_path / "msgs.json", "inspector")
    (tmp_path / "events.json").write_text(json.dumps({"events": SESSION}))
    files["inspector-events"] = (tmp_path / "events.json", "inspector")
    (tmp_path / "bare.json").write_text(json.dumps(SESSION))
    files["inspector-bare"] = (tmp_path / "bare.json", "inspector")
    # inspector v2 export: responses folded into their request entries
    v2, pending = [], {}
    for i, m in enumerate(SESSION):
        if "method" in m:
            e = {"id": i, "timestamp": f"2026-01-01T00:00:{i:02d}.000Z",
                 "direction": "request" if "id" in m else "notification",
                 "origin": "client" if _is_client(m) else "server", "message": m}
            v2.append(e)
            if "id" in m:
                pending[m["id"]] = e
        elif m["id"] in pending:
            e = pending.pop(m["id"])
            e["response"] = m
            e["duration"] = 0
        else:
            v2.append({"id": i, "timestamp": f"2026-01-01T00:00:{i:02d}.000Z", "direction": "response", "origin": "server", "message": m})
    (tmp_path / "v2.json").write_text(json.dumps(v2))
    files["inspector-v2"] = (tmp_path / "v2.json", "inspector")
    # HTTP envelopes
    def entries(sse_responses, encode):
        out = []
        for i, m in enumerate(SESSION):
            e = {"timestamp_ms": 1000 + i}
            if _is_client(m):
                e["request"] = m
            elif sse_responses or "method" in m:
                e["sse"] = {"event": "message", "id": f"evt-{i}", "data": json.dumps(m) if encode else m}
            else:
                e["response"] = m
            out.append(e)
        return out
    for label, sse, enc, transport in [("streamable-json", False, False, "streamable-http"),
                                       ("streamable-sse", True, False, "streamable-http"),
                                       ("http-sse", True, True, "http-sse")]:
        ent = entries(sse, enc)
        if transport == "http-sse":
            ent.insert(0, {"timestamp_ms": 999, "sse": {"event": "endpoint", "id": "evt-0", "data": "/mcp/messages?session=legacy"}})
        (tmp_path / f"{label}.json").write_text(json.dumps({"transport": transport, "entries": ent}))
        files[label] = (tmp_path / f"{label}.json", transport)
    return files


def test_t1_equivalence_across_every_encoding(tmp_path):
    files = encodings(tmp_path)
    projections = {}
    for label, (path, fmt) in files.items():
        events, report, warnings, _ = run_import(path, fmt=fmt)
        projections[label] = projection(events)
        assert report.orphans == 1, label
        assert report.unanswered == 1, label
    reference = projections["jsonrpc-jsonl"]
    assert reference["calls"][0][1:4] == ("Calculator", {"a": 1, "b": 2}, {"content": [{"type": "text", "text": "{\"sum\": 3}"}]})
    assert reference["final_output"] == '{"late":true}'
    for label, proj in projections.items():
        assert proj == reference, label
