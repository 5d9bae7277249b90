"""``export otlp --convention openinference``: the GenAI mapping's spans with OpenInference's attributes
(span kinds, input/output with MIME types, the listed tool definitions, ``session.id``), always redacted,
and genai still the default."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mcpreel.errors import UsageError
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.otel.export import mapper_for
from mcpreel.otel.mapping import spans as genai_spans

SECRET = "sk-live-abcdefghijklmnopqrstuvwx1234567890"


def session() -> Session:
    raw = [
        ("in", {"id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
                                                             "clientInfo": {"name": "c", "version": "1"}}}),
        ("out", {"id": 1, "result": {"protocolVersion": "2025-11-25", "serverInfo": {"name": "s", "version": "2"}}}),
        ("in", {"id": 2, "method": "tools/list"}),
        ("out", {"id": 2, "result": {"tools": [{"name": "login", "description": "Log in",
                                                "inputSchema": {"type": "object", "properties": {"api_key": {}}}}]}}),
        ("in", {"id": 3, "method": "tools/call", "params": {"name": "login", "arguments": {"api_key": SECRET}}}),
        ("out", {"id": 3, "result": {"content": [{"type": "text", "text": "welcome"}]}}),
        ("in", {"id": 4, "method": "tools/call", "params": {"name": "unlisted", "arguments": {}}}),
        ("out", {"id": 4, "error": {"code": -32602, "message": "no such tool"}}),
        ("in", {"id": 5, "method": "prompts/get", "params": {"name": "greet"}}),
        ("out", {"id": 5, "result": {"messages": []}}),
    ]
    msgs = [Message(d, {"jsonrpc": "2.0", **r}, 1_700_000_000_000 + i) for i, (d, r) in enumerate(raw)]
    return Session(SessionInfo(id="sess-1", transport="stdio"), msgs)


def by_name(records):
    return {r.name: r for r in records}


def test_openinference_spans_carry_kinds_input_output_and_definitions():
    s = session()
    records = list(mapper_for("openinference", s).feed_all(s))
    spans = by_name(records)
    login = spans["tools/call login"].attributes
    assert login["openinference.span.kind"] == "TOOL" and login["tool.name"] == "login"
    assert login["tool.description"] == "Log in"
    assert json.loads(login["tool.parameters"]) == {"type": "object", "properties": {"api_key": {}}}
    assert login["input.mime_type"] == login["output.mime_type"] == "application/json"
    assert json.loads(login["input.value"])["name"] == "login"
    assert SECRET not in login["input.value"] and "REDACTED" in login["input.value"]  # always redacted
    assert json.loads(login["output.value"]) == {"content": [{"type": "text", "text": "welcome"}]}
    assert login["session.id"] == login["mcp.session.id"] == "sess-1"
    assert not [k for r in records for k in r.attributes if k.startswith("gen_ai.")]
    unlisted = spans["tools/call unlisted"]
    assert "tool.description" not in unlisted.attributes  # the session never listed it
    assert json.loads(unlisted.attributes["output.value"]) == {"code": -32602, "message": "no such tool"}
    assert unlisted.error is not None
    assert spans["prompts/get greet"].attributes["openinference.span.kind"] == "PROMPT"
    assert spans["tools/list"].attributes["openinference.span.kind"] == "CHAIN"
    root = spans["mcp session s"].attributes
    assert root["openinference.span.kind"] == "CHAIN" and root["session.id"] == "sess-1"
    # the same spans as the genai mapping: names, kinds, times, tree
    genai = genai_spans(s)
    assert sorted((r.name, r.kind, r.start_ns, r.end_ns) for r in genai) == sorted(
        (r.name, r.kind, r.start_ns, r.end_ns) for r in records)


def test_genai_stays_the_default_and_an_unknown_convention_is_refused(tmp_path):
    reel = tmp_path / "s.jsonl"
    from mcpreel.convert import write_session

    write_session(session(), reel, "reel")
    out = tmp_path / "spans.json"
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "export", "otlp", str(reel), "-o", str(out)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "gen_ai.tool.name" in out.read_text() and "openinference" not in out.read_text()
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "export", "otlp", str(reel), "-o", str(out),
                           "--convention", "openinference"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert "openinference.span.kind" in text and "gen_ai." not in text and SECRET not in text
    with pytest.raises(UsageError, match="unknown span convention"):
        mapper_for("zipkin", session())
