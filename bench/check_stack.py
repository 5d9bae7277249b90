"""Benchmark: ``mcpreel check`` of this tree against the same verb of another revision, in the same run.

Issue 27 moved ``check``'s probes onto the client transports (``mcpreel.clients``). This measures that
the check did not get slower: ``mcpreel check --format json`` against the demo server over Streamable
HTTP, legacy HTTP+SSE and stdio, run by the other revision's source (``--before``, default ``main``,
exported with ``git archive``) and by this tree's, alternately, ``--rounds`` times. Each figure is a
median: the command's wall time (interpreter start included) and the report's own ``duration_ms`` (the
run of the checks). The two revisions' verdicts and summaries (durations masked) are compared too.

The ``stdio`` row is dominated by starting the demo server (the official SDK: the check starts one per
era and more for version negotiation), so it says little about the probes; ``stdio-small`` checks the
tests' small stdio server (``tests/check/servers.py``: no SDK to import). On a loaded machine the 10 s
per-answer limit can cost a version-negotiation verdict in either revision, which the comparison
then reports.

Run: ``python bench/check_stack.py`` (``--rounds 3`` for a smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_demo(transport: str, src: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "mcpreel", "demo-server", "--transport", transport, "--port",
                             str(port)], env={**os.environ, "PYTHONPATH": src},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"the demo server ({transport}) did not start")


def verdicts(doc: dict[str, object]) -> list[tuple[str, str, str]]:
    checks = doc.get("checks") or []
    assert isinstance(checks, list)
    out = [(c["id"], c["status"], re.sub(r"\d+ ms", "N ms", c.get("summary") or "")) for c in checks]
    out.append(("eras", "", "; ".join(doc.get("eras") or [])))  # type: ignore[arg-type]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="main", help="the revision to compare with (default: main)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before, "src"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        trees = {"before": os.path.join(tmp, "src"), "after": str(ROOT / "src")}
        servers = {t: start_demo(t, trees["after"]) for t in ("streamable-http", "sse")}
        small = os.path.join(tmp, "small_server.py")
        sys.path.insert(0, str(ROOT))
        from tests.check.servers import STDIO_SERVER

        Path(small).write_text(STDIO_SERVER, encoding="utf-8")
        targets = {
            "http": [f"http://127.0.0.1:{servers['streamable-http'][1]}/mcp"],
            "sse": [f"http://127.0.0.1:{servers['sse'][1]}/sse"],
            "stdio": ["--command", f"{sys.executable} -m mcpreel demo-server"],
            "stdio-small": ["--command", f"{sys.executable} {small}"],
        }
        wall: dict[tuple[str, str], list[float]] = {}
        own: dict[tuple[str, str], list[float]] = {}
        seen: dict[tuple[str, str], list[list[tuple[str, str, str]]]] = {}
        try:
            for i in range(args.rounds):
                order = list(trees.items()) if i % 2 == 0 else list(reversed(trees.items()))
                for kind, target in targets.items():
                    for name, src in order:
                        t0 = time.perf_counter()
                        done = subprocess.run([sys.executable, "-m", "mcpreel", "check", *target, "--format", "json"],
                                              env={**os.environ, "PYTHONPATH": src}, capture_output=True)
                        wall.setdefault((kind, name), []).append(time.perf_counter() - t0)
                        if done.returncode not in (0, 1):
                            print(f"{kind} {name}: exit {done.returncode}: {done.stderr.decode()[-300:]}")
                            continue
                        doc = json.loads(done.stdout)
                        own.setdefault((kind, name), []).append(doc["duration_ms"] / 1000)
                        seen.setdefault((kind, name), []).append(verdicts(doc))
        finally:
            for proc, _ in servers.values():
                proc.terminate()
                proc.wait(10)
    print(f"mcpreel check, {args.before} (before) vs this tree (after), {args.rounds} rounds, medians")
    for kind in targets:
        b, a = wall.get((kind, "before"), [0.0]), wall.get((kind, "after"), [0.0])
        ob, oa = own.get((kind, "before"), [0.0]), own.get((kind, "after"), [0.0])
        print(f"  {kind:11} wall {statistics.median(b):.3f} s -> {statistics.median(a):.3f} s   "
              f"checks (duration_ms) {statistics.median(ob):.3f} s -> {statistics.median(oa):.3f} s")
    for kind in targets:
        before = {json.dumps(x) for x in seen.get((kind, "before"), [])}
        after = {json.dumps(x) for x in seen.get((kind, "after"), [])}
        if before == after and len(after) == 1:
            print(f"  {kind:11} verdicts and summaries: the same in every run of both")
            continue
        print(f"  {kind:11} verdicts: {len(before)} distinct outcome(s) before, {len(after)} after; lines that "
              "differ between any two:")
        rows = {tuple(r) for doc in before | after for r in json.loads(doc)}
        common = set.intersection(*({tuple(r) for r in json.loads(doc)} for doc in before | after))
        for row in sorted(rows - common):
            print(f"           {row}")


if __name__ == "__main__":
    main()
