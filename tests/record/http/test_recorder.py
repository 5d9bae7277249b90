"""The recording core, sans-io: scripted HTTP events in, records out (no socket anywhere)."""

from __future__ import annotations

import zlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpreel._infra import jsonio
from mcpreel._infra.sse import SSEParser
from mcpreel.model import Kind, Message
from mcpreel.record.http_recorder import HttpRecorder, body_decoder, looks_jsonrpc
from mcpreel.redact import MARKER

from .helpers import gzip_bytes
from .scripted import SSE_CHUNKS


def recorder(**kw: Any) -> tuple[HttpRecorder, list[Message]]:
    out: list[Message] = []
    return HttpRecorder(out.append, clock=lambda: 1000, **kw), out


H = [(b"host", b"127.0.0.1:8765"), (b"authorization", b"Bearer x"), (b"mcp-protocol-version", b"2025-11-25")]


def test_request_and_json_answer() -> None:
    rec, out = recorder()
    ex = rec.request("POST", "/mcp", H, b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    rec.response_head(ex, 200, [(b"Content-Type", b"application/json"), (b"Mcp-Session-Id", b"abc")], sse=False)
    rec.response_body(ex, b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}')
    assert [(m.kind, m.dir) for m in out] == [("message", "in"), ("message", "out")]
    assert out[0].ctx == {"method": "POST", "path": "/mcp", "exchange": 1,
                          "headers": {"host": "127.0.0.1:8765", "authorization": MARKER, "mcp-protocol-version": "2025-11-25"}}
    assert out[1].ctx["status"] == 200 and out[1].ctx["headers"]["Mcp-Session-Id"] == "abc"
    assert out[0].t == 1000
    assert rec.session_headers == {"MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "abc"}
    assert rec.stats.requests == 1 and rec.stats.answered == 1 and rec.unanswered == 0


def test_keep_secrets() -> None:
    rec, out = recorder(keep_secrets=True)
    rec.request("POST", "/mcp", H, b"{}")
    assert out[0].ctx["headers"]["authorization"] == "Bearer x"


def test_202_get_delete_and_invalid_bodies() -> None:
    rec, out = recorder()
    ex = rec.request("POST", "/mcp", H, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    rec.response_head(ex, 202, [], sse=False)
    rec.response_body(ex, b"")
    ex = rec.request("DELETE", "/mcp", H, b"")
    rec.response_head(ex, 200, [], sse=False)
    rec.response_body(ex, b"")
    rec.request("POST", "/mcp", H, b"{not json")
    ex = rec.request("POST", "/mcp", H, b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
    rec.response_head(ex, 200, [(b"content-type", b"application/json")], sse=False)
    rec.response_body(ex, b"garbage")
    kinds = [(m.kind, m.dir, (m.ctx or {}).get("status")) for m in out]
    assert kinds == [("message", "in", None), ("transport", "out", 202), ("transport", "in", None),
                     ("transport", "out", 200), ("invalid", "in", None), ("message", "in", None), ("invalid", "out", 200)]
    assert out[4].text == "{not json" and out[6].text == "garbage"
    assert rec.stats.invalid == 2


def test_non_jsonrpc_answers_keep_data_or_text() -> None:
    rec, out = recorder()
    ex = rec.request("POST", "/mcp", H, b"{}")
    rec.response_head(ex, 401, [(b"WWW-Authenticate", b'Bearer resource_metadata="https://x/.well-known"')], sse=False)
    rec.response_body(ex, b'{"error":"invalid_token","error_description":"no"}')
    ex = rec.request("GET", "/x", H, b"")
    rec.response_head(ex, 502, [(b"content-type", b"text/html")], sse=False)
    rec.response_body(ex, b"<h1>bad gateway</h1>")
    assert out[1].kind == Kind.TRANSPORT and out[1].ctx["data"] == {"error": "invalid_token", "error_description": "no"}
    assert out[1].ctx["status"] == 401
    assert out[3].ctx["body"] == "<h1>bad gateway</h1>"


def test_sse_stream_records() -> None:
    rec, out = recorder()
    ex = rec.request("POST", "/mcp", H, b'{"jsonrpc":"2.0","id":1,"method":"tools/call"}')
    rec.response_head(ex, 200, [(b"content-type", b"text/event-stream")], sse=True)
    parser = SSEParser()
    for chunk in SSE_CHUNKS:
        for ev in parser.feed(chunk):
            rec.sse_event(ex, ev)
    rec.stream_end(ex)  # a POST stream's normal end adds nothing
    kinds = [(m.kind, (m.ctx or {}).get("sse")) for m in out]
    assert kinds == [
        ("message", None),
        ("transport", None),  # the stream's head
        ("transport", {"comment": "keep-alive"}),
        ("transport", {"event": "message", "id": "p0", "retry": 500}),
        ("message", {"event": "message", "id": "e1"}),
        ("message", {"event": "message", "id": "e2"}),
    ]
    assert out[1].ctx == {"method": "POST", "path": "/mcp", "status": 200, "headers": {"content-type": "text/event-stream"},
                          "exchange": 1, "stream": 1}
    assert out[5].raw == {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}
    assert rec.unanswered == 0


def test_endpoint_event_and_non_json_message_data() -> None:
    rec, out = recorder()
    ex = rec.request("GET", "/sse", H, b"")
    rec.response_head(ex, 200, [], sse=True)
    parser = SSEParser()
    evs = list(parser.feed(b"event: endpoint\ndata: http://t:1/m?s=1\n\ndata: nope\n\n"))
    rec.sse_event(ex, evs[0], forwarded="http://p:2/m?s=1")
    rec.sse_event(ex, evs[1])
    rec.stream_end(ex)
    assert out[2].ctx["data"] == "http://t:1/m?s=1" and out[2].ctx["forwarded"] == "http://p:2/m?s=1"
    assert out[3].kind == Kind.INVALID and out[3].text == "nope"
    assert out[4].ctx["closed"] == "server"


def test_correlation_by_direction_and_id() -> None:
    """Client and server both use id 0: neither answer may satisfy the other side's request."""
    rec, out = recorder()
    ex = rec.request("POST", "/mcp", H, b'{"jsonrpc":"2.0","id":0,"method":"tools/call"}')
    rec.response_head(ex, 200, [], sse=True)
    parser = SSEParser()
    for ev in parser.feed(b'data: {"jsonrpc":"2.0","id":0,"method":"sampling/createMessage"}\n\n'):
        rec.sse_event(ex, ev)
    assert rec.unanswered == 2
    rec.request("POST", "/mcp", H, b'{"jsonrpc":"2.0","id":0,"result":{}}')  # the client answers the server
    assert rec.unanswered == 1
    rec.closed(ex, "client")
    assert out[-1].ctx["closed"] == "client" and out[-1].ctx["unanswered"] == ["0"] and out[-1].dir == "in"


def test_batch_counts_each_request() -> None:
    rec, out = recorder()
    ex = rec.request("POST", "/mcp", H, b'[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"}]')
    rec.response_head(ex, 200, [], sse=False)
    rec.response_body(ex, b'[{"jsonrpc":"2.0","id":1,"result":1}]')
    assert isinstance(out[0].raw, list) and isinstance(out[1].raw, list)
    assert rec.stats.requests == 1 and rec.unanswered == 0


def test_rejected_and_unreachable() -> None:
    rec, out = recorder()
    rec.rejected("POST", "/mcp", [(b"origin", b"http://evil")], 403, "origin http://evil not allowed")
    ex = rec.request("POST", "/mcp", H, b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    rec.unreachable(ex, 502, "ConnectError: refused", b'{"jsonrpc":"2.0","id":1,"error":{}}')
    assert out[0].ctx["status"] == 403 and out[0].dir == "in"
    assert out[2].ctx["status"] == 502 and out[2].ctx["proxy"] == "unreachable" and out[2].ctx["body"].startswith("{")
    assert "data" not in out[2].ctx  # the proxy's own answer is not promoted to a server response
    assert rec.stats.statuses == {403: 1, 502: 1}


def test_compressed_bodies_are_decoded_for_the_record() -> None:
    rec, out = recorder()
    ex = rec.request("POST", "/mcp", H, b"{}")
    rec.response_head(ex, 200, [(b"content-encoding", b"gzip")], sse=False)
    rec.response_body(ex, gzip_bytes(b'{"jsonrpc":"2.0","id":1,"result":{}}'), decode=body_decoder("gzip"))
    assert out[-1].raw == {"jsonrpc": "2.0", "id": 1, "result": {}}
    raw_deflate = zlib.compressobj(wbits=-15)
    data = raw_deflate.compress(b'{"jsonrpc":"2.0","id":2,"result":{}}') + raw_deflate.flush()
    ex = rec.request("POST", "/mcp", H, b"{}")
    rec.response_head(ex, 200, [], sse=False)
    rec.response_body(ex, data, decode=body_decoder("deflate"))
    assert out[-1].raw["id"] == 2
    ex = rec.request("POST", "/mcp", H, b"{}")
    rec.response_head(ex, 200, [], sse=False)
    rec.response_body(ex, b"\x00\x01", undecodable="content-encoding br")
    assert out[-1].ctx["undecoded"] == "content-encoding br" and out[-1].ctx["body_bytes"] == 2
    assert body_decoder("br") is None and body_decoder(None)(b"x") == b"x"


def test_looks_jsonrpc() -> None:
    assert looks_jsonrpc({"jsonrpc": "2.0", "id": 1, "result": 1})
    assert not looks_jsonrpc({"error": "invalid_token"})
    assert looks_jsonrpc([{"jsonrpc": "2.0"}]) and not looks_jsonrpc([]) and not looks_jsonrpc([1])


# -- properties -------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.sampled_from([None, "gzip", "deflate", "identity"]))
def test_any_body_gives_records_never_an_exception(body: bytes, coding: str | None) -> None:
    rec, out = recorder()
    ex = rec.request("POST", "/mcp", H, body, decode=body_decoder(coding) if coding else None)
    rec.response_head(ex, 200, [(b"content-type", b"application/json")], sse=False)
    rec.response_body(ex, body, decode=body_decoder(coding))
    assert len(out) >= 2
    for m in out:
        jsonio.dumps({"raw": m.raw, "ctx": m.ctx, "text": m.text})  # every record is writable


STREAM = b"".join(SSE_CHUNKS) + b"event: endpoint\ndata: /m?x=1\n\n: c\r\n\r\ndata: [1,2]\n\n"


def _records_for(chunks: list[bytes]) -> list[tuple[Any, ...]]:
    rec, out = recorder()
    ex = rec.request("GET", "/mcp", H, b"")
    rec.response_head(ex, 200, [], sse=True)
    parser = SSEParser()
    for chunk in chunks:
        for ev in parser.feed(chunk):
            rec.sse_event(ex, ev)
    return [(m.kind, m.raw, m.text, jsonio.dumps_str(m.ctx)) for m in out]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_sse_records_do_not_depend_on_chunking(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)], strict=True)]
    assert _records_for(chunks) == _records_for([STREAM])


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400))
def test_any_sse_bytes_give_records_never_an_exception(data: bytes) -> None:
    rec, out = recorder()
    ex = rec.request("GET", "/mcp", H, b"")
    rec.response_head(ex, 200, [], sse=True)
    parser = SSEParser()
    for ev in parser.feed(data):
        rec.sse_event(ex, ev)
    rec.closed(ex, "upstream", "cut")
    assert out[-1].ctx["closed"] == "upstream"


@pytest.mark.parametrize("how", ["client", "upstream", "shutdown"])
def test_closed_directions(how: str) -> None:
    rec, out = recorder()
    ex = rec.request("POST", "/mcp", H, b'{"jsonrpc":"2.0","id":"a","method":"x"}')
    rec.closed(ex, how)
    assert out[-1].dir == ("in" if how == "client" else "out") and out[-1].ctx["unanswered"] == ["a"]


def test_unrecordable_stream_is_said() -> None:
    rec, out = recorder()
    ex = rec.request("GET", "/mcp", H, b"")
    rec.response_head(ex, 200, [(b"content-encoding", b"gzip")], sse=True)
    rec.unrecordable(ex, "content-encoding not decodable: bad header")
    assert out[-1].kind == Kind.TRANSPORT and out[-1].ctx == {"exchange": 1, "stream": 1,
                                                              "undecoded": "content-encoding not decodable: bad header"}
