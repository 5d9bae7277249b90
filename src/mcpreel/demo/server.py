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
127.0.0.1 by default; which requests it answers (``Origin``, ``Host``) is mcpreel's one policy
(:mod:`mcpreel.serving.origin`), on any host, and :mod:`mcpreel.serving.loop` serves it.
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, SamplingMessage, TextContent

from mcpreel._infra import jsonio
from mcpreel._version import __version__
from mcpreel.serving.limits import Limits
from mcpreel.serving.loop import Server
from mcpreel.serving.origin import OriginGuard, RequestPolicy

__all__ = ["CUSTOMERS", "TRANSPORTS", "build_server", "http_app", "serve", "serving"]

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


def http_app(transport: str = "streamable-http", host: str = "127.0.0.1", server: Any = None,
             allow_origins: tuple[str, ...] = (), allow_hosts: tuple[str, ...] = ()) -> OriginGuard:
    """The ASGI app of an HTTP transport (stateful Streamable HTTP with SSE responses, or legacy SSE).

    ``host`` is the address it is served on; with ``allow_origins`` it decides which requests are
    answered (:mod:`mcpreel.serving.origin`). The SDK's own check is off: it would refuse every origin
    beyond loopback's on a loopback host, even an allowed one, and none on another host.
    """
    mcp = server or build_server()
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    if transport == "streamable-http":
        app = mcp.streamable_http_app(host=host, transport_security=security)
    elif transport == "sse":
        app = mcp.sse_app(host=host, transport_security=security)
    else:
        raise ValueError(f"not an HTTP transport: {transport}")
    return OriginGuard(app, RequestPolicy(allow_origins, host, allow_hosts=tuple(allow_hosts)))


def url_of(transport: str, host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{ENDPOINTS[transport]}"


def serve(transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000,
          ready: Callable[[str], None] | None = None, allow_origins: tuple[str, ...] = (),
          allow_hosts: tuple[str, ...] = (), limits: Limits | None = None) -> None:
    """Run the demo server in the foreground until stdin closes (stdio) or a signal (HTTP).

    ``port`` 0 picks a free port; ``ready`` is called with the URL once HTTP is listening; ``limits``
    bound each HTTP request (:mod:`mcpreel.serving.limits`; the defaults when None).
    """
    if transport == "stdio":
        import anyio

        anyio.run(run_stdio, build_server())
        return
    server = Server(http_app(transport, host, allow_origins=allow_origins, allow_hosts=allow_hosts), host, port,
                    limits=limits)
    server.run(ready=None if ready is None else lambda h, p: ready(url_of(transport, h, p)))


@contextlib.contextmanager
def serving(transport: str = "streamable-http", host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """The demo server on a thread of this process (for ``mcpreel demo`` and tests); yields its URL."""
    server = Server(http_app(transport, host), host, port)
    started = threading.Event()
    thread = threading.Thread(target=server.run, kwargs={"ready": lambda h, p: started.set(), "handle_signals": False},
                              daemon=True, name="mcpreel-demo-server")
    thread.start()
    started.wait(10)
    try:
        yield url_of(transport, host, server.port)
    finally:
        server.stop()
        thread.join(10)
