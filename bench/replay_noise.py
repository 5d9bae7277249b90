"""Replay never cries wolf on real servers (issue 34): false ``changed`` verdicts against unchanged servers.

For each real server (mcp-server-time, server-everything over stdio and Streamable HTTP, mcp-server-git
2026 and its 2025 release, whose ``git_show`` holds a Python object's address, and our own server of a
timestamp, an id and a random pick), in each era it speaks: record once with the official SDK's default
client, then replay against the same, unchanged server

- plainly (no repeat, no noise): how often a run reports a false change (what the issue measured: 20 of 20);
- with ``--repeat 3`` alone: the requests judged ``changed`` (must be 0);
- ``--learn-noise`` once, then ``--runs`` replays with ``--noise``: runs with any false ``changed`` (must be 0).

    python bench/replay_noise.py                        # 20 noise runs a server, ~30-60 min on a loaded 2-core machine
    python bench/replay_noise.py --runs 3 --only varying --write ''   # a quick look, nothing written

The table goes into BENCHMARKS.md between this script's markers (``--write`` another file, or ``''``).
The servers are the ones ``make peers`` installs (its upgrade-peers target); one not installed is a row
saying so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import textwrap
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402  (the peers' helpers skip through pytest when a peer is missing)

from tests.replay import noise_peers as npeers  # noqa: E402
from tests.replay import real_servers as rs  # noqa: E402

MARK_BEGIN = "<!-- replay_noise.py: begin -->"
MARK_END = "<!-- replay_noise.py: end -->"
SECTION = "## replay noise on real servers (issue 34) (`python bench/replay_noise.py`)"


def _cases(work: Path) -> list[tuple[str, str, str, object]]:
    """(name, transport, era, a function making the Peer): made lazily, so a missing peer is one row."""
    return [
        ("mcp-server-time 2026.10.19", "stdio", "auto", lambda: npeers.time_peer(rs.need(rs.TIME))),
        ("mcp-server-time 2026.10.19", "stdio", "legacy", lambda: npeers.time_peer(rs.need(rs.TIME))),
        ("server-everything 2026.8.31", "stdio", "auto",
         lambda: (rs.need(rs.EVERYTHING), npeers.everything_peer(rs.EVERYTHING))[1]),
        ("server-everything 2026.8.31", "streamable-http", "auto",
         lambda: (rs.need(rs.EVERYTHING), npeers.everything_peer(rs.EVERYTHING, "http"))[1]),
        ("mcp-server-git 2026.10.19", "stdio", "auto",
         lambda: npeers.git_peer(rs.need(rs.GIT), npeers.git_repo(_fresh(work, "git-new")))),
        ("mcp-server-git 2026.10.19", "stdio", "legacy",
         lambda: npeers.git_peer(rs.need(rs.GIT), npeers.git_repo(_fresh(work, "git-new-legacy")))),
        ("mcp-server-git 2025.9.25 (an address in git_show)", "stdio", "auto",
         lambda: npeers.git_peer(rs.need(rs.OLD_GIT), npeers.git_repo(_fresh(work, "git-old")))),
        ("timestamp, id, random pick (ours)", "stdio", "auto", lambda: npeers.varying_peer()),
        ("timestamp, id, random pick (ours)", "stdio", "legacy", lambda: npeers.varying_peer()),
        ("timestamp, id, random pick (ours)", "streamable-http", "auto", lambda: npeers.varying_peer("http")),
    ]


def _fresh(work: Path, name: str) -> Path:
    folder = work / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def measure(name: str, transport: str, era: str, make, work: Path, runs: int, plain: int, repeats: int) -> dict:
    """One server in one era: record, replay plainly, with --repeat 3, learn the noise, then ``runs`` with it."""
    row: dict = {"server": name, "transport": transport, "era": era}
    try:
        peer = make()
    except pytest.skip.Exception as why:
        row["skipped"] = str(why)
        return row
    folder = _fresh(work, f"{len(list(work.iterdir()))}")
    recording, noise = folder / "rec.jsonl", folder / "noise.json"
    with npeers.serving(peer) as where:
        got = npeers.record(peer, where, recording, era)
        row["protocol"] = got.get("protocol")

        def run(*options: str) -> tuple[int, dict]:
            code, doc, text = npeers.replay(recording, where, *options)
            if code == 2 or not doc:
                raise SystemExit(f"{name} ({transport}, {era}): replay could not run:\n{text[-3000:]}")
            return code, doc

        row["requests"] = None
        plain_false = 0
        for _ in range(plain):
            code, doc = run()
            row["requests"] = doc["summary"]["requests"]
            plain_false += code != 0 or doc["summary"]["changed"] > 0
        row["plain"] = (plain_false, plain)
        repeat_changed = repeat_exit = 0
        for _ in range(repeats):
            code, doc = run("--repeat", "3")
            repeat_changed += doc["summary"]["changed"]
            repeat_exit += code != 0
        row["repeat"] = (repeat_changed, repeat_exit, repeats)
        run("--learn-noise", str(noise))
        row["learned"] = len(json.loads(noise.read_text())["noise"])
        false_runs = false_changed = exits = 0
        started = time.monotonic()
        for _ in range(runs):
            code, doc = run("--noise", str(noise))
            changed = doc["summary"]["changed"]
            false_changed += changed
            false_runs += changed > 0
            exits += code != 0
        row["noise"] = (false_runs, false_changed, exits, runs)
        row["seconds_per_run"] = (time.monotonic() - started) / max(runs, 1)
    return row


def table(rows: list[dict], runs: int) -> str:
    """The rows as the markdown table BENCHMARKS.md holds."""
    lines = [f"replay noise benchmark: {date.today().isoformat()}, Python {platform.python_version()}, "
             f"{os.cpu_count()} cores shared; each server recorded once by the SDK's default client "
             "(`auto`: 2026-07-28 where the server speaks it; `legacy`: the handshake era)", "",
             "| server | transport | era (recorded) | requests | plain replay: runs with a false change | "
             f"`--repeat 3` alone: changed (exit 1) | noise paths learned | `--noise`: runs with a false change "
             f"(changed requests, exit 1) of {runs} | s a run |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "skipped" in r:
            lines.append(f"| {r['server']} | {r['transport']} | {r['era']} | not installed: {r['skipped']} "
                         "| | | | | |")
            continue
        p, rep, n = r["plain"], r["repeat"], r["noise"]
        lines.append(f"| {r['server']} | {r['transport']} | {r['era']} ({r['protocol']}) | {r['requests']} "
                     f"| {p[0]} of {p[1]} | {rep[0]} ({rep[1]} of {rep[2]} runs) | {r['learned']} "
                     f"| **{n[0]}** ({n[1]}, {n[2]}) | {r['seconds_per_run']:.1f} |")
    return "\n".join(lines) + "\n"


def _write(path: Path, text: str) -> None:
    doc = path.read_text(encoding="utf-8")
    block = f"{MARK_BEGIN}\n{text}{MARK_END}"
    if MARK_BEGIN in doc:
        start, end = doc.index(MARK_BEGIN), doc.index(MARK_END) + len(MARK_END)
        doc = doc[:start] + block + doc[end:]
    else:
        intro = textwrap.dedent("""\
            Real servers replayed against themselves, unchanged (`bench/replay_noise.py`): recorded once, then
            replayed plainly (what varies is reported as a change: the issue counted 20 of 20), with `--repeat 3`
            (what varies between the runs is `flaky`, never `changed`), and 20 times with the noise a
            `--learn-noise` run wrote (`--noise`). A false change is a request judged `changed` against the very
            server that was recorded.

                python bench/replay_noise.py       # every server, 20 noise runs each
            """)
        doc = doc.rstrip("\n") + f"\n\n{SECTION}\n\n{intro}\n{block}\n"
    path.write_text(doc, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="replays with the learned noise, a server (default 20)")
    parser.add_argument("--plain", type=int, default=2, help="plain replays, a server (default 2)")
    parser.add_argument("--repeats", type=int, default=1, help="--repeat 3 replays, a server (default 1)")
    parser.add_argument("--only", default="", help="only the servers whose name contains this")
    parser.add_argument("--write", default=str(ROOT / "BENCHMARKS.md"), help="the file to put the table in ('': none)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="mcpreel-noise-bench-") as tmp:
        work = Path(tmp)
        for name, transport, era, make in _cases(work):
            if args.only and args.only not in name:
                continue
            row = measure(name, transport, era, make, work, args.runs, args.plain, args.repeats)
            print(json.dumps(row), flush=True)
            rows.append(row)
            if args.write:  # row by row: a long run that is stopped keeps what it measured
                _write(Path(args.write), table(rows, args.runs))
    print(table(rows, args.runs))


if __name__ == "__main__":
    main()
