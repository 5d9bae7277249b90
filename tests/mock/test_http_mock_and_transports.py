"""The HTTP mock (seed 002's format, sessions, origin checks, the GET stream) and our HTTP transports."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx2
import pytest
import uvicorn

from mcpreel._infra import jsonio
from mcpreel._infra.sse import SSEParser
from mcpreel.clients import LegacySSETransport, StdioTransport, StreamableHTTPTransport, open_target
from mcpreel.errors import TransportError
from mcpreel.mock.engine import Mock
from mcpreel.mock.server import http_app
from mcpreel.operations.cassette import build
from mcpreel.replay.results import ReplayOptions
from mcpreel.replay.verify import replay
from tests.replay.helpers import INIT, call, handshake, note, req, res, session, text

ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}

RECORDING = session(*handshake(), ("out", note("notifications/tools/list_changed")),
                    ("in", call(2, "ask", {"q": 1})),
                    ("out", note("notifications/progress", {"progressToken": 1, "progress": 1})),
                    ("out", req(0, "roots/list")), ("in", res(0, {"roots": []})),
                    ("out", res(2, text('{"answer": 42}'))),
                    ("in", call(3, "echo", {"t": "x"})), ("out", res(3, text("x"))))


@pytest.fixture(scope="module")
def mock_url():
    mock = Mock(build(RECORDING))
    server = uvicorn.Server(uvicorn.Config(http_app(mock), host="127.0.0.1", port=0, log_level="warning",
                                           lifespan="off", timeout_graceful_shutdown=1))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}", mock
    server.should_exit = True
    thread.join(5)


def _events(body: bytes) -> list[dict]:
    return [jsonio.loads(ev.data) for ev in SSEParser().feed(body) if ev.event == "message"]


def test_post_answers_in_seed_002_format_with_a_session_id(mock_url):
    url, _ = mock_url
    with httpx2.Client() as http:
        r = http.post(f"{url}/mcp", content=jsonio.dumps({**INIT, "id": "i"}), headers=ACCEPT)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        assert r.text.startswith("event: message\ndata: {") and r.text.endswith("\n\n")
        sid = r.headers["mcp-session-id"]
        assert _events(r.content)[0]["id"] == "i"
        h = {**ACCEPT, "mcp-session-id": sid}
        r = http.post(f"{url}/mcp", content=jsonio.dumps(note("notifications/initialized")), headers=h)
        assert r.status_code == 202
        r = http.post(f"{url}/mcp", content=jsonio.dumps(call(5, "echo", {"t": "x"})), headers=h)
        assert _events(r.content) == [res(5, text("x"))]
        # a client that accepts only JSON gets one JSON body
        r = http.post(f"{url}/mcp", content=jsonio.dumps(call(6, "echo", {"t": "x"})),
                      headers={"accept": "application/json", "mcp-session-id": sid})
        assert r.headers["content-type"].startswith("application/json") and r.json() == res(6, text("x"))
        assert http.post(f"{url}/mcp", content=b"{}", headers={**ACCEPT, "mcp-session-id": "nope"}).status_code == 404
        assert http.post(f"{url}/mcp", content=b"{oops", headers=ACCEPT).status_code == 400
        forbidden = http.post(f"{url}/mcp", content=jsonio.dumps(INIT), headers={**ACCEPT, "origin": "https://evil.example"})
        assert forbidden.status_code == 403
        assert http.post(f"{url}/mcp", content=jsonio.dumps(INIT), headers={**ACCEPT, "origin": "http://localhost:3000"}).status_code == 200
        assert http.delete(f"{url}/mcp", headers={"mcp-session-id": sid}).status_code == 200
        assert http.post(f"{url}/mcp", content=jsonio.dumps(call(7, "echo", {"t": "x"})), headers=h).status_code == 404


def test_a_json_only_client_gets_a_recorded_server_request_on_its_get_stream_at_once(mock_url):
    url, _ = mock_url

    async def main():
        async with httpx2.AsyncClient(timeout=8) as http:
            r = await http.post(f"{url}/mcp", content=jsonio.dumps(INIT), headers=ACCEPT)
            h = {"accept": "application/json", "content-type": "application/json",
                 "mcp-session-id": r.headers["mcp-session-id"]}
            await http.post(f"{url}/mcp", content=jsonio.dumps(note("notifications/initialized")), headers=h)
            async with http.stream("GET", f"{url}/mcp", headers={**h, "accept": "text/event-stream"}) as stream:
                t0 = time.monotonic()
                call_task = asyncio.ensure_future(http.post(f"{url}/mcp", content=jsonio.dumps(call(9, "ask", {"q": 1})),
                                                            headers=h))
                parser, asked = SSEParser(), None
                async for chunk in stream.aiter_bytes():
                    for ev in parser.feed(chunk):
                        m = jsonio.loads(ev.data)
                        if m.get("method") == "roots/list":
                            asked = m
                    if asked is not None:
                        break
                await http.post(f"{url}/mcp", content=jsonio.dumps(res(asked["id"], {"roots": []})), headers=h)
                answer = await call_task
                return answer, time.monotonic() - t0

    answer, seconds = asyncio.run(main())
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json() == res(9, text('{"answer": 42}'))
    assert seconds < 3  # not the 10 s the mock waits for an answer that could never come


def test_a_handshake_era_request_without_session_id_is_refused(mock_url):
    """Issue 11: the mock follows the transport rules `check --profile mcp` enforces."""
    url, _ = mock_url
    r = httpx2.post(f"{url}/mcp", content=jsonio.dumps(call(1, "echo", {"t": "x"})), headers=ACCEPT)
    assert r.status_code == 400 and "Mcp-Session-Id" in r.json()["error"]["message"]


def test_a_2026_request_needs_no_session_and_gets_its_era(mock_url):
    """A stateless 2026-07-28 request (protocol _meta) is served without a session, in its own era."""
    url, _ = mock_url
    modern = call(1, "echo", {"t": "x"})
    modern["params"]["_meta"] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    r = httpx2.post(f"{url}/mcp", content=jsonio.dumps(modern),
                    headers={**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call",
                             "mcp-name": "echo"})  # the 2026 era's routing headers (else 400, -32020)
    assert r.status_code == 200 and "mcp-session-id" not in r.headers
    assert _events(r.content) == [res(1, {**text("x"), "resultType": "complete"})]


def test_an_unsupported_protocol_version_header_is_refused(mock_url):
    url, _ = mock_url
    r = httpx2.post(f"{url}/mcp", content=jsonio.dumps(call(1, "echo", {"t": "x"})),
                    headers={**ACCEPT, "mcp-protocol-version": "1999-01-01"})
    assert r.status_code == 400 and "1999-01-01" in r.json()["error"]["message"]


@pytest.mark.parametrize("transport_cls,path", [(StreamableHTTPTransport, "/mcp"), (LegacySSETransport, "/sse")])
def test_our_http_transports_replay_against_the_http_mock(mock_url, transport_cls, path):
    url, _ = mock_url

    async def main():
        transport = transport_cls(url + path)
        report = await replay(RECORDING, transport, ReplayOptions(timeout=5), target=url)
        return report, transport

    report, transport = asyncio.run(main())
    assert [r.status for r in report.results] == ["same", "same", "same"], [r.error for r in report.results]
    # the recorded roots/list reached our replayer, which answered it from the recording
    assert [s.method for s in report.server_requests] == ["roots/list"]
    assert report.notifications_received >= 1
    if transport_cls is StreamableHTTPTransport:
        assert transport.protocol_version == "2025-11-25"


def test_the_get_stream_carries_what_the_server_says_outside_requests(mock_url):
    url, _ = mock_url

    async def main():
        t = StreamableHTTPTransport(url + "/mcp")
        await t.start()
        try:
            await t.send(INIT)
            first = await asyncio.wait_for(t.receive(), 5)
            await t.send(note("notifications/initialized"))  # opens the GET stream; list_changed comes on it
            second = await asyncio.wait_for(t.receive(), 5)
            return first, second
        finally:
            await t.close()

    first, second = asyncio.run(main())
    assert first.raw["id"] == 1
    # said before the GET stream opened, kept for it, and delivered on it
    assert second.raw["method"] == "notifications/tools/list_changed" and second.ctx["method"] == "GET"


def test_transport_errors_are_clear():
    async def refused():
        t = StreamableHTTPTransport("http://127.0.0.1:9/mcp")
        await t.start()
        try:
            await t.send(INIT)
        finally:
            await t.close()

    with pytest.raises(TransportError, match="cannot reach http://127.0.0.1:9/mcp"):
        asyncio.run(refused())
    with pytest.raises(TransportError, match="not an http"):
        open_target(url="ftp://x/")
    with pytest.raises(TransportError, match="not found"):
        asyncio.run(StdioTransport(["/no/such/server"]).start())


def test_stdio_transport_hands_out_stderr_and_invalid_lines():
    script = ("import sys, json\n"
              "print('starting', file=sys.stderr, flush=True)\n"
              "line = sys.stdin.readline()\n"
              "print('not json', flush=True)\n"
              "print(json.dumps({'jsonrpc': '2.0', 'id': json.loads(line)['id'], 'result': {}}), flush=True)\n")

    async def main():
        import sys

        t = StdioTransport([sys.executable, "-c", script])
        await t.start()
        await t.send(req(1, "ping"))
        got = [m async for m in t]
        await t.close()
        return got, t

    got, t = asyncio.run(main())
    kinds = sorted((m.kind, m.text or "") for m in got if m.kind != "message")
    assert kinds == [("invalid", "not json"), ("stderr", "starting")]
    assert [m.raw for m in got if m.kind == "message"] == [res(1, {})]
    assert t.returncode == 0 and "exit code 0" in (t.ended or "")


class _BrokenStdin:
    """A stdin pipe whose reader is gone: what a write meets when the server died first."""

    def write(self, data: bytes) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_server_that_died_is_named_with_its_exit_code_and_last_stderr_line():
    # the pipe breaks at once, while the server is still dying: the reason must wait for its end
    script = "import sys, time; print('cannot start: no database', file=sys.stderr, flush=True); time.sleep(0.2); sys.exit(3)"

    async def main():
        import sys

        t = StdioTransport([sys.executable, "-c", script])
        await t.start()
        t.proc.stdin = _BrokenStdin()
        try:
            with pytest.raises(TransportError) as info:
                await t.send(req(1, "initialize"))
        finally:
            await t.close()
        return str(info.value)

    assert asyncio.run(main()) == "the server exited (exit code 3); its last stderr line: cannot start: no database"



def test_the_mock_refuses_rebound_hosts_unless_allowed() -> None:
    """``serve --allow-host`` reaches the mock's Host check; other names are refused 421 (DNS rebinding)."""
    app = http_app(Mock(build(RECORDING)), host="127.0.0.1", allow_hosts=("dev.example",))

    async def main() -> tuple[httpx2.Response, httpx2.Response]:
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app)) as c:
            body = jsonio.dumps(INIT)
            return (await c.post("http://evil.example:1/mcp", content=body, headers=ACCEPT),
                    await c.post("http://dev.example:1/mcp", content=body, headers=ACCEPT))

    bad, good = asyncio.run(main())
    assert bad.status_code == 421 and bad.json()["error"]["code"] == -32600
    assert good.status_code == 200
