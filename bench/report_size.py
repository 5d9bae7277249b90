"""The HTML report on big sessions: time, page size and peak memory stay bounded.

A synthetic streaming session of N tools/call pairs (1 call in 1,000 answers ``isError``) goes through
``mcpreel.report.collect`` and ``render``, each size in a fresh child process (so peak RSS is its own).

    python bench/report_size.py [--calls 60000 500000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys

CHILD = r"""
import resource, sys, time
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.report import collect, render
n = int(sys.argv[1])
def factory():
    for i in range(n):
        yield Message("in", {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                             "params": {"name": f"t{i % 5}", "arguments": {"q": "x" * 40}}}, t=1_000_000 + 3 * i)
        yield Message("out", {"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": "y" * 80}],
                                                                  "isError": i % 1000 == 1}}, t=1_000_001 + 3 * i + i % 13)
s = Session.streaming(SessionInfo(label="synthetic"), factory)
t = time.perf_counter()
html = render(collect(s))
dt = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{n:>9,} calls ({2 * n:>9,} messages): {dt:6.1f} s, page {len(html) / 1024:5.0f} KiB, peak RSS {rss:4.0f} MiB")
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, nargs="+", default=[60_000, 500_000])
    for n in ap.parse_args().calls:
        subprocess.run([sys.executable, "-c", CHILD, str(n)], check=True)


if __name__ == "__main__":
    main()
