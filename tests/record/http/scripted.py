"""A scripted HTTP target (raw ASGI) for what real servers do too rarely to test on: exact SSE bytes, odd
headers, a gzip body, a batch, a stream that breaks, a stream that waits for the client to leave."""

from __future__ import annotations

import threading
from typing import Any

import anyio

from mcpreel._infra import jsonio

from .helpers import gzip_bytes

#: an SSE stream as a server might chunk it: a comment, a priming event (id + retry, empty data), CRLF
#: line ends, a multi-line data field, a chunk boundary in the middle of a line
SSE_CHUNKS = [
    b": keep-alive\n\n",
    b"id: p0\nretry: 500\ndata: \n\n",
    b'event: message\r\nid: e1\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress",',
    b'"params":{"progressToken":1,"progress":1}}\r\n\r\n',
    b'id: e2\ndata: {"jsonrpc":"2.0",\ndata: "id":1,"result":{"ok":true}}\n\n',
]

RESULT = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "zipped"}]}}


class ScriptedTarget:
    """Routes by path; remembers what it was sent; notices when a client leaves a stream."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.left = threading.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        self.seen.append({"method": scope["method"], "path": scope["path"], "query": scope["query_string"].decode(),
                          "headers": headers, "body": body})
        path = scope["path"]
        if path == "/echo-headers":
            payload = jsonio.dumps({"jsonrpc": "2.0", "id": 1, "result": {"headers": headers}})
            await self._respond(send, 200, payload, [
                (b"content-type", b"application/json"), (b"mcp-session-id", b"s-123"),
                (b"www-authenticate", b'Bearer scope="x"'), (b"x-foo", b"bar"), (b"keep-alive", b"timeout=5"),
                (b"set-cookie", b"sid=secret; HttpOnly")])
        elif path.startswith("/status/"):
            code = int(path.rsplit("/", 1)[1])
            payload = b"" if code in (202, 204) else jsonio.dumps(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": f"status {code}"}})
            await self._respond(send, code, payload, [(b"content-type", b"application/json")] if payload else [])
        elif path == "/html-error":
            await self._respond(send, 500, b"<html><body>oops</body></html>", [(b"content-type", b"text/html")])
        elif path == "/gzip":
            payload = gzip_bytes(jsonio.dumps(RESULT))
            await self._respond(send, 200, payload, [(b"content-type", b"application/json"),
                                                     (b"content-encoding", b"gzip")])
        elif path == "/batch":
            reqs = jsonio.loads(body)
            payload = jsonio.dumps([{"jsonrpc": "2.0", "id": r["id"], "result": {"n": r["id"]}} for r in reqs if "id" in r])
            await self._respond(send, 200, payload, [(b"content-type", b"application/json")])
        elif path == "/sse":
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]})
            for chunk in SSE_CHUNKS:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await anyio.sleep(0.01)
            await send({"type": "http.response.body", "body": b""})
        elif path == "/sse-endpoint":
            host = dict(headers).get("host", "")
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
            event = f"event: endpoint\ndata: http://{host}/messages?sid=1\n\n".encode()
            await send({"type": "http.response.body", "body": event[:10], "more_body": True})
            await anyio.sleep(0.01)
            await send({"type": "http.response.body", "body": event[10:] + b": ping\n\n", "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        elif path == "/hang":
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
            await send({"type": "http.response.body", "more_body": True,
                        "body": b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n\n'})
            with anyio.move_on_after(10):
                while (await receive())["type"] != "http.disconnect":
                    pass
                self.left.set()
        elif path == "/break":
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
            await send({"type": "http.response.body", "more_body": True,
                        "body": b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n\n'})
            await anyio.sleep(0.05)
            raise RuntimeError("scripted: the server dies mid-stream")
        else:
            await self._respond(send, 404, b"not found", [(b"content-type", b"text/plain")])

    @staticmethod
    async def _respond(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": headers + [(b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
