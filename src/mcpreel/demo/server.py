"""mcpreel's demo MCP server: a few useful tools, built on the official SDK (``MCPServer``).

It speaks seed 002's format over Streamable HTTP (SSE responses, ``event: message`` framing, every tool
result a JSON string in a ``text`` item) and passes every check of ``mcpreel check --profile sse``; it
is also what ``mcpreel demo`` records. The tools show the things a recorder must get right:

- ``echo``, ``add``, ``lookup_customer``: plain calls (an unknown customer is an ``isError`` result);
- ``divide``: fails with ``isError: true`` on a division by zero;
- ``countdown``: reports progress (``notifications/progress``) when the client asked for it;
- ``ask_llm``: asks the client for a completion (``sampling/createMessage``) when the client declared
  the sampling capability, and says so plainly when it did not.

Transports: stdio, Streamable HTTP (``/mcp``), legacy HTTP+SSE (``/sse`` + ``/messages/``). HTTP binds
127.0.0.1 by default and answers 403 to a request whose ``Origin`` is not its own (the SDK does the
same for loopback hosts; :class:`OriginGuard` keeps the rule on any host).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, SamplingMessage, TextContent

from mcpreel._infra import jsonio
from mcpreel._version import __version__
from mcpreel.serving.listen import listening_socket

__all__ = ["CUSTOMERS", "TRANSPORTS", "OriginGuard", "build_server", "http_app", "serve", "serving"]

TRANSPORTS = ("stdio", "streamable-http", "sse")
#: what lookup_customer knows (the customer of seed 000's examples among them)
CUSTOMERS = {
    "cust_123": {"id": "cust_123", "name": "Alice", "tier": "gold", "since": "2021-04-01"},
    "cust_456": {"id": "cust_456", "name": "Bob", "tier": "silver", "since": "2023-09-15"},
}
ENDPOINTS = {"streamable-http": "/mcp", "sse": "/sse"}


def _json_text(data: Any, *, error: bool = False) -> CallToolResult:
    """A tool result the seed's way: one text item holding compact JSON."""
    return CallToolResult(content=[TextContent(type="text", text=jsonio.dumps_str(data))], is_error=error)


def build_server() -> MCPServer:
    """The demo server (an ``MCPServer``), tools registered."""
    mcp = MCPServer(
        "mcpreel-demo",
        version=__version__,
        instructions="mcpreel's demo server: echo, arithmetic, a customer lookup, progress and sampling.",
        log_level="WARNING",
    )

    @mcp.tool()
    def echo(text: str) -> CallToolResult:
        """Echo a text back, with its length."""
        return _json_text({"text": text, "length": len(text)})

    @mcp.tool()
    def add(a: float, b: float) -> CallToolResult:
        """Add two numbers."""
        return _json_text({"sum": a + b})

    @mcp.tool()
    def divide(a: float, b: float) -> CallToolResult:
        """Divide a by b; dividing by zero fails with isError: true."""
        if b == 0:
            return _json_text({"error": "division by zero", "a": a, "b": b}, error=True)
        return _json_text({"quotient": a / b})

    @mcp.tool()
    def lookup_customer(customer_id: str) -> CallToolResult:
        """Look a customer up by id (try cust_123); an unknown id is an isError result."""
        found = CUSTOMERS.get(customer_id)
        if found is None:
            return _json_text({"error": f"no customer {customer_id}", "known": sorted(CUSTOMERS)}, error=True)
        return _json_text(found)

    @mcp.tool()
    async def countdown(ctx: Context, steps: int = 3, delay_ms: int = 50) -> CallToolResult:
        """Count down, reporting progress at each step (when the client sent a progressToken)."""
        import anyio

        steps = max(0, min(int(steps), 100))
        delay = max(0, min(int(delay_ms), 2000)) / 1000
        for i in range(1, steps + 1):
            await anyio.sleep(delay)
            await ctx.report_progress(i, steps, f"step {i} of {steps}")
        return _json_text({"steps": steps, "done": True})

    @mcp.tool()
    async def ask_llm(question: str, ctx: Context) -> CallToolResult:
        """Ask the client's model a question (sampling/createMessage) if the client supports sampling."""
        caps = ctx.client_capabilities
        if caps is None or caps.sampling is None:
            return _json_text({"question": question, "sampled": False, "answer": None,
                               "reason": "the client declared no sampling capability"})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # legacy-era sampling is deprecated in the SDK, and still works
            res = await ctx.session.create_message(
                [SamplingMessage(role="user", content=TextContent(type="text", text=question))],
                max_tokens=100, related_request_id=ctx.request_id,
            )
        text = getattr(res.content, "text", None)
        return _json_text({"question": question, "sampled": True, "answer": text, "model": res.model})

    return mcp


