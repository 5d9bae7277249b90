"""``mcpreel demo-server`` and ``mcpreel demo`` as a user runs them."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time

import pytest

from mcpreel.check import CheckOptions, run_check
from mcpreel.formats import open_session

MCPREEL = [sys.executable, "-m", "mcpreel"]


def test_demo_server_over_http_says_where_it_listens():
    proc = subprocess.Popen([*MCPREEL, "demo-server", "--transport", "streamable-http", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        m = re.fullmatch(r"mcpreel demo server \(streamable-http\) on (http://127\.0\.0\.1:\d+/mcp)\n", line)
        assert m, line
        deadline = time.monotonic() + 10
        report = None
        while time.monotonic() < deadline:
            try:
                report = run_check(m.group(1), options=CheckOptions(no_call=True))
                break
            except Exception:
                time.sleep(0.05)
        assert report is not None and report.exit_code == 0
    finally:
        proc.terminate()
        assert proc.wait(10) is not None


def test_demo_server_port_taken():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        p = subprocess.run([*MCPREEL, "demo-server", "--transport", "sse", "--port", str(port)],
                           capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert p.stderr.strip() == (f"error: cannot listen on 127.0.0.1:{port}: Address already in use (another program "
                                "has it: give --listen 127.0.0.1:0 to take a free port)")


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "demo-output"
    start = time.monotonic()
    p = subprocess.run([*MCPREEL, "demo", "--out", str(out), "--tag", "run=demo-test"], capture_output=True, text=True,
                       timeout=120,
                       env={**os.environ, "COLUMNS": "120"})
    return p, out, time.monotonic() - start


def test_demo_runs_in_well_under_a_minute(demo_run):
    p, out, seconds = demo_run
    assert p.returncode == 0, p.stdout + p.stderr
    assert seconds < 45
    assert p.stderr == ""


def test_demo_leaves_every_file_private(demo_run):
    _, out, _ = demo_run
    names = sorted(f.name for f in out.iterdir())
    assert names == ["check-report.json", "check-report.txt", "report.html", "session-http.reel.jsonl",
                     "session.http.json", "session.qai.json", "session.reel.jsonl", "session.trace.jsonl"]
    for f in out.iterdir():
        assert f.stat().st_mode & 0o777 == 0o600, f


def test_the_reel_is_the_proxy_recording_of_a_real_session(demo_run):
    _, out, _ = demo_run
    session, _ = open_session(out / "session.reel.jsonl")
    assert session.info.transport == "stdio"
    assert session.info.command[-2:] == ["mcpreel", "demo-server"]
    methods = [m.method for m in session if m.method]
    assert methods[:2] == ["initialize", "notifications/initialized"]
    assert methods.count("tools/call") == 5
    assert methods.count("notifications/progress") == 3
    assert "sampling/createMessage" in methods
    # qai and the envelope read back to the same conversation
    qai, _ = open_session(out / "session.qai.json")
    assert [m.raw for m in qai] == [m.raw for m in session if m.kind == "message"]
    http, _ = open_session(out / "session.http.json")
    assert http.info.transport == "streamable-http"
    assert [m.method for m in http if m.method].count("tools/call") == 5


def test_the_tags_reach_both_recordings_and_the_session_file(demo_run):
    """``demo --tag``: the stdio recording (``record --tag``), the HTTP one (the library entry point) and the
    qai file converted from the reel all carry it in their header."""
    _, out, _ = demo_run
    for reel in ("session.reel.jsonl", "session-http.reel.jsonl"):
        meta = json.loads((out / reel).read_bytes().splitlines()[0])
        assert meta["type"] == "meta" and meta["metadata"]["tags"] == {"run": "demo-test"}, reel
    assert json.loads((out / "session.qai.json").read_bytes())["metadata"]["tags"] == {"run": "demo-test"}


def test_the_trace_and_the_check_report(demo_run):
    _, out, _ = demo_run
    lines = [json.loads(x) for x in (out / "session.trace.jsonl").read_text().splitlines()]
    assert lines[0]["type"] == "episode_start" and lines[0]["episode_id"] == "mcpreel-demo"
    tools = [x["name"] for x in lines if x.get("type") == "step" and x.get("kind") == "tool"]
    assert {"echo", "lookup_customer", "divide", "countdown", "ask_llm"} <= set(tools)
    report = json.loads((out / "check-report.json").read_text())
    assert report["ok"] is True and report["profile"] == "strict-sse"
    assert report["counts"]["fail"] == 0 and report["counts"]["warn"] == 0
    assert (out / "check-report.txt").read_text().rstrip().endswith("OK (exit 0)")


def test_demo_prints_the_inspect_summary_and_the_files(demo_run):
    p, out, _ = demo_run
    assert "What the reel holds (mcpreel inspect --summary):" in p.stdout
    assert "Summary: " in p.stdout and "Tools" in p.stdout
    assert f"Files in {out}/:" in p.stdout
    for name in ("session.reel.jsonl", "session.qai.json", "session.http.json", "session.trace.jsonl",
                 "check-report.txt"):
        assert re.search(rf"^  {re.escape(name)} +\S", p.stdout, re.M), name
    assert "(not written)" not in p.stdout
    assert "check: 24 checks: 23 pass · 0 fail · 0 warn · 1 skip  ->  OK (exit 0)" in p.stdout


def test_demo_writes_the_report_and_ends_with_the_next_three_commands(demo_run):
    """``report.html`` is the reel's page (every call of it, redacted), and the output ends with three commands
    that each parse as the CLI reads them, the first two naming the demo's own recording."""
    import shlex

    import click

    from mcpreel.cli import cli
    from tests.report.test_page_policy import check_policy

    p, out, _ = demo_run
    page = (out / "report.html").read_text()
    check_policy(page)
    data = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S).group(1))
    assert data["calls_total"] == len(data["calls"]) >= 7  # initialize, tools/list and five tool calls
    ask = next(c for c in data["calls"] if c["target"] == "ask_llm")
    assert [ch["method"] for ch in ask["children"]] == ["sampling/createMessage"]
    assert "Secrets redacted" in page
    assert f"Open {out / 'report.html'} in a browser" in p.stdout
    tail = p.stdout.rstrip().splitlines()[-7:]
    assert tail[0] == "Next:" and all(line.startswith("  # ") for line in tail[1::2])
    commands = [shlex.split(line) for line in tail[2::2]]
    assert [c[:2] for c in commands] == [["mcpreel", "tui"], ["mcpreel", "replay"], ["mcpreel", "wrap"]]
    assert commands[0][2] == commands[1][2] == str(out / "session.reel.jsonl")
    for argv in commands:  # each is a command line the verb's parser accepts (parsed, not run)
        verb = cli.get_command(click.Context(cli), argv[1])
        assert verb is not None, argv
        with verb.make_context(argv[1], argv[2:]) as ctx:
            assert ctx.params, argv
