"""Requests/s of sequential ``tools/call`` round trips through the HTTP recording proxy ÷ direct.

Same run, same servers: for each target (the official SDK's MCPServer over Streamable HTTP with SSE
responses and with JSON responses, its legacy HTTP+SSE transport, and server-everything over Streamable
HTTP when node has it) a lean httpx2 client makes sequential ``tools/call echo`` round trips directly,
through ``mcpreel record`` and through mcp-recorder's HTTP recording proxy (PyPI ``mcp-recorder``, the
peer), in interleaved rounds; the table gives the median requests/s and the ratio to direct. Every answer
is checked, so a proxy that breaks the exchange cannot look fast. A reference column, the *TCP relay*
(asyncio + uvloop copying bytes between each client connection and its own upstream connection, no
HTTP parsing, no recording), shows what the extra process and hop alone cost any proxy on this machine. Server, proxy and client are separate
processes, all on 127.0.0.1 (mcp-recorder's own CLI binds 0.0.0.0; the bench serves its proxy app on
loopback instead).

    python bench/proxy_http.py [--calls 200] [--rounds 7] [--client lean|sdk|both] [--proxy-path DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2

ROOT = Path(__file__).resolve().parent.parent
EVERYTHING = ROOT / ".peers" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
LISTEN127 = ROOT / "tests" / "peers" / "listen127.cjs"

SDK_SERVER = textwrap.dedent("""
    import sys
    from mcp.server import MCPServer
    mcp = MCPServer("bench", log_level="WARNING")
    @mcp.tool()
    def echo(message: str) -> str:
        return "Echo: " + message
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode == "sse":
        mcp.run("sse", host="127.0.0.1", port=port)
    else:
        mcp.run("streamable-http", host="127.0.0.1", port=port, json_response=(mode == "json"))
""")

# mcp-recorder 0.5.0 passes on_startup/on_shutdown to Starlette, which Starlette 1.x removed: as installed
# its HTTP proxy dies at start (TypeError). The launcher maps them onto a lifespan; its proxy code is untouched.
MCP_RECORDER = textwrap.dedent("""
    import contextlib, inspect, sys, uvicorn
    import starlette.applications as sa
    _init = sa.Starlette.__init__
    def _compat(self, *a, on_startup=None, on_shutdown=None, **kw):
        if on_startup or on_shutdown:
            @contextlib.asynccontextmanager
            async def lifespan(app):
                for fn in on_startup or []:
                    r = fn()
                    if inspect.isawaitable(r):
                        await r
                yield
                for fn in on_shutdown or []:
                    r = fn()
                    if inspect.isawaitable(r):
                        await r
            kw["lifespan"] = lifespan
        _init(self, *a, **kw)
    sa.Starlette.__init__ = _compat
    from mcp_recorder._types import Cassette, CassetteMetadata
    from mcp_recorder.proxy import create_proxy_app
    target, port = sys.argv[1], int(sys.argv[2])
    cassette = Cassette(metadata=CassetteMetadata(server_url=target, transport_type="http"))
    uvicorn.run(create_proxy_app(cassette=cassette, target_url=target), host="127.0.0.1", port=port, log_level="warning")
