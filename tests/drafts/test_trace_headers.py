"""Trace context in HTTP headers (transports-wg transport-native trace context draft): a request's
``traceparent``/``tracestate`` headers are kept as recorded (through the HTTP proxy) and, on HTTP, preferred
over ``params._meta``'s as the OTLP parent; a differing ``_meta`` one becomes a link; stdio unchanged."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx2

from mcpreel.formats import open_session
from mcpreel.model import Kind, Message, Session, SessionInfo
from mcpreel.otel import spans
from tests.record.http.helpers import ThreadServer, proxy, sdk_server

HEADER_TRACE = "0af7651916cd43dd8448eb211c80319c"
HEADER_SPAN = "b7ad6b7169203331"
META_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
META_SPAN = "00f067aa0ba902b7"
HEADER_PARENT = f"00-{HEADER_TRACE}-{HEADER_SPAN}-01"
META_PARENT = f"00-{META_TRACE}-{META_SPAN}-01"


def _session(http: bool) -> Session:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo", "arguments": {}, "_meta": {"traceparent": META_PARENT, "tracestate": "m=1"}}}
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "ok"}]}}
    ctx = {"method": "POST", "path": "/mcp", "exchange": 1,
           "headers": {"traceparent": HEADER_PARENT, "tracestate": "h=1"}} if http else None
    info = SessionInfo(transport="streamable-http" if http else "stdio", url="http://127.0.0.1:9/mcp" if http else None,
                       command=None if http else ["server"], started=1000)
    out = {**ctx, "status": 200} if ctx else None
    return Session(info, [Message("in", call, t=1000, ctx=ctx), Message("out", answer, t=1010, ctx=out)])


def _call_span(session: Session):
    return next(s for s in spans(session) if s.attributes.get("gen_ai.tool.name") == "echo")


def test_the_http_headers_are_the_parent_on_http() -> None:
    span = _call_span(_session(http=True))
    assert (span.trace_id, span.parent_id) == (int(HEADER_TRACE, 16), int(HEADER_SPAN, 16))
    assert span.trace_state == "h=1" and span.attributes["mcpreel.trace_context"] == "http"
    assert any(link.attributes.get("mcpreel.link") == "meta_traceparent" and link.trace_id == int(META_TRACE, 16)
               for link in span.links)


def test_meta_stays_the_parent_without_headers() -> None:
    span = _call_span(_session(http=False))
    assert (span.trace_id, span.parent_id) == (int(META_TRACE, 16), int(META_SPAN, 16))
    assert span.trace_state == "m=1" and "mcpreel.trace_context" not in span.attributes


def test_the_recorder_keeps_both_carriers(tmp_path: Path) -> None:
    body = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
            b'"capabilities":{},"clientInfo":{"name":"t","version":"1"},"_meta":{"traceparent":"' + META_PARENT.encode()
            + b'"}}}')

    async def post(url: str) -> int:
        async with httpx2.AsyncClient() as http:
            r = await http.post(url, content=body, headers={
                "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                "traceparent": HEADER_PARENT, "tracestate": "h=1"})
            return r.status_code

    with ThreadServer(sdk_server().streamable_http_app(json_response=True)) as srv, \
            proxy("streamable-http", srv.url("/mcp"), tmp_path) as rec:
        assert anyio.run(post, rec.url) == 200
    assert rec.out is not None
    session, _ = open_session(rec.out, "reel")
    sent = next(m for m in session.messages if m.kind == Kind.MESSAGE and m.dir == "in")
    assert sent.ctx["headers"]["traceparent"] == HEADER_PARENT and sent.ctx["headers"]["tracestate"] == "h=1"
    assert sent.raw["params"]["_meta"]["traceparent"] == META_PARENT
    span = next(s for s in spans(session) if s.attributes.get("jsonrpc.request.id") in ("1", 1))
    assert span.trace_id == int(HEADER_TRACE, 16)
