"""``mcpreel diff`` and ``mcpreel serve`` of long sessions: time and peak RSS against the floor, in one run.

The floor is orjson parsing every line of both files and dumping it again (the least any comparison
of the two must do; ``serve`` reads one of them). ``serve`` is timed from start to the end of a stdio
client that sends an ``initialize`` and 1,000 recorded ``tools/call`` requests spread over the session. Each session is a reel of ``tools/call`` pairs after an ``initialize`` and a
``tools/list``; B is A with every 1000th answer changed, so the diff has something to print. Each run is
a fresh ``python -m mcpreel`` child (its wall time includes interpreter start-up); peak RSS is the
child's own ``VmHWM`` (``ru_maxrss`` would inherit the bench's high-water mark across the fork).

    python bench/scale_compare.py [--messages 100000 1000000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

_T0 = "2026-01-01T00:00:00.000Z"


def _iso(ms: int) -> str:
    s, ms = divmod(ms, 1000)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return f"2026-01-01T{h % 24:02d}:{m:02d}:{s:02d}.{ms:03d}Z"


def generate(path: Path, messages: int, changed_every: int = 0) -> None:
    """A reel of ``messages`` lines: a handshake, a tools/list, then tools/call pairs."""
    lines = [{"v": 1, "type": "meta", "startedAt": _T0, "label": "bench", "command": ["server"]},
             {"t": _T0, "dir": "in", "raw": {"jsonrpc": "2.0", "id": "init", "method": "initialize",
                                             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                                        "clientInfo": {"name": "bench", "version": "1"}}}},
             {"t": _T0, "dir": "out", "raw": {"jsonrpc": "2.0", "id": "init", "result": {
                 "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                 "serverInfo": {"name": "bench", "version": "1"}}}},
             {"t": _T0, "dir": "in", "raw": {"jsonrpc": "2.0", "id": "list", "method": "tools/list"}},
             {"t": _T0, "dir": "out", "raw": {"jsonrpc": "2.0", "id": "list", "result": {"tools": [
                 {"name": f"tool_{k}", "inputSchema": {"type": "object"}} for k in range(17)]}}}]
    with open(path, "wb") as fh:
        for obj in lines:
            fh.write(orjson.dumps(obj) + b"\n")
        for i in range((messages - 4) // 2):
            t = _iso(i * 3)
            req = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                   "params": {"name": f"tool_{i % 17}", "arguments": {"query": f"customer {i}", "limit": i % 50}}}
            text = f'{{"name": "user {i}", "ok": true}}' if not (changed_every and i % changed_every == 7) else "changed"
            res = {"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": text}], "isError": False}}
            fh.write(orjson.dumps({"t": t, "dir": "in", "raw": req}) + b"\n")
            fh.write(orjson.dumps({"t": _iso(i * 3 + 1), "dir": "out", "raw": res}) + b"\n")


_FLOOR = """
import sys, orjson
for p in sys.argv[1:]:
    with open(p, "rb") as fi, open("/dev/null", "wb") as fo:
        for line in fi:
            fo.write(orjson.dumps(orjson.loads(line)) + b"\\n")
"""


_PEAK = """
import runpy, sys
code, sys.argv = sys.argv[1], sys.argv[1:]
try:
    if code == "-m":
        sys.argv = sys.argv[1:]
        runpy.run_module(sys.argv[0], run_name="__main__")
    else:
        exec(compile(code, "<floor>", "exec"))
finally:
    hwm = next(ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:"))
    sys.stderr.write("PEAK " + hwm.split()[1] + "\\n")
"""


def client_input(messages: int) -> bytes:
    """What a stdio client sends ``serve``: the handshake, then 1,000 of the recorded calls."""
    out: list[dict] = [{"jsonrpc": "2.0", "id": "c0", "method": "initialize",
                        "params": {"protocolVersion": "2025-06-18"}},
                       {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    pairs = (messages - 4) // 2
    for j in range(1000):
        i = j * pairs // 1000
        out.append({"jsonrpc": "2.0", "id": f"c{j + 1}", "method": "tools/call",
                    "params": {"name": f"tool_{i % 17}", "arguments": {"query": f"customer {i}", "limit": i % 50}}})
    return b"".join(orjson.dumps(m) + b"\n" for m in out)


def run(argv: list[str], stdin: bytes | None = None) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MB and the lines printed by one child (``argv`` after the interpreter)."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _PEAK, *argv], input=stdin, capture_output=True, env=os.environ)
    secs = time.perf_counter() - t0
    peak = int(proc.stderr.rsplit(b"PEAK ", 1)[1]) / 1024
    return secs, peak, proc.stdout.count(b"\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--messages", type=int, nargs="+", default=[100_000, 1_000_000])
    args = ap.parse_args()
    print("| messages | verb | time s | messages/s | peak RSS MB | x floor | lines printed |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.messages:
            a, b = Path(tmp, f"a{n}.jsonl"), Path(tmp, f"b{n}.jsonl")
            generate(a, n)
            generate(b, n, changed_every=1000)
            floor, floor_rss, _ = run([_FLOOR, str(a), str(b)])
            print(f"| {n:,} | floor (orjson parse+dump, both) | {floor:.1f} | {2 * n / floor:,.0f} | {floor_rss:.0f} | 1.0 | |")
            for label, extra in (("diff", []), ("diff --json", ["--json"])):
                secs, rss, lines = run(["-m", "mcpreel", "diff", str(a), str(b), *extra])
                print(f"| {n:,} | {label} | {secs:.1f} | {2 * n / secs:,.0f} | {rss:.0f} | {secs / floor:.1f} | {lines:,} |")
            secs, rss, lines = run(["-m", "mcpreel", "serve", str(a)], client_input(n))
            print(f"| {n:,} | serve (stdio, 1,000 calls answered) | {secs:.1f} | {n / secs:,.0f} | {rss:.0f} | "
                  f"{2 * secs / floor:.1f} | {lines:,} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
