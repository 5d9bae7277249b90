"""The HTTP probe reads whatever a server sends (scripted with httpx2.MockTransport): SSE with
notifications before the response, ids of the wrong type, events without their blank line, JSON bodies;
random bytes never make it raise."""

from __future__ import annotations

import json

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpreel.check.probe import HttpProbe, Unreachable, excerpt


def probe_for(handler) -> HttpProbe:
    return HttpProbe("http://server.test/mcp", timeout=2, transport=httpx2.MockTransport(handler))


def sse(*messages, terminated: bool = True) -> bytes:
    out = b"".join(b"event: message\ndata: " + json.dumps(m).encode() + b"\n\n" for m in messages)
    return out if terminated else out[:-1]


def test_sse_with_a_notification_before_the_response():
    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        assert request.headers["accept"] == "application/json, text/event-stream"
        assert request.headers["content-type"] == "application/json"
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=sse(
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}},
            {"jsonrpc": "2.0", "id": body["id"], "result": {"ok": True}},
        ))

    ex = probe_for(handler).request("tools/call", {"name": "x"})
    assert ex.response == {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}
    assert ex.id_exact and ex.is_sse and len(ex.events) == 2 and len(ex.messages) == 2
    assert ex.unterminated is None


def test_an_id_of_another_type_is_matched_and_marked():
    def handler(request):
        return httpx2.Response(200, headers={"content-type": "application/json"},
                               content=json.dumps({"jsonrpc": "2.0", "id": "1", "result": {}}))

    ex = probe_for(handler).request("ping")
    assert ex.response is not None and ex.id_exact is False


def test_an_event_without_its_blank_line_is_kept_apart():
    def handler(request):
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               content=sse({"jsonrpc": "2.0", "id": 1, "result": {}}, terminated=False))

    ex = probe_for(handler).request("ping")
    assert ex.events == []
    assert ex.unterminated is not None and b"data:" in ex.unterminated
    assert ex.response is not None  # what the server meant, for the other checks to judge


def test_session_and_version_headers_ride_on_later_requests():
    seen = []

    def handler(request):
        seen.append(dict(request.headers))
        return httpx2.Response(202)

    probe = probe_for(handler)
    probe.session_id, probe.protocol_version = "abc", "2025-06-18"
    probe.notify("notifications/initialized")
    probe.request("ping", session=False, headers={"Origin": "http://x.invalid"})
    assert seen[0]["mcp-session-id"] == "abc" and seen[0]["mcp-protocol-version"] == "2025-06-18"
    assert "mcp-session-id" not in seen[1] and seen[1]["origin"] == "http://x.invalid"


def test_server_requests_on_the_stream_are_answered():
    posted = []

    def handler(request):
        body = json.loads(request.content)
        posted.append(body)
        if "method" not in body:
            return httpx2.Response(202)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=sse(
            {"jsonrpc": "2.0", "id": 7, "method": "ping"},
            {"jsonrpc": "2.0", "id": 8, "method": "sampling/createMessage", "params": {}},
            {"jsonrpc": "2.0", "id": body["id"], "result": {}},
        ))

    probe = probe_for(handler)
    probe.request("tools/call", {"name": "x"})
    answers = [p for p in posted if "method" not in p]
    refused = {"code": -32601, "message": "mcpreel check declares no client capabilities"}
    assert answers == [{"jsonrpc": "2.0", "id": 7, "result": {}}, {"jsonrpc": "2.0", "id": 8, "error": refused}]


def test_a_refused_connection_is_unreachable():
    def handler(request):
        raise httpx2.ConnectError("[Errno 111] Connection refused")

    with pytest.raises(Unreachable, match="cannot reach http://server.test/mcp: \\[Errno 111\\] Connection refused"):
        probe_for(handler).request("initialize", {})


def test_not_an_http_url():
    with pytest.raises(Unreachable, match="not an http:// or https:// URL"):
        HttpProbe("ftp://x/mcp")


def test_excerpt_is_one_bounded_line():
    assert excerpt(b"a\r\nb\nc") == "a\\r\\nb\\nc"
    assert len(excerpt("x" * 1000, 50)) == 50


_bodies = st.one_of(
    st.binary(max_size=300),
    st.lists(st.sampled_from([b"event: message\n", b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
                              b"data: {\n", b"\n", b"\r\n", b": ping\n", b"id: 3\n", b"retry: x\n", b"data: null\n",
                              b"data: [1, 2]\n", b"event: other\n", b"\xff\xfe", b"data: \"\\ud800\"\n"]),
             max_size=20).map(b"".join),
)


@settings(max_examples=200, deadline=None)
@given(_bodies, st.sampled_from(["text/event-stream", "application/json", "text/plain", ""]),
       st.sampled_from([200, 202, 400, 500]))
def test_any_answer_is_read_without_raising(body, ctype, status):
    def handler(request):
        headers = {"content-type": ctype} if ctype else {}
        return httpx2.Response(status, headers=headers, content=body)

    ex = probe_for(handler).request("ping")
    assert ex.status == status
    assert ex.body == body or ex.truncated
    assert ex.response is None or ex.response.get("id") in (1, "1")
    ex.sent_text()
    ex.received_text()


_answers = st.one_of(
    _bodies,
    st.sampled_from([
        b'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","capabilities":'
        b'{"tools":{}},"serverInfo":{"name":"x","version":"1"}}}\n\n',
        b'{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"t","inputSchema":{"type":"object","properties":'
        b'{"a":{"type":"integer"}},"required":["a"]}}, 3, {"name": null}]}}',
        b'{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":{"raw":1}}, 7]}}',
        b'{"jsonrpc":"2.0","id":3,"result":{"content":"x","isError":true}}',
        b'{"jsonrpc":"2.0","id":4,"error":{"code":-32601}}',
        b'{"jsonrpc":"2.0","id":null,"error":"bad"}',
        b"[" * 3000 + b"1111111111111111111" + b"]" * 3000,
    ]),
)


_PLAUSIBLE = {
    "initialize": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                   "serverInfo": {"name": "x", "version": "1"}},
    "tools/list": {"tools": [{"name": "t", "description": "d", "inputSchema": {
        "type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}]},
    "tools/call": {"content": [{"type": "text", "text": "{}"}]},
}


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_whole_check_against_any_answers_ends_in_a_report(data):
    """Every check copes with whatever comes back: the run ends in a report, never an exception."""
    from mcpreel.check import CheckOptions, run_check

    def handler(request):
        try:
            msg = json.loads(request.content)
        except ValueError:
            msg = None
        if isinstance(msg, dict) and "id" in msg and data.draw(st.booleans()):
            body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": _PLAUSIBLE.get(msg.get("method"), {})})
            if data.draw(st.booleans()):
                body = f"event: message\ndata: {body}\n\n"
            return httpx2.Response(200, headers={"content-type": "text/event-stream" if body[0] == "e" else
                                                 "application/json", "mcp-session-id": "s1"}, content=body.encode())
        body = data.draw(_answers)
        ctype = data.draw(st.sampled_from(["text/event-stream", "application/json", "text/plain"]))
        status = data.draw(st.sampled_from([200, 200, 202, 400, 404, 500]))
        headers = {"content-type": ctype}
        if data.draw(st.booleans()):
            headers["mcp-session-id"] = data.draw(st.sampled_from([b"abc", "bad id\u00e9".encode("latin-1"), b""]))
        return httpx2.Response(status, headers=headers, content=body)

    report = run_check("http://server.test/mcp", options=CheckOptions(timeout=1),
                       http_transport=httpx2.MockTransport(handler))
    assert report.results
    assert report.exit_code in (0, 1)
