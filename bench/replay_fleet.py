"""The fleet (issue 35): many recordings replayed at once, on the local pool and on Ray, ratios in one run.

Makes one real recording of 20 requests (``initialize``, ``tools/list``, 18 ``echo`` calls) against
``tests/replay/peers/nap_server.py`` -- its recorded answers are what the server answers, so every replay is
``same`` -- and copies it N times (default 200). Then, in the same run, with the library's
:func:`mcpreel.replay.fleet.run_fleet` (what ``mcpreel replay DIR --jobs J`` runs):

- **HTTP**: one Streamable HTTP server, all N recordings, requests replayed per second at jobs 1, 2, 4, 8;
- **stdio**: a server process per session (``--target-command``), sessions per second at jobs 1 and 2
  (``--stdio-n`` recordings: each session starts a Python server, seconds apiece here);
- **waiting**: the HTTP server sleeping 50 ms per call, jobs 8 against jobs 1 (``--sleep-n`` recordings);
- **Ray**: the N recordings on a local Ray (``num_cpus`` = jobs, started before the clock runs; its start
  is shown apart) against the local pool, both at ``--ray-jobs``.

    nice python bench/replay_fleet.py                       # the issue's figures
    nice python bench/replay_fleet.py -n 40 --stdio-n 6 --sleep-n 16 --no-ray   # quick
    python bench/replay_fleet.py --only sleep --sleep-n 24                      # one figure
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
NAP = ROOT / "tests" / "replay" / "peers" / "nap_server.py"
sys.path.insert(0, str(ROOT / "src"))

from mcpreel.replay import ReplayOptions, ReplayTarget, replay_file  # noqa: E402
from mcpreel.replay.fleet import FleetRun, FleetSpec, plan_jobs, run_fleet  # noqa: E402

REQUESTS = 20


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_http(delay_ms: float = 0) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([PY, str(NAP), "streamable-http", str(port), "--delay-ms", str(delay_ms)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the HTTP server never listened")


def make_recording(path: Path, url: str) -> None:
    """A reel of 20 requests whose recorded answers are the server's own (replayed once to learn them)."""
    t = "2026-11-01T00:00:00.000Z"
    requests = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]
    requests += [{"jsonrpc": "2.0", "id": i, "method": "tools/call",
                  "params": {"name": "echo", "arguments": {"text": f"hello {i}"}}} for i in range(2, REQUESTS)]

    def write(answers: dict[int, dict]) -> None:
        lines = [{"v": 1, "type": "meta", "startedAt": t, "label": "bench", "command": []}]
        for req in requests:
            lines.append({"t": t, "dir": "in", "raw": req})
            lines.append({"t": t, "dir": "out", "raw": answers.get(req["id"], {"jsonrpc": "2.0", "id": req["id"],
                                                                                 "result": {}})})
            if req["method"] == "initialize":
                lines.append({"t": t, "dir": "in", "raw": {"jsonrpc": "2.0", "method": "notifications/initialized"}})
        path.write_text("".join(json.dumps(x) + "\n" for x in lines))

    write({})
    report = replay_file(path, ReplayTarget(url=url), options=ReplayOptions(timeout=60))
    answers = {r.original_request["id"]: r.response for r in report.results if r.response is not None}
    write(answers)
    again = replay_file(path, ReplayTarget(url=url), options=ReplayOptions(timeout=60))
    assert again.count("same") == REQUESTS, again.summary()


