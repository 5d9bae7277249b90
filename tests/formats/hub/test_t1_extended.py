"""T1 extended to the hub: one session, hand-converted here into each other recorder's format (field by field,
as ``../shared/spec/08-other-recorders.md`` describes it), read back by our reader and imported, gives the same
Assay V2 trace (the T1 projection) as the reel of the same session; and the formats that keep every message
give back every message, direction and payload."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcpreel._infra.timeutil import iso_from_ms
from mcpreel.model import Session

from ..support import messages_only, note, read, read_as, req, resp, session_of, t1, write

T0 = 1_786_000_000_000


def the_session() -> Session:
    """Handshake, tools/list, a tool call with progress and a nested sampling request, a tool error, ping."""
    return session_of(
        req("in", 0, "initialize", T0, protocolVersion="2025-06-18", capabilities={}, clientInfo={"name": "c", "version": "1"}),
        resp("out", 0, {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}, T0 + 5),
        note("in", "notifications/initialized", T0 + 6),
        req("in", 1, "tools/list", T0 + 10),
        resp("out", 1, {"tools": [{"name": "summarize", "inputSchema": {"type": "object"}},
                                  {"name": "add", "inputSchema": {"type": "object"}}]}, T0 + 14),
        req("in", 2, "tools/call", T0 + 20, name="summarize", arguments={"text": "a long text"}),
        note("out", "notifications/progress", T0 + 22, progressToken=2, progress=0.5),
        req("out", "s1", "sampling/createMessage", T0 + 25, messages=[{"role": "user", "content": {"type": "text", "text": "hi"}}],
            maxTokens=10),
        resp("in", "s1", {"role": "assistant", "content": {"type": "text", "text": "short"}, "model": "m"}, T0 + 40),
        resp("out", 2, {"content": [{"type": "text", "text": "summary: short"}], "isError": False}, T0 + 45),
        req("in", 3, "tools/call", T0 + 50, name="add", arguments={"a": 1, "b": "x"}),
        resp("out", 3, error={"code": -32602, "message": "b must be a number"}, t=T0 + 53),
        req("in", 4, "ping", T0 + 60),
        resp("out", 4, {}, T0 + 61),
        command=["python", "server.py"], started=T0, id="sess-1",
    )


def _kind(raw: dict[str, Any]) -> str:
    if "method" in raw:
        return "request" if "id" in raw else "notification"
    return "response"


# -- the hand converters (what each other recorder would have written) ----------------------------------------

def to_mcpspy(s: Session, path: Path) -> None:
    lines = []
    requests: dict = {}
    for m in s:
        raw = m.raw
        client, server = {"pid": 100, "comm": "client"}, {"pid": 200, "comm": "server"}
        frm, to = (client, server) if m.dir == "in" else (server, client)
        ev: dict[str, Any] = {"timestamp": iso_from_ms(m.t).replace("Z", "+00:00"), "transport_type": "stdio",
                              "stdio_transport": {"from_pid": frm["pid"], "from_comm": frm["comm"],
                                                  "to_pid": to["pid"], "to_comm": to["comm"]},
                              "type": _kind(raw)}
        for k in ("id", "method", "params", "result"):
            if k in raw:
                ev[k] = raw[k]
        ev["error"] = raw.get("error", {})
        if ev["type"] == "request":
            requests[(m.dir, json.dumps(raw["id"]))] = raw
        elif ev["type"] == "response":
            ev["request"] = {"type": "request", **requests[("out" if m.dir == "in" else "in", json.dumps(raw["id"]))]}
        ev["raw"] = json.dumps(raw, separators=(",", ":"))
        lines.append(json.dumps(ev))
    path.write_text("\n".join(lines) + "\n")


def to_npm_cassette(s: Session, path: Path) -> None:
    start = s.info.started
    lines = [{"type": "header", "cassetteVersion": 2, "recorder": "mcp-cassette@test", "startedAt": iso_from_ms(start),
              "transport": "stdio", "command": s.info.command}]
    lines += [{"type": "frame", "t": m.t - start, "dir": "c2s" if m.dir == "in" else "s2c", "frame": m.raw} for m in s]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def to_pypi_cassette(s: Session, path: Path) -> None:
    start = s.info.started
    doc = {"format_version": 2, "recorded_at": iso_from_ms(start), "transport": "stdio", "server_url": None,
           "session_id": None, "protocol_version": "2025-06-18", "server_info": {"name": "s", "version": "1"},
           "messages": [{"seq": i, "t_offset_ms": m.t - start, "sender": "client" if m.dir == "in" else "server",
                         "kind": _kind(m.raw), "method": m.raw.get("method"), "msg_id": m.raw.get("id"),
                         "payload": m.raw, "redacted": False, "exchange": None, "channel": None}
                        for i, m in enumerate(s)]}
    path.write_text(json.dumps(doc, indent=2))


def to_mcp_vcr(s: Session, path: Path) -> None:
    start = s.info.started
    doc = {"meta": {"version": 1, "recorded_at": iso_from_ms(start), "session_id": "0a1b2c3d",
                    "server_command": s.info.command, "protocol_version": "2025-06-18", "schema_version": "1.0"},
           "messages": [{"t": m.t - start, "dir": "c2s" if m.dir == "in" else "s2c", "payload": m.raw} for m in s]}
    path.write_text(yaml.safe_dump(doc, sort_keys=True))


def to_agent_vcr(s: Session, path: Path) -> None:
    msgs = list(s)
    init_req, init_resp = msgs[0].raw, msgs[1].raw
    interactions: list[dict[str, Any]] = []
    answered: dict = {}
    for m in msgs[2:]:
        raw = m.raw
        if _kind(raw) == "request":
            it = {"sequence": len(interactions), "timestamp": iso_from_ms(m.t),
                  "direction": "client_to_server" if m.dir == "in" else "server_to_client",
                  "request": raw, "response": None, "notifications": [], "latency_ms": 0.0, "_t": m.t}
            interactions.append(it)
            answered[(m.dir, json.dumps(raw["id"]))] = it
        elif _kind(raw) == "response":
            it = answered.pop(("out" if m.dir == "in" else "in", json.dumps(raw["id"])))
            it["response"] = raw
            it["latency_ms"] = float(m.t - it["_t"])
        elif raw["method"] != "notifications/initialized":  # agent-vcr does not store it
            interactions[-1]["notifications"].append(raw)
    for it in interactions:
        it.pop("_t")
    doc = {"format_version": "1.0.0",
           "metadata": {"version": "1.0.0", "recorded_at": iso_from_ms(s.info.started), "transport": "stdio",
                        "client_info": {"name": "c", "version": "1"}, "server_info": {"name": "s", "version": "1"},
                        "server_command": "python server.py", "server_args": [], "tags": {}},
           "session": {"initialize_request": init_req, "initialize_response": init_resp,
                       "capabilities": {"tools": {}}, "interactions": interactions}}
    path.write_text(json.dumps(doc, indent=2))


def to_mcpsnoop(s: Session, path: Path) -> None:
    lines = [{"session_id": "sess-1", "server_label": "s", "seq": 0, "ts": iso_from_ms(s.info.started),
              "direction": "meta", "transport": "stdio", "raw": {"command": s.info.command}}]
    lines += [{"session_id": "sess-1", "server_label": "s", "seq": i + 1, "ts": iso_from_ms(m.t),
               "direction": "c2s" if m.dir == "in" else "s2c", "transport": "stdio", "raw": m.raw}
              for i, m in enumerate(s)]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def to_conformance(s: Session, path: Path) -> None:
    lines = [{"seq": i, "direction": "client-to-server" if m.dir == "in" else "server-to-client", "transport": "stdio",
              "kind": "message", "ts": iso_from_ms(m.t), "payload": m.raw} for i, m in enumerate(s)]
    path.write_text("".join(json.dumps(x, sort_keys=True) + "\n" for x in lines))


def to_inspector_network(s: Session, path: Path) -> None:
    """Over Streamable HTTP: each client message a POST; the answer to a request in its JSON body; server
    messages sent while a call runs (progress, the sampling request) in that call's SSE body, the client's
    answer to sampling a POST of its own answered 202."""
    msgs = list(s)
    entries: list[dict[str, Any]] = []
    open_call: dict[str, Any] | None = None
    for m in msgs:
        raw = m.raw
        if m.dir == "in":
            entry = {"id": f"e{len(entries)}", "timestamp": iso_from_ms(m.t), "method": "POST",
                     "url": "http://127.0.0.1:9/mcp", "requestHeaders": {"content-type": "application/json"},
                     "requestBody": json.dumps(raw), "category": "transport", "_t": m.t}
            if _kind(raw) != "request":
                entry.update(responseStatus=202, duration=1)
            elif raw["method"] == "tools/call" and raw["id"] == 2:
                entry.update(responseStatus=200, responseHeaders={"content-type": "text/event-stream"}, responseBody="")
                open_call = entry
            entries.append(entry)
            continue
        target = open_call if open_call is not None and not (_kind(raw) == "response" and raw["id"] != 2) else None
        if target is not None:
            target["responseBody"] += f"event: message\ndata: {json.dumps(raw)}\n\n"
            if _kind(raw) == "response":
                target["duration"] = m.t - target["_t"]
                open_call = None
            continue
        entry = next(e for e in reversed(entries) if json.loads(e["requestBody"]).get("id") == raw["id"])
        entry.update(responseStatus=200, responseHeaders={"content-type": "application/json"},
                     responseBody=json.dumps(raw), duration=m.t - entry["_t"])
    for e in entries:
        e.pop("_t")
    path.write_text(json.dumps(entries, indent=2))


CONVERTERS = {
    "mcpspy": (to_mcpspy, "s.jsonl", True),
    "mcp-cassette-npm": (to_npm_cassette, "s.cassette.jsonl", True),
    "mcp-cassette-pypi": (to_pypi_cassette, "s.mcp.json", True),
    "mcp-vcr": (to_mcp_vcr, "s.yaml", True),
    "agent-vcr": (to_agent_vcr, "s.vcr", False),  # notifications lose their place and initialized is not stored
    "mcpsnoop": (to_mcpsnoop, "s.jsonl", True),
    "mcp-conformance": (to_conformance, "s.jsonl", True),
    "inspector-network": (to_inspector_network, "s.json", False),  # server messages come with their HTTP answer
}


@pytest.mark.parametrize("fmt", sorted(CONVERTERS))
def test_the_same_trace_as_the_reel(fmt, tmp_path):
    session = the_session()
    reel = read_as(write(session, tmp_path / "s.reel.jsonl", "reel"), "reel")
    expected = t1(reel)
    assert [c[1] for c in expected["calls"]] == ["summarize", "add"]  # the projection is not empty
    convert, name, every_message = CONVERTERS[fmt]
    path = tmp_path / name
    convert(session, path)
    back = read(path)  # sniffed, then read
    assert back.info.source_format == fmt
    assert t1(back) == expected
    if every_message:
        assert messages_only(back) == messages_only(reel)


def test_agent_vcr_keeps_every_message_but_initialized(tmp_path):
    session = the_session()
    to_agent_vcr(session, tmp_path / "s.vcr")
    back = read(tmp_path / "s.vcr")
    want = [(m.dir, m.raw) for m in session if m.raw.get("method") != "notifications/initialized"]
    got = [(m.dir, m.raw) for m in back]
    assert sorted(map(json.dumps, got)) == sorted(map(json.dumps, want))
