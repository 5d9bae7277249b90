"""Benchmark: round trips through a recording stdio proxy while 50 viewers attach, against none, same run.

Issue 28 item 12: with a full backlog, each viewer that attached had the backlog re-encoded while the
lock the forwarding path takes was held, so round trips fell from 414/s to 6/s and only 17 of 50 viewers
connected. This measures the same thing on the real proxy:

- ``mcpreel record`` (a subprocess, its control channel in a private runtime directory) in front of a
  minimal stdio JSON-RPC server (orjson; it answers a ping in about a microsecond, so what is measured is
  the proxy's own cost at its worst: every viewer gets every record of thousands of round trips a second),
  or with ``--server sdk`` the official SDK's ``MCPServer`` (a real server's pace);
- the backlog filled first (``--fill`` pings: twice as many reel records, the ring keeps its last 20,000);
- rounds of two windows of ``--seconds`` each (which comes first alternates from round to round):
  sequential ping round trips with no viewer, and the same while ``--viewers`` viewers attach at the
  window's start (a separate process connects them one after
  the other and drains every byte they get, so its own work is not the bench client's), each viewer's
  connection ending with the window.

- with ``--floor`` (the default), a third window per round: the same viewers attach to an ideal fan-out in a
  process of its own (:data:`FLOOR`: it sends each viewer a backlog of as many lines as the proxy's and then
  the proxy's record rate, from prepared bytes) while the proxy has none; what that window loses against
  none is the machine's cost of moving the viewers' bytes at all (the drainer and the sender on the same two
  cores), the floor no fan-out design in the proxy can go under. ``with / floor`` is the proxy's own share.

``--path`` measures instead the forwarding path's own share, in process: the CPU per record of the thread
that hands records to the control server, with no viewer and with the viewers attached.

Figures: round trips per second with none and with the viewers (median over rounds), their ratio, and
the median of each round's own ratio (the two windows of a round are seconds apart, so this one is the
least moved by what else the machine does; the target is >= 0.90); the proxy's CPU per round trip; the worst round trip of each, and how many viewers got their ``hello`` (and their
whole backlog) within the window. Run: ``python bench/viewers.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable

# the same two servers as the stdio proxy benchmark (one copy: bench/proxy_stdio.py)
from proxy_stdio import SDK_SERVER, SERVER  # noqa: E402

SERVERS = {"minimal": SERVER, "sdk": SDK_SERVER}

INIT = (b'{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25",'
        b'"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}\n')
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'

# the viewers, in a process of their own: connect N one after the other, drain all they get, say what came
VIEWERS = textwrap.dedent(
    """
    import json, selectors, socket, sys, time
    path, n, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    deadline = time.monotonic() + seconds
    sel = selectors.DefaultSelector()
    state = {}
    failed = 0
    def drain(timeout):
        for key, _ in sel.select(timeout):
            s = key.fileobj
            st = state[s]
            try:
                data = s.recv(1 << 20)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                sel.unregister(s)
                st["closed"] = True
                continue
            if not st["bytes"]:
                st["hello"] = data.startswith(b'{"type":"hello"')
                st["t_hello"] = time.monotonic()
            st["bytes"] += len(data)
            st["lines"] += data.count(b"\\n")
    print("go", flush=True)
    for i in range(n):
        if time.monotonic() >= deadline:
            failed += n - i
            break
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(max(0.01, deadline - time.monotonic()))
        t0 = time.monotonic()
        try:
            s.connect(path)
        except OSError:
            failed += 1
            s.close()
            continue
        s.setblocking(False)
        state[s] = {"t0": t0, "bytes": 0, "lines": 0, "hello": False, "closed": False}
        sel.register(s, selectors.EVENT_READ)
        drain(0)
    while time.monotonic() < deadline:
        drain(max(0.0, min(0.05, deadline - time.monotonic())))
    hellos = [st for st in state.values() if st["hello"]]
    out = {"asked": n, "connected": len(hellos), "failed": failed,
           "refused_or_closed": sum(1 for st in state.values() if st["closed"]),
           "lines": sum(st["lines"] for st in state.values()),
           "bytes": sum(st["bytes"] for st in state.values()),
           "slowest_hello_s": max((st["t_hello"] - st["t0"] for st in hellos), default=None)}
    for s in state:
        s.close()
    print(json.dumps(out), flush=True)
    """
)


# the floor: an ideal fan-out in its own process (no GIL shared with the proxy, no per-record work): on a
# Unix socket, each viewer gets a hello and ``backlog`` copies of a record line at once, then every 20 ms
# ``rate / 50`` more, with non-blocking sends; it stops when its stdin closes.
FLOOR = textwrap.dedent(
    """
    import os, selectors, socket, sys, threading, time
    path, backlog, rate = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    line = (b'{"type":"record","record":{"seq":1,"t":"2026-01-01T00:00:00.000Z","dir":"in",'
            b'"msg":{"jsonrpc":"2.0","id":12345,"method":"ping"}}}\\n')
    first = b'{"type":"hello"}\\n' + line * backlog
    batch = line * max(1, int(rate / 50))
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(128)
    owed, lock = {}, threading.Lock()
    def accept():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            c.setblocking(False)
            with lock:
                owed[c] = [memoryview(first)]
    threading.Thread(target=accept, daemon=True).start()
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    print("ready", flush=True)
    while True:
        time.sleep(0.02)
        with lock:
            items = list(owed.items())
        for c, q in items:
            q.append(memoryview(batch))
            while q:
                try:
                    n = c.send(q[0])
                except BlockingIOError:
                    break
                except OSError:
                    q.clear()
                    break
                if n < len(q[0]):
                    q[0] = q[0][n:]
                    break
                q.pop(0)
    """
)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ping(i: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i


class Proxy:
    """``mcpreel record`` in front of the minimal server, with its control socket in ``runtime``."""

    def __init__(self, runtime: Path, reel: Path, server: str = SERVER):
        env = {**os.environ, "MCPREEL_RUNTIME_DIR": str(runtime),
               "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.proc = subprocess.Popen([PY, "-m", "mcpreel", "record", "--out", str(reel), "--", PY, "-c", server],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     bufsize=0, env=env)
        self.wfd = self.proc.stdin.fileno()
        self.rfd = self.proc.stdout.fileno()
        self.buf = b""
        self.n = 0
        deadline = time.monotonic() + 30
        while True:
            socks = sorted(runtime.glob("*.sock"))
            if socks:
                self.socket = socks[0]
                break
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the proxy's control socket did not appear")
            time.sleep(0.05)
        os.write(self.wfd, INIT)
        self._lines(1)
        os.write(self.wfd, INITIALIZED)

    def _lines(self, n: int) -> None:
        got = self.buf.count(b"\n")
        while got < n:
            chunk = os.read(self.rfd, 1 << 16)
            if not chunk:
                raise RuntimeError("the proxy closed its stdout")
            self.buf += chunk
            got += chunk.count(b"\n")
        idx = -1
        for _ in range(n):
            idx = self.buf.index(b"\n", idx + 1)
        self.buf = self.buf[idx + 1 :]

    def fill(self, count: int) -> None:
        """``count`` pings in bursts of 1,000: twice as many reel records for the backlog ring."""
        while count > 0:
            k = min(1000, count)
            os.write(self.wfd, b"".join(ping(self.n + i) for i in range(k)))
            self.n += k
            self._lines(k)
            count -= k

    def round_trips(self, seconds: float) -> tuple[int, float]:
        """Sequential pings for ``seconds``: how many, and the worst round trip (s)."""
        done, worst = 0, 0.0
        end = time.monotonic() + seconds
        while True:
            t0 = time.monotonic()
            if t0 >= end:
                break
            os.write(self.wfd, ping(self.n))
            self.n += 1
            self._lines(1)
            worst = max(worst, time.monotonic() - t0)
            done += 1
        return done, worst

    def close(self) -> int:
        self.proc.stdin.close()
        try:
            return self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def run(args: argparse.Namespace) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="mcpreel-bench-viewers-") as tmp:
        runtime = Path(tmp) / "run"
        proxy = Proxy(runtime, Path(tmp) / "reel.jsonl", SERVERS[args.server])
        try:
            proxy.fill(args.fill)
            proxy.round_trips(0.5)  # warm

            def none_window() -> None:
                c0 = cpu_seconds(proxy.proc.pid)
                n, worst = proxy.round_trips(args.seconds)
                none_cpu.append((cpu_seconds(proxy.proc.pid) - c0) / n * 1e6)
                none_rates.append(n / args.seconds)
                none_worst.append(worst)

            def floor_window() -> None:
                sock = Path(tmp) / f"floor-{len(floor_rates)}.sock"
                rate = statistics.median(with_rates) * 2 if with_rates else 2000.0  # records/s: 2 per round trip
                floor = subprocess.Popen([PY, "-c", FLOOR, str(sock), str(args.fill * 2 if args.fill * 2 < 20000 else 20000),
                                          str(rate)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                assert floor.stdout is not None and floor.stdin is not None
                floor.stdout.readline()
                drainer = subprocess.Popen([PY, "-c", VIEWERS, str(sock), str(args.viewers), str(args.seconds)],
                                           stdout=subprocess.PIPE, text=True)
                assert drainer.stdout is not None
                drainer.stdout.readline()
                n, _ = proxy.round_trips(args.seconds)
                floor_rates.append(n / args.seconds)
                drainer.stdout.readline()
                drainer.wait(30)
                floor.stdin.close()
                floor.wait(10)
                time.sleep(0.3)

            floor_rates: list[float] = []
            none_rates, with_rates, none_worst, with_worst, viewers = [], [], [], [], []
            none_cpu, with_cpu = [], []  # the proxy's CPU per round trip (us)
            for r in range(args.rounds):
                if r % 2 == 0:
                    none_window()
                drainer = subprocess.Popen([PY, "-c", VIEWERS, str(proxy.socket), str(args.viewers), str(args.seconds)],
                                           stdout=subprocess.PIPE, text=True)
                assert drainer.stdout is not None
                drainer.stdout.readline()  # "go": it connects from now on
                c0 = cpu_seconds(proxy.proc.pid)
                n, worst = proxy.round_trips(args.seconds)
                with_cpu.append((cpu_seconds(proxy.proc.pid) - c0) / n * 1e6)
                with_rates.append(n / args.seconds)
                with_worst.append(worst)
                viewers.append(json.loads(drainer.stdout.readline()))
                drainer.wait(30)
                time.sleep(0.3)  # the proxy notices the viewers left
                if r % 2 == 1:  # alternate which window comes first: a drift in load favours neither
                    none_window()
                if args.floor:
                    floor_window()
        finally:
            code = proxy.close()
    none = statistics.median(none_rates)
    with_v = statistics.median(with_rates)
    return {"server": args.server, "viewers": args.viewers, "fill_pings": args.fill, "seconds": args.seconds, "rounds": args.rounds,
            "none_rt_per_s": round(none), "with_viewers_rt_per_s": round(with_v), "ratio": round(with_v / none, 3),
            "paired_ratio": round(statistics.median(w / n for w, n in zip(with_rates, none_rates, strict=True)), 3),
            "rounds_none": [round(r) for r in none_rates], "rounds_with": [round(r) for r in with_rates],
            **({"rounds_floor": [round(r) for r in floor_rates],
                "paired_floor_ratio": round(statistics.median(f / n for f, n in zip(floor_rates, none_rates, strict=True)), 3),
                "paired_with_over_floor": round(statistics.median(w / f for w, f in zip(with_rates, floor_rates, strict=True)), 3)}
               if floor_rates else {}),
            "worst_rt_none_ms": round(max(none_worst) * 1000, 1), "worst_rt_with_ms": round(max(with_worst) * 1000, 1),
            "proxy_cpu_us_per_rt_none": round(statistics.median(none_cpu), 1),
            "proxy_cpu_us_per_rt_with": round(statistics.median(with_cpu), 1),
            "connected": [v["connected"] for v in viewers], "failed": [v["failed"] for v in viewers],
            "slowest_hello_s": [None if v["slowest_hello_s"] is None else round(v["slowest_hello_s"], 3) for v in viewers],
            "viewer_lines": [v["lines"] for v in viewers], "proxy_exit": code}


def forwarding_path(viewers: int, seconds: float, rounds: int) -> dict[str, object]:
    """The recorder's own share, in process: CPU per record of the thread that hands records to the control
    server (what a pump pays on the forwarding path) with no viewer and with ``viewers`` attached (their
    backlog already sent), records fed at a steady pace. Median over ``rounds`` of each."""
    sys.path.insert(0, str(ROOT / "src"))
    from mcpreel.control.server import ControlServer

    with tempfile.TemporaryDirectory(prefix="mcpreel-bench-path-") as tmp:
        runtime = Path(tmp)
        os.chmod(runtime, 0o700)
        server = ControlServer(transport="stdio", directory=runtime)
        server.start()
        seq = 0

        def feed(k: int) -> None:
            nonlocal seq
            for _ in range(k):
                server.frames("in", [b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % seq], 1_700_000_000_000 + seq, seq)
                seq += 1

        def window() -> float:
            fed, cpu0, end = 0, time.thread_time(), time.monotonic() + seconds
            while time.monotonic() < end:
                feed(10)
                fed += 10
                time.sleep(0.002)
            return (time.thread_time() - cpu0) / fed * 1e6

        feed(40000)
        none, with_v = [], []
        attached: list[int] = []  # viewers attached through each window (the least seen)
        try:
            for _ in range(rounds):
                none.append(window())
                drainer = subprocess.Popen([PY, "-c", VIEWERS, str(server.socket_path), str(viewers), str(seconds + 32)],
                                           stdout=subprocess.PIPE, text=True)
                assert drainer.stdout is not None
                drainer.stdout.readline()
                deadline = time.monotonic() + 30
                while server.viewers < viewers and time.monotonic() < deadline:
                    time.sleep(0.01)
                time.sleep(1.0)  # the backlog went out
                attached.append(server.viewers)
                with_v.append(window())
                attached[-1] = min(attached[-1], server.viewers)
                drainer.kill()  # the viewers leave
                drainer.stdout.read()
                drainer.wait(30)
                time.sleep(0.3)
        finally:
            server.close()
    return {"path_cpu_us_per_record_none": round(statistics.median(none), 2),
            "path_cpu_us_per_record_with": round(statistics.median(with_v), 2), "viewers_attached": attached}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--viewers", type=int, default=50)
    ap.add_argument("--server", choices=sorted(SERVERS), default="minimal",
                    help="minimal: answers in a microsecond (the proxy's cost at its worst); sdk: the official "
                         "SDK's MCPServer (a real server's pace)")
    ap.add_argument("--fill", type=int, default=20000, help="pings sent before the rounds (fills the backlog)")
    ap.add_argument("--seconds", type=float, default=4.0, help="length of each window")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-floor", dest="floor", action="store_false",
                    help="skip the third window (the same viewers on an ideal fan-out in a process of its own)")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 1 round of 2 s, 5,000 pings of backlog")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    ap.add_argument("--path", action="store_true",
                    help="measure only the forwarding path's own CPU per record, in process (see forwarding_path)")
    args = ap.parse_args()
    if args.path:
        print(json.dumps(forwarding_path(args.viewers, 2.0, args.rounds)))
        return
    if args.quick:
        args.rounds, args.seconds, args.fill = 1, 2.0, 5000
    out = run(args)
    if args.json:
        print(json.dumps(out))
        return
    print(f"round trips/s, no viewer:        {out['none_rt_per_s']}  (rounds {out['rounds_none']}, "
          f"worst {out['worst_rt_none_ms']} ms)")
    print(f"round trips/s, {args.viewers} viewers attach: {out['with_viewers_rt_per_s']}  (rounds {out['rounds_with']}, "
          f"worst {out['worst_rt_with_ms']} ms)")
    print(f"ratio: {out['ratio']} of the medians, {out['paired_ratio']} median of each round's pair  (target >= 0.90)")
    if "rounds_floor" in out:
        print(f"the floor (the same viewers on an ideal fan-out in its own process): rounds {out['rounds_floor']}; "
              f"floor/none {out['paired_floor_ratio']}, with/floor {out['paired_with_over_floor']} (the proxy's own share)")
    print(f"the proxy's CPU per round trip (us): none {out['proxy_cpu_us_per_rt_none']}, "
          f"with viewers {out['proxy_cpu_us_per_rt_with']}")
    print(f"viewers connected (hello) per round: {out['connected']} of {args.viewers}; failed to connect: "
          f"{out['failed']}; slowest hello (s): {out['slowest_hello_s']}; lines they got: {out['viewer_lines']}")


if __name__ == "__main__":
    main()
