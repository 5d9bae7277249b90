"""Import speed and memory against the floor, measured in the same run.

The floor is the least any importer must do: read each line, parse it with orjson, write one compact
line back. The figure is ``import time / floor time`` on a generated JSONL transcript of tools/call
pairs (issue target <= 1.5), plus peak RSS at N and 2N messages (target <= 100 MB and flat).
Each measurement runs in a fresh child process (timed inside it, so interpreter start-up is excluded);
the median of several alternating runs is reported.

    python bench/import.py [--messages 300000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def generate(path: Path, messages: int) -> None:
    pairs = messages // 2
    with open(path, "w") as fh:
        for i in range(pairs):
            fh.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                 "params": {"name": f"tool_{i % 17}", "arguments": {"query": f"customer {i}", "limit": i % 50, "deep": {"a": [1, 2, 3]}}}},
                                separators=(",", ":")) + "\n")
            fh.write(json.dumps({"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": f"{{\"name\": \"user {i}\", \"ok\": true}}"}],
                                                                       "isError": False}}, separators=(",", ":")) + "\n")


def child(kind: str, src: str, out: str) -> None:
    if kind == "floor":
        import orjson

        t0 = time.perf_counter()
        with open(src, "rb") as fi, open(out, "wb") as fo:
            for line in fi:
                fo.write(orjson.dumps(orjson.loads(line)) + b"\n")
        dt = time.perf_counter() - t0
    else:
        from mcpreel.trace import ImportOptions, import_session

        t0 = time.perf_counter()
        import_session(src, out, format="jsonrpc", options=ImportOptions(episode_id="bench"))
        dt = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": dt, "rss_mb": rss_mb}))


def measure(kind: str, src: Path, tmp: Path) -> dict[str, float]:
    out = tmp / f"{kind}.out"
    p = subprocess.run([sys.executable, __file__, "--child", kind, str(src), str(out)], capture_output=True, text=True, check=True)
    out.unlink(missing_ok=True)
    return json.loads(p.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=300_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--child", nargs=3)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        rows = []
        for n in (args.messages, args.messages * 2):
            src = tmp / f"t{n}.jsonl"
            generate(src, n)
            floor, imp = [], []
            for _ in range(args.runs):
                floor.append(measure("floor", src, tmp))
                imp.append(measure("import", src, tmp))
            f = statistics.median(r["seconds"] for r in floor)
            i = statistics.median(r["seconds"] for r in imp)
            rows.append((n, os.path.getsize(src) / 1e6, f, i, i / f, n / i, max(r["rss_mb"] for r in imp),
                         max(r["rss_mb"] for r in floor)))
            src.unlink()
    print(f"import benchmark: generated JSONL of tools/call pairs, median of {args.runs} runs each, same machine, same run\n")
    print("| messages | file MB | floor s | import s | import ÷ floor | messages/s | peak RSS import MB | peak RSS floor MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, mb, f, i, ratio, rate, rss, frss in rows:
        print(f"| {n:,} | {mb:.0f} | {f:.2f} | {i:.2f} | **{ratio:.2f}** | {rate:,.0f} | {rss:.0f} | {frss:.0f} |")
    growth = rows[1][6] - rows[0][6]
    print(f"\npeak RSS growth when the file doubles: {growth:+.1f} MB (targets: ratio <= 1.5, RSS <= 100 MB and flat)")


if __name__ == "__main__":
    main()
