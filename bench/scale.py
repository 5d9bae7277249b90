"""Every verb on a big session, against the floor, in one run (issue 13).

Builds a reel of N messages (an ``initialize`` handshake, ``tools/list``, then ``tools/call`` pairs with
times and directions, the shape of a long agent run) for each ``--sizes`` entry, and one reel holding a
few 50 MB messages; then runs every verb as a CLI subprocess on it, in the same run, and measures:

- **time**: wall clock of the child, interpreter start-up included (about 0.2 s, visible at small sizes);
- **CPU s**: the child's user + system CPU time (the machine is shared: wall time includes waiting for a
  core, CPU time does not);
- **messages/s**: the session's messages divided by the wall time;
- **peak RSS**: the child's own ``ru_maxrss`` (``os.wait4``). On Linux that is the largest of the child
  and of every process it reaped, so for ``replay``, which starts and reaps ``mcpreel serve``, it would be
  the server's peak: replay's row reads the child's own ``VmHWM`` (``/proc/PID/status``) while it runs
  instead (the server's peak is on its own row);
- **÷ floor**: time divided by the floor's, the least any verb must do: read each line of the same file,
  parse it with orjson and dump it back (a Python child too, start-up included). A second reference row,
  *read only*, opens the reel with mcpreel's reader and iterates it: the ceiling of any verb on a reel.
- **own CPU µs/msg**: the verb's CPU per message minus the reader's (*read only*), both from this run:
  what the verb's own work costs. At 150k messages/s a verb has 6.7 µs a message in all; what the reader
  leaves of that is the budget its own work must fit.

Verbs: ``import``; ``convert`` reel -> every writer; ``inspect`` in every mode (table, ``-v``,
``--summary``, ``--json``); ``merge`` (the session with a copy of itself); ``redact``; ``diff`` (the reel
against the same session as qai); ``replay`` (against ``mcpreel serve`` of the same session, over
stdio); ``serve`` loading (time until it answers ``initialize``).

    python bench/scale.py --sizes 20000                 # quick, while iterating
    python bench/scale.py --sizes 100000,1000000 --big --write BENCHMARKS.md

``--write`` replaces the section between the issue-13 markers in that file (adds it at the end when
absent). ``--only convert:har,inspect`` limits the verbs; ``--timeout`` stops a verb that runs away (its
row says so).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PY = sys.executable
MARK_BEGIN = "<!-- scale.py: begin -->"
MARK_END = "<!-- scale.py: end -->"
WRITERS = ("reel", "jsonrpc", "inspector", "streamable-http", "http-sse", "qai", "mcp-recorder", "mcp-cassette-pypi", "har",
           "assay-v2", "simple")
EXT = {"reel": ".reel.jsonl", "jsonrpc": ".jsonrpc.jsonl", "inspector": ".inspector.json",
       "streamable-http": ".streamable-http.json", "http-sse": ".http-sse.json", "qai": ".qai.json", "mcp-recorder": ".cassette.json",
       "mcp-cassette-pypi": ".mcp.json", "har": ".har", "assay-v2": ".trace.jsonl", "simple": ".simple.jsonl"}


def _iso(ms: int) -> str:
    s, ms = divmod(ms, 1000)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return f"2026-11-24T{h % 24:02d}:{m:02d}:{s:02d}.{ms:03d}Z"


def build(path: Path, messages: int, big_bytes: int = 0) -> int:
    """A reel of about ``messages`` messages (tools/call pairs after a handshake); returns the count.

    With ``big_bytes``, every answer's text is that long (the 50 MB-message session).
    """
    import orjson

    dumps = orjson.dumps
    t = 0
    count = 0
    with open(path, "wb") as fh:
        w = fh.write
        w(dumps({"v": 1, "type": "meta", "startedAt": _iso(0), "label": "scale", "command": ["server"]}) + b"\n")

        def line(direction: str, raw: dict) -> None:
            nonlocal t, count
            t += 1
            count += 1
            w(dumps({"t": _iso(t), "dir": direction, "raw": raw}) + b"\n")

        line("in", {"jsonrpc": "2.0", "id": "init", "method": "initialize",
                    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "bench", "version": "1"}}})
        line("out", {"jsonrpc": "2.0", "id": "init", "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "scale", "version": "1"}}})
        line("in", {"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = [{"name": f"tool_{k}", "description": "a tool",
                  "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}}} for k in range(17)]
        line("in", {"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
        line("out", {"jsonrpc": "2.0", "id": "list", "result": {"tools": tools}})
        big = "x" * big_bytes if big_bytes else ""
        i = 0
        while count < messages:
            line("in", {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                        "params": {"name": f"tool_{i % 17}",
                                   "arguments": {"query": f"customer {i}", "limit": i % 50, "deep": {"a": [1, 2, 3]}}}})
            t += i % 7  # latencies of 1 to 7 ms
            text = big or f'{{"name": "user {i}", "ok": true}}'
            line("out", {"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": text}],
                                                               "isError": False}})
            i += 1
        w(dumps({"t": _iso(t + 1), "type": "end", "exitCode": 0, "durationMs": t + 1}) + b"\n")
    return count


# the reel reader alone: the ceiling of every verb that reads a reel (what is left is the verb's own work)
READ = """
import sys
from mcpreel.formats import open_session
session, _ = open_session(sys.argv[1])
for _ in session:
    pass
