"""The session corpus at scale (issue 26): indexing rate and peak memory, and the README's example queries.

Builds a corpus of S sessions and M messages in all (default 1,000 and 1,000,000), in a mix of formats
(reel JSONL 50%, bare JSON-RPC JSONL 20%, qai JSON 10%, MCP Inspector JSON 10%, Streamable HTTP envelope
JSON 10%): each session an ``initialize`` handshake, ``tools/list`` and ``tools/call`` pairs over four
servers, eight tools, fourteen days, with JSON-RPC errors and ``isError`` results, and tool descriptions
that change on some days. Then, in the same run:

- **floor**: the fastest reading of the same files measured here, each in a child process: (a) orjson
  parsing every line of a JSONL file and every JSON document whole (no session model at all), and (b)
  mcpreel's readers (``open_session`` + iterating every record: what any indexer of "every format mcpreel
  reads" must do at least);
- **floor through the pool** (issue 35): the same readers' floor fanned out over the pool ``index`` uses
  (``mcpreel._infra.pool``, a process per core), files cut into the same chunks;
- **index**: ``mcpreel index DIR --db FILE`` as a child process, with the pool (``--jobs``, default one per
  core) and with ``--jobs 1``: wall and CPU seconds (every process), messages/s, peak RSS of each process
  (``getrusage``: the writer's own, and the largest of its workers, reaped by the pool); then a second pass
  over the unchanged corpus. Floors and index are interleaved ``--rounds`` times, the best of each kept: the
  machine is shared, load only slows a run down;
- **queries**: each README example query (and ``sessions --failed``), read-only on the index, best of 3.

Sizes (``--sizes 250:250000,1000:1000000``) show the peak memory staying flat as the corpus grows.

    python bench/corpus.py --sizes 50:50000 --rounds 1               # quick
    python bench/corpus.py --write BENCHMARKS.md                      # the issue's corpus, table into the file
    python bench/corpus.py --sizes 1000:1000000 --before 7034a7d      # this tree against an earlier commit
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
MARK_BEGIN = "<!-- corpus.py: begin -->"
MARK_END = "<!-- corpus.py: end -->"
DAY_MS = 86_400_000
T0 = 1_795_000_000_000  # 2026-11-18
SERVERS = ("github", "filesystem", "search", "db")
TOOLS = ("create_issue", "read_file", "write_file", "search", "query", "list_repos", "fetch", "summarize")
MIX = (("reel", 5), ("jsonrpc", 2), ("qai", 1), ("inspector", 1), ("streamable-http", 1))  # tenths
EXT = {"reel": ".reel.jsonl", "jsonrpc": ".jsonrpc.jsonl", "qai": ".qai.json", "inspector": ".inspector.json",
       "streamable-http": ".streamable-http.json"}


def _session_messages(rng: random.Random, n_messages: int, start: int, server: str, day: int) -> list[tuple]:
    """(t, dir, raw) of one session: handshake (3), tools/list (2), then call pairs up to ``n_messages``."""
    t = start
    out: list[tuple] = []

    def add(d: str, raw: dict) -> None:
        nonlocal t
        t += rng.randint(1, 30)
        out.append((t, d, raw))

    add("in", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": rng.choice(("claude-code", "cursor")),
                                                                            "version": "1.0"}}})
    add("out", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                                       "serverInfo": {"name": server, "version": "2.1"}}})
    add("in", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    add("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    tools = [{"name": name, "description": f"{name} v{1 + (day >= 7 and name == 'search')}",
              "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}} for name in TOOLS]
    add("out", {"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}})
    rid = 2
    while len(out) + 2 <= n_messages:
        tool = rng.choice(TOOLS)
        add("in", {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                   "params": {"name": tool, "arguments": {"q": f"query {rid}"}}})
        roll = rng.random()
        if roll < 0.01:
            add("out", {"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "internal error"}})
        elif roll < 0.03:
            add("out", {"jsonrpc": "2.0", "id": rid, "result": {"isError": True,
                                                                 "content": [{"type": "text", "text": "not found"}]}})
        else:
            add("out", {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": f"ok {rid}"}]}})
        rid += 1
    return out


def _iso(ms: int) -> str:
    from mcpreel._infra.timeutil import iso_from_ms

    return iso_from_ms(ms)


def build(folder: Path, sessions: int, messages: int, seed: int = 26) -> dict[str, int]:
    """Write the corpus; return the files per format."""
    from mcpreel.formats import get_writer
    from mcpreel.model import Message, Session, SessionInfo

    rng = random.Random(seed)
    per = messages // sessions
    formats = ["reel", "jsonrpc", "reel", "qai", "reel", "inspector", "jsonrpc", "reel", "streamable-http", "reel"]
    assert sorted(formats) == sorted(f for f, share in MIX for _ in range(share))
    counts: dict[str, int] = {}
    for i in range(sessions):
        fmt = formats[i % len(formats)]
        counts[fmt] = counts.get(fmt, 0) + 1
        day = i % 14
        start = T0 + day * DAY_MS + rng.randint(0, DAY_MS // 2)
        server = SERVERS[i % len(SERVERS)]
        msgs = _session_messages(rng, per, start, server, day)
        path = folder / server / f"s{i:05d}{EXT[fmt]}"
        path.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "reel":
            with open(path, "wb") as fh:
                fh.write(orjson.dumps({"v": 1, "type": "meta", "startedAt": _iso(start), "label": f"s{i}",
                                       "command": [server], "transport": "stdio"}) + b"\n")
                fh.write(b"".join(orjson.dumps({"t": _iso(t), "dir": d, "raw": raw}) + b"\n" for t, d, raw in msgs))
                end = msgs[-1][0] + 1
                fh.write(orjson.dumps({"t": _iso(end), "type": "end", "exitCode": 0, "durationMs": end - start}) + b"\n")
            continue
        info = SessionInfo(started=start, label=f"s{i}", command=[server],
                           transport="streamable-http" if fmt == "streamable-http" else "stdio",
                           url="http://127.0.0.1:9/mcp" if fmt == "streamable-http" else None)
        session = Session(info, [Message(d, raw, t) for t, d, raw in msgs])
        with open(path, "wb") as fh:
            get_writer(fmt)(session, fh)
    return counts


# -- the child processes ------------------------------------------------------------------------------------

_FLOOR_ORJSON = """
import os, sys, orjson
n = 0
for folder, _, names in os.walk(sys.argv[1]):
    for name in names:
        path = os.path.join(folder, name)
        with open(path, 'rb') as fh:
            data = fh.read()
        if name.endswith('.jsonl'):
            for line in data.splitlines():
                if line:
                    orjson.loads(line)
                    n += 1
        else:
            orjson.loads(data)
            n += 1
