"""Import speed and memory against the floor, measured in the same run.

The floor is the least any importer must do: read each line, parse it with orjson, write one compact
line back. The figure is ``import time / floor time`` on a generated JSONL transcript of tools/call
pairs (issue target <= 1.5), plus peak RSS at N and 2N messages (target <= 100 MB and flat).

A third child, the *bare trace writer*, is the least any trace importer does on top of the floor: parse
each line, write a step line per request and a tool_call line per answer with its arguments and result
serialized, and nothing else (no id rules, no correlation, no duplicate or orphan checks, no faithful
big integers). Its ratio to the floor shows how much of the target is left for the import contract.
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
    elif kind == "bare":
        import gc

        import orjson

        step = (b'{"type":"step","episode_id":"bench","step_id":"step_%03d","idx":%d,"timestamp":0,"kind":"tool",'
                b'"name":%b,"content":null,"content_sha256":null,"truncations":[],"meta":{"jsonrpc_id":"%d"}}\n')
        call = (b'{"type":"tool_call","episode_id":"bench","step_id":"step_%03d","timestamp":0,"tool_name":"tool",'
                b'"call_index":0,"args":%b,"args_sha256":null,"result":%b,"result_sha256":null,"error":null,'
                b'"truncations":[]}\n')
        gc.disable()
        t0 = time.perf_counter()
        loads, dumps = orjson.loads, orjson.dumps
        args, idx = None, 0
        with open(src, "rb") as fi, open(out, "wb") as fo:
            write = fo.write
            for line in fi:
                msg = loads(line)
                params = msg.get("params")
                if params is not None:  # the generated file alternates request, answer
                    args = params["arguments"]
                    write(step % (idx, idx, dumps(params["name"]), msg["id"]))
                else:
                    write(call % (idx, dumps(args), dumps(msg["result"])))
                    idx += 1
        dt = time.perf_counter() - t0
    else:
        from mcpreel.toolcalls.importer import ImportOptions, import_session

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
            floor, imp, bare = [], [], []
            for _ in range(args.runs):
                floor.append(measure("floor", src, tmp))
                bare.append(measure("bare", src, tmp))
                imp.append(measure("import", src, tmp))
            f = statistics.median(r["seconds"] for r in floor)
            i = statistics.median(r["seconds"] for r in imp)
            b = statistics.median(r["seconds"] for r in bare)
            rows.append((n, os.path.getsize(src) / 1e6, f, i, i / f, n / i, max(r["rss_mb"] for r in imp),
                         max(r["rss_mb"] for r in floor), b / f))
            src.unlink()
    print(f"import benchmark: generated JSONL of tools/call pairs, median of {args.runs} runs each, same machine, same run\n")
    print("| messages | file MB | floor s | import s | import ÷ floor | bare trace writer ÷ floor | messages/s "
          "| peak RSS import MB | peak RSS floor MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, mb, f, i, ratio, rate, rss, frss, bare_ratio in rows:
        print(f"| {n:,} | {mb:.0f} | {f:.2f} | {i:.2f} | **{ratio:.2f}** | {bare_ratio:.2f} | {rate:,.0f} | {rss:.0f} "
              f"| {frss:.0f} |")
    growth = rows[1][6] - rows[0][6]
    print(f"\npeak RSS growth when the file doubles: {growth:+.1f} MB (targets: ratio <= 1.5, RSS <= 100 MB and flat)")


if __name__ == "__main__":
    main()
