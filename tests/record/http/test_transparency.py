"""What a transparent proxy must respect (spec 03, last section), each rule against the scripted target:
exact SSE bytes, end-to-end vs hop-by-hop headers, every status, content codings, batches, disconnects
both ways, the legacy endpoint rewrite, Origin validation, an unreachable target, a stop mid-stream."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import anyio
import httpx2
import pytest

from mcpreel._infra import jsonio
from mcpreel.model import Kind
from mcpreel.redact import MARKER

from .helpers import ThreadServer, free_port, messages, projection, proxy, transports
from .scripted import RESULT, SSE_CHUNKS, ScriptedTarget

pytestmark = pytest.mark.anyio

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


async def raw_sse(url: str, **kw: object) -> tuple[httpx2.Response, bytes]:
    async with httpx2.AsyncClient() as http:
        async with http.stream("GET", url, **kw) as r:  # type: ignore[arg-type]
            data = b"".join([c async for c in r.aiter_raw()])
    return r, data


UPSTREAMS = pytest.mark.parametrize("stock", [False, True], ids=["lean-upstream", "httpx2-stock-upstream"])


@UPSTREAMS
async def test_sse_stream_bytes_are_forwarded_exactly(tmp_path: Path, stock: bool) -> None:
    target = ScriptedTarget()
    with ThreadServer(target) as srv:
        _, direct = await raw_sse(srv.url("/sse"))
        with proxy("streamable-http", srv.url("/mcp"), tmp_path, stock_upstream=stock) as run:
            _, proxied = await raw_sse(run.url.replace("/mcp", "/sse"))
    assert direct == b"".join(SSE_CHUNKS)
    assert proxied == direct
    records = run.records()
    ctxs = transports(records)
    assert any(c.get("sse", {}).get("comment") == "keep-alive" for c in ctxs)
    priming = [c for c in ctxs if c.get("sse", {}).get("id") == "p0"]
    assert priming and priming[0]["sse"]["retry"] == 500 and priming[0]["data"] == ""
    got = messages(records, "out")
    assert got == [{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}},
                   {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}]
    ids = [r.ctx["sse"]["id"] for r in records if r.kind == Kind.MESSAGE]
    assert ids == ["e1", "e2"]
    assert any(c.get("closed") == "server" for c in ctxs)  # a GET stream's end is recorded


@UPSTREAMS
async def test_end_to_end_headers_kept_hop_by_hop_dropped_secrets_redacted(tmp_path: Path, stock: bool) -> None:
    target = ScriptedTarget()
    sent = {
        "Mcp-Session-Id": "s-123", "MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/call",
        "Mcp-Name": "echo", "Mcp-Param-Region": "eu", "Last-Event-ID": "e9", "Authorization": "Bearer s3cret",
        "Cookie": "sid=abc", "X-Api-Key": "k-1", "Accept": "application/json, text/event-stream",
        "Connection": "keep-alive, X-Hop", "X-Hop": "1", "Keep-Alive": "timeout=5", "TE": "trailers",
        "Proxy-Authorization": "Basic x",
    }
    body = jsonio.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo"}})
    with ThreadServer(target) as srv:
        with proxy("streamable-http", srv.url("/mcp"), tmp_path, stock_upstream=stock) as run:
            async with httpx2.AsyncClient() as http:
                r = await http.post(run.url.replace("/mcp", "/echo-headers"), content=body, headers=sent)
    seen = {k.lower(): v for k, v in target.seen[0]["headers"]}
    for name in ("mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name", "mcp-param-region",
                 "last-event-id", "authorization", "cookie", "x-api-key", "accept"):
        assert seen[name] == sent[next(k for k in sent if k.lower() == name)], name
    for hop in ("x-hop", "keep-alive", "te", "proxy-authorization"):
        assert hop not in seen, hop
    assert seen["host"] == f"127.0.0.1:{srv.port}"  # Host is the target's
    assert "user-agent" in seen and seen["user-agent"].startswith("python-httpx2")  # the client's own, not ours
    assert target.seen[0]["body"] == body
    # the answer's end-to-end headers come back; its hop-by-hop ones do not
    assert r.status_code == 200
    assert r.headers["mcp-session-id"] == "s-123" and r.headers["www-authenticate"] == 'Bearer scope="x"'
    assert r.headers["x-foo"] == "bar" and r.headers["set-cookie"] == "sid=secret; HttpOnly"
    assert "keep-alive" not in r.headers
    # recorded: secrets redacted, MCP headers as they came
    records = run.records()
    req = next(m for m in records if m.kind == Kind.MESSAGE and m.dir == "in")
    h = req.ctx["headers"]
    assert h["authorization"] == MARKER and h["cookie"] == MARKER and h["x-api-key"] == MARKER
    assert h["mcp-name"] == "echo" and h["last-event-id"] == "e9"
    resp = next(m for m in records if m.kind == Kind.MESSAGE and m.dir == "out")
    assert resp.ctx["status"] == 200 and resp.ctx["headers"]["set-cookie"] == MARKER
    recorded_headers = jsonio.dumps_str([m.ctx.get("headers") for m in records if m.ctx])
    assert "s3cret" not in recorded_headers and "sid=" not in recorded_headers and "k-1" not in recorded_headers


@UPSTREAMS
async def test_the_proxy_adds_no_header_of_its_own(tmp_path: Path, stock: bool) -> None:
    target = ScriptedTarget()
    with ThreadServer(target) as srv:
        with proxy("streamable-http", srv.url("/mcp"), tmp_path, stock_upstream=stock) as run:
            port = int(run.url.split(":")[2].split("/")[0])

            def bare_request() -> bytes:
                import socket

                with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                    s.sendall(b"POST /echo-headers HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Only: 1\r\nContent-Length: 2\r\n\r\n{}")
                    data = b""
                    while b"\r\n\r\n" not in data or not data.endswith(b"}}"):
                        chunk = s.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                return data

            answer = await anyio.to_thread.run_sync(bare_request)
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert sorted(k.lower() for k, _ in target.seen[0]["headers"]) == ["content-length", "host", "x-only"]


async def test_keep_secrets_records_them(tmp_path: Path) -> None:
    with ThreadServer(ScriptedTarget()) as srv:
        with proxy("streamable-http", srv.url("/mcp"), tmp_path, keep_secrets=True) as run:
            async with httpx2.AsyncClient() as http:
                await http.post(run.url.replace("/mcp", "/echo-headers"), content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                                headers={"Authorization": "Bearer s3cret"})
    req = next(m for m in run.records() if m.kind == Kind.MESSAGE and m.dir == "in")
    assert req.ctx["headers"]["authorization"] == "Bearer s3cret"


async def test_every_status_passes_through(tmp_path: Path) -> None:
    codes = [202, 204, 400, 401, 403, 404, 405, 406, 409, 415, 500, 503]
    with ThreadServer(ScriptedTarget()) as srv:
        async with httpx2.AsyncClient() as http:
            direct = [(await http.post(srv.url(f"/status/{c}"), content=b"{}")) for c in codes]
            with proxy("streamable-http", srv.url("/mcp"), tmp_path) as run:
                proxied = [(await http.post(run.url.replace("/mcp", f"/status/{c}"), content=b"{}")) for c in codes]
            html = await http.get(srv.url("/html-error"))
    assert [r.status_code for r in proxied] == codes
    assert [r.content for r in proxied] == [r.content for r in direct]
    assert html.status_code == 500
    statuses = [c["status"] for c in transports(run.records()) if "status" in c] + [
        m.ctx["status"] for m in run.records() if m.kind == Kind.MESSAGE and m.dir == "out"]
    assert sorted(statuses) == sorted(codes)
    assert any(c.get("status") == 202 and "data" not in c for c in transports(run.records()))


async def test_text_body_is_recorded_as_text(tmp_path: Path) -> None:
    with ThreadServer(ScriptedTarget()) as srv:
        with proxy("streamable-http", srv.url("/mcp"), tmp_path) as run:
            async with httpx2.AsyncClient() as http:
                r = await http.get(run.url.replace("/mcp", "/html-error"))
    assert r.status_code == 500 and r.text == "<html><body>oops</body></html>"
    rec = [c for c in transports(run.records()) if c.get("status") == 500]
    assert rec and rec[0]["body"] == "<html><body>oops</body></html>"


async def test_content_coding_forwarded_as_is_and_decoded_for_the_record(tmp_path: Path) -> None:
    with ThreadServer(ScriptedTarget()) as srv:
        with proxy("streamable-http", srv.url("/mcp"), tmp_path) as run:
            async with httpx2.AsyncClient() as http:
                async with http.stream("POST", srv.url("/gzip"), content=b"{}") as r:
                    direct = b"".join([c async for c in r.aiter_raw()])
                async with http.stream("POST", run.url.replace("/mcp", "/gzip"), content=b"{}") as r:
                    proxied = b"".join([c async for c in r.aiter_raw()])
                    assert r.headers["content-encoding"] == "gzip"
    assert proxied == direct
    assert messages(run.records(), "out") == [RESULT]


async def test_batches_recorded_as_they_came(tmp_path: Path) -> None:
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "method": "notifications/x"},
             {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
    with ThreadServer(ScriptedTarget()) as srv:
        with proxy("streamable-http", srv.url("/mcp"), tmp_path) as run:
            async with httpx2.AsyncClient() as http:
                r = await http.post(run.url.replace("/mcp", "/batch"), content=jsonio.dumps(batch))
    assert r.json() == [{"jsonrpc": "2.0", "id": 1, "result": {"n": 1}}, {"jsonrpc": "2.0", "id": 2, "result": {"n": 2}}]
    assert messages(run.records()) == [batch, r.json()]
    assert run.result.stats.requests == 2 and run.result.unanswered == 0


async def test_client_leaving_a_stream_closes_it_upstream(tmp_path: Path) -> None:
    target = ScriptedTarget()
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "slow", "arguments": {}}}
    with ThreadServer(target) as srv:
        with proxy("streamable-http", srv.url("/mcp"), tmp_path) as run:
            async with httpx2.AsyncClient() as http:
                async with http.stream("POST", run.url.replace("/mcp", "/hang"), content=jsonio.dumps(call)) as r:
                    async for chunk in r.aiter_raw():
                        assert b"notifications/progress" in chunk
                        break  # leave mid-stream: the response is closed without being read to its end
            left = await anyio.to_thread.run_sync(target.left.wait, 5)
    assert left, "the target never saw the client leave"
    closed = [c for c in transports(run.records()) if c.get("closed") == "client"]
    assert len(closed) == 1 and closed[0]["unanswered"] == ["7"]
    assert messages(run.records(), "out")[0]["method"] == "notifications/progress"


async def test_target_breaking_a_stream_breaks_the_clients(tmp_path: Path) -> None:
    async def read(url: str) -> tuple[bytes, type[BaseException] | None]:
        got = b""
        async with httpx2.AsyncClient() as http:
            try:
                async with http.stream("POST", url, content=b"{}") as r:
                    async for chunk in r.aiter_raw():
                        got += chunk
            except httpx2.HTTPError as exc:
                return got, type(exc)
        return got, None

    with ThreadServer(ScriptedTarget()) as srv:
        direct = await read(srv.url("/break"))
        with proxy("streamable-http", srv.url("/mcp"), tmp_path) as run:
            proxied = await read(run.url.replace("/mcp", "/break"))
    assert direct[1] is not None  # the client of a broken stream sees an error, not a clean end ...
    assert proxied[1] is not None  # ... through the proxy too
    assert proxied[0] == direct[0]
    closed = [c for c in transports(run.records()) if c.get("closed") == "upstream"]
    assert len(closed) == 1 and closed[0]["error"]


async def test_legacy_endpoint_absolute_uri_points_at_the_proxy(tmp_path: Path) -> None:
    with ThreadServer(ScriptedTarget()) as srv:
        with proxy("sse", srv.url("/sse-endpoint"), tmp_path) as run:
            _, proxied = await raw_sse(run.url)
    port = run.url.split(":")[2].split("/")[0]
    assert proxied == f"event: endpoint\ndata: http://127.0.0.1:{port}/messages?sid=1\n\n: ping\n\n".encode()
    ep = [c for c in transports(run.records()) if c.get("sse", {}).get("event") == "endpoint"]
    assert ep[0]["data"] == f"http://127.0.0.1:{srv.port}/messages?sid=1"
    assert ep[0]["forwarded"] == f"http://127.0.0.1:{port}/messages?sid=1"


async def test_origin_validated_on_the_proxys_listener(tmp_path: Path) -> None:
    target = ScriptedTarget()
    body = jsonio.dumps(INIT)
    with ThreadServer(target) as srv:
        with proxy("streamable-http", srv.url("/mcp"), tmp_path, allow_origins=("https://app.example",)) as run:
            url = run.url.replace("/mcp", "/echo-headers")
            async with httpx2.AsyncClient() as http:
                evil = await http.post(url, content=body, headers={"Origin": "http://evil.example"})
                local = await http.post(url, content=body, headers={"Origin": "http://localhost:6274"})
                listed = await http.post(url, content=body, headers={"Origin": "https://app.example"})
                none = await http.post(url, content=body)
    assert evil.status_code == 403 and evil.json()["error"]["message"].startswith("Forbidden: Origin http://evil.example")
    assert [local.status_code, listed.status_code, none.status_code] == [200, 200, 200]
    assert len(target.seen) == 3  # the refused request never reached the target
    refused = [c for c in transports(run.records()) if c.get("status") == 403]
    assert refused and "evil.example" in refused[0]["proxy"]


async def test_unreachable_target_gives_502_with_a_jsonrpc_error(tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}/mcp"
    with proxy("streamable-http", down, tmp_path) as run:
        async with httpx2.AsyncClient() as http:
            t0 = time.monotonic()
            r = await http.post(run.url, content=jsonio.dumps(INIT),
                                headers={"Accept": "application/json, text/event-stream"})
            assert time.monotonic() - t0 < 5
    assert r.status_code == 502 and r.headers["content-type"] == "application/json"
    err = r.json()
    assert err["jsonrpc"] == "2.0" and err["id"] == 1 and err["error"]["code"] == -32000
    assert down in err["error"]["message"] and "unreachable" in err["error"]["message"]
    line = [c for c in transports(run.records()) if c.get("status") == 502]
    assert len(line) == 1 and line[0]["proxy"] == "unreachable" and "Connect" in line[0]["error"]
    # the proxy's own answer is not a server message: on import the call stays unanswered
    assert messages(run.records(), "out") == []
    assert run.result.unanswered == 1
    assert projection(run.out, tmp_path)["final"] is None


async def test_stopping_mid_stream_ends_streams_and_the_record(tmp_path: Path) -> None:
    from .helpers import sdk_server

    app = sdk_server().streamable_http_app()
    with ThreadServer(app) as srv:
        with proxy("streamable-http", srv.url("/mcp"), tmp_path) as run:
            async with httpx2.AsyncClient(timeout=10) as http:
                h = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
                r = await http.post(run.url, content=jsonio.dumps(INIT), headers=h)
                sid = r.headers["mcp-session-id"]
                h |= {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
                await http.post(run.url, content=b'{"jsonrpc":"2.0","method":"notifications/initialized"}', headers=h)
                async with http.stream("GET", run.url, headers=h) as stream:
                    assert stream.status_code == 200
                    stopper = threading.Timer(0.2, run.server.stop)
                    stopper.start()
                    t0 = time.monotonic()
                    body = b"".join([c async for c in stream.aiter_raw()])  # ends cleanly when the proxy stops
                    assert time.monotonic() - t0 < 5
    assert b"jsonrpc" not in body  # nothing was sent on the idle stream; it ended when the proxy stopped
    assert any(c.get("closed") == "shutdown" for c in transports(run.records()))
    assert run.result.reason == "stopped"
    assert run.out.read_text().rstrip().splitlines()[-1].startswith('{"t":')
    assert '"type":"end"' in run.out.read_text().rstrip().splitlines()[-1]


async def test_redact_changes_the_record_never_the_wire(tmp_path: Path) -> None:
    from mcpreel.redact import Redactor

    target = ScriptedTarget()
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "login", "arguments": {"user": "bob", "password": "hunter2", "api_key": "sk-live-123456"}}}
    with ThreadServer(target) as srv:
        with proxy("streamable-http", srv.url("/mcp?token=abc123"), tmp_path, redactor=Redactor()) as run:
            async with httpx2.AsyncClient() as http:
                assert run.url.endswith("/mcp?token=abc123")  # the client is pointed at the same path and query
                r = await http.post(run.url.replace("/mcp", "/echo-headers") + "&k=1", content=jsonio.dumps(call))
    assert r.status_code == 200
    assert jsonio.loads(target.seen[0]["body"]) == call and target.seen[0]["query"] == "token=abc123&k=1"  # forwarded as sent
    text = run.out.read_text()
    assert "hunter2" not in text and "sk-live-123456" not in text and "abc123" not in text
    sent = messages(run.records(), "in")[0]
    assert sent["params"]["arguments"] == {"user": "bob", "password": MARKER, "api_key": MARKER}


async def test_a_request_target_that_is_not_a_path_is_refused_and_goes_nowhere(tmp_path: Path) -> None:
    """``OPTIONS *`` (or any target not starting with ``/``) cannot name a path on the target: the proxy
    answers 400 itself, and never builds a URL of it (``origin + target`` could name another host)."""
    target = ScriptedTarget()
    with ThreadServer(target) as srv:
        with proxy("streamable-http", srv.url("/mcp"), tmp_path) as run:
            port = int(run.url.split(":")[2].split("/")[0])

            def ask(request_target: bytes) -> bytes:
                import socket

                with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                    s.sendall(b"OPTIONS " + request_target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    data = b""
                    while chunk := s.recv(65536):
                        data += chunk
                return data

            answer = await anyio.to_thread.run_sync(ask, b"*")
            fine = await anyio.to_thread.run_sync(ask, b"/status/204")
    assert answer.startswith(b"HTTP/1.1 400 "), answer
    assert b"is not a path" in answer and b'"jsonrpc":"2.0"' in answer
    assert fine.startswith(b"HTTP/1.1 204 ")
    assert [s["path"] for s in target.seen] == ["/status/204"]
    refused = [c for c in transports(run.records()) if c.get("status") == 400]
    assert len(refused) == 1 and refused[0]["path"] == "*" and "not a path" in refused[0]["proxy"]


async def test_session_file_is_saved_while_recording(tmp_path: Path) -> None:
    """qai's --session-file with --save-every: the file holds what was said before the proxy stops."""
    qai = tmp_path / "q.json"
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    with ThreadServer(ScriptedTarget()) as srv:
        with proxy("streamable-http", srv.url("/mcp"), tmp_path, session_file=qai, save_every=0.05) as run:
            async with httpx2.AsyncClient() as http:
                await http.post(run.url.replace("/mcp", "/echo-headers"), content=body)
            deadline = time.monotonic() + 10
            while not (qai.exists() and len(jsonio.loads(qai.read_bytes())["messages"]) == 2):
                assert time.monotonic() < deadline, "session file not saved while recording"
                await anyio.sleep(0.02)
            during = jsonio.loads(qai.read_bytes())
    assert during["ended_at"] is None and during["transport"] == "streamable-http"
    assert [m["direction"] for m in during["messages"]] == ["client_to_server", "server_to_client"]
    assert (qai.stat().st_mode & 0o777) == 0o600
    assert jsonio.loads(qai.read_bytes())["ended_at"] is not None  # saved once more at the end


async def test_an_envelope_that_cannot_be_written_at_the_end_is_one_error_and_the_reel_is_complete(
        tmp_path: Path) -> None:
    from mcpreel.errors import UsageError

    with ThreadServer(ScriptedTarget()) as srv:
        with pytest.raises(UsageError, match=r"s\.envelope\.json: cannot write: .*; the recording is "
                                             r"complete in .*s\.jsonl \(mcpreel convert "):
            with proxy("streamable-http", srv.url("/mcp"), tmp_path) as run:
                async with httpx2.AsyncClient() as http:
                    await http.post(run.url.replace("/mcp", "/echo-headers"), content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
                (tmp_path / "s.envelope.json").mkdir()  # the envelope's place is taken while recording
    assert (tmp_path / "s.jsonl").read_text().rstrip().splitlines()[-1].startswith('{"t":')
    assert '"type":"end"' in (tmp_path / "s.jsonl").read_text().rstrip().splitlines()[-1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.envelope.json", "s.jsonl"]  # no temp file left
