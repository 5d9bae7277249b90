"""Every published file of another recorder (``../shared/fixtures/hub``) reads, and says what the file says:
message counts, directions, pairing (every response answers a request sent the other way), times, and
specific messages, per file."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from mcpreel._infra.timeutil import ms_from_iso
from mcpreel.model import Kind, Session

from ..support import fixture, read


def hub(rel: str) -> Path:
    return fixture(f"hub/{rel}")


def msgs(session: Session):
    return [m for m in session if m.kind == Kind.MESSAGE]


def unpaired(session: Session) -> tuple[list, list]:
    """(requests never answered, responses with no request): pairing by (direction, id), in order."""
    pending: dict = {}
    orphans = []
    for m in msgs(session):
        raw = m.raw
        if not isinstance(raw, dict):
            continue
        if "method" in raw and "id" in raw:
            pending.setdefault((m.dir, repr(raw["id"])), []).append(raw)
        elif "method" not in raw:
            key = ("out" if m.dir == "in" else "in", repr(raw.get("id")))
            if pending.get(key):
                pending[key].pop(0)
            else:
                orphans.append(raw)
    return [r for v in pending.values() for r in v], orphans


def directions(session: Session) -> Counter:
    return Counter(m.dir for m in msgs(session))


def ms(text: str) -> int:
    return ms_from_iso(text)


# -- MCPSpy --------------------------------------------------------------------------------------------

def test_mcpspy_stdio():
    s = read(hub("mcpspy/tests__expected_output_stdio.jsonl"))
    assert s.info.source_format == "mcpspy" and s.info.transport == "stdio"
    m = msgs(s)
    assert len(m) == 27 and directions(s) == Counter({"in": 13, "out": 14})
    assert unpaired(s) == ([], [])  # 12 requests, 12 responses (the responses' embedded requests agree)
    # the frame is `raw`, in wire key order, not the sorted lifted members
    assert list(m[0].raw) == ["method", "params", "jsonrpc", "id"]
    assert m[0].raw["params"]["clientInfo"] == {"name": "mcp", "version": "0.1.0"}
    assert m[0].t == ms("2025-11-29T21:54:51.585900784+02:00")  # nanoseconds and an offset, to the ms
    # the error whose code MCPSpy dropped from the lifted `error` (code 0) keeps it from `raw`
    err = m[12].raw
    assert err["id"] == 5 and err["error"]["code"] == 0 and "Unknown log file" in err["error"]["message"]
    # two log notifications from the server inside the last tool call, before its response
    assert [x.raw.get("method") for x in m[22:25]] == ["notifications/message", "notifications/message", None]
    assert [x.dir for x in m[22:25]] == ["out", "out", "out"]
    assert m[0].extra["mcpspy"]["stdio_transport"]["from_pid"] == 54777
    assert [x.t for x in m] == sorted(x.t for x in m)


# -- mcp-cassette (npm) ----------------------------------------------------------------------------------

def test_mcp_cassette_npm_v1_real_recording():
    s = read(hub("mcp-cassette-npm/tests__fixtures__tiny-server.golden.cassette.jsonl"))
    assert s.info.source_format == "mcp-cassette-npm"
    assert s.info.producer == {"name": "mcp-cassette", "version": "0.1.2"}
    assert s.info.command == ["node", "tests/fixtures/tiny-server.mjs"] and s.info.transport == "stdio"
    assert s.info.extra["mcp_cassette"] == {"cassetteVersion": 1, "redaction": {"applied": True}}
    m = msgs(s)
    assert [x.method for x in m] == ["initialize", None, "notifications/initialized", "tools/list", None]
    assert [x.dir for x in m] == ["in", "out", "in", "in", "out"]
    start = ms("2026-08-15T14:02:44.380Z")
    assert [x.t - start for x in m] == [4, 85, 85, 85, 85]  # t is an offset from startedAt
    assert unpaired(s) == ([], [])
    assert [t["name"] for t in m[4].raw["result"]["tools"]] == ["echo", "add", "slugify"]


def test_mcp_cassette_npm_v2_fixture():
    s = read(hub("mcp-cassette-npm/tests__fixtures__stdio-tape.jsonl"))
    assert s.info.extra["mcp_cassette"]["cassetteVersion"] == 2
    m = msgs(s)
    assert [(x.dir, x.method) for x in m] == [("in", "tools/list"), ("out", None)]
    assert m[1].raw["result"]["tools"][0]["name"] == "echo"
    assert m[1].t - s.info.started == 2


# -- mcp-cassette (PyPI) ---------------------------------------------------------------------------------

def test_mcp_cassette_pypi_v1_stdio():
    s = read(hub("mcp-cassette-pypi/examples__cassettes__echo_and_add.mcp.json"))
    assert s.info.source_format == "mcp-cassette-pypi" and s.info.transport == "stdio"
    assert s.info.extra["mcp_cassette"]["format_version"] == 1
    m = msgs(s)
    assert len(m) == 7 and directions(s) == Counter({"in": 4, "out": 3})
    assert [x.seq for x in m] == list(range(7))
    assert unpaired(s) == ([], [])
    assert [x.t - s.info.started for x in m] == [125, 125, 125, 125, 187, 187, 187]
    assert any("recorded_at + t_offset_ms" in n for n in s.info.notes)


def test_mcp_cassette_pypi_sampling_nested_in_a_tool_call():
    s = read(hub("mcp-cassette-pypi/examples__cassettes__sampling.mcp.json"))
    m = msgs(s)
    sampling = m[4]
    assert (sampling.dir, sampling.method, sampling.id) == ("out", "sampling/createMessage", "s1")
    assert sampling.raw["params"]["maxTokens"] == "REDACTED"  # the recorder's redaction, kept as it is
    assert sampling.extra == {"mcp_cassette": {"redacted": True}}
    assert (m[5].dir, m[5].id) == ("in", "s1") and m[5].raw["result"]["model"] == "example-llm"
    assert (m[6].dir, m[6].id) == ("out", 2)
    assert unpaired(s) == ([], [])


def test_mcp_cassette_pypi_http_keeps_exchange_and_channel():
    s = read(hub("mcp-cassette-pypi/examples__cassettes__http_echo_and_add.mcp.json"))
    assert s.info.transport == "streamable-http" and s.info.url == "http://127.0.0.1:58990/mcp"
    m = msgs(s)
    assert [x.ctx for x in m[:3]] == [{"exchange": 0}, {"exchange": 0, "channel": "post"}, {"exchange": 1}]
    assert m[6].raw["result"]["content"][0]["text"] == "42"
    assert unpaired(s) == ([], [])
    assert [x.t - s.info.started for x in m] == [125, 140, 156, 188, 188, 203, 203]


def test_mcp_cassette_pypi_tools():
    s = read(hub("mcp-cassette-pypi/examples__cassettes__tools.mcp.json"))
    m = msgs(s)
    assert [x.method for x in m] == ["initialize", "notifications/initialized", "tools/list", None, None]
    assert unpaired(s) == ([], [])


# -- MCP-VCR ---------------------------------------------------------------------------------------------

def test_mcp_vcr_error_response():
    s = read(hub("mcp-vcr/fixtures__jsonrpc_error_response.yaml"))
    assert s.info.source_format == "mcp-vcr" and s.info.id == "d6c9e5f2"
    assert s.info.command == ["python", "server.py"] and s.info.transport is None
    assert s.info.metadata["client_hint"] == "claude-desktop"
    m = msgs(s)
    assert [x.dir for x in m] == ["in", "out", "in", "out"]
    assert m[3].raw["error"] == {"code": -32601, "message": "Method not found"}
    assert [x.t - ms("2026-05-18T10:15:00.000Z") for x in m] == [0, 20, 30, 45]
    assert unpaired(s) == ([], [])


def test_mcp_vcr_notifications():
    s = read(hub("mcp-vcr/fixtures__with_notifications.yaml"))
    m = msgs(s)
    assert len(m) == 8 and directions(s) == Counter({"in": 4, "out": 4})
    assert (m[5].dir, m[5].method) == ("out", "notifications/tools/list_changed")
    assert [t["name"] for t in m[7].raw["result"]["tools"]] == ["tool_a", "tool_b"]
    assert unpaired(s) == ([], [])


@pytest.mark.parametrize(("name", "tool", "text"), [
    ("mcp_vcr__community__filesystem__tool_call_read_file.yaml", "read_file", "Error reading file: File not found"),
    ("mcp_vcr__community__time__tool_call_get_current_time.yaml", "get_current_time",
     "Current time in UTC: 2026-08-16T12:00:00Z"),
])
def test_mcp_vcr_community_tool_calls(name, tool, text):
    s = read(hub(f"mcp-vcr/{name}"))
    m = msgs(s)
    assert [x.method for x in m] == ["initialize", None, "notifications/initialized", "tools/call", None]
    assert m[3].raw["params"]["name"] == tool
    assert m[4].raw["result"]["content"][0]["text"] == text  # a time stays the string it was (no YAML timestamp)
    assert unpaired(s) == ([], [])


def test_mcp_vcr_community_tools_list():
    s = read(hub("mcp-vcr/mcp_vcr__community__filesystem__initialize_and_tools_list.yaml"))
    m = msgs(s)
    assert len(m) == 5 and [t["name"] for t in m[4].raw["result"]["tools"]] == ["read_file", "write_file", "list_directory"]
    assert s.info.command == ["npx", "@modelcontextprotocol/server-filesystem", "/tmp"]


# -- agent-vcr -------------------------------------------------------------------------------------------

def test_agent_vcr_errors():
    s = read(hub("agent-vcr/examples__recordings__calculator-errors.vcr"))
    assert s.info.source_format == "agent-vcr" and s.info.transport == "stdio"
    assert s.info.command == ["node", "calculator-server.js", "--v2"]
    assert s.info.metadata["tags"]["purpose"] == "error-injection-testing"
    m = msgs(s)
    assert len(m) == 10 and directions(s) == Counter({"in": 5, "out": 5})
    assert [x.method for x in m[:2]] == ["initialize", None] and m[0].t is None  # the handshake has no time
    assert not any(x.method == "notifications/initialized" for x in m)  # not stored, not made up
    assert m[5].raw["error"]["code"] == -32603 and m[7].raw["error"]["code"] == -32601
    # response time = the interaction's timestamp + latency_ms (28.1 ms -> 28)
    assert (m[2].t, m[3].t) == (ms("2026-02-08T16:00:01.000Z"), ms("2026-02-08T16:00:01.028Z"))
    assert "timestamps have no time zone: read as UTC" in s.info.notes
    assert unpaired(s) == ([], [])


def test_agent_vcr_v1():
    s = read(hub("agent-vcr/examples__recordings__calculator-v1.vcr"))
    m = msgs(s)
    assert len(m) == 8 and unpaired(s) == ([], [])
    assert [x.raw["params"]["name"] for x in m if x.method == "tools/call"] == ["add", "multiply"]
    assert [x.raw["result"]["content"][0]["text"] for x in m[5::2]] == ["42", "42"]
    assert m[5].t - m[4].t == 9 and s.info.command == ["node", "calculator-server.js"]


# -- mcp-conformance wire traces ---------------------------------------------------------------------------

def test_conformance_http_session_folds_http_events_into_ctx():
    s = read(hub("mcp-conformance-tomtom215/corpus__good__http-session.jsonl"))
    assert s.info.source_format == "mcp-conformance" and s.info.transport == "streamable-http"
    records = list(s)
    assert [(r.kind, r.dir) for r in records] == [
        ("message", "in"), ("message", "out"), ("message", "in"), ("transport", "out"), ("message", "in"), ("message", "out")]
    assert records[1].ctx == {"exchange": 1, "status": 200,
                              "headers": {"content-type": "application/json", "mcp-session-id": "0aB3-xYz~9"}}
    assert records[3].ctx == {"exchange": 2, "status": 202}  # the 202 with no body: transport only
    assert [r.seq for r in records] == [1, 3, 5, 6, 8, 10]
    assert all(r.t is None for r in records) and any("no times" in n for n in s.info.notes)
    assert unpaired(s) == ([], [])


def test_conformance_stdio_feature_session():
    s = read(hub("mcp-conformance-tomtom215/corpus__good__stdio-feature-session.jsonl"))
    m = msgs(s)
    assert len(m) == 27 and directions(s) == Counter({"in": 13, "out": 14})
    assert unpaired(s) == ([], [])
    assert m[25].raw["params"]["_meta"] == {"com.example/request-id": "r-12"}


def test_conformance_stateless_session_reuses_ids_and_cancels():
    s = read(hub("mcp-conformance-tomtom215/corpus__draft__good__stateless-session.jsonl"))
    m = msgs(s)
    assert len(m) == 14
    assert [x.method for x in m[:2]] == ["tools/list", None] and m[2].id == 1  # id 1 again, once answered
    assert m[7].raw["result"]["resultType"] == "input_required"
    assert m[12].method == "notifications/cancelled"
    pending, orphans = unpaired(s)
    assert [r["id"] for r in pending] == [90] and orphans == []  # the cancelled call is never answered


@pytest.mark.parametrize("name", ["corpus__draft__captured__reference-host-2026-07-28-stdio.jsonl",
                                  "corpus__draft__captured__reference-host-2026-07-28-http.jsonl"])
def test_conformance_captured_2026_sessions(name):
    s = read(hub(f"mcp-conformance-tomtom215/{name}"))
    m = msgs(s)
    methods = Counter(x.method for x in m if x.dir == "in")
    assert methods["tools/call"] == 22 and methods["server/discover"] == 1 and methods["initialize"] == 0
    assert sum(1 for x in m if x.dir == "out" and x.is_response) == 37
    assert sum(1 for x in m if x.method == "notifications/progress") == 3
    pending, orphans = unpaired(s)
    assert orphans == []
    if "http" in name:
        assert s.info.transport == "streamable-http"
        statuses = Counter(x.ctx.get("status") for x in m if x.ctx and "status" in x.ctx)
        assert statuses == Counter({200: 36, 400: 1})
        assert m[0].ctx["headers"]["mcp-method"] == "server/discover"
    else:
        assert s.info.transport == "stdio" and all(x.ctx is None for x in m)
        assert methods["notifications/cancelled"] == 1
