"""The rules of each hub reader that the published files do not exercise, on small files written here from the
formats' descriptions: mcp-cassette's raw and chunks entries, unknown entries and future versions; MCPSpy over
HTTP; MCP-VCR's YAML corners; mcp-conformance lifecycle events and HTTP answers without a message."""

from __future__ import annotations

import json

import pytest

from mcpreel.errors import InputError
from mcpreel.formats import Source, get_reader, open_session
from mcpreel.model import Kind


def _jsonl(path, lines):
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


HEADER = {"type": "header", "cassetteVersion": 2, "recorder": "mcp-cassette@0.3.0", "startedAt": "2026-08-16T00:00:00Z",
          "transport": "http", "url": "http://127.0.0.1:1/mcp", "era": "modern", "sessioned": False}


def test_npm_cassette_raw_chunks_and_unknown_entries(tmp_path):
    path = _jsonl(tmp_path / "c.cassette.jsonl", [
        HEADER,
        {"type": "frame", "t": 3, "dir": "c2s", "frame": {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                                           "params": {"name": "slow", "arguments": {}}}},
        {"type": "chunks", "t": 5, "dir": "s2c", "id": 1, "via": "post", "origin": "live", "chunks": [
            {"t": 6, "frame": {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}},
            {"t": 9, "frame": {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}}]},
        {"type": "raw", "t": 10, "dir": "s2c", "data": "Listening on 3000"},
        {"type": "state", "t": 11, "note": "sketched in the doc, never written"},
        {"type": "frame", "t": 12, "dir": "c2s", "frame": {"jsonrpc": "2.0", "method": "notifications/cancelled"},
         "http": {"status": 400}},
    ])
    s, d = open_session(path)
    recs = s.materialize().messages
    assert d.format == "mcp-cassette-npm"
    assert s.info.transport == "streamable-http" and s.info.url == "http://127.0.0.1:1/mcp"
    assert s.info.extra["mcp_cassette"] == {"cassetteVersion": 2, "era": "modern", "sessioned": False}
    assert [(r.kind, r.dir) for r in recs] == [("message", "in"), ("message", "out"), ("message", "out"),
                                               ("invalid", "out"), ("event", "event"), ("message", "in")]
    assert [r.t - s.info.started for r in recs if r.t is not None] == [3, 6, 9, 10, 11, 12]
    assert recs[2].ctx == {"sse": {"event": "message"}, "stream": {"via": "post", "id": 1}}
    assert recs[2].extra == {"mcp_cassette": {"origin": "live"}}
    assert recs[3].text == "Listening on 3000"
    assert recs[4].raw == {"t": "2026-08-16T00:00:00.011Z", "dir": "event", "kind": "mcp-cassette.state",
                           "raw": {"type": "state", "t": 11, "note": "sketched in the doc, never written"}}
    assert recs[5].ctx == {"status": 400}
    # and a reel keeps every one of them, the unknown entry included
    from ..support import read_as, wire, write

    back = read_as(write(s, tmp_path / "c.reel.jsonl", "reel"), "reel")
    assert wire(back) == wire(s)


@pytest.mark.parametrize(("header", "needle"), [
    ({**HEADER, "cassetteVersion": 3}, "cassetteVersion 3 is not supported"),
    ({**HEADER, "transport": "ws"}, 'transport must be "stdio" or "http"'),
    ({"type": "frame", "t": 1, "dir": "c2s", "frame": {}}, "line 1 must be the mcp-cassette header"),
])
def test_npm_cassette_refuses_a_bad_header(tmp_path, header, needle):
    path = _jsonl(tmp_path / "c.jsonl", [header])
    with pytest.raises(InputError, match=needle):
        get_reader("mcp-cassette-npm")(Source(path)).materialize()


def test_mcpspy_over_http_takes_direction_from_is_request(tmp_path):
    base = {"transport_type": "http", "error": {}}
    path = _jsonl(tmp_path / "spy.jsonl", [
        {**base, "timestamp": "2025-11-29T21:54:51.1+02:00", "type": "request", "id": 1, "method": "tools/list",
         "http_transport": {"pid": 9, "comm": "node", "host": "127.0.0.1:8000", "is_request": True},
         "raw": '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'},
        {**base, "timestamp": "2025-11-29T21:54:51.2+02:00", "type": "response", "id": 1, "result": {"tools": []},
         "http_transport": {"pid": 9, "comm": "node", "host": "127.0.0.1:8000"},
         "request": {"type": "request", "id": 1, "method": "tools/list", "error": {}}},  # no raw: rebuilt
        {**base, "timestamp": "2025-11-29T21:54:51.3+02:00", "type": "notification", "method": "x",
         "http_transport": {"pid": 9, "comm": "node", "host": "127.0.0.1:8000"}, "raw": "{not json"},
    ])
    s, d = open_session(path)
    recs = s.materialize().messages
    assert d.format == "mcpspy" and s.info.transport == "streamable-http"
    assert [(r.kind, r.dir) for r in recs] == [("message", "in"), ("message", "out"), ("invalid", "out")]
    assert recs[1].raw == {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}
    assert recs[2].text == "{not json"


