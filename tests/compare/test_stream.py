"""``diff`` as a stream: calls paired in step within a bounded window, only differences printed, flat memory."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.compare import DiffOptions, diff_files, diff_files_stream
from mcpreel.compare.stream import SideFacts, iter_calls
from mcpreel.formats import open_session
from mcpreel.render.junit import Case, JunitSpool, junit_xml

_T = "2026-01-01T00:00:00.000Z"


def reel(path: Path, calls: list[tuple[str, str]], *, tools: list[str] | None = None, start: int = 0,
         unanswered: set[int] = frozenset()) -> str:
    """A reel: an optional tools/list, then one tools/call per (tool, answer text), answered in order."""
    lines: list[dict] = [{"v": 1, "type": "meta", "startedAt": _T, "label": "t", "command": []}]
    if tools is not None:
        lines.append({"t": _T, "dir": "in", "raw": {"jsonrpc": "2.0", "id": "l", "method": "tools/list"}})
        lines.append({"t": _T, "dir": "out", "raw": {"jsonrpc": "2.0", "id": "l", "result": {
            "tools": [{"name": n, "inputSchema": {"type": "object"}} for n in tools]}}})
    for i, (tool, text) in enumerate(calls, start):
        lines.append({"t": _T, "dir": "in", "raw": {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                                     "params": {"name": tool, "arguments": {}}}})
        if i not in unanswered:
            lines.append({"t": _T, "dir": "out", "raw": {"jsonrpc": "2.0", "id": i, "result": {
                "content": [{"type": "text", "text": text}]}}})
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return str(path)


def kinds(result) -> list[tuple[str, int, str]]:
    return sorted((c.subject, c.ordinal, c.kind) for c in result.calls)


def test_calls_are_paired_by_group_and_order_whatever_the_interleaving(tmp_path):
    a = reel(tmp_path / "a.jsonl", [("x", "1"), ("y", "1"), ("x", "2"), ("y", "2")])
    b = reel(tmp_path / "b.jsonl", [("y", "1"), ("y", "2"), ("x", "1"), ("x", "changed"), ("x", "3")])
    result = diff_files(a, b)
    assert kinds(result) == [("x", 1, "same"), ("x", 2, "changed"), ("x", 3, "added"), ("y", 1, "same"),
                             ("y", 2, "same")]
    assert result.summary() == ("2 differences: server 0, tools 0; 3 calls the same, 1 changed, 1 added, 0 removed")


def test_past_the_window_a_call_is_given_up_and_its_counterpart_stays_alone(tmp_path):
    """Three x calls in A against three y calls then three x calls in B: with a window of 2 the first x
    calls of A wait longer than the bound, so they are reported as removed and their counterparts in B,
    when they come, as added; x #3 was still waiting and pairs. With room, every x pairs."""
    a = reel(tmp_path / "a.jsonl", [("x", "1"), ("x", "2"), ("x", "3")])
    b = reel(tmp_path / "b.jsonl", [("y", "1"), ("y", "2"), ("y", "3"), ("x", "1"), ("x", "2"), ("x", "3")])
    roomy = diff_files(a, b)
    assert [k for k in kinds(roomy) if k[0] == "x"] == [("x", 1, "same"), ("x", 2, "same"), ("x", 3, "same")]
    tight = diff_files(a, b, options=DiffOptions(window=2))
    assert kinds(tight) == [("x", 1, "added"), ("x", 1, "removed"), ("x", 2, "added"), ("x", 2, "removed"),
                            ("x", 3, "same"), ("y", 1, "added"), ("y", 2, "added"), ("y", 3, "added")]


def test_unanswered_requests_past_the_window_come_out_as_no_response(tmp_path):
    a = reel(tmp_path / "a.jsonl", [("x", "1"), ("x", "2"), ("x", "3")], unanswered={0})
    session, _ = open_session(a)
    calls = list(iter_calls(session, SideFacts(), window=2))
    assert [(c.position, c.response is not None) for c in calls] == [(0, False), (1, True), (2, True)]


def test_tools_and_server_are_folded_from_the_stream(tmp_path):
    a = reel(tmp_path / "a.jsonl", [("x", "1")], tools=["x", "old"])
    b = reel(tmp_path / "b.jsonl", [("x", "1")], tools=["x", "new"])
    stream = diff_files_stream(a, b)
    calls = list(stream)
    assert [c.kind for c in calls] == ["same"]
    assert sorted((t.name, t.kind) for t in stream.result.tools) == [("new", "added"), ("old", "removed")]
    assert stream.result.exit_code == 1


