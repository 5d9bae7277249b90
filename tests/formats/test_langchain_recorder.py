"""The read-only formats: LangChain / LangSmith runs and mcp-recorder cassettes."""

from __future__ import annotations

import json

import pytest

from mcpreel.errors import FormatError
from mcpreel.formats import open_session
from mcpreel.inspection import analyze
from mcpreel.model import Kind

from .support import fixture, read, t1

PREVIEW = {"runs": [{"id": "run_abc123", "name": "Tool", "inputs": {"tool": "get_customer", "tool_input": {"id": "cust_123"}},
                     "outputs": {"output": {"name": "Alice"}}}]}


def _file(tmp_path, doc, name="runs.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_seed_001_preview_becomes_one_call(tmp_path):
    session, detection = open_session(_file(tmp_path, PREVIEW))
    assert detection.format == "langchain"
    req, resp = session.messages
    assert req.dir == "in" and req.raw == {"jsonrpc": "2.0", "id": "run_abc123", "method": "tools/call",
                                           "params": {"name": "get_customer", "arguments": {"id": "cust_123"}}}
    assert resp.dir == "out" and resp.raw == {"jsonrpc": "2.0", "id": "run_abc123", "result": {"name": "Alice"}}
    sem = t1(session)
    assert sem["calls"] == [("step_000", "get_customer", {"id": "cust_123"}, {"name": "Alice"}, None)]


def test_langsmith_runs_tool_runs_only_in_time_order_errors_and_children(tmp_path):
    runs = [
        {"id": "b", "run_type": "tool", "name": "search", "inputs": {"input": "{\"q\": \"x\"}"},
         "error": "Timeout", "start_time": "2024-05-01T12:00:02", "end_time": "2024-05-01T12:00:03.250"},
        {"id": "chain", "run_type": "chain", "name": "agent", "inputs": {}, "outputs": {},
         "start_time": "2024-05-01T12:00:00", "child_runs": [
             {"id": "a", "run_type": "tool", "name": "lookup", "inputs": {"input": "plain text"},
              "outputs": {"output": {"lc": 1, "type": "constructor", "id": ["langchain", "ToolMessage"],
                                     "kwargs": {"content": "found it", "tool_call_id": "c1"}}},
              "start_time": "2024-05-01T12:00:01Z", "end_time": "2024-05-01T12:00:01.5Z"},
             {"id": "llm", "run_type": "llm", "name": "gpt", "inputs": {}, "outputs": {}, "start_time": "2024-05-01T12:00:00"},
         ]},
    ]
    session, _ = open_session(_file(tmp_path, runs))
    msgs = session.messages
    assert [(m.dir, m.raw.get("method"), m.raw["id"]) for m in msgs] == [
        ("in", "tools/call", "a"), ("out", None, "a"), ("in", "tools/call", "b"), ("out", None, "b")]
    assert msgs[0].raw["params"] == {"name": "lookup", "arguments": {"input": "plain text"}}
    assert msgs[1].raw["result"] == "found it"
    assert msgs[2].raw["params"]["arguments"] == {"q": "x"}
    assert msgs[3].raw["error"] == {"code": -32603, "message": "Timeout"}
    assert msgs[3].t - msgs[2].t == 1250
    assert session.info.notes == ["skipped runs that are not tool runs: 1 chain, 1 llm"]
    assert t1(session)["calls"][1][4] == "mcp_error"


def test_a_run_without_outputs_is_unanswered(tmp_path):
    session, _ = open_session(_file(tmp_path, {"runs": [{"id": "r", "name": "t", "inputs": {"tool_input": {}}}]}))
    assert analyze(session).summary.unanswered == [0]


@pytest.mark.parametrize(("doc", "rule"), [
    ({"runs": [3]}, "run 1 must be a JSON object"),
    ({"runs": [{"id": "r", "inputs": {"tool_input": {}}}]}, "run 1: a tool run needs a name"),
    ({"runs": [{"id": "r", "name": "x", "inputs": "text"}]}, "run 1: inputs must be an object"),
])
def test_bad_runs(tmp_path, doc, rule):
    with pytest.raises(FormatError, match=rule):
        read(_file(tmp_path, doc), "langchain")


def test_mcp_recorder_cassette():
    session, detection = open_session(fixture("mcp-recorder/mcp-recorder_mock_session.json"))
    assert detection.format == "mcp-recorder"
    info = session.info
    assert info.transport == "streamable-http" and info.url == "http://127.0.0.1:8000"
    assert info.metadata["server_info"] == {"name": "Test Calculator", "version": "2.14.5"}
    msgs = session.messages
    kinds = [(m.kind, m.dir) for m in msgs]
    assert kinds.count((Kind.MESSAGE, "in")) == 7 and kinds.count((Kind.MESSAGE, "out")) == 6
    # the notification's bodiless 202, and the two lifecycle exchanges, are transport-only records
    transport = [m.ctx for m in msgs if m.kind == Kind.TRANSPORT]
    assert transport[0]["status"] == 202
    assert [(c["method"], c["path"], c["event"]) for c in transport[1:]] == [("DELETE", "/mcp", "lifecycle"),
                                                                             ("GET", "/mcp", "lifecycle")]
    # times: laid end to end from recorded_at; each latency is exact
    init, answer = msgs[0], msgs[1]
    assert init.t == info.started and answer.t - init.t == 7
    assert answer.ctx == {"status": 200, "sse": {"event": "message"}, "exchange": 1}
    report = analyze(session)
    assert report.summary.tools["add"].calls == 1 and report.summary.unanswered == []
    assert [c[1] for c in t1(session)["calls"]] == ["add", "multiply", "echo", "get_weather"]


def test_cassette_errors(tmp_path):
    with pytest.raises(FormatError, match='must have an "interactions" array'):
        read(_file(tmp_path, {"version": "1.0", "interactions": 1}), "mcp-recorder")
    with pytest.raises(FormatError, match="interaction 1: request must be a JSON-RPC object"):
        read(_file(tmp_path, {"interactions": [{"request": "x"}]}), "mcp-recorder")
