"""The transports' probe mode, what ``mcpreel check`` speaks through: bytes and headers sent exactly as
given, the answer kept as it was on the wire (status, headers, raw body, SSE events as framed, the event
a stream ended inside), a read that stops once the caller has what it waited for; and what the stream
transports hand a probe (a stdio line as written, a refused event stream's answer)."""

from __future__ import annotations

import asyncio
import json
import socket
import sys

import httpx2
import pytest

from mcpreel.clients.http import LegacySSETransport, StreamableHTTPTransport
from mcpreel.clients.stdio import StdioTransport
from mcpreel.errors import TransportError
from mcpreel.model import Kind

URL = "http://server.test/mcp"


def sse(*messages: dict, terminated: bool = True) -> bytes:
    out = b"".join(b"event: message\ndata: " + json.dumps(m).encode() + b"\n\n" for m in messages)
    return out if terminated else out[:-1]


async def _exchange(handler, body: bytes | None = b"{}", **kw):
    transport = StreamableHTTPTransport(URL, headers={"X-Given": "1"}, http_transport=httpx2.MockTransport(handler))
    await transport.start()
    try:
        return transport, await transport.exchange(body, **kw)
    finally:
        await transport.close()


def test_bytes_and_headers_go_exactly_as_given():
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(400, headers={"Content-Type": "application/json", "X-Other": "y"},
                               content=b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32700}}')

    malformed = b'{"jsonrpc": "2.0", "id": 99, "method": "tools/list", "params": {'

    async def go():
        transport = StreamableHTTPTransport(URL, http_transport=httpx2.MockTransport(handler))
        transport.session_id = "s-1"  # the transport's state is not added: the probe names every header
        await transport.start()
        try:
            return await transport.exchange(malformed, headers={"Content-Type": "application/json", "Origin": "x"})
        finally:
            await transport.close()

    wire = asyncio.run(go())
    assert seen[0].content == malformed and seen[0].method == "POST"
    assert "mcp-session-id" not in seen[0].headers and seen[0].headers["origin"] == "x"
    assert wire.status == 400 and wire.headers["x-other"] == "y" and wire.content_type == "application/json"
    assert wire.body == b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32700}}'
    assert wire.events == [] and wire.error is None and not wire.ok_status


def test_a_delete_carries_no_body():
    seen: list[httpx2.Request] = []

    def handler(request):
        seen.append(request)
        return httpx2.Response(204)

    _, wire = asyncio.run(_exchange(handler, None, method="DELETE", headers={"Mcp-Session-Id": "s-1"}))
    assert seen[0].method == "DELETE" and seen[0].content == b"" and wire.status == 204


def test_the_read_stops_once_the_caller_has_its_answer():
    async def chunks():
        yield sse({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}})
        yield sse({"jsonrpc": "2.0", "id": 1, "result": {}})
        yield sse({"jsonrpc": "2.0", "method": "never/read"})

    def handler(request):
        return httpx2.Response(200, headers={"Content-Type": "text/event-stream"}, content=chunks())

    offered = []

    def on_event(ev) -> bool:
        offered.append(ev)
        return '"id": 1' in ev.data

    _, wire = asyncio.run(_exchange(handler, headers={}, on_event=on_event))
    assert [json.loads(ev.data).get("method") for ev in wire.events] == ["notifications/progress", None]
    assert offered == wire.events and wire.unterminated is None
    assert wire.body == sse({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}},
                            {"jsonrpc": "2.0", "id": 1, "result": {}})


def test_an_event_the_stream_ended_inside_is_kept_apart_and_offered():
    def handler(request):
        return httpx2.Response(200, headers={"Content-Type": "text/event-stream"},
                               content=sse({"jsonrpc": "2.0", "id": 1, "result": {}}, terminated=False))

    offered = []
    _, wire = asyncio.run(_exchange(handler, headers={}, on_event=lambda ev: offered.append(ev) or False))
    assert wire.events == []
    assert wire.unterminated is not None and wire.unterminated.raw.startswith(b"event: message\ndata: ")
    assert offered == [wire.unterminated]


def test_a_body_beyond_the_limit_is_cut_and_said():
    def handler(request):
        return httpx2.Response(200, headers={"Content-Type": "application/json"}, content=b"x" * 5000)

    _, wire = asyncio.run(_exchange(handler, headers={}, max_body=1000))
    assert wire.truncated and 1000 < len(wire.body) <= 5000


def test_a_stream_that_stalls_past_the_limit_says_so():
    async def slow():
        yield b"event: message\ndata: {}\n\n"
        await asyncio.sleep(0.4)
        yield b": still here\n\n"

    def handler(request):
        return httpx2.Response(200, headers={"Content-Type": "text/event-stream"}, content=slow())

    _, wire = asyncio.run(_exchange(handler, headers={}, limit=0.1, on_event=lambda ev: False))
    # the limit is looked at between chunks: the late one is kept, and the read ends there
    assert wire.error == "no response on the event stream within 0.1 s"
    assert [ev.data for ev in wire.events] == ["{}", ""] and wire.elapsed_ms >= 400


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_refused_connection_is_said_in_the_systems_words():
    async def go():
        transport = StreamableHTTPTransport(f"http://127.0.0.1:{_closed_port()}/mcp")
        await transport.start()
        try:
            return await transport.exchange(b"{}", headers={})
        finally:
            await transport.close()

    wire = asyncio.run(go())
    assert wire.status is None and wire.connect_failed
    assert wire.reason == "[Errno 111] Connection refused"
    assert wire.error == "connection failed: [Errno 111] Connection refused"


