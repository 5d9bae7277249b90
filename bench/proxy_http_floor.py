"""Where the HTTP proxy's ceiling is on this machine: forwarders that record nothing, in the same run.

``bench/proxy_http.py`` gives the issue's figure (requests/s through ``mcpreel record`` ÷ direct). This
script answers the question that figure raises -- how close to direct can *any* proxy written in Python
get here -- by putting, in front of the same server (the SDK's ``MCPServer``, Streamable HTTP, JSON
answers) and the same lean client, forwarders that each do less than the one before:

- ``mcpreel record``: the product;
- ``mcpreel, recording off``: the same proxy with its recording calls made no-ops;
- ``bare ASGI proxy``: an ASGI app on uvicorn (httptools, uvloop) that forwards over a raw httptools
  upstream connection: no recording, no header rules, no streaming, no error handling;
- ``bare httptools proxy``: asyncio protocols with httptools on both legs, no ASGI, nothing else;
- ``TCP relay``: bytes copied between sockets, no HTTP parsing at all.

Besides the rate it reads the proxy process's CPU time per request (from ``/proc/PID/task/*/schedstat``).
The bare forwarders handle one keep-alive connection with whole JSON answers; they are instruments, not
proxies. Run: ``python bench/proxy_http_floor.py [--calls 300] [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from proxy_http import SDK_SERVER, TCP_RELAY, free_port, measure, process, wait_port

RECORDING_OFF = textwrap.dedent("""
    import sys
    from mcpreel.record.http_proxy import RecordingProxy
    RecordingProxy._later = lambda self, fn, *args, **kw: None
    from mcpreel.cli import main
    sys.argv = ["mcpreel", *sys.argv[1:]]
    main()