def test_the_cli_prints_only_what_differs_and_a_summary_and_all_with_all(tmp_path):
    calls = [(f"t{i % 3}", str(i)) for i in range(30)]
    a = reel(tmp_path / "a.jsonl", calls)
    b = reel(tmp_path / "b.jsonl", calls[:10] + [("t1", "other")] + calls[11:])
    r = CliRunner().invoke(cli, ["diff", a, b], catch_exceptions=False)
    assert r.exit_code == 1
    rows = [ln for ln in r.output.splitlines() if ln.startswith("  ") and " #" in ln and "ms " in ln]
    assert rows == [next(ln for ln in rows if "tools/call t1 #4  changed" in ln)]
    assert "$.result.content[0].text" in r.output
    assert r.output.strip().splitlines()[-1] == (
        "1 differences: server 0, tools 0; 29 calls the same, 1 changed, 0 added, 0 removed")
    r = CliRunner().invoke(cli, ["diff", a, b, "--all"], catch_exceptions=False)
    rows = [ln for ln in r.output.splitlines() if ln.startswith("  ") and " #" in ln and "ms " in ln]
    assert len(rows) == 30 and sum("  same  " in ln for ln in rows) == 29
    same = CliRunner().invoke(cli, ["diff", a, a], catch_exceptions=False)
    assert same.exit_code == 0 and "tools/call" not in same.output
    assert "0 differences: server 0, tools 0; 30 calls the same, 0 changed, 0 added, 0 removed" in same.output


def test_json_and_junit_are_whole_documents_with_every_call(tmp_path):
    calls = [(f"t{i % 3}", str(i)) for i in range(12)]
    a = reel(tmp_path / "a.jsonl", calls)
    b = reel(tmp_path / "b.jsonl", calls[:-1])
    junit = tmp_path / "d.xml"
    r = CliRunner().invoke(cli, ["diff", a, b, "--json", "--junit", str(junit)], catch_exceptions=False)
    assert r.exit_code == 1
    doc = json.loads(r.output)
    assert len(doc["calls"]) == 12 and [c["kind"] for c in doc["calls"]].count("removed") == 1
    assert doc["differences"] == 1 and doc["ok"] is False and doc["a"] == a and doc["tool_classes"] == []
    assert doc["summary"].startswith("1 differences")
    assert junit.read_text() == junit_xml(f"mcpreel diff {a} {b}", _cases(diff_files(a, b)))
    assert (junit.stat().st_mode & 0o777) == 0o600


def _cases(result) -> list[Case]:
    from mcpreel.render.diff import head_cases, junit_case

    return head_cases(result) + [junit_case(c, False) for c in result.calls]


def test_the_junit_spool_writes_what_junit_xml_writes():
    cases = [Case("pass", "c", 0.5), Case('fail <&"', "c", 0.25, failure="2 differences", details="a\nb"),
             Case("e", "c", None, error="no answer"), Case("s", "c", skipped="why")]
    for some in (cases, []):
        spool = JunitSpool()
        for case in some:
            spool.add(case)
        out = io.BytesIO()
        spool.write(out, 'suite "x"')
        assert out.getvalue().decode() == junit_xml('suite "x"', some)


#: runs the CLI and says its own peak RSS (VmHWM belongs to the process's memory map, so unlike
#: ru_maxrss it does not inherit the high-water mark of the test process it was forked from)
_PEAK = """
import runpy, sys
sys.argv = ["mcpreel", *sys.argv[1:]]
try:
    runpy.run_module("mcpreel", run_name="__main__")
finally:
    hwm = next(ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:"))
    sys.stderr.write("PEAK " + hwm.split()[1] + "\\n")
"""


def _peak_rss_mb(args: list[str]) -> float:
    proc = subprocess.run([sys.executable, "-c", _PEAK, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, env=os.environ, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return int(proc.stderr.rsplit("PEAK ", 1)[1]) / 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_diff_memory_is_flat_from_10k_to_100k_messages(tmp_path):
    peaks = []
    for n in (5_000, 50_000):  # calls: 10k and 100k messages a side (ten times more must not cost more memory)
        calls = [(f"tool_{i % 17}", f'{{"n": {i}, "payload": "{"x" * 40}"}}') for i in range(n)]
        a = reel(tmp_path / f"a{n}.jsonl", calls)
        b = reel(tmp_path / f"b{n}.jsonl", [(t, "changed" if i % 997 == 5 else x) for i, (t, x) in enumerate(calls)])
        peaks.append(_peak_rss_mb(["diff", a, b]))
    assert peaks[1] <= 1.3 * peaks[0], peaks