""")

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


@contextlib.contextmanager
def process(args: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[None]:
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env, cwd=tempfile.gettempdir())
    try:
        wait_port(port)
        yield
    finally:
        proc.send_signal(2)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


# reference: the least any HTTP proxy does -- copy each connection's bytes both ways, parse nothing
TCP_RELAY = textwrap.dedent('''
import asyncio, sys, socket
try:
    import uvloop
except ImportError:
    uvloop = None
UP_PORT, PORT = int(sys.argv[1]), int(sys.argv[2])

class Pipe(asyncio.Protocol):
    """One side of a relayed connection: what it reads goes to its peer as it came."""
    def __init__(self, peer=None):
        self.peer, self.transport, self.early = peer, None, []
    def connection_made(self, transport):
        self.transport = transport
        transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    def data_received(self, data):
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.write(data)
        else:
            self.early.append(data)
    def eof_received(self):
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.write_eof()
        return True
    def connection_lost(self, exc):
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.close()

class Client(Pipe):
    def connection_made(self, transport):
        super().connection_made(transport)
        asyncio.ensure_future(self.connect())
    async def connect(self):
        loop = asyncio.get_running_loop()
        try:
            _, up = await loop.create_connection(lambda: Pipe(self), "127.0.0.1", UP_PORT)
        except OSError:
            self.transport.close(); return
        self.peer = up
        for d in self.early: up.transport.write(d)
        self.early = []

async def main():
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Client, "127.0.0.1", PORT)
    async with server:
        await server.serve_forever()
try:
    (uvloop.run if uvloop else asyncio.run)(main())
except KeyboardInterrupt:
    pass
''')


def _message(response: httpx2.Response, body: bytes) -> dict:
    import json

    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for block in body.decode().split("\n\n"):
            data = "\n".join(line[5:].lstrip() for line in block.splitlines() if line.startswith("data:"))
            if data.strip():
                msg = json.loads(data)
                if "id" in msg:
                    return msg
        raise AssertionError(f"no answer in SSE body {body[:200]!r}")
    return json.loads(body)


async def streamable_rate(url: str, calls: int) -> float:
    """Sequential tools/call round trips over Streamable HTTP; requests/s."""
    async with httpx2.AsyncClient(timeout=30) as http:
        r = await http.post(url, headers=HEADERS, content=b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":'
                            b'{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}')
        r.raise_for_status()
        h = dict(HEADERS, **{"MCP-Protocol-Version": "2025-06-18"})
        if "mcp-session-id" in r.headers:
            h["Mcp-Session-Id"] = r.headers["mcp-session-id"]
        await http.post(url, headers=h, content=b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

        async def call(i: int) -> None:
            body = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m%d"}}}' % (i, i)
            resp = await http.post(url, headers=h, content=body)
            msg = _message(resp, resp.content)
            assert msg["id"] == i and msg["result"]["content"][0]["text"] == f"Echo: m{i}", msg

        for i in range(1, 21):  # warm-up
            await call(i)
        t0 = time.perf_counter()
        for i in range(21, 21 + calls):
            await call(i)
        elapsed = time.perf_counter() - t0
        if "Mcp-Session-Id" in h:
            await http.delete(url, headers=h)
    return calls / elapsed


async def legacy_rate(url: str, calls: int) -> float:
    """Sequential tools/call round trips over legacy HTTP+SSE (answers come back on the GET stream)."""
    import json
    from urllib.parse import urljoin

    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=60)) as http:
        async with http.stream("GET", url, headers={"Accept": "text/event-stream"}) as stream:
            lines = stream.aiter_lines()
            event, data = "message", []

            async def next_event() -> tuple[str, str]:
                nonlocal event, data
                async for line in lines:
                    if line == "":
                        if data:
                            out = (event, "\n".join(data))
                            event, data = "message", []
                            return out
                        continue
                    if line.startswith("event:"):
                        event = line[6:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].lstrip())
                raise AssertionError("stream ended")

            kind, endpoint = await next_event()
            assert kind == "endpoint", kind
            post = urljoin(url, endpoint)

            async def rpc(body: bytes, want: int | None) -> dict | None:
                r = await http.post(post, content=body, headers={"Content-Type": "application/json"})
                assert r.status_code == 202, r.status_code
                if want is None:
                    return None
                while True:
                    _, d = await next_event()
                    msg = json.loads(d)
                    if msg.get("id") == want:
                        return msg

            await rpc(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05",'
                      b'"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}', 0)
            await rpc(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', None)

            async def call(i: int) -> None:
                msg = await rpc(b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
                                b'"arguments":{"message":"m%d"}}}' % (i, i), i)
                assert msg and msg["result"]["content"][0]["text"] == f"Echo: m{i}", msg

            for i in range(1, 21):
                await call(i)
            t0 = time.perf_counter()
            for i in range(21, 21 + calls):
                await call(i)
            return calls / (time.perf_counter() - t0)


async def sdk_rate(kind: str, url: str, calls: int) -> float:
    """The same round trips made by the official SDK's ClientSession (a real MCP client)."""
    from mcp import ClientSession
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client

    async def run(session: ClientSession) -> float:
        await session.initialize()
        await session.list_tools()
        for i in range(20):
            await session.call_tool("echo", {"message": f"w{i}"})
        t0 = time.perf_counter()
        for i in range(calls):
            r = await session.call_tool("echo", {"message": f"m{i}"})
            assert r.content[0].text == f"Echo: m{i}", r
        return calls / (time.perf_counter() - t0)

    if kind == "sse":
        async with sse_client(url) as (read, write), ClientSession(read, write) as session:
            return await run(session)
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=60)) as http:
        async with streamable_http_client(url, http_client=http) as (read, write), ClientSession(read, write) as session:
            return await run(session)