"""

FLOOR = """
import sys, orjson
loads, dumps = orjson.loads, orjson.dumps
with open(sys.argv[1], "rb") as fi, open(sys.argv[2], "wb") as fo:
    for line in fi:
        fo.write(dumps(loads(line)) + b"\\n")
"""


@dataclass
class Row:
    verb: str
    messages: int
    seconds: float | None
    rss_mb: float
    cpu: float = 0.0
    note: str = ""
    floor: float | None = None
    #: the reel reader's CPU µs per message in the same run (the *read only* row), for the own-cost column
    read_us: float | None = None

    def own_us(self) -> str:
        """CPU µs per message beyond reading: what the verb itself costs (its CPU per message minus the
        reader's, both measured in this run); the reason a verb is slower than its ceiling, in one number.
        Not given for a few huge messages (the 50 MB table), where a message's cost is its size's."""
        if self.read_us is None or self.messages < 1000 or self.verb.startswith(("floor", "read only")):
            return "—"
        return f"{self.cpu / self.messages * 1e6 - self.read_us:.1f}"

    def cells(self) -> list[str]:
        if self.seconds is None:
            return [self.verb, f"{self.messages:,}", "—", f"{self.cpu:.2f}", "—", f"{self.rss_mb:.0f}", "—",
                    self.own_us(), self.note]
        rate = self.messages / self.seconds if self.seconds else 0
        ratio = f"{self.seconds / self.floor:.1f}" if self.floor else "—"
        return [self.verb, f"{self.messages:,}", f"{self.seconds:.2f}", f"{self.cpu:.2f}", f"{rate:,.0f}",
                f"{self.rss_mb:.0f}", ratio, self.own_us(), self.note]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parent.parent / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run(argv: Sequence[str], timeout: float, ok: Sequence[int] = (0,),
        own_peak: bool = False) -> tuple[float | None, float, float, str]:
    """Run one child: (seconds or None on timeout, its own peak RSS in MB, its CPU seconds, a note when
    it failed). ``own_peak``: the child starts a process of its own; read its peak from /proc."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL, stderr=err, env=_env())
        deadline = t0 + timeout
        own = 0.0  # the child's own high-water mark, while /proc shows it
        while True:
            if own_peak:
                own = _hwm_mb(proc.pid) or own
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                proc.returncode = -9
                return (None, own or usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime,
                        f"stopped after {timeout:.0f} s")
            time.sleep(0.01)
        dt = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        note = ""
        if proc.returncode not in ok:
            err.seek(0)
            lines = err.read().decode(errors="replace").strip().splitlines()
            note = f"exit {proc.returncode}: {lines[-1][:120] if lines else ''}"
        return dt, own or usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime, note


def _hwm_mb(pid: int) -> float:
    """A running process's own peak RSS in MB (``VmHWM``), or 0 where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def serve_load(session: Path, timeout: float) -> tuple[float | None, float, float, str]:
    """`mcpreel serve` over stdio: seconds until it answers ``initialize``, then its peak RSS once closed."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([PY, "-m", "mcpreel", "serve", str(session)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_env())
    assert proc.stdin is not None and proc.stdout is not None
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}}
    proc.stdin.write(json.dumps(init).encode() + b"\n")
    proc.stdin.flush()
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    answered = bool(ready) and bool(proc.stdout.readline())
    dt = time.perf_counter() - t0
    proc.stdin.close()
    if not answered:
        proc.kill()
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return ((dt if answered else None), usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime,
            "" if answered else "no answer to initialize")