print(n)
"""

_FLOOR_READERS = """
import os, sys
from mcpreel.formats import open_session
n = 0
for folder, _, names in os.walk(sys.argv[1]):
    for name in names:
        session, _ = open_session(os.path.join(folder, name))
        for _ in session:
            n += 1
print(n)
"""


_FLOOR_POOL = """
import os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
import corpus as bench
from mcpreel._infra.pool import Pool
from mcpreel.corpus.index import _chunks
paths = sorted(Path(f, n) for f, _, names in os.walk(sys.argv[1]) for n in names)
jobs = int(sys.argv[2])
chunks = [[str(p) for p, _, _ in c.files] for c in _chunks([(p, p.stat(), "") for p in paths], Path("."), 0, jobs)]
with Pool(jobs) as pool:
    print(sum(pool.map(bench.count_records, chunks)))
"""

_INDEX = """
import resource, sys
from mcpreel.__main__ import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    if exc.code:
        raise
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"rss {me.ru_maxrss / 1024:.1f} {kids.ru_maxrss / 1024:.1f} cpu {me.ru_utime + me.ru_stime:.3f} "
      f"{kids.ru_utime + kids.ru_stime:.3f}")
"""


def count_records(paths: list[str]) -> int:
    """The readers' floor of some files (a worker's task in the pool's floor): every record read."""
    from mcpreel.formats import open_session

    n = 0
    for path in paths:
        for _ in open_session(path)[0]:
            n += 1
    return n


