"""Peers and harness for the HTTP proxy tests: in-process servers, the proxy in a thread, node peers.

Every server binds 127.0.0.1 on a port chosen here, is stopped by the context manager that started it,
and every wait is bounded.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import uvicorn
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import SamplingMessage, TextContent

from mcpreel._infra import jsonio
from mcpreel.formats import open_session
from mcpreel.model import Kind, Message
from mcpreel.record import HttpTarget, RecordHooks, RecordOptions, RecordResult, record
from mcpreel.record.http_proxy import ProxyConfig, ProxyServer
from mcpreel.toolcalls.importer import ImportOptions, import_session
from tests.conftest import free_port, wait_port

ROOT = Path(__file__).resolve().parents[3]
LISTEN127 = ROOT / "tests" / "peers" / "listen127.cjs"


# -- servers ----------------------------------------------------------------------------------------


class ThreadServer:
    """An ASGI app served by uvicorn in a thread on 127.0.0.1, port 0 (about 20 ms to start); ``lifespan``
    ``"off"`` for an app that has no lifespan to run (mcpreel's own, served as it serves them)."""

    def __init__(self, app: Any, lifespan: str = "on"):
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                                    lifespan=lifespan, timeout_graceful_shutdown=1))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ThreadServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("test server did not start")
            time.sleep(0.005)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def sdk_server(**kw: Any) -> Any:
    """The official SDK's MCPServer with the tools the sessions use."""
    mcp = MCPServer("peer", log_level="WARNING", **kw)

    @mcp.tool()
    def echo(text: str) -> str:
        return text

    @mcp.tool()
    def fail(reason: str = "boom") -> str:
        raise ToolError(reason)

    @mcp.tool()
    async def slow(steps: int, ctx: Context, delay: float = 0.0) -> str:
        for i in range(1, steps + 1):
            await ctx.report_progress(i, steps, f"step {i}")
            if delay:
                await anyio.sleep(delay)
        return f"done {steps}"

    @mcp.tool()
    async def ask(question: str, ctx: Context) -> str:
        res = await ctx.session.create_message(
            [SamplingMessage(role="user", content=TextContent(type="text", text=question))],
            max_tokens=50, related_request_id=ctx.request_id)
        return f"llm said: {res.content.text}"

    return mcp


@contextlib.contextmanager
def everything(mode: str, everything_js: Path) -> Iterator[int]:
    """server-everything (npm) in ``streamableHttp`` or ``sse`` mode, forced onto 127.0.0.1."""
    port = free_port()
    env = dict(os.environ, PORT=str(port))
    proc = subprocess.Popen(["node", "--require", str(LISTEN127), str(everything_js), mode], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


# -- the proxy under test ---------------------------------------------------------------------------


@dataclass
class ProxyRun:
    url: str = ""
    out: Path | None = None
    server: ProxyServer | None = None
    result: RecordResult | None = None
    error: BaseException | None = None

    def records(self) -> list[Message]:
        assert self.out is not None
        session, _ = open_session(self.out, "reel")
        return session.messages


@contextlib.contextmanager
def proxy(transport: str, target: str, tmp: Path, *, envelope: bool = True, name: str = "s", **kw: Any) -> Iterator[ProxyRun]:
    """The recorder (the same :func:`mcpreel.record.record` the CLI calls) in a thread; stopped and flushed on exit."""
    run = ProxyRun(out=tmp / f"{name}.jsonl")
    ready = threading.Event()
    allow = kw.pop("allow_origins", ())
    keep = kw.pop("keep_secrets", False)
    stock = kw.pop("stock_upstream", False)
    hosts = kw.pop("allow_hosts", ())
    config = ProxyConfig(transport, target, allow_origins=allow, keep_secrets=keep, stock_upstream=stock,
                         allow_hosts=hosts)

    def on_ready(url: str) -> None:
        run.url = url
        ready.set()

    assert run.out is not None
    target = HttpTarget(config, "127.0.0.1", 0, (tmp / f"{name}.envelope.json") if envelope else None)
    fields = {k: kw.pop(k) for k in ("label", "session_file", "save_every", "otlp_endpoint", "tags") if k in kw}
    options = RecordOptions(target, run.out, redact=kw.pop("redactor", None) is not None, **fields)
    hooks = RecordHooks(ready=on_ready, handle_signals=False, on_server=lambda s: setattr(run, "server", s),
                        addons=tuple(kw.pop("addons", ())), interceptor=kw.pop("interceptor", None),
                        warn=kw.pop("warn", None))
    assert not kw, f"unknown recording options {sorted(kw)}"

    def main() -> None:
        try:
            run.result = record(options, hooks)
        except BaseException as exc:  # surfaced by the test
            run.error = exc
            ready.set()

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    assert ready.wait(10), "proxy did not start"
    if run.error is not None:
        raise run.error
    try:
        yield run
    finally:
        assert run.server is not None
        run.server.stop()
        thread.join(15)
        assert not thread.is_alive(), "proxy did not stop"
    if run.error is not None:
        raise run.error


# -- what a client got ------------------------------------------------------------------------------


@dataclass
class Posted:
    """JSON-RPC messages the client POSTed (seen by an httpx2 request hook)."""

    messages: list[Any] = field(default_factory=list)

    async def hook(self, request: httpx2.Request) -> None:
        if request.method == "POST" and request.content:
            self.messages.append(jsonio.loads(request.content))


def messages(records: list[Message], direction: str | None = None) -> list[Any]:
    return [m.raw for m in records if m.kind == Kind.MESSAGE and (direction is None or m.dir == direction)]


def transports(records: list[Message]) -> list[dict[str, Any]]:
    return [m.ctx or {} for m in records if m.kind == Kind.TRANSPORT]


def projection(path: Path, tmp: Path, fmt: str = "auto") -> dict[str, Any]:
    """The T1 projection of an imported session (what must be equal across formats)."""
    out = tmp / f"{path.name}.{fmt}.trace.jsonl"
    import_session(path, out, format=fmt, options=ImportOptions(episode_id="e"), warn=lambda w: None)
    lines = [jsonio.loads(line) for line in out.read_bytes().splitlines()]
    steps = [(e["idx"], e["kind"], e["name"], e["meta"].get("jsonrpc_id")) for e in lines if e["type"] == "step"]
    calls = [(e["step_id"], e["tool_name"], e["args"], e["result"], e["error"]) for e in lines if e["type"] == "tool_call"]
    start = lines[0]
    return {"prompt": start["input"], "steps": steps, "calls": calls, "final": lines[-1]["final_output"],
            "auth": start["meta"]["mcp"]["authorization_discovery"]}


def gzip_bytes(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)