""")

_UPSTREAM = '''
import asyncio, sys, httptools
UP, PORT = int(sys.argv[1]), int(sys.argv[2])
DROP = {b"host", b"connection", b"keep-alive", b"transfer-encoding"}

class Upstream(asyncio.Protocol):
    """One keep-alive connection to the server; an answer completes the waiting future."""
    def __init__(self):
        self.parser, self.waiter = httptools.HttpResponseParser(self), None
    def connection_made(self, transport):
        self.transport = transport
    def data_received(self, data):
        self.parser.feed_data(data)
    def on_message_begin(self):
        self.headers, self.body = [], []
    def on_header(self, name, value):
        self.headers.append((name, value))
    def on_body(self, body):
        self.body.append(body)
    def on_message_complete(self):
        self.waiter.set_result((self.parser.get_status_code(), self.headers, b"".join(self.body)))

def request_bytes(method, target, headers, body):
    headers = [(k, v) for k, v in headers if k.lower() not in DROP] + [(b"host", b"127.0.0.1:%d" % UP)]
    return b"%s %s HTTP/1.1\\r\\n" % (method, target) + b"".join(b"%s: %s\\r\\n" % kv for kv in headers) + b"\\r\\n" + body
'''

BARE_ASGI = _UPSTREAM + textwrap.dedent('''
    import uvicorn
    conn = None

    async def app(scope, receive, send):
        global conn
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if conn is None:
            _, conn = await asyncio.get_running_loop().create_connection(Upstream, "127.0.0.1", UP)
        conn.waiter = asyncio.get_running_loop().create_future()
        conn.transport.write(request_bytes(scope["method"].encode(), scope["raw_path"], scope["headers"], body))
        status, headers, answer = await conn.waiter
        await send({"type": "http.response.start", "status": status,
                    "headers": [(k, v) for k, v in headers if k.lower() not in DROP]})
        await send({"type": "http.response.body", "body": answer})

    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning", access_log=False, loop="uvloop",
                http="httptools", lifespan="off")
''')

BARE_HTTPTOOLS = _UPSTREAM + textwrap.dedent('''
    import socket, uvloop

    class Downstream(asyncio.Protocol):
        def __init__(self):
            self.parser, self.up = httptools.HttpRequestParser(self), None
        def connection_made(self, transport):
            self.transport = transport
            transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        def data_received(self, data):
            self.parser.feed_data(data)
        def on_message_begin(self):
            self.headers, self.body = [], []
        def on_url(self, url):
            self.url = url
        def on_header(self, name, value):
            self.headers.append((name, value))
        def on_body(self, body):
            self.body.append(body)
        def on_message_complete(self):
            data = request_bytes(self.parser.get_method(), self.url, self.headers, b"".join(self.body))
            asyncio.ensure_future(self.forward(data))
        async def forward(self, data):
            loop = asyncio.get_running_loop()
            if self.up is None:
                _, self.up = await loop.create_connection(Upstream, "127.0.0.1", UP)
                self.up.transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.up.waiter = loop.create_future()
            self.up.transport.write(data)
            status, headers, answer = await self.up.waiter
            headers = [(k, v) for k, v in headers if k.lower() not in DROP and k.lower() != b"content-length"]
            self.transport.write(b"HTTP/1.1 %d OK\\r\\n" % status + b"".join(b"%s: %s\\r\\n" % kv for kv in headers)
                                 + b"content-length: %d\\r\\n\\r\\n" % len(answer) + answer)

    async def main():
        server = await asyncio.get_running_loop().create_server(Downstream, "127.0.0.1", PORT)
        async with server:
            await server.serve_forever()

    try:
        uvloop.run(main())
    except KeyboardInterrupt:
        pass
''')


def cpu_seconds(pid: int) -> float:
    """Time the process's threads spent on a CPU, in ns precision (``/proc/PID/task/*/schedstat``)."""
    return sum(int((task / "schedstat").read_text().split()[0]) for task in Path(f"/proc/{pid}/task").iterdir()) / 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mcpreel-bench-"))
    sport = free_port()
    target = f"http://127.0.0.1:{sport}/mcp"
    ports = {name: free_port() for name in ("mcpreel", "recording off", "bare ASGI", "bare httptools", "TCP relay")}
    record = ["record", "-q", "--transport", "streamable-http", "--target", target, "--out", str(work / "r.jsonl")]
    commands = {
        "mcpreel": [sys.executable, "-m", "mcpreel", *record, "--listen", f"127.0.0.1:{ports['mcpreel']}"],
        "recording off": [sys.executable, "-c", RECORDING_OFF, *record, "--listen",
                          f"127.0.0.1:{ports['recording off']}"],
        "bare ASGI": [sys.executable, "-c", BARE_ASGI, str(sport), str(ports["bare ASGI"])],
        "bare httptools": [sys.executable, "-c", BARE_HTTPTOOLS, str(sport), str(ports["bare httptools"])],
        "TCP relay": [sys.executable, "-c", TCP_RELAY, str(sport), str(ports["TCP relay"])],
    }
    labels = {
        "mcpreel": "mcpreel record",
        "recording off": "*mcpreel, recording off*",
        "bare ASGI": "*bare ASGI proxy* (uvicorn + httptools upstream)",
        "bare httptools": "*bare httptools proxy* (both legs)",
        "TCP relay": "*TCP relay* (no HTTP parsing)",
    }
    rates: dict[str, list[float]] = {"direct": [], **{k: [] for k in commands}}
    cpu: dict[str, list[float]] = {k: [] for k in commands}
    with contextlib.ExitStack() as stack:
        stack.enter_context(process([sys.executable, "-c", SDK_SERVER, "json", str(sport)], sport))
        procs = {}
        for name, cmd in commands.items():
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir())
            stack.callback(proc.wait, 10)
            stack.callback(proc.send_signal, 2)
            procs[name] = proc
        for name in commands:
            wait_port(ports[name])
        for rnd in range(args.rounds):
            rate = measure("streamable", target, args.calls)
            rates["direct"].append(rate or 0.0)
            for name in commands:
                before = cpu_seconds(procs[name].pid)
                rate = measure("streamable", f"http://127.0.0.1:{ports[name]}/mcp", args.calls)
                used = cpu_seconds(procs[name].pid) - before
                rates[name].append(rate or 0.0)
                cpu[name].append(used / (args.calls + 23) * 1e6)  # + initialize, initialized, 20 warm-ups, DELETE
            print(f"round {rnd + 1}/{args.rounds}: " + ", ".join(f"{k} {v[-1]:.0f}/s" for k, v in rates.items()),
                  file=sys.stderr)
    direct = statistics.median(rates["direct"])
    print(f"SDK MCPServer, Streamable HTTP, JSON answers; lean httpx2 client; {args.calls} sequential tools/call "
          f"× {args.rounds} interleaved rounds, medians (Python {sys.version.split()[0]}, {os.cpu_count()} cores)\n")
    print("| forwarder | req/s | ÷ direct | proxy CPU per request (µs) |")
    print("|---|---:|---:|---:|")
    print(f"| direct (baseline) | {direct:,.0f} | - | - |")
    for name in commands:
        r = statistics.median(rates[name])
        print(f"| {labels[name]} | {r:,.0f} | **{r / direct:.2f}** | {statistics.median(cpu[name]):.0f} |")


if __name__ == "__main__":
    main()
