"""Servers for the check's tests: a correct seed-002 server with switchable defects, the seed's own
example server as written, a stdio server script with switchable defects, and a helper to serve an
ASGI app on a loopback port from a thread.

The HTTP server reads its defects from the URL: ``http://127.0.0.1:P/<defect>+<defect>/mcp``
(``ok`` for none), so one server per test module serves every variant.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

SUPPORTED = ["2024-11-05", "2025-03-26", "2025-06-18"]

TOOLS = [
    {
        "name": "lookup_customer",
        "description": "Look a customer up by id",
        "inputSchema": {
            "type": "object",
            "properties": {"customer_id": {"type": "string", "description": "The customer id"}},
            "required": ["customer_id"],
        },
    },
    {
        "name": "add",
        "description": "Add two integers",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer", "minimum": 5}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
]

BAD_TOOLS = [
    {"name": "no_description", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "wrong_type", "description": "x", "inputSchema": {"type": "array", "properties": {}}},
    {"name": "undeclared_required", "description": "x",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}},
    {"name": "invalid_schema", "description": "x",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "no-such-type"}}}},
]


def _sse(msg: Any, defects: set[str]) -> bytes:
    data = json.dumps(msg)
    if "no_event_line" in defects:
        return f"data: {data}\n\n".encode()
    if "no_blank_line" in defects:
        return f"event: message\ndata: {data}\n".encode()
    return f"event: message\ndata: {data}\n\n".encode()


class SeedServer:
    """A correct server in seed 002's format (plus MCP's session, Origin and version rules)."""

    def __init__(self) -> None:
        self.sessions: set[str] = set()
        self.calls: list[dict[str, Any]] = []

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/{defects}/mcp", self.endpoint, methods=["POST", "DELETE", "GET"])])

    async def endpoint(self, request: Request) -> Response:
        defects = set(request.path_params["defects"].split("+")) - {"ok"}
        origin = request.headers.get("origin")
        if origin and "no_origin_check" not in defects and not origin.startswith(("http://127.0.0.1", "http://localhost")):
            return Response("forbidden origin", status_code=403)
        if request.method == "GET":
            return Response(status_code=405)
        if request.method == "DELETE":
            self.sessions.discard(request.headers.get("mcp-session-id", ""))
            return Response(status_code=200)
        body = await request.body()
        try:
            msg = json.loads(body)
        except ValueError:
            if "no_parse_error" in defects:
                return Response(_sse({"jsonrpc": "2.0", "id": None, "result": {}}, defects),
                                media_type="text/event-stream")
            parse_error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
            return Response(json.dumps(parse_error), status_code=400, media_type="application/json")
        method = msg.get("method")
        headers: dict[str, str] = {}
        if method != "initialize" and "no_session" not in defects and "session_not_required" not in defects:
            sid = request.headers.get("mcp-session-id")
            if not sid:
                return Response("missing session", status_code=400)
            if sid not in self.sessions:
                return Response("unknown session", status_code=404)
        pv = request.headers.get("mcp-protocol-version")
        if pv and pv not in SUPPORTED and "no_version_header_check" not in defects:
            return Response("unsupported protocol version", status_code=400)
        if "id" not in msg:
            if "answer_notifications" in defects:
                return Response(_sse({"jsonrpc": "2.0", "id": None, "result": {}}, defects),
                                media_type="text/event-stream")
            return Response(status_code=202)
        rid = msg["id"]
        out_id = str(rid) if "bad_ids" in defects and isinstance(rid, int) else rid
        result: Any = None
        error: Any = None
        if method == "initialize":
            asked = msg.get("params", {}).get("protocolVersion")
            agreed = asked if asked in SUPPORTED or "echo_version" in defects else SUPPORTED[-1]
            result = {"protocolVersion": agreed, "capabilities": {"tools": {}},
                      "serverInfo": {"name": "seed-server", "version": "1.0.0"}}
            if "bad_initialize" in defects:
                result = {"protocolVersion": agreed, "capabilities": {}, "serverInfo": {"name": "seed-server"}}
            if "no_session" not in defects:
                sid = uuid.uuid4().hex
                self.sessions.add(sid)
                headers["Mcp-Session-Id"] = sid
        elif method == "tools/list":
            tools = BAD_TOOLS if "bad_tools" in defects else TOOLS
            result = {"tool": tools} if "tools_not_found" in defects else {"tools": tools}
        elif method == "tools/call":
            params = msg.get("params", {})
            self.calls.append(params)
            data = {"called": params.get("name"), "arguments": params.get("arguments")}
            if "raw_object_text" in defects:
                content = [{"type": "text", "text": data}]
            elif "non_json_text" in defects:
                content = [{"type": "text", "text": "plain words, not JSON"}]
            elif "image_content" in defects:
                content = [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]
            else:
                content = [{"type": "text", "text": json.dumps(data)}]
            result = {"content": content}
        elif method == "ping":
            result = {}
        elif "no_method_not_found" in defects:
            result = {}
        else:
            error = {"code": -32601, "message": "Method not found"}
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": out_id}
        if error is not None:
            reply["error"] = error
        else:
            reply["result"] = result
        if "json_responses" in defects:
            return Response(json.dumps(reply), media_type="application/json", headers=headers)
        return Response(_sse(reply, defects), media_type="text/event-stream", headers=headers)


def seed_example_app() -> Starlette:
    """Seed 002's "Python Implementation Example", as written (Starlette for FastAPI)."""
    from starlette.responses import StreamingResponse

    tools = [{"name": "example_tool", "description": "Example tool description",
              "inputSchema": {"type": "object", "properties": {"query": {"type": "string",
                              "description": "Query parameter"}}, "required": ["query"]}}]

    def sse_response(data: Any) -> str:
        return f"event: message\ndata: {json.dumps(data)}\n\n"

    async def handle_jsonrpc(request_data: dict[str, Any]) -> Any:
        method = request_data.get("method")
        msg_id = request_data.get("id")
        if method == "initialize":
            return {"jsonrpc": "2.0", "id": msg_id, "result": {
                "protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                "serverInfo": {"name": "example-mcp", "version": "1.0.0"}}}
        if method == "tools/list":
            return {"jsonrpc": "2.0", "id": msg_id, "result": {"tools": tools}}
        if method == "tools/call":
            result_data = {"result": "processed data"}
            return {"jsonrpc": "2.0", "id": msg_id,
                    "result": {"content": [{"type": "text", "text": json.dumps(result_data)}]}}
        return None

    async def mcp_endpoint(request: Request) -> Response:
        request_data = await request.json()
        response_data = await handle_jsonrpc(request_data)

        async def stream() -> Any:
            yield sse_response(response_data)

        return StreamingResponse(stream(), media_type="text/event-stream")

    return Starlette(routes=[Route("/mcp", mcp_endpoint, methods=["POST"])])


@contextlib.contextmanager
def serve_app(app: Any) -> Iterator[str]:
    """``app`` on 127.0.0.1 (a free port) from a thread; yields ``http://127.0.0.1:PORT``."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="critical", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


#: a stdio server with switchable defects (argv), plain Python (no SDK: starts in ~50 ms)
STDIO_SERVER = r'''
import json, sys
defects = set(sys.argv[1:])
if "exit_at_once" in defects:
    print("fatal: missing config file /etc/nowhere.toml", file=sys.stderr)
    sys.exit(3)
if "mute" in defects:
    for _ in sys.stdin:
        pass
    sys.exit(0)
TOOLS = [{"name": "echo", "description": "Echo", "inputSchema": {"type": "object",
          "properties": {"text": {"type": "string"}}, "required": ["text"]}},
         {"name": "slow", "description": "Never answers", "inputSchema": {"type": "object", "properties": {}}}]
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
if "noisy_stdout" in defects:
    print("server starting, listening on stdio")
    sys.stdout.flush()
for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    try:
        msg = json.loads(line)
    except ValueError:
        if "crash_on_bad_json" in defects:
            sys.exit(1)
        send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
        continue
    if "method" not in msg:
        continue  # a response to a request of ours
    if "id" not in msg:
        if "answer_notifications" in defects:
            send({"jsonrpc": "2.0", "id": None, "result": {}})
        continue
    rid = msg["id"]
    out_id = str(rid) if "bad_ids" in defects and isinstance(rid, int) else rid
    m = msg["method"]
    if m == "initialize":
        asked = msg["params"]["protocolVersion"]
        res = {"protocolVersion": asked if asked in ("2024-11-05", "2025-06-18") else "2025-06-18",
               "capabilities": {"tools": {}}, "serverInfo": {"name": "stdio-test", "version": "0.1"}}
    elif m == "tools/list":
        res = {"tools": TOOLS}
    elif m == "tools/call":
        if msg["params"]["name"] == "slow":
            continue
        res = {"content": [{"type": "text", "text": json.dumps(msg["params"]["arguments"])}]}
    elif m == "ping":
        res = {}
    else:
        send({"jsonrpc": "2.0", "id": out_id, "error": {"code": -32601, "message": "Method not found"}})
        continue
    send({"jsonrpc": "2.0", "id": out_id, "result": res})
'''