def verbs(src: Path, tmp: Path, n: int, only: set[str] | None) -> list[tuple[str, int, list[str], tuple[int, ...]]]:
    """(label, messages handled, argv, exit codes that mean it ran) for every verb on ``src``."""
    m = [PY, "-m", "mcpreel"]
    out: list[tuple[str, int, list[str], tuple[int, ...]]] = [
        ("floor (orjson parse + dump)", n, [PY, "-c", FLOOR, str(src), str(tmp / "floor.out")], (0,)),
        ("read only (the reel reader: every verb's ceiling)", n, [PY, "-c", READ, str(src)], (0,)),
        ("import", n, [*m, "import", str(src), "--out-trace", str(tmp / "import.trace.jsonl")], (0,)),
    ]
    for name in WRITERS:
        out.append((f"convert → {name}", n, [*m, "convert", str(src), str(tmp / f"out{EXT[name]}"), "--to", name], (0,)))
    for mode in ([], ["-v"], ["--summary"], ["--json"]):
        out.append((" ".join(["inspect", *mode]), n, [*m, "inspect", *mode, str(src)], (0,)))
    out += [
        ("merge (the session and a copy)", 2 * n, [*m, "merge", str(src), str(tmp / "copy.reel.jsonl"), "-o",
                                                   str(tmp / "merged.reel.jsonl")], (0,)),
        ("redact", n, [*m, "redact", str(src), str(tmp / "redacted.reel.jsonl")], (0,)),
        ("diff (reel vs qai)", 2 * n, [*m, "diff", str(src), str(tmp / f"out{EXT['qai']}")], (0, 1)),
        ("replay (against serve)", n, [*m, "replay", str(src), "--target-command",
                                       f"{PY} -m mcpreel serve {src}", "--output", str(tmp / "replay.json")], (0, 1)),
    ]
    if only:
        out = [v for v in out if v[0].startswith(("floor", "read only")) or any(v[0].startswith(o.replace(":", " → ")) for o in only)]
    return out


def measure(src: Path, n: int, tmp: Path, timeout: float, only: set[str] | None, log: bool) -> list[Row]:
    rows: list[Row] = []
    floor = None
    read_us: float | None = None
    for label, count, argv, ok in verbs(src, tmp, n, only):
        if label.startswith("merge"):
            shutil.copyfile(src, tmp / "copy.reel.jsonl")
        if label.startswith("diff") and not (tmp / f"out{EXT['qai']}").exists():
            subprocess.run([PY, "-m", "mcpreel", "convert", str(src), str(tmp / f"out{EXT['qai']}")],
                           check=True, env=_env(), capture_output=True)
        seconds, rss, cpu, note = run(argv, timeout, ok, own_peak=label.startswith("replay"))
        if label.startswith("floor"):
            floor = seconds
        if label.startswith("read only") and count:
            read_us = cpu / count * 1e6
        rows.append(Row(label, count, seconds, rss, cpu, note, floor, read_us))
        if log:
            print(" | ".join(rows[-1].cells()), file=sys.stderr, flush=True)
    if only is None or any(o.startswith("serve") for o in only):
        seconds, rss, cpu, note = serve_load(src, timeout)
        rows.append(Row("serve (load, answer initialize)", n, seconds, rss, cpu, note, floor, read_us))
        if log:
            print(" | ".join(rows[-1].cells()), file=sys.stderr, flush=True)
    for p in tmp.iterdir():
        if p.name != "session.reel.jsonl" and p.is_file():
            p.unlink()
    return rows


HEAD = ["verb", "messages", "seconds", "CPU s", "messages/s", "peak RSS MB", "÷ floor", "own CPU µs/msg", "note"]


