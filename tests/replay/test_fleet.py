"""The fleet (issue 35): many recordings replayed in one run, each client session a job, on a local pool or Ray.

Real peers, both eras, stdio and Streamable HTTP: the SDK client records a handshake-era and a 2026-07-28
session of the SDK server; ``mcpreel merge`` makes a file of both (two client sessions); a text file lies
beside them. Replayed as a folder with ``--jobs`` the verdicts are those of replaying each file alone; the
documents, the ``replays`` table, ``--db`` selection and the fleet page work as the README says; Ray and
the local pool agree; a Ctrl-C stops every job and server and still writes what is done.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from mcpreel.replay import ReplayOptions, ReplayReport, ReplayTarget
from mcpreel.replay.fleet import (
    FailOn,
    FleetJob,
    FleetResult,
    FleetRun,
    FleetSpec,
    SessionOutcome,
    exit_code,
    plan_jobs,
    run_fleet,
    to_json,
    tool_rows,
)
from mcpreel.replay.results import RequestResult
from tests.conftest import free_port

from .e2e_helpers import MCPREEL, PEERS, PY, SDK_SERVER, Background, mcpreel, record

ROOT = Path(__file__).resolve().parents[2]
NAP_SERVER = f"{PY} {PEERS / 'nap_server.py'}"


# -- no server: the summary per tool, what fails a run, JUnit ----------------------------------------


def _report(path: str, rows: list[tuple[str, str | None, str, float, float]]) -> ReplayReport:
    report = ReplayReport(path, "target", "stdio")
    for i, (method, tool, status, before, after) in enumerate(rows, 1):
        r = RequestResult(i, method, tool, status, {"method": method}, duration_ms=after, recorded_duration_ms=int(before))
        report.results.append(r)
    return report


def test_the_summary_per_tool_slower_and_flaky_fail_only_when_asked():
    same = _report("a.jsonl", [("tools/call", "echo", "same", 10, 12), ("tools/list", None, "same", 5, 5)])
    flaky = _report("b.jsonl", [("tools/call", "echo", "flaky", 10, 50), ("tools/call", "add", "same", 4, 4)])
    result = FleetResult([SessionOutcome(FleetJob(1, "a.jsonl", None, "session 1"), same),
                          SessionOutcome(FleetJob(2, "b.jsonl", None, "session 1"), flaky)], total=2)
    rows = {r.name: r for r in tool_rows(result)}
    assert sorted(rows) == ["add", "echo", "tools/list"]
    assert (rows["echo"].requests, rows["echo"].count("same"), rows["echo"].count("flaky")) == (2, 1, 1)
    assert (rows["echo"].p("before", 95), rows["echo"].p("after", 95), rows["echo"].p("after", 50)) == (10, 50, 12)
    assert rows["echo"].slower(2.0) and not rows["add"].slower(2.0)
    assert exit_code(result) == 0
    assert exit_code(result, FailOn.parse(["flaky"])) == 1
    assert exit_code(result, FailOn.parse(["slower:2.0"])) == 1
    assert exit_code(result, FailOn.parse(["slower:6"])) == 0
    doc = to_json(result, target="t", fail_on=FailOn.parse(["slower:2.0"]))
    assert doc["slower"] == ["echo"] and doc["summary"] == {"same": 1, "changed": 0, "flaky": 1, "error": 0}
    from mcpreel.errors import UsageError

    for bad in ("slower", "slower:x", "slower:0", "faster:2"):
        with pytest.raises(UsageError, match="--fail-on"):
            FailOn.parse([bad])
    # JUnit: a case per session; a flaky one passes and holds Surefire's flakyFailure
    from xml.etree import ElementTree as ET

    from mcpreel.render.fleet import junit

    root = ET.fromstring(junit(result, "fleet"))
    suite = root.find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "0"
    cases = suite.findall("testcase")
    assert [c.get("classname") for c in cases] == ["a.jsonl", "b.jsonl"]
    flaky_node = cases[1].find("flakyFailure")
    assert flaky_node is not None and flaky_node.get("type") == "flaky"
    assert flaky_node.find("stackTrace") is not None and "echo" in (flaky_node.find("stackTrace").text or "")
    assert cases[0].find("flakyFailure") is None and cases[1].find("failure") is None


def test_the_replays_table_answers_which_tools_became_flaky_since_last_week(tmp_path):
    """The docs' example query, run as written against a table with an old run and a new one."""
    from mcpreel.corpus.replays import append_rows
    from mcpreel.corpus.schema import RUN_TABLES
    from tests.docs.pages import topic

    readme = topic("corpus")  # the corpus schema page (`mcpreel help corpus`)
    block = readme[readme.index("<!-- replays-example-query"):readme.index("<!-- end replays-example-query -->")]
    sql = re.findall(r"```sql\n(.*?)```", block, flags=re.S)[0]
    now = int(time.time() * 1000)
    old, new = now - 10 * 86_400_000, now - 3_600_000

    def row(run, ms, tool, verdict):
        day = time.strftime("%Y-%m-%d", time.gmtime(ms / 1000))
        return (run, ms, "http://127.0.0.1:1/mcp", "recording", "/r/a.jsonl", 1, 3, "tools/call", tool, verdict,
                "[]", 4.0, 5.0, None, day)

    db = tmp_path / "c.duckdb"
    assert append_rows(db, [row("old", old, "echo", "same"), row("old", old, "add", "flaky")]) == 2
    append_rows(db, [row("new", new, "echo", "flaky"), row("new", new, "add", "flaky"), row("new", new, "sum", "same")])
    assert len(RUN_TABLES[0].columns) == len(row("x", now, "t", "same"))
    proc = mcpreel("query", "--db", str(db), sql, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert [r["tool"] for r in got] == ["echo"]  # add was flaky before; sum is not flaky
    # the index rebuilt for an older schema keeps the history
    import duckdb

    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    con.close()
    (tmp_path / "empty").mkdir()
    proc = mcpreel("index", str(tmp_path / "empty"), "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] != "0"  # rebuilt
    assert con.execute("SELECT count(*) FROM replays").fetchone()[0] == 5
    con.close()


# -- real peers ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """legacy.jsonl (handshake era), modern.jsonl (2026-07-28), merged.jsonl (both: two client sessions),
    notes.txt (no session)."""
    d = tmp_path_factory.mktemp("fleet")
    record(d / "legacy.jsonl", f"{SDK_SERVER} stdio")
    record(d / "modern.jsonl", f"{SDK_SERVER} stdio", era="auto")
    proc = mcpreel("merge", str(d / "legacy.jsonl"), str(d / "modern.jsonl"), "-o", str(d / "merged.jsonl"))
    assert proc.returncode == 0, proc.stderr
    (d / "notes.txt").write_text("not a session\n")
    return d


def _verdicts(results: list[dict]) -> list[tuple]:
    return [(r["method"], r["tool"], r["status"], sorted(d["path"] for d in r["diff"])) for r in results]


@pytest.mark.e2e
def test_a_folder_replayed_with_jobs_gives_the_verdicts_of_each_file_alone(folder, tmp_path):
    target = f"{SDK_SERVER} stdio --changed"  # the new version: echo, add, fail and tools/list changed
    out = tmp_path / "fleet.json"
    proc = mcpreel("replay", str(folder), "--target-command", target, "--jobs", "2", "-o", str(out), timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "notes.txt" in proc.stderr and "no session mcpreel reads" in proc.stderr
    doc = json.loads(out.read_text())
    sessions = [(Path(s["file"]).name, s["session"]) for s in doc["sessions"]]
    assert sessions == [("legacy.jsonl", None), ("merged.jsonl", 1), ("merged.jsonl", 2), ("modern.jsonl", None)]
    assert doc["summary"]["changed"] == 4 and not doc["interrupted"]
    # stable order on the terminal too: a line per session, in the run's order
    lines = [line for line in proc.stdout.splitlines() if line.startswith(("changed ", "same ", "error "))]
    assert [line.split()[1].rstrip(":") for line in lines] == [str(folder / n) for n in
                                                   ("legacy.jsonl", "merged.jsonl", "merged.jsonl", "modern.jsonl")]
    fleet = {(Path(s["file"]).name, s["session"]): _verdicts(s["report"]["results"]) for s in doc["sessions"]}
    for name in ("legacy.jsonl", "merged.jsonl", "modern.jsonl"):
        alone_out = tmp_path / f"{name}.json"
        proc = mcpreel("replay", str(folder / name), "--target-command", target, "-o", str(alone_out), timeout=300)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        alone = json.loads(alone_out.read_text())["results"]
        if name == "merged.jsonl":
            for n in (1, 2):
                assert fleet[(name, n)] == _verdicts([r for r in alone if r["session"] == n]), name
        else:
            assert fleet[(name, None)] == _verdicts(alone), name
    assert any(v[2] == "changed" for v in fleet[("modern.jsonl", None)])


@pytest.fixture(scope="module")
def http_server():
    port = free_port()
    server = Background([PY, str(SDK_SERVER.split()[-1]), "streamable-http", str(port)], port=port, timeout=120)
    yield f"http://127.0.0.1:{port}/mcp"
    server.stop()


@pytest.mark.e2e
def test_documents_the_replays_table_db_selection_and_the_fleet_page_over_http(folder, http_server, tmp_path):
    out, junit, html, db = tmp_path / "f.json", tmp_path / "f.xml", tmp_path / "fleet.html", tmp_path / "c.duckdb"
    proc = mcpreel("replay", str(folder / "legacy.jsonl"), str(folder / "modern.jsonl"), str(folder / "merged.jsonl"),
                   "--target-url", http_server, "-j", "2", "-o", str(out), "--junit", str(junit), "--html", str(html),
                   "--db", str(db), timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 of 4 client sessions replayed" in proc.stdout and "per tool" in proc.stdout
    doc = json.loads(out.read_text())
    assert [s["verdict"] for s in doc["sessions"]] == ["same"] * 4
    requests = sum(s["report"]["summary"]["requests"] for s in doc["sessions"])
    assert {t["tool"] for t in doc["tools"]} >= {"echo", "add", "fail", "tools/list", "initialize", "server/discover"}
    xml = junit.read_text()
    assert xml.count("<testcase ") == 4 and 'failures="0"' in xml
    page = html.read_text()
    assert "Content-Security-Policy" in page and "<script" not in page
    for n in range(1, 5):
        own = tmp_path / "fleet.sessions" / f"{n:04d}.html"
        assert f'href="fleet.sessions/{n:04d}.html"' in page and own.is_file()
        assert (own.stat().st_mode & 0o777) == 0o600
    assert "replay of legacy.jsonl" in (tmp_path / "fleet.sessions" / "0001.html").read_text()
    q = mcpreel("query", "--db", str(db), "SELECT count(*) AS n, count(DISTINCT verdict) AS v, min(verdict) AS w, "
                "count(DISTINCT run_id) AS runs FROM replays", "--format", "json")
    assert json.loads(q.stdout) == [{"n": requests, "v": 1, "w": "same", "runs": 1}], q.stderr
    # --db selection: the index picks the sessions (the ones that called `ask`: handshake-era only)
    assert mcpreel("index", str(folder), "--db", str(db), timeout=300).returncode == 0
    sel = tmp_path / "sel.json"
    proc = mcpreel("replay", "--db", str(db), "--tool", "ask", "--target-url", http_server, "-o", str(sel), timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    picked = [(Path(s["file"]).name, s["session"]) for s in json.loads(sel.read_text())["sessions"]]
    assert picked == [("legacy.jsonl", None), ("merged.jsonl", 1)]
    q = mcpreel("query", "--db", str(db), "SELECT count(DISTINCT run_id) AS runs FROM replays", "--format", "json")
    assert json.loads(q.stdout) == [{"runs": 2}]
    corpus_page = tmp_path / "corpus.html"  # the corpus report shows the runs over time
    assert mcpreel("report", "--db", str(db), "-o", str(corpus_page)).returncode == 0
    runs = corpus_page.read_text().split('id="runs-table"')[1].split("</table>")[0]
    assert runs.count('<tr class="run') == 2
    bad = mcpreel("replay", str(folder), "--tool", "ask", "--target-url", http_server)
    assert bad.returncode == 2 and "give --db FILE without paths" in bad.stderr


def _plain(doc: dict) -> dict:
    """A fleet document without what differs from run to run (times)."""
    def walk(v):
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items() if k not in ("duration_ms", "seconds", "p50_after_ms",
                                                                  "p95_after_ms")}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v
    return walk(doc)


@pytest.mark.e2e
def test_ray_and_the_local_pool_agree(folder, http_server):
    files = [str(folder / n) for n in ("legacy.jsonl", "merged.jsonl", "modern.jsonl")]
    jobs = plan_jobs(files)
    spec = FleetSpec(ReplayTarget(url=http_server), ReplayOptions(timeout=60))
    local = run_fleet(jobs, spec, FleetRun("local", 2))
    threads = run_fleet(jobs, spec, FleetRun("local", 2, pool="threads"))
    assert _plain(to_json(threads, target=http_server)) == _plain(to_json(local, target=http_server))
    pytest.importorskip("ray")
    ray = run_fleet(jobs, spec, FleetRun("ray", 2))
    assert [o.verdict for o in ray.outcomes] == [o.verdict for o in local.outcomes] == ["same"] * 4
    assert [o.error for o in ray.outcomes] == [None] * 4
    assert _plain(to_json(ray, target=http_server)) == _plain(to_json(local, target=http_server))


def _reel(path: Path, calls: list[tuple[str, dict]]) -> None:
    """A handshake-era reel: initialize, then the calls (answers as a server would give them)."""
    t = "2026-11-01T00:00:00.000Z"
    lines = [{"v": 1, "type": "meta", "startedAt": t, "label": "nap", "command": []},
             {"t": t, "dir": "in", "raw": {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                 "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}},
             {"t": t, "dir": "out", "raw": {"jsonrpc": "2.0", "id": 0, "result": {
                 "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                 "serverInfo": {"name": "nap-peer", "version": "1"}}}},
             {"t": t, "dir": "in", "raw": {"jsonrpc": "2.0", "method": "notifications/initialized"}}]
    for i, (name, args) in enumerate(calls, 1):
        lines.append({"t": t, "dir": "in", "raw": {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                                   "params": {"name": name, "arguments": args}}})
        lines.append({"t": t, "dir": "out", "raw": {"jsonrpc": "2.0", "id": i, "result": {
            "content": [{"type": "text", "text": "rested" if name == "nap" else args.get("text", "")}]}}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def _servers_with(tag: str, but: int) -> list[int]:
    """The processes whose command line holds ``tag`` (the servers), but ``but`` (mcpreel, which names them)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != but:
            try:
                if tag.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


@pytest.mark.e2e
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="counts servers through /proc")
def test_ctrl_c_stops_every_job_and_server_and_still_writes_what_is_done(tmp_path):
    d = tmp_path / "recs"
    d.mkdir()
    _reel(d / "a_quick.jsonl", [("echo", {"text": "hi"})])
    for n in range(3):
        _reel(d / f"b_long{n}.jsonl", [("nap", {"seconds": 900})])
    tag = f"fleet-{uuid.uuid4().hex[:8]}"
    out, junit = tmp_path / "out.json", tmp_path / "j.xml"
    argv = [*MCPREEL, "replay", str(d), "--target-command", f"{NAP_SERVER} stdio --tag {tag}", "--jobs", "4",
            "--timeout", "1200", "-o", str(out), "--junit", str(junit)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 300
        seen = []
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, f"ended early: {seen} {proc.stderr.read() if proc.stderr else ''}"
            seen.append(line)
            if "a_quick.jsonl" in line:
                break
        while time.monotonic() < deadline and len(_servers_with(tag, proc.pid)) < 3:
            time.sleep(0.2)  # the three long sessions' servers are up (each job its own)
        assert len(_servers_with(tag, proc.pid)) >= 3
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    doc = json.loads(out.read_text())
    assert doc["interrupted"] and doc["sessions_planned"] == 4 and doc["sessions_done"] == 1
    assert Path(doc["sessions"][0]["file"]).name == "a_quick.jsonl"
    assert junit.read_text().count("<testcase ") == 1
    assert "interrupted: 3 not replayed" in rest
    deadline = time.monotonic() + 30
    while _servers_with(tag, proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _servers_with(tag, proc.pid) == []


def test_no_recordings_is_a_usage_error(tmp_path):
    proc = mcpreel("replay", "--target-url", "http://127.0.0.1:1/mcp")
    assert proc.returncode == 2 and "files, folders, or --db FILE" in proc.stderr
    (tmp_path / "x.txt").write_text("nothing\n")
    proc = mcpreel("replay", str(tmp_path), "--target-url", "http://127.0.0.1:1/mcp")
    assert proc.returncode == 2 and "no client session" in proc.stderr, proc.stderr


def test_the_replay_options_travel_to_workers_whole(tmp_path):
    """Jobs run in worker processes and Ray workers: the options (ignore paths with wildcards and descent,
    rules with masks) must arrive meaning what they meant."""
    import pickle

    from mcpreel.compare.normalize import IgnorePath, comparable
    from mcpreel.compare.rules import load_compare_rules

    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": [{"path": "$.result.content[0].text", "tool": "now", "mask": r"\d+"}]}))
    options = ReplayOptions(ignore_paths=[IgnorePath("$.result.items[*].id"), IgnorePath("$..createdAt")],
                            rules=load_compare_rules(rules))
    again = pickle.loads(pickle.dumps(FleetSpec(ReplayTarget(url="http://127.0.0.1:1/mcp"), options)))
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"items": [{"id": 1, "n": 2}], "meta": {"createdAt": "x"}}}
    assert comparable(answer, again.options.ignore_paths) == comparable(answer, options.ignore_paths)
    assert comparable(answer, again.options.ignore_paths) == {"result": {"items": [{"n": 2}], "meta": {}}}
    assert repr(again.options.rules) == repr(options.rules)