def measure(kind: str, url: str, calls: int, timeout: float = 120, client: str = "lean") -> float | None:
    if client == "sdk":
        async def fn(u: str, n: int) -> float:
            return await sdk_rate(kind, u, n)
    else:
        fn = legacy_rate if kind == "sse" else streamable_rate  # type: ignore[assignment]

    async def run() -> float | None:
        with anyio.move_on_after(timeout):
            return await fn(url, calls)
        return None

    try:
        return anyio.run(run)
    except Exception as exc:  # a proxy that cannot carry the session gets no figure, and says why
        print(f"  ! {url}: {type(exc).__name__}: {str(exc)[:120]}", file=sys.stderr)
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--client", choices=["lean", "sdk", "both"], default="both",
                    help="lean: a bare httpx2 loop (the proxy's share looks largest); sdk: the SDK's ClientSession")
    ap.add_argument("--proxy-path", metavar="DIR",
                    help="put DIR on the mcpreel proxy's PYTHONPATH only (e.g. `pip install --target DIR httptools "
                         "uvloop`: the proxy then uses uvicorn's C extras, the servers do not)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mcpreel-bench-"))
    server_py = work / "server.py"
    server_py.write_text(SDK_SERVER)
    recorder_py = work / "mcp_recorder_proxy.py"
    recorder_py.write_text(MCP_RECORDER)
    try:
        import mcp_recorder  # noqa: F401

        have_peer = True
    except ImportError:
        have_peer = False
        print("mcp-recorder is not installed (pip install mcp-recorder): its column stays empty", file=sys.stderr)

    targets: list[tuple[str, str, list[str], str, dict[str, str] | None]] = [
        ("SDK MCPServer, Streamable HTTP, SSE answers", "streamable-http", [sys.executable, str(server_py), "sse-resp"], "/mcp", None),
        ("SDK MCPServer, Streamable HTTP, JSON answers", "streamable-http", [sys.executable, str(server_py), "json"], "/mcp", None),
        ("SDK MCPServer, legacy HTTP+SSE", "sse", [sys.executable, str(server_py), "sse"], "/sse", None),
    ]
    if shutil.which("node") and EVERYTHING.is_file():
        targets.append(("server-everything, Streamable HTTP", "streamable-http",
                        ["node", "--require", str(LISTEN127), str(EVERYTHING), "streamableHttp"], "/mcp", {}))
    rows = []
    for name, kind, cmd, path, env in targets:
        sport = free_port()
        penv = None
        if env is not None:
            penv = dict(os.environ, PORT=str(sport))
            server_cmd = cmd
        else:
            server_cmd = [*cmd, str(sport)]
        print(f"{name} ...", file=sys.stderr)
        with process(server_cmd, sport, penv):
            target = f"http://127.0.0.1:{sport}{path}"
            mport, rport, tport = free_port(), free_port(), free_port()
            mcpreel_cmd = [sys.executable, "-m", "mcpreel", "record", "--transport", kind, "--target", target,
                           "--listen", f"127.0.0.1:{mport}", "--out", str(work / f"{sport}.jsonl")]
            with contextlib.ExitStack() as stack:
                proxy_env = dict(os.environ, PYTHONPATH=args.proxy_path) if args.proxy_path else None
                stack.enter_context(process(mcpreel_cmd, mport, proxy_env))
                stack.enter_context(process([sys.executable, "-c", TCP_RELAY, str(sport), str(tport)], tport))
                urls = {"direct": target, "tcp relay": f"http://127.0.0.1:{tport}{path}",
                        "mcpreel": f"http://127.0.0.1:{mport}{path}"}
                if have_peer:
                    stack.enter_context(process([sys.executable, str(recorder_py), f"http://127.0.0.1:{sport}",
                                                 str(rport)], rport))
                    urls["mcp-recorder"] = f"http://127.0.0.1:{rport}{path}"
                clients = ["lean", "sdk"] if args.client == "both" else [args.client]
                for client in clients:
                    rates: dict[str, list[float]] = {k: [] for k in urls}
                    failed: set[str] = set()
                    for _ in range(args.rounds):
                        for who, url in urls.items():
                            if who in failed:
                                continue
                            rate = measure(kind, url, args.calls, timeout=30 if who == "mcp-recorder" else 120,
                                           client=client)
                            if rate is None:
                                failed.add(who)
                            else:
                                rates[who].append(rate)
                    med = {k: statistics.median(v) if v and k not in failed else None for k, v in rates.items()}
                    rows.append((f"{name} · {'lean httpx2 client' if client == 'lean' else 'SDK ClientSession'}", med))
    shutil.rmtree(work, ignore_errors=True)

    def cell(v: float | None) -> str:
        return "—" if v is None else f"{v:,.0f}"

    def ratio(v: float | None, base: float | None) -> str:
        return "fails" if v is None or not base else f"**{v / base:.2f}**"

    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nsequential tools/call round trips, {args.calls} calls × {args.rounds} interleaved rounds, median req/s "
          f"(Python {sys.version.split()[0]}, {os.cpu_count()} cores, load average at the end {load})\n")
    print("| target | direct req/s | *TCP relay* ÷ direct (reference) | mcpreel req/s | mcpreel ÷ direct "
          "| mcp-recorder req/s | mcp-recorder ÷ direct |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, med in rows:
        d, m, r, t = med.get("direct"), med.get("mcpreel"), med.get("mcp-recorder"), med.get("tcp relay")
        relay = "fails" if t is None or not d else f"{t / d:.2f}"
        print(f"| {name} | {cell(d)} | {relay} | {cell(m)} | {ratio(m, d)} | {cell(r)} "
              f"| {ratio(r, d) if have_peer else '—'} |")


if __name__ == "__main__":
    main()