def copies(src: Path, folder: Path, n: int) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        dst = folder / f"rec{i:04d}.jsonl"
        shutil.copyfile(src, dst)
        out.append(str(dst))
    return out


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far, from /proc (0.0 where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ours() -> float:
    """CPU seconds of this process and its reaped children (the fleet's workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


#: (client CPU s, server CPU s) of the last :func:`timed` run, where the server is one process
LAST_CPU: list[float] = [0.0, 0.0]


def timed(files: list[str], target: ReplayTarget, how: FleetRun, server: int | None = None) -> tuple[float, int, int]:
    """(seconds, requests, sessions not same) of one fleet run; its CPU split into :data:`LAST_CPU`."""
    jobs = plan_jobs(files)
    c0, s0 = ours(), cpu_of(server) if server else 0.0
    result = run_fleet(jobs, FleetSpec(target, ReplayOptions(timeout=120)), how)
    LAST_CPU[:] = [ours() - c0, (cpu_of(server) - s0) if server else 0.0]
    requests = sum(o.report.requests for o in result.outcomes if o.report is not None)
    bad = sum(1 for o in result.outcomes if o.verdict != "same")
    return result.seconds, requests, bad


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=200, help="recordings for the HTTP and Ray figures")
    ap.add_argument("--stdio-n", type=int, default=20, help="recordings for the stdio figure")
    ap.add_argument("--sleep-n", type=int, default=48, help="recordings for the 50 ms server figure")
    ap.add_argument("--ray-jobs", type=int, default=2)
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--only", default="http,stdio,sleep,ray", help="which figures (comma-separated)")
    args = ap.parse_args()
    only = set(args.only.split(","))
    rows: list[tuple[str, str, str]] = []
    work = Path(tempfile.mkdtemp(prefix="mcpreel-bench-fleet-"))
    http, url = start_http()
    slow = None
    try:
        one = work / "one.jsonl"
        make_recording(one, url)
        files = copies(one, work / "recs", args.n)
        target = ReplayTarget(url=url)
        rates = {}
        for j in ((1, 2, 4, 8) if "http" in only else ()):
            s, req, bad = timed(files, target, FleetRun("local", j), server=http.pid)
            rates[j] = req / s
            client_ms, server_ms = (x * 1000 / req for x in LAST_CPU)
            rows.append((f"HTTP, {args.n} recordings x {REQUESTS} requests, jobs {j}",
                         f"{rates[j]:,.0f} requests/s ({s:.1f} s, {bad} not same; CPU a request: "
                         f"client {client_ms:.2f} ms, server {server_ms:.2f} ms)",
                         "" if j == 1 else f"{rates[j] / rates[1]:.2f}x jobs 1"))
            print(rows[-1], flush=True)
        stdio = ReplayTarget(command=f"{PY} {NAP} stdio")
        srates = {}
        for j in ((1, 2) if "stdio" in only else ()):
            s, req, bad = timed(files[:args.stdio_n], stdio, FleetRun("local", j))
            srates[j] = args.stdio_n / s
            rows.append((f"stdio (a server process per session), {args.stdio_n} recordings, jobs {j}",
                         f"{srates[j]:.2f} sessions/s ({s:.1f} s, {bad} not same)",
                         "" if j == 1 else f"{srates[2] / srates[1]:.2f}x jobs 1"))
            print(rows[-1], flush=True)
        slow, slow_url = start_http(50)
        st = ReplayTarget(url=slow_url)
        wrates = {}
        for j in ((1, 8) if "sleep" in only else ()):
            s, req, bad = timed(files[:args.sleep_n], st, FleetRun("local", j))
            wrates[j] = req / s
            rows.append((f"HTTP server sleeping 50 ms a call, {args.sleep_n} recordings, jobs {j}",
                         f"{wrates[j]:,.1f} requests/s ({s:.1f} s, {bad} not same)",
                         "" if j == 1 else f"{wrates[8] / wrates[1]:.2f}x jobs 1"))
            print(rows[-1], flush=True)
        if not args.no_ray and "ray" in only:
            import ray

            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
            t0 = time.perf_counter()
            ray.init(num_cpus=args.ray_jobs, include_dashboard=False, log_to_driver=False)
            started = time.perf_counter() - t0
            try:
                s_pool, req_pool, bad_pool = timed(files, target, FleetRun("local", args.ray_jobs))
                s_ray, req_ray, bad_ray = timed(files, target, FleetRun("ray", args.ray_jobs))
            finally:
                ray.shutdown()
            rows.append((f"local pool, {args.n} recordings, jobs {args.ray_jobs}",
                         f"{req_pool / s_pool:,.0f} requests/s ({s_pool:.1f} s, {bad_pool} not same)", ""))
            rows.append((f"Ray local (num_cpus {args.ray_jobs}, started in {started:.1f} s, not counted), "
                         f"{args.n} recordings, jobs {args.ray_jobs}",
                         f"{req_ray / s_ray:,.0f} requests/s ({s_ray:.1f} s, {bad_ray} not same)",
                         f"{(req_ray / s_ray) / (req_pool / s_pool):.2f}x the local pool"))
            print(rows[-2:], flush=True)
    finally:
        for proc in (http, slow):
            if proc is not None:
                proc.terminate()
                proc.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    print()
    print(f"cpus: {os.cpu_count()}, load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("| run | rate | ratio |")
    print("|---|---|---|")
    for run, rate, ratio in rows:
        print(f"| {run} | {rate} | {ratio} |")


if __name__ == "__main__":
    main()