def _index(corpus: Path, db: Path, jobs: int) -> tuple[float, float, float, float]:
    """``mcpreel index`` in a child: (wall s, CPU s of every process, peak RSS MB of the writer, of a worker)."""
    wall, cpu, _, out = _child([PY, "-c", _INDEX, "index", str(corpus), "--db", str(db), "--jobs", str(jobs)])
    line = next(x for x in out.splitlines() if x.startswith("rss "))
    _, own, worker, *_ = line.split()
    return wall, cpu, float(own), float(worker)


_PARTS = """
import gc, os, sys, time
from pathlib import Path
from mcpreel.formats import open_session
from mcpreel.operations.walk import Walker
from mcpreel.corpus.index import index_paths
gc.freeze(); gc.set_threshold(10_000, 10, 10)  # as the CLI runs it (output.fewer_collections)
paths = sorted(os.path.join(f, n) for f, _, names in os.walk(sys.argv[1]) for n in names)
t = time.process_time()
for p in paths:
    for _ in open_session(p)[0]:
        pass
read = time.process_time() - t
t = time.process_time()
for p in paths:
    w = Walker(); feed = w.feed
    for i, m in enumerate(open_session(p)[0]):
        feed(i, m)
    w.finish()
walk = time.process_time() - t
t = time.process_time()
index_paths([Path(sys.argv[1])], Path(sys.argv[2]), jobs=1)
full = time.process_time() - t
print(f"{read:.3f} {walk:.3f} {full:.3f}")
"""


