"""mcpsnoop session logs and the Inspector network export, for which no file is published: read from files
written here field by field from their source (``samples.py``)."""

from __future__ import annotations

from mcpreel._infra.timeutil import ms_from_iso
from mcpreel.formats import open_session
from mcpreel.model import Kind
from mcpreel.redact import MARKER

from .samples import write_inspector_network, write_mcpsnoop


def test_mcpsnoop_envelopes(tmp_path):
    s, d = open_session(write_mcpsnoop(tmp_path / "s-7f3a.jsonl"))
    s.materialize()
    assert d.format == "mcpsnoop"
    info = s.info
    assert (info.id, info.label, info.transport) == ("s-7f3a", "weather", "streamable-http")
    assert info.command == ["npx", "weather-mcp"] and info.extra["mcpsnoop"] == {"cwd": "/srv"}
    recs = s.messages
    assert [(r.kind, r.dir) for r in recs] == [
        ("message", "in"), ("message", "out"), ("message", "in"), ("message", "out"), ("stderr", None), ("invalid", "out")]
    assert [r.seq for r in recs] == [1, 2, 3, 4, 5, 6]
    call = recs[0]
    assert call.ctx == {"headers": {"Mcp-Method": "tools/call", "Mcp-Name": "forecast", "MCP-Protocol-Version": "2026-07-28",
                                    "Mcp-Param-City": "Oslo", "Mcp-Param-Token": MARKER}, "conn_id": "c1"}
    assert call.t == ms_from_iso("2026-08-20T08:00:00.100Z")
    # the 401 keeps its status and WWW-Authenticate challenge
    assert recs[1].ctx["status"] == 401 and recs[1].ctx["headers"]["WWW-Authenticate"].startswith("Bearer resource_metadata=")
    # the same JSON-RPC id on another connection: both exchanges are there, in order
    assert recs[2].ctx["conn_id"] == "c2" and recs[3].raw["result"]["content"][0]["text"] == "rain"
    assert recs[3].extra == {"mcpsnoop": {"batch": True, "truncated": True}}
    assert recs[4].text == "warn: cache cold" and recs[5].text == "not json <&>"


def test_inspector_network_export(tmp_path):
    s, d = open_session(write_inspector_network(tmp_path / "inspector-network-weather-2026-08-20T08-00-05.000Z.json"))
    s.materialize()
    assert d.format == "inspector-network"
    recs = s.messages
    kinds = [(r.kind, r.dir) for r in recs]
    assert kinds == [
        ("transport", "in"), ("transport", "out"),  # the OAuth discovery request: not MCP
        ("message", "in"), ("message", "out"),  # tools/list and its JSON answer
        ("message", "in"), ("message", "out"), ("message", "out"),  # tools/call answered over SSE: progress, result
        ("message", "in"), ("transport", "out"),  # a notification and its 202
        ("message", "in"), ("transport", "out"),  # a ping whose fetch failed
    ]
    assert recs[1].ctx["body"] == '{"resource":"https://w.example/mcp"}'
    # credentials redacted on read, and the notes say so
    assert recs[2].ctx["headers"] == {"content-type": "application/json", "Authorization": MARKER, "Cookie": MARKER}
    assert recs[3].ctx["headers"]["set-cookie"] == MARKER and recs[4].ctx["headers"]["authorization"] == MARKER
    assert any("credential headers" in n and n.startswith("4 ") for n in s.info.notes)
    assert "sk-live" not in repr([r.ctx for r in recs])
    # times: the request at timestamp, the answer at timestamp + duration
    assert recs[3].t - recs[2].t == 30 and recs[6].t - recs[4].t == 250
    assert recs[5].ctx["sse"] == {"event": "message", "id": "e1"} and recs[5].method == "notifications/progress"
    assert recs[6].raw["result"]["content"][0]["text"] == "ok"
    assert recs[8].ctx["status"] == 202 and recs[10].ctx["error"] == "Failed to fetch"
    assert s.info.url == "https://w.example/mcp"
    assert all(r.extra["inspector"]["id"] for r in recs)


def test_inspector_network_import_pairs_the_tool_call(tmp_path):
    from ..support import t1

    s, _ = open_session(write_inspector_network(tmp_path / "n.json"))
    got = t1(s)
    assert [c[1] for c in got["calls"]] == ["forecast"]
    assert got["calls"][0][3] == {"content": [{"type": "text", "text": "ok"}]}
    assert Kind.MESSAGE in {m.kind for m in s}


PROTOCOL_EXPORT = [  # MessageEntry[] (core/mcp/types.ts), as App.tsx writes it: JSON.stringify(entries, null, 2)
    {"id": "6f1c", "timestamp": "2026-08-20T08:00:00.000Z", "direction": "request", "origin": "client",
     "message": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"m": "x"}}},
     "response": {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "x"}]}}, "duration": 42},
    {"id": "77aa", "timestamp": "2026-08-20T08:00:00.010Z", "direction": "notification", "origin": "server",
     "message": {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}},
    {"id": "81b0", "timestamp": "2026-08-20T08:00:01.000Z", "direction": "request", "origin": "client",
     "message": {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow", "arguments": {}}},
     "clientError": "Request timed out"},
    {"id": "9c3d", "timestamp": "2026-08-20T08:00:02.000Z", "direction": "response",  # no pending request, no origin
     "message": {"jsonrpc": "2.0", "id": 7, "result": {}}},
]


def test_inspector_protocol_export(tmp_path):
    import json

    path = tmp_path / "inspector-protocol-weather-2026-08-20T08-00-03.000Z.json"
    path.write_text(json.dumps(PROTOCOL_EXPORT, indent=2))
    s, d = open_session(path)
    s.materialize()
    assert d.format == "inspector"
    recs = s.messages
    assert [(r.dir, r.method, r.id) for r in recs] == [
        ("in", "tools/call", 1), ("out", None, 1), ("out", "notifications/message", None), ("in", "tools/call", 2),
        ("out", None, 7)]
    assert recs[1].t - recs[0].t == 42  # the folded response, unfolded at timestamp + duration
    assert recs[3].extra == {"id": "81b0", "clientError": "Request timed out"}
    from ..support import t1

    calls = t1(s)["calls"]
    assert [c[1] for c in calls] == ["echo", "slow"] and calls[1][4] is not None  # the timed-out call: unanswered