def test_a_session_id_that_is_not_ascii_goes_back_as_its_bytes():
    transport = StreamableHTTPTransport(URL)
    transport.session_id = "s\u00e9"
    assert transport.post_headers()["Mcp-Session-Id"] == "s\u00e9".encode("latin-1")
    httpx2.Request("POST", URL, headers=transport.post_headers())  # sendable


def test_a_refused_event_stream_keeps_its_answer():
    def handler(request):
        return httpx2.Response(404, headers={"Content-Type": "text/html"}, content=b"<h1>Not Found</h1>" * 40)

    async def go():
        transport = LegacySSETransport("http://server.test/sse", timeout=2, http_transport=httpx2.MockTransport(handler))
        with pytest.raises(TransportError, match="GET answered 404 text/html, not an event stream"):
            await transport.start()
        return transport

    transport = asyncio.run(go())
    answer = transport.stream_answer
    assert answer is not None and answer.status == 404 and answer.content_type == "text/html"
    assert answer.body.startswith(b"<h1>Not Found</h1>") and len(answer.body) == 300


def test_a_stdio_line_that_is_not_json_is_handed_out_as_written():
    code = ("import sys; print('   indented log line  '); print('[' * 100000); "
            "print('{\"jsonrpc\": \"2.0\", \"method\": \"x\"}'); sys.stdout.flush()")

    async def go():
        transport = StdioTransport([sys.executable, "-c", code])
        await transport.start()
        got = []
        async for msg in transport:
            if msg.kind != Kind.STDERR:
                got.append(msg)
        await transport.close()
        return got

    got = asyncio.run(go())
    assert got[0].kind == Kind.INVALID and got[0].text == "   indented log line  "
    assert got[1].kind == Kind.INVALID  # nested past the parser's depth: kept, the reader goes on
    assert got[2].kind == Kind.MESSAGE and got[2].raw == {"jsonrpc": "2.0", "method": "x"}


def test_a_stdio_server_can_be_given_its_whole_environment():
    code = "import os, json; print(json.dumps({'jsonrpc': '2.0', 'method': 'env', 'params': dict(os.environ)}))"

    async def go(inherit: bool):
        transport = StdioTransport([sys.executable, "-c", code], env={"ONLY": "this"}, inherit_env=inherit)
        await transport.start()
        msg = await transport.receive()
        await transport.close()
        return msg.raw["params"]

    alone = asyncio.run(go(False))
    assert alone.get("ONLY") == "this" and "PATH" not in alone
    assert "PATH" in asyncio.run(go(True))


def test_a_check_runs_from_inside_a_running_event_loop():
    """A library caller in async code: the probe's loop runs beside the caller's, in a helper thread."""
    from mcpreel.check import CheckOptions, run_check

    def handler(request):
        try:
            msg = json.loads(request.content)
        except ValueError:
            return httpx2.Response(400)
        if "id" not in msg:
            return httpx2.Response(202)
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "x", "version": "1"}} if msg["method"] == "initialize" else {}
        return httpx2.Response(200, headers={"Content-Type": "text/event-stream"},
                               content=sse({"jsonrpc": "2.0", "id": msg["id"], "result": result}))

    async def caller():
        return run_check(URL, options=CheckOptions(era="legacy", timeout=2, no_call=True),
                         http_transport=httpx2.MockTransport(handler))

    report = asyncio.run(caller())
    assert report.get("initialize").status == "pass"


def test_the_legacy_sse_probe_reads_answers_off_the_stream_through_the_transport():
    """check's legacy SSE probe: POSTs in the probe mode, answers read off the transport's event stream
    (an event of another type read for what it carries, data that is not JSON kept, the server's own
    request answered on the endpoint)."""
    from mcpreel.check.legacy_sse import SseProbe

    pending: list[bytes] = []
    posted: list[dict] = []
    wake: list[asyncio.Event] = []

    async def stream():
        yield b"event: endpoint\ndata: /messages/?session_id=abc\n\n"
        while True:
            if not wake:
                wake.append(asyncio.Event())
            await wake[0].wait()
            wake[0].clear()
            while pending:
                yield pending.pop(0)

    def push(*chunks: bytes) -> None:
        pending.extend(chunks)
        if wake:
            wake[0].set()

    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.method == "GET":
            return httpx2.Response(200, headers={"Content-Type": "text/event-stream"}, content=stream())
        assert request.url.path == "/messages/" and request.url.params["session_id"] == "abc"
        msg = json.loads(request.content)
        posted.append(msg)
        if msg.get("method") == "ping":
            push(b"data: {not json\n\n",
                 b'event: message\ndata: {"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}\n\n',
                 b'event: other\ndata: {"jsonrpc": "2.0", "id": ' + str(msg["id"]).encode() + b', "result": {}}\n\n')
        return httpx2.Response(202, content=b"Accepted")

    probe = SseProbe("http://server.test/sse", timeout=2, transport=httpx2.MockTransport(handler))
    try:
        assert probe.endpoint == "http://server.test/messages/?session_id=abc"
        ex = probe.request("ping")
        assert ex.response == {"jsonrpc": "2.0", "id": 1, "result": {}} and ex.error is None
        assert ex.bad_frames == ["{not json"] and probe.noise == ["{not json"]
        assert {"jsonrpc": "2.0", "id": "srv-1", "result": {}} in posted  # the server's ping, answered
        assert probe.alive
    finally:
        probe.close()