async def run_stdio(mcp: MCPServer) -> None:
    """Serve ``mcp`` on stdin/stdout like ``MCPServer.run("stdio")``, and answer a line that is not a
    JSON-RPC message the way JSON-RPC 2.0 asks (``-32700`` when it is not JSON, ``-32600`` when it is
    JSON but no message), where the SDK only logs it."""
    import anyio
    import mcp_types as types
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage
    from pydantic import ValidationError

    lowlevel = mcp._lowlevel_server  # the SDK's own stdio runner reaches it the same way
    async with stdio_server() as (read, write):
        send, receive = anyio.create_memory_object_stream[Any](0)

        async def answer_bad_lines() -> None:
            async with send:
                async for item in read:
                    if isinstance(item, Exception):
                        bad_json = isinstance(item, ValidationError) and any(
                            e.get("type") == "json_invalid" for e in item.errors())
                        code, text = (-32700, "Parse error") if bad_json else (-32600, "Invalid Request")
                        err = types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=text))
                        await write.send(SessionMessage(err))
                        continue
                    await send.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(answer_bad_lines)
            await lowlevel.run(receive, write, lowlevel.create_initialization_options())
            tg.cancel_scope.cancel()


class OriginGuard:
    """ASGI middleware: 403 for a request whose ``Origin`` is neither the server's own nor a loopback origin."""

    def __init__(self, app: Any, extra: tuple[str, ...] = ()) -> None:
        self.app = app
        self.extra = {o.rstrip("/").lower() for o in extra}

    def allowed(self, origin: str, host: str) -> bool:
        origin = origin.rstrip("/").lower()
        if origin in self.extra:
            return True
        parts = urlsplit(origin)
        if parts.hostname in ("127.0.0.1", "localhost", "::1"):
            return True
        return bool(host) and parts.netloc == host.lower()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            origin = headers.get("origin")
            if origin and not self.allowed(origin, headers.get("host", "")):
                body = b"Invalid Origin header"
                headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
                await send({"type": "http.response.start", "status": 403, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def http_app(transport: str = "streamable-http", host: str = "127.0.0.1", server: Any = None) -> Any:
    """The ASGI app of an HTTP transport (stateful Streamable HTTP with SSE responses, or legacy SSE)."""
    mcp = server or build_server()
    if transport == "streamable-http":
        app = mcp.streamable_http_app(host=host)
    elif transport == "sse":
        app = mcp.sse_app(host=host)
    else:
        raise ValueError(f"not an HTTP transport: {transport}")
    return OriginGuard(app)


def _bind(host: str, port: int) -> socket.socket:
    sock = listening_socket(host, port, backlog=128)
    sock.set_inheritable(True)
    return sock


def url_of(transport: str, host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{ENDPOINTS[transport]}"


def serve(transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000,
          ready: Callable[[str], None] | None = None) -> None:
    """Run the demo server in the foreground until stdin closes (stdio) or a signal (HTTP).

    ``port`` 0 picks a free port; ``ready`` is called with the URL once HTTP is listening.
    """
    if transport == "stdio":
        import anyio

        anyio.run(run_stdio, build_server())
        return
    import uvicorn

    sock = _bind(host, port)
    url = url_of(transport, host, sock.getsockname()[1])
    config = uvicorn.Config(http_app(transport, host), log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    if ready is not None:
        ready(url)
    server.run(sockets=[sock])


@contextlib.contextmanager
def serving(transport: str = "streamable-http", host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """The demo server on a thread of this process (for ``mcpreel demo`` and tests); yields its URL."""
    import uvicorn

    sock = _bind(host, port)
    url = url_of(transport, host, sock.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(http_app(transport, host), log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="mcpreel-demo-server")
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