def table(title: str, rows: list[Row]) -> str:
    lines = [f"**{title}**", "", "| " + " | ".join(HEAD) + " |", "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    lines += ["| " + " | ".join(r.cells()) + " |" for r in rows]
    return "\n".join(lines)


def flatness(by_size: dict[int, list[Row]]) -> str:
    """Peak RSS at the largest size over the smallest, per verb (target: within 1.3x)."""
    sizes = sorted(by_size)
    if len(sizes) < 2:
        return ""
    lo, hi = by_size[sizes[0]], by_size[sizes[-1]]
    lines = [f"**peak RSS at {sizes[-1]:,} ÷ at {sizes[0]:,} messages** (target ≤ 1.3)", "",
             "| verb | RSS small MB | RSS large MB | ratio |", "|---|---:|---:|---:|"]
    small = {r.verb: r for r in lo}
    for r in hi:
        if r.verb in small:
            s = small[r.verb]
            lines.append(f"| {r.verb} | {s.rss_mb:.0f} | {r.rss_mb:.0f} | {r.rss_mb / s.rss_mb:.2f} |")
    return "\n".join(lines)


def write_section(path: Path, text: str) -> None:
    doc = path.read_text() if path.exists() else "# Benchmarks\n"
    block = f"{MARK_BEGIN}\n{text}\n{MARK_END}"
    if MARK_BEGIN in doc and MARK_END in doc:
        head, _, rest = doc.partition(MARK_BEGIN)
        _, _, tail = rest.partition(MARK_END)
        doc = head + block + tail
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(doc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000", help="comma-separated message counts")
    ap.add_argument("--big", action="store_true", help="also a session of 4 messages of 50 MB answers")
    ap.add_argument("--big-mb", type=int, default=50)
    ap.add_argument("--only", default="", help="comma-separated verb prefixes (convert:har, inspect, merge, ...)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds before a verb is stopped")
    ap.add_argument("--write", metavar="FILE", help="write the tables into this file's issue-13 section")
    ap.add_argument("--tmp", help="work directory (default: a temporary one)")
    args = ap.parse_args()
    only = {o.strip() for o in args.only.split(",") if o.strip()} or None
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    base = Path(args.tmp) if args.tmp else Path(tempfile.mkdtemp(prefix="mcpreel-scale-"))
    cpu = os.cpu_count()
    parts = [f"Measured by `python bench/scale.py --sizes {args.sizes}{' --big' if args.big else ''}` "
             f"({time.strftime('%Y-%m-%d', time.gmtime())}, {cpu} cores shared, Python "
             f"{sys.version.split()[0]}). Every verb is a CLI subprocess (start-up included) on the same reel; "
             "the floor is orjson parse + dump of each line of that file; peak RSS is the verb's own process."]
    by_size: dict[int, list[Row]] = {}
    try:
        for n in sizes:
            d = base / f"n{n}"
            d.mkdir(parents=True, exist_ok=True)
            src = d / "session.reel.jsonl"
            count = build(src, n)
            print(f"# {count:,} messages, {src.stat().st_size / 1e6:.0f} MB", file=sys.stderr, flush=True)
            rows = measure(src, count, d, args.timeout, only, log=True)
            by_size[n] = rows
            parts.append(table(f"{count:,} messages ({src.stat().st_size / 1e6:.0f} MB reel)", rows))
        if args.big:
            d = base / "big"
            d.mkdir(parents=True, exist_ok=True)
            src = d / "session.reel.jsonl"
            count = build(src, 9, big_bytes=args.big_mb << 20)
            print(f"# {count:,} messages with {args.big_mb} MB answers", file=sys.stderr, flush=True)
            rows = measure(src, count, d, args.timeout, only, log=True)
            parts.append(table(f"{count} messages, each answer {args.big_mb} MB ({src.stat().st_size / 1e6:.0f} MB reel)",
                               rows))
        flat = flatness(by_size)
        if flat:
            parts.append(flat)
    finally:
        if not args.tmp:
            shutil.rmtree(base, ignore_errors=True)
    text = "\n\n".join(parts)
    print(text)
    if args.write:
        write_section(Path(args.write), "## every verb at scale (`python bench/scale.py`, issue 13)\n\n" + text)


if __name__ == "__main__":
    main()