def test_mcp_vcr_written_as_json_is_sniffed(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"meta": {"version": 1, "recorded_at": "2026-05-18T10:15:00Z", "session_id": "d6c9e5f2",
                                         "server_command": ["x"], "schema_version": "1.0"},
                                "messages": [{"t": 0, "dir": "c2s", "payload": {"jsonrpc": "2.0", "id": 1, "method": "ping"}}]}))
    s, d = open_session(path)
    assert d.format == "mcp-vcr" and [m.method for m in s] == ["ping"]


def test_mcp_vcr_yaml_corners(tmp_path):
    good = tmp_path / "a.yaml"
    good.write_text("# a transcript\nmeta:\n  version: 1\n  recorded_at: 2026-05-18T10:15:00Z\n  session_id: d6c9e5f2\n"
                    "  server_command: [x]\n  schema_version: '1.0'\n  incomplete: true\n  incomplete_reason: timeout\n"
                    "messages:\n  - {t: 5, dir: s2c, payload: {jsonrpc: '2.0', method: notifications/message,\n"
                    "     params: {data: 2026-01-01T00:00:00Z}}}\n")
    s, d = open_session(good)
    m = s.materialize().messages
    assert d.format == "mcp-vcr"
    assert m[0].raw["params"]["data"] == "2026-01-01T00:00:00Z"  # an unquoted time stays a string
    assert s.info.metadata["recorded_at"] == "2026-05-18T10:15:00Z" and m[0].t - s.info.started == 5
    assert s.info.end_reason == "timeout"
    bad_key = tmp_path / "b.yaml"
    bad_key.write_text("meta: {version: 1}\nmessages:\n  - {t: 0, dir: c2s, payload: {1: x}}\n")
    with pytest.raises(InputError, match="a key that is not a string"):
        get_reader("mcp-vcr")(Source(bad_key))
    broken = tmp_path / "c.yaml"
    broken.write_text("meta: {version: 1}\nmessages: [\n")
    with pytest.raises(InputError, match=r"invalid YAML on line \d"):
        get_reader("mcp-vcr")(Source(broken))


def test_conformance_lifecycle_and_http_answers_without_a_message(tmp_path):
    ev = {"transport": "streamable-http"}
    path = _jsonl(tmp_path / "t.jsonl", [
        {**ev, "seq": 0, "direction": "client-to-server", "kind": "lifecycle", "event": "transport-open"},
        {**ev, "seq": 1, "direction": "client-to-server", "kind": "http", "headers": {"mcp-method": "tools/call"}},
        {**ev, "seq": 2, "direction": "client-to-server", "kind": "message", "ts": "2026-08-17T10:00:00Z",
         "payload": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "arguments": {}}}},
        {**ev, "seq": 3, "direction": "server-to-client", "kind": "http", "status": 400,
         "headers": {"content-type": "text/plain"}},
        {**ev, "seq": 4, "direction": "client-to-server", "kind": "http", "headers": {}},
        {**ev, "seq": 5, "direction": "client-to-server", "kind": "message",
         "payload": {"jsonrpc": "2.0", "id": 2, "method": "ping"}},
        {**ev, "seq": 6, "direction": "server-to-client", "kind": "lifecycle", "event": "transport-abort"},
    ])
    s, d = open_session(path)
    recs = s.materialize().messages
    assert d.format == "mcp-conformance"
    assert [(r.kind, r.dir, r.seq) for r in recs] == [
        ("transport", "in", 0), ("message", "in", 2), ("transport", "out", 3), ("message", "in", 5), ("transport", "out", 6)]
    assert recs[2].ctx == {"exchange": 1, "status": 400, "headers": {"content-type": "text/plain"}}
    assert recs[4].ctx == {"event": "transport-abort"}
    assert recs[1].t is not None and s.info.notes == []  # a trace with a ts somewhere says nothing about times
    assert Kind.TRANSPORT in {r.kind for r in recs}