def _child(argv: list[str], timeout: float = 3600, src: Path = ROOT / "src") -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MB, stdout) of a child process (``src``: the mcpreel it imports)."""
    env = {**os.environ, "PYTHONPATH": str(src) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"{argv[:4]} ran past {timeout} s")
        time.sleep(0.01)
    wall = time.perf_counter() - t0
    out = proc.stdout.read().decode() if proc.stdout else ""
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv[:4]} failed: {err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out + err


def run(sizes: list[tuple[int, int]], keep: Path | None, rounds: int = 2, jobs: int | None = None) -> str:
    from mcpreel._infra.pool import default_jobs
    from mcpreel.corpus.query import example_queries, run_sql, sessions

    jobs = jobs or default_jobs()
    queries = example_queries((ROOT / "src" / "mcpreel" / "cli" / "topics" / "corpus.md").read_text(encoding="utf-8"))
    lines = [f"corpus benchmark: {time.strftime('%Y-%m-%d')}, Python {sys.version.split()[0]}, "
             f"{os.cpu_count()} cores shared (load average {os.getloadavg()[0]:.1f} at the start); every row a "
             f"child process (start-up included) on the same files, best of {rounds} interleaved rounds", ""]
    query_rows: list[str] = []
    parts: list[str] = []
    table = [f"| sessions | messages | files MB | floor: orjson s | readers' floor s (1 process) | "
             f"readers' floor s (pool of {jobs}) | index s (--jobs {jobs}) | messages/s | "
             f"**index ÷ readers' floor** | index ÷ pool's floor | index CPU s (all processes) | "
             f"readers' floor CPU s | index CPU ÷ {jobs} ÷ floor CPU | "
             f"index --jobs 1 s | --jobs 1 ÷ readers' floor | peak RSS MB: writer / each worker | "
             f"unchanged pass s |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    formats: list[str] = []
    for n_sessions, n_messages in sizes:
        work = Path(tempfile.mkdtemp(prefix="mcpreel-corpus-bench-", dir=keep))
        corpus = work / "sessions"
        counts = build(corpus, n_sessions, n_messages)
        size_mb = sum(p.stat().st_size for p in corpus.rglob("*") if p.is_file()) / 1e6
        # the machine is shared: each figure the best of its rounds, the rounds interleaved
        runs: dict[str, list[tuple[float, ...]]] = {k: [] for k in ("orjson", "readers", "pool", "index", "one")}
        for i in range(rounds):
            runs["orjson"].append(_child([PY, "-c", _FLOOR_ORJSON, str(corpus)])[:3])
            runs["readers"].append(_child([PY, "-c", _FLOOR_READERS, str(corpus)])[:3])
            runs["pool"].append(_child([PY, "-c", _FLOOR_POOL, str(corpus), str(jobs), str(ROOT / "bench")])[:3])
            runs["index"].append(_index(corpus, work / f"pool-{i}.duckdb", jobs))
            runs["one"].append(_index(corpus, work / f"one-{i}.duckdb", 1))
        best = {k: min(v, key=lambda r: r[0]) for k, v in runs.items()}
        db = work / "pool-0.duckdb"
        again = _index(corpus, db, jobs)
        (messages,) = run_sql(db, "SELECT sum(messages) FROM files").rows[0]
        (one_messages,) = run_sql(work / "one-0.duckdb", "SELECT sum(messages) FROM files").rows[0]
        assert messages == one_messages, "the pool and one process disagree"
        formats.append(f"{n_sessions:,} sessions: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        wall = best["index"][0]
        floor, pool_floor = best["readers"][0], best["pool"][0]
        floor_cpu = min(r[1] for r in runs["readers"])
        own = max(r[2] for r in runs["index"] + runs["one"])
        worker = max(r[3] for r in runs["index"])
        table.append(f"| {n_sessions:,} | {int(messages):,} | {size_mb:,.0f} | {best['orjson'][0]:.2f} | {floor:.2f} "
                     f"| {pool_floor:.2f} | {wall:.2f} | {int(messages / wall):,} | **{wall / floor:.2f}** "
                     f"| {wall / pool_floor:.2f} | {best['index'][1]:.2f} | {floor_cpu:.2f} "
                     f"| {best['index'][1] / jobs / floor_cpu:.2f} | {best['one'][0]:.2f} "
                     f"| {best['one'][0] / floor:.2f} | {own:.0f} / {worker:.0f} | {again[0]:.2f} |")
        if (n_sessions, n_messages) == sizes[-1]:
            read, walk, full = map(float, _child([PY, "-c", _PARTS, str(corpus), str(work / "parts.duckdb")])[3]
                                   .split()[:3])
            parts = [f"where the CPU goes, in one process on the {n_sessions:,}-session corpus ({int(messages):,} "
                     "messages), CPU seconds:", "",
                     "| part | CPU s | µs per message | messages/s |", "|---|---:|---:|---:|"]
            for name, value in (("the readers (open_session + every record)", read),
                                ("the readers and the one walk (Walker.feed on every record)", walk),
                                ("what the indexer adds: counting, rows, CSV spools, DuckDB loads", full - walk),
                                ("index_paths --jobs 1, all of it", full)):
                rate = "–" if name.startswith("what") else f"{int(messages / value):,}"
                parts.append(f"| {name} | {value:.2f} | {value / messages * 1e6:.1f} | {rate} |")
            named = [("sessions --failed", lambda db=db: sessions(db, failed=True)),
                     ("sessions --tool search --since 2026-11-25",
                      lambda db=db: sessions(db, tool="search", since="2026-11-25"))]
            for i, sql in enumerate(queries, 1):
                named.append((f"README example {i}: {' '.join(sql.split())[:70]}…", lambda sql=sql, db=db: run_sql(db, sql)))
            for name, fn in named:
                best_s = float("inf")
                rows = 0
                for _ in range(3):
                    t0 = time.perf_counter()
                    rows = len(fn().rows)
                    best_s = min(best_s, time.perf_counter() - t0)
                query_rows.append(f"| {name} | {rows:,} | {best_s:.3f} | {'yes' if best_s < 1 else '**no**'} |")
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)
    lines += table
    lines += ["", "formats: " + "; ".join(formats)]
    lines += ["", *parts]
    lines += ["", f"queries on the {sizes[-1][0]:,}-session index (read-only, a new connection each, best of 3):", "",
              "| query | rows | seconds | < 1 s |", "|---|---:|---:|---|", *query_rows]
    return "\n".join(lines) + "\n"


def before_after(n_sessions: int, n_messages: int, before: str, rounds: int) -> str:
    """``mcpreel index`` of this tree and of commit ``before`` (a worktree of it) on one corpus, with the
    readers' floor, interleaved ``rounds`` times: the best of each, and the ratios (the machine is shared,
    so only what is measured side by side compares)."""
    work = Path(tempfile.mkdtemp(prefix="mcpreel-corpus-ab-"))
    tree = work / "before"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), before], check=True)
    try:
        corpus = work / "sessions"
        build(corpus, n_sessions, n_messages)
        runs: dict[str, list[tuple[float, float, float, str]]] = {"floor": [], "before": [], "after": []}
        for i in range(rounds):
            runs["floor"].append(_child([PY, "-c", _FLOOR_READERS, str(corpus)]))
            for name, src in (("before", tree / "src"), ("after", ROOT / "src")):
                db = work / f"{name}-{i}.duckdb"
                runs[name].append(_child([PY, "-m", "mcpreel", "index", str(corpus), "--db", str(db)], src=src))
        floor_wall = min(r[0] for r in runs["floor"])
        floor_cpu = min(r[1] for r in runs["floor"])
        lines = [f"`mcpreel index`, {n_sessions:,} sessions and {n_messages:,} messages, before = {before}, best of "
                 f"{rounds} interleaved rounds, {time.strftime('%Y-%m-%d')}", "",
                 "| tree | wall s | CPU s | messages/s (wall) | wall ÷ readers' floor | CPU ÷ readers' floor | peak RSS MB |",
                 "|---|---:|---:|---:|---:|---:|---:|",
                 f"| readers' floor | {floor_wall:.2f} | {floor_cpu:.2f} | {int(n_messages / floor_wall):,} | 1 | 1 | – |"]
        for name in ("before", "after"):
            wall = min(r[0] for r in runs[name])
            cpu = min(r[1] for r in runs[name])
            rss = max(r[2] for r in runs[name])
            lines.append(f"| {name} | {wall:.2f} | {cpu:.2f} | {int(n_messages / wall):,} | {wall / floor_wall:.2f} "
                         f"| {cpu / floor_cpu:.2f} | {rss:.0f} |")
        after_before = (min(r[0] for r in runs["after"]) / min(r[0] for r in runs["before"]),
                        min(r[1] for r in runs["after"]) / min(r[1] for r in runs["before"]))
        lines += ["", f"after ÷ before: wall {after_before[0]:.2f}, CPU {after_before[1]:.2f}"]
        return "\n".join(lines) + "\n"
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
        shutil.rmtree(work, ignore_errors=True)


def _write(path: Path, table: str) -> None:
    text = path.read_text(encoding="utf-8")
    block = f"{MARK_BEGIN}\n{table}{MARK_END}"
    if MARK_BEGIN in text:
        start, end = text.index(MARK_BEGIN), text.index(MARK_END) + len(MARK_END)
        text = text[:start] + block + text[end:]
    else:
        text = text.rstrip("\n") + "\n\n## corpus (issue 26) (`python bench/corpus.py`)\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=textwrap.dedent(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", default="250:250000,1000:1000000", help="SESSIONS:MESSAGES,... (default: %(default)s)")
    parser.add_argument("--keep", type=Path, help="build the corpora under this folder and keep them")
    parser.add_argument("--write", type=Path, help="replace the corpus section of this file (BENCHMARKS.md)")
    parser.add_argument("--before", metavar="REV", help="compare with the index of commit REV instead (the last "
                        "size, interleaved rounds; nothing is written)")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds, the best kept (default: "
                        "%(default)s)")
    parser.add_argument("--jobs", type=int, help="the pool's processes (default: one per core)")
    args = parser.parse_args()
    sizes = [(int(a), int(b)) for a, b in (s.split(":") for s in args.sizes.split(","))]
    sys.path.insert(0, str(ROOT / "src"))
    if args.before:
        print(before_after(*sizes[-1], args.before, args.rounds))
        return
    table = run(sizes, args.keep, args.rounds, args.jobs)
    print(table)
    if args.write:
        _write(args.write, table)


if __name__ == "__main__":
    main()
