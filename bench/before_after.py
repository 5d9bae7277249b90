"""The same verbs on two trees of mcpreel, before and after a change, in one run (issue 37's "speed kept").

A refactoring that moves code (issue 37 put the writers and the mock's index on the one walk) must not
make the verbs slower; on a shared, loaded machine two runs an hour apart differ by more than the 5 %
that is allowed, so both trees are measured in the same run, their rounds interleaved (before, after,
then after, before, ...), and only ratios are kept:

- **before** is a tree given as ``--before DIR`` (its ``src/`` is put first on ``PYTHONPATH``), e.g.
  ``git archive 9cfa195 src | tar -x -C /tmp/before`` (the commit before the writers moved onto the walk);
  **after** is this checkout's ``src/``;
- both trees are byte-compiled first (``compileall``), so neither pays for compiling a module it imports
  while measured;
- each measurement is a fresh Python child that imports the CLI, then runs one command in-process and
  reports its own CPU time (``time.process_time``: user + system of the command alone, not interpreter
  start-up nor the import of the CLI; CPU rather than wall, which counts the time spent waiting for a core);
- per case, the median of the rounds of each tree, and their ratio (after ÷ before): within 5 % when
  the ratio is at most 1.05.

Cases on a reel of ``--messages`` messages built by :func:`scale.build` (an ``initialize``, ``tools/list``,
then ``tools/call`` pairs): ``read`` (the reel reader alone, which every other case pays too); ``convert --to har``, ``--to inspector``, ``--to qai``, ``--to mcp-recorder``;
``inspect``; ``index`` (what ``mcpreel index`` does, ``index_paths``, for a folder holding the reel into a fresh
database, in the one process: the ``_FileReader.read`` pass and the writes); ``serve index`` (the mock's on-disk index of the reel,
``mcpreel.mock.compact.load_compact``, what ``mcpreel serve`` builds before it answers).

    git archive 9cfa195 src | tar -x -C /tmp/before
    python bench/before_after.py --before /tmp/before --messages 200000 --rounds 5
    python bench/before_after.py --before /tmp/before --only convert:har,inspect --rounds 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import build  # bench/scale.py: the reel every scale bench reads

PY = sys.executable
HERE = Path(__file__).resolve().parent.parent / "src"

# one command, in-process, its CPU time on stderr's last line (the CLI is imported before the clock starts)
CLI = """
import sys, time
from mcpreel.__main__ import main
import mcpreel.cli  # noqa
t0 = time.process_time()
code = 0
try:
    main(sys.argv[1:])
except SystemExit as exit:
    code = exit.code or 0
dt = time.process_time() - t0
sys.stderr.write(f"\\nCPU {dt!r}\\n")
sys.exit(code)
"""

# the mock's on-disk index of a reel (what `mcpreel serve` builds before it answers)
SERVE_INDEX = """
import sys, time
from mcpreel.formats import open_session
from mcpreel.mock.compact import load_compact
t0 = time.process_time()
session, _ = open_session(sys.argv[1])
cas = load_compact(sys.argv[1], session, "method-params")
assert cas is not None, "the reel was not compacted"
dt = time.process_time() - t0
sys.stderr.write(f"\\nCPU {dt!r}\\n")
"""

# the reel reader alone (every case reads the reel through it: what is left is the case's own work)
READ = """
import sys, time
from mcpreel.formats import open_session
t0 = time.process_time()
session, _ = open_session(sys.argv[1])
for _ in session:
    pass
dt = time.process_time() - t0
sys.stderr.write(f"\\nCPU {dt!r}\\n")
"""

# `mcpreel index` of a folder into a fresh database, in this process (index_paths' jobs=1 in both trees)
INDEX = """
import sys, time
from pathlib import Path
from mcpreel.corpus.index import index_paths
t0 = time.process_time()
index_paths([Path(sys.argv[1])], Path(sys.argv[2]))
dt = time.process_time() - t0
sys.stderr.write(f"\\nCPU {dt!r}\\n")
"""

CASES = ("read", "convert:har", "convert:inspector", "convert:qai", "convert:mcp-recorder", "inspect", "index", "serve-index")
EXT = {"har": ".har", "inspector": ".inspector.json", "qai": ".qai.json", "mcp-recorder": ".cassette.json"}


def _argv(case: str, reel: Path, work: Path) -> list[str]:
    """The child's command line for one case."""
    if case.startswith("convert:"):
        to = case.split(":", 1)[1]
        return [PY, "-c", CLI, "convert", str(reel), str(work / f"out{EXT[to]}"), "--to", to]
    if case == "inspect":
        return [PY, "-c", CLI, "inspect", str(reel)]
    if case == "index":
        return [PY, "-c", INDEX, str(reel.parent), str(work / "corpus.duckdb")]
    if case == "read":
        return [PY, "-c", READ, str(reel)]
    if case == "serve-index":
        return [PY, "-c", SERVE_INDEX, str(reel)]
    raise SystemExit(f"unknown case {case!r} (one of {', '.join(CASES)})")


