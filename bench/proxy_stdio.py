"""Benchmark: what the stdio recording proxy adds, against a direct connection measured in the same run.

Two figures, each for ``mcpreel record`` and for the peer tool ``mcp-recorder`` (PyPI, its stdio
recording: ``mcp-recorder record --target-stdio CMD`` puts an HTTP front on a stdio server, so its
client speaks HTTP to it; launched here through its own ``create_proxy_app``/``StdioTransport`` on
127.0.0.1 rather than its CLI's 0.0.0.0):

- added latency: median round trip of sequential pings through the recorder minus direct;
- throughput: a pipelined burst of pings through the recorder / direct (messages per second).

Three servers: a minimal stdio JSON-RPC server (orjson; answers a ping in about a microsecond, so the
figures show the recorder's own cost at its worst), the official SDK's ``MCPServer`` and the reference
``@modelcontextprotocol/server-everything`` on node (real servers; the last only when ``make peers`` has
installed it). Rounds alternate direct and recorded runs; each figure is the median over rounds.

Two reference rows put the minimal server's figures in scale: a *byte forwarder* (two threads copying
the pipes, recording nothing: what the extra process and pipe hop cost any stdio proxy here) and
*mcpreel, recording off* (``mcpreel record`` with its recorder replaced by a no-op: the proxy's pumps,
line cutting and lifecycle without the reel).
Run: ``python bench/proxy_stdio.py`` (``--quick`` for a smoke run). ``--before TREE`` adds the same rows for
another checkout's ``src`` (a worktree of an older commit), measured in the same run, so a change is judged
against its parent on the same machine at the same moment; ``--otlp`` adds ``record --otlp-endpoint`` rows
(a collector that refuses: what live export costs the forwarding path).

mcp-recorder 0.5.0 calls ``Starlette(on_startup=...)``, which Starlette 1.x (what ``mcp`` 2.3 pulls
into our venv) removed, so its stdio recording cannot start there. The bench runs it from a venv of
its own (``.peers/mcp-recorder-venv``: mcp-recorder 0.5.0 + Starlette 0.52.1, its declared minimum),
made with pip on first use.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable

SERVER = textwrap.dedent(
    """
    import os, sys, orjson
    read, write = os.read, os.write
    pending = b""
    while True:
        chunk = read(0, 65536)
        if not chunk:
            break
        lines = (pending + chunk).split(b"\\n")
        pending = lines.pop()
        out = []
        for line in lines:
            msg = orjson.loads(line)
            if "id" in msg and "method" in msg:
                out.append(orjson.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {}}) + b"\\n")
        if out:
            data = b"".join(out)
            while data:
                data = data[write(1, data):]
    """
)

SDK_SERVER = textwrap.dedent(
    """
    from mcp.server import MCPServer
    MCPServer("bench", log_level="WARNING").run()
    """
)

INIT = (b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        b'"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}\n')
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'

# reference: the least any stdio proxy does (no recording), to show what the extra hop alone costs
FORWARDER = textwrap.dedent(
    """
    import os, subprocess, sys, threading
    proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    def pump(src, dst, done=None):
        while True:
            chunk = os.read(src, 1 << 16)
            if not chunk:
                break
            while chunk:
                chunk = chunk[os.write(dst, chunk):]
        if done is not None:
            done()
    threading.Thread(target=pump, args=(0, proc.stdin.fileno(), proc.stdin.close), daemon=True).start()
    pump(proc.stdout.fileno(), 1)
    sys.exit(proc.wait())
    """
)

# reference: `mcpreel record` with its recorder made a no-op (pumps, line cutting, lifecycle; no reel lines)
RECORDING_OFF = textwrap.dedent(
    """
    import sys
    from mcpreel.record.stdio_recorder import WireRecorder
    WireRecorder.lines = lambda self, direction, lines, t: None
    from mcpreel.cli import main
    sys.argv = ["mcpreel", *sys.argv[1:]]
    main()
    """
)

RECORDER_LAUNCH = textwrap.dedent(
    """
    import sys, uvicorn
    from mcp_recorder._types import Cassette, CassetteMetadata
    from mcp_recorder.proxy import create_proxy_app
    from mcp_recorder.transport import StdioTransport
    port, command = int(sys.argv[1]), sys.argv[2:]
    cassette = Cassette(metadata=CassetteMetadata(server_url="stdio://bench", transport_type="stdio"))
    app = create_proxy_app(cassette=cassette, transport=StdioTransport(command[0], command[1:]))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
    """
)


def ping(i: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i


class StdioPeer:
    """A client on the pipes of a command (the server itself, or a recorder in front of it)."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     bufsize=0, env=env)
        self.wfd = self.proc.stdin.fileno()
        self.rfd = self.proc.stdout.fileno()
        self.buf = b""
        os.write(self.wfd, INIT)
        self._lines(1)
        os.write(self.wfd, INITIALIZED)

    def _lines(self, n: int) -> None:
        got = self.buf.count(b"\n")
        while got < n:
            chunk = os.read(self.rfd, 1 << 16)
            if not chunk:
                raise RuntimeError("peer closed its stdout")
            self.buf += chunk
            got += chunk.count(b"\n")
        # keep what comes after the n-th line
        idx = -1
        for _ in range(n):
            idx = self.buf.index(b"\n", idx + 1)
        self.buf = self.buf[idx + 1 :]

    def rtts(self, count: int, warmup: int = 200) -> list[float]:
        out = []
        for i in range(warmup + count):
            t0 = time.perf_counter_ns()
            os.write(self.wfd, ping(i))
            self._lines(1)
            if i >= warmup:
                out.append((time.perf_counter_ns() - t0) / 1000)
        return out

    def burst(self, count: int) -> float:
        payload = b"".join(ping(100_000_000 + i) for i in range(count))

        def writer() -> None:
            view = memoryview(payload)
            while view:
                n = os.write(self.wfd, view[: 1 << 16])
                view = view[n:]

        t0 = time.perf_counter()
        th = threading.Thread(target=writer)
        th.start()
        self._lines(count)
        elapsed = time.perf_counter() - t0
        th.join()
        return elapsed

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


RECORDER_VENV = ROOT / ".peers" / "mcp-recorder-venv"


def recorder_python() -> str | None:
    """The python of mcp-recorder's own venv, made on first use (None when pip cannot make it)."""
    py = RECORDER_VENV / "bin" / "python"
    check = [str(py), "-c", "import mcp_recorder.proxy, orjson"]
    if py.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return str(py)
    print("making mcp-recorder's venv in .peers/mcp-recorder-venv ...", file=sys.stderr)
    try:
        subprocess.run([PY, "-m", "venv", str(RECORDER_VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "mcp-recorder==0.5.0", "starlette==0.52.1", "orjson"],
                       check=True)
    except (subprocess.CalledProcessError, OSError) as exc:
        print(f"cannot install mcp-recorder: {exc}", file=sys.stderr)
        return None
    return str(py) if subprocess.run(check, capture_output=True).returncode == 0 else None


class RecorderPeer:
    """mcp-recorder's stdio recording: an HTTP proxy in front of the stdio server."""

    def __init__(self, python: str, command: list[str]):
        self.port = free_port()
        self.proc = subprocess.Popen([python, "-c", RECORDER_LAUNCH, str(self.port), *command],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import httpx2

        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        self.client = httpx2.Client(timeout=30)
        deadline = time.time() + 20
        while True:
            try:
                self.client.post(self.url, content=INIT, headers=self.headers)
                self.client.post(self.url, content=INITIALIZED, headers=self.headers)
                break
            except httpx2.TransportError:
                if time.time() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("mcp-recorder did not come up") from None
                time.sleep(0.1)

    def rtts(self, count: int, warmup: int = 200) -> list[float]:
        out = []
        for i in range(warmup + count):
            t0 = time.perf_counter_ns()
            r = self.client.post(self.url, content=ping(i), headers=self.headers)
            r.read()
            if i >= warmup:
                out.append((time.perf_counter_ns() - t0) / 1000)
        return out

    def burst(self, count: int, concurrency: int = 64) -> float:
        import httpx2

        async def run() -> float:
            limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
            async with httpx2.AsyncClient(timeout=120, limits=limits) as client:
                queue = iter(range(count))

                async def worker() -> None:
                    for i in queue:
                        r = await client.post(self.url, content=ping(200_000_000 + i), headers=self.headers)
                        assert r.status_code == 200, r.status_code

                t0 = time.perf_counter()
                await asyncio.gather(*(worker() for _ in range(concurrency)))
                return time.perf_counter() - t0

        return asyncio.run(run())

    def close(self) -> None:
        self.client.close()
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


EVERYTHING = ROOT / ".peers" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"

# name: (python source of the server, or None for server-everything; pings per latency run; burst (stdio);
#        burst (mcp-recorder, HTTP requests); with the reference rows)
SCENARIOS = {
    "minimal server": (SERVER, 3000, 100_000, 5000, True),
    "SDK MCPServer": (SDK_SERVER, 500, 5000, 2000, True),
    "server-everything": (None, 2000, 100_000, 5000, True),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="rounds; each figure is the median of its rounds")
    ap.add_argument("--quick", action="store_true", help="a smoke run: small counts, one round")
    ap.add_argument("--no-recorder", action="store_true", help="leave mcp-recorder out")
    ap.add_argument("--before", metavar="TREE", type=Path,
                    help="also measure `mcpreel record` from this checkout's src (e.g. a worktree of the parent commit)")
    ap.add_argument("--otlp", action="store_true", help="also measure `record --otlp-endpoint` (a refusing collector)")
    ap.add_argument("--only", metavar="SCENARIO", action="append", help="only this server (repeatable)")
    args = ap.parse_args()
    scale = 10 if args.quick else 1
    rounds = 1 if args.quick else args.rounds

    work = Path(tempfile.mkdtemp(prefix="mcpreel-bench-"))
    rec_py = None if args.no_recorder else recorder_python()
    trees = {"": ROOT / "src"}
    if args.before is not None:
        trees[" (before)"] = args.before.resolve() / "src"
    envs = {tag: {**os.environ, "PYTHONPATH": str(src)} for tag, src in trees.items()}
    refused = socket.socket()  # bound, never listening: a collector that refuses, for the whole run
    refused.bind(("127.0.0.1", 0))
    collector = f"http://127.0.0.1:{refused.getsockname()[1]}/v1/traces"
    table = []
    for scenario, (source, pings, burst, rburst, references) in SCENARIOS.items():
        if args.only and scenario not in args.only:
            continue
        pings, burst, rburst = max(50, pings // scale), max(500, burst // scale), max(100, rburst // scale)
        if source is None:
            if shutil.which("node") is None or not EVERYTHING.is_file():
                print(f"{scenario}: not installed (make peers), skipped", file=sys.stderr)
                continue
            direct = ["node", str(EVERYTHING), "stdio"]
        else:
            server = work / f"server-{len(table)}.py"
            server.write_text(source)
            direct = [PY, str(server)]
        record = ["record", "-q", "--out", str(work / "bench.jsonl"), "--", *direct]
        otlp = ["record", "-q", "--out", str(work / "bench.jsonl"), "--otlp-endpoint", collector, "--", *direct]
        runs: dict[str, tuple[list[str], dict[str, str] | None]] = {"direct": (direct, None)}
        for tag, tree_env in envs.items():
            runs[f"mcpreel{tag}"] = ([PY, "-m", "mcpreel", *record], tree_env)
            if args.otlp:
                runs[f"mcpreel --otlp-endpoint{tag}"] = ([PY, "-m", "mcpreel", *otlp], tree_env)
        if references:
            runs["byte forwarder"] = ([PY, "-c", FORWARDER, *direct], None)
            runs["mcpreel, recording off"] = ([PY, "-c", RECORDING_OFF, *record], envs[""])
        lat: dict[str, list[float]] = {name: [] for name in (*runs, "mcp-recorder")}
        rate: dict[str, list[float]] = {name: [] for name in (*runs, "mcp-recorder")}
        for rnd in range(rounds):
            for name, (argv, env) in runs.items():
                (work / "bench.jsonl").unlink(missing_ok=True)  # each run its own reel (record appends)
                peer = StdioPeer(argv, env)
                lat[name].append(statistics.median(peer.rtts(pings, warmup=min(200, pings))))
                rate[name].append(burst / peer.burst(burst))
                peer.close()
            if rec_py is not None:
                # its StdioTransport runs the server with the command given: our python for our servers
                rpeer = RecorderPeer(rec_py, direct)
                lat["mcp-recorder"].append(statistics.median(rpeer.rtts(pings, warmup=min(200, pings))))
                rate["mcp-recorder"].append(rburst / rpeer.burst(rburst))
                rpeer.close()
            print(f"{scenario}, round {rnd + 1}/{rounds}: " + ", ".join(
                f"{k} {lat[k][-1]:.1f} us {rate[k][-1]:,.0f} msg/s" for k in lat if lat[k]), file=sys.stderr)
        d_lat, d_rate = statistics.median(lat["direct"]), statistics.median(rate["direct"])
        table.append((scenario, "direct (baseline)", d_lat, None, d_rate, None, burst))
        for name in lat:
            if name == "direct" or not lat[name]:
                continue
            m_lat, m_rate = statistics.median(lat[name]), statistics.median(rate[name])
            label = (f"*{name}* (reference)" if name in ("byte forwarder", "mcpreel, recording off")
                     else name if name.startswith("mcpreel ") else f"{name} record")
            table.append((scenario, label, m_lat, m_lat - d_lat, m_rate, m_rate / d_rate,
                          rburst if name == "mcp-recorder" else burst))

    print(f"stdio recording, {rounds} round(s), medians; latency: sequential pings; throughput: a pipelined burst "
          "of pings (mcp-recorder: concurrent HTTP requests, 64 at a time)")
    print()
    print("| server | recorder | median RTT (us) | added latency (us) | throughput (msg/s) | burst | "
          "throughput ratio |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for scenario, name, lat_, added, rate_, ratio, n in table:
        print(f"| {scenario} | {name} | {lat_:.1f} | {'-' if added is None else f'{added:+.1f}'} | {rate_:,.0f} | "
              f"{n:,} | {'-' if ratio is None else f'{ratio:.2f}'} |")
    if rec_py is None and not args.no_recorder:
        print("\n(mcp-recorder could not be installed: its rows are missing)")
    if args.before is not None:
        print()
        print("| server | run | throughput after / before | added latency before -> after (us) |")
        print("|---|---|---:|---:|")
        rows = {(sc, nm): (lat_, added, rate_) for sc, nm, lat_, added, rate_, _, _ in table}
        for (scenario, name), (_, added, rate_) in rows.items():
            if not name.endswith(" (before)"):
                continue
            after = name.removesuffix(" (before)")
            after = after if after != "mcpreel" else "mcpreel record"
            if (scenario, after) in rows:
                _, a_added, a_rate = rows[(scenario, after)]
                print(f"| {scenario} | {after} | {a_rate / rate_:.2f} | {added:+.1f} -> {a_added:+.1f} |")
    refused.close()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