def measure(case: str, tree: Path, reel: Path, work: Path) -> float:
    """One run of ``case`` with ``tree``'s ``src`` first on the path: the command's CPU seconds."""
    for p in work.iterdir():  # a fresh output and a fresh index database every run
        if p.is_file():
            p.unlink()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    proc = subprocess.run(_argv(case, reel, work), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          check=False)
    lines = proc.stderr.decode(errors="replace").strip().splitlines()
    if proc.returncode != 0 or not lines or not lines[-1].startswith("CPU "):
        raise SystemExit(f"{case} ({tree}) failed, exit {proc.returncode}: {lines[-1] if lines else ''}")
    return float(lines[-1].split()[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, metavar="DIR", help="the tree measured as before (holds src/mcpreel)")
    ap.add_argument("--messages", type=int, default=200_000, help="messages of the reel [default: 200000]")
    ap.add_argument("--rounds", type=int, default=5, help="runs of each case on each tree [default: 5]")
    ap.add_argument("--only", default="", help=f"comma-separated cases (default: all of {', '.join(CASES)})")
    args = ap.parse_args()
    before = Path(args.before).resolve() / "src"
    if not (before / "mcpreel").is_dir():
        raise SystemExit(f"{args.before}: no src/mcpreel in it")
    cases = [c.strip() for c in args.only.split(",") if c.strip()] or list(CASES)
    base = Path(tempfile.mkdtemp(prefix="mcpreel-before-after-"))
    try:
        (base / "reel").mkdir()
        (base / "work").mkdir()
        reel = base / "reel" / "session.reel.jsonl"
        count = build(reel, args.messages)
        print(f"# {count:,} messages, {reel.stat().st_size / 1e6:.0f} MB; {args.rounds} rounds, "
              f"load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
        runs: dict[tuple[str, str], list[float]] = {(c, t): [] for c in cases for t in ("before", "after")}
        trees = {"before": before, "after": HERE}
        for tree in trees.values():
            # both trees compiled ahead: a module a case imports lazily (its writer, the walk) is then loaded,
            # not compiled, inside the measured time, whatever PYTHONDONTWRITEBYTECODE says
            subprocess.run([PY, "-m", "compileall", "-q", str(tree)], check=False, stdout=subprocess.DEVNULL)
        for r in range(args.rounds):
            for case in cases:
                order = ("before", "after") if (r + cases.index(case)) % 2 == 0 else ("after", "before")
                for name in order:
                    runs[(case, name)].append(measure(case, trees[name], reel, base / "work"))
                print(f"round {r + 1} {case}: before {runs[(case, 'before')][-1]:.3f} s, "
                      f"after {runs[(case, 'after')][-1]:.3f} s", file=sys.stderr, flush=True)
        head = ["case", "before CPU s (median)", "after CPU s (median)", "before µs/msg", "after µs/msg",
                "after ÷ before", "within 5 %"]
        lines = ["| " + " | ".join(head) + " |", "|---|---:|---:|---:|---:|---:|---|"]
        for case in cases:
            b = statistics.median(runs[(case, "before")])
            a = statistics.median(runs[(case, "after")])
            ratio = a / b
            lines.append(f"| {case.replace(':', ' --to ')} | {b:.3f} | {a:.3f} | {b / count * 1e6:.1f} | "
                         f"{a / count * 1e6:.1f} | {ratio:.3f} | {'yes' if ratio <= 1.05 else '**no**'} |")
        print(f"Measured by `python bench/before_after.py --before DIR --messages {args.messages} --rounds "
              f"{args.rounds}` ({time.strftime('%Y-%m-%d', time.gmtime())}, {os.cpu_count()} cores shared, "
              f"Python {sys.version.split()[0]}); {count:,} messages.\n")
        print("\n".join(lines))
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
