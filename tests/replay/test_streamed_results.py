"""Replay results streamed: handed out in request order as judged, printed only when not the same (``--all``:
every row), and written to ``--output``/``--junit`` from spools that give the same documents."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from mcpreel.replay.results import ReplayReport, RequestResult
from tests.replay.e2e_helpers import SDK_SERVER, mcpreel, record

CHANGED = f"{SDK_SERVER} --changed"


def _result(status: str) -> RequestResult:
    return RequestResult(0, "tools/call", "echo", status, {"jsonrpc": "2.0", "id": 1, "method": "tools/call"})


def test_a_sink_gets_results_in_request_order_as_soon_as_those_before_are_judged():
    got: list[tuple[int, str]] = []
    report = ReplayReport("s.jsonl", "server", "stdio", sink=lambda r: got.append((r.index, r.status)),
                          first_index=4, session_index=2)
    first, second, third = _result("error"), _result("error"), _result("error")
    for r in (first, second, third):
        report.add(r)
    assert [r.index for r in (first, second, third)] == [4, 5, 6] and first.session == 2
    second.status = "changed"
    report.judged(second)
    assert got == []  # #4 is not judged yet: #5 waits for it
    first.status = "same"
    report.judged(first)
    assert got == [(4, "same"), (5, "changed")]
    report.flush()  # the run stopped before #6 was judged: it goes out as it stands, and is counted
    assert got[-1] == (6, "error") and report.results == []
    assert (report.count("same"), report.count("changed"), report.count("error"), report.requests) == (1, 1, 1, 3)
    assert report.summary() == "3 requests replayed: 1 same, 1 changed, 1 error" and report.exit_code == 1


def test_without_a_sink_the_report_keeps_every_result_as_before():
    report = ReplayReport("s.jsonl", "server", "stdio")
    r = _result("same")
    report.add(r)
    report.judged(r)
    assert report.results == [r] and r.index == 1 and report.count("same") == 1 and report.ok


def _rows(stdout: str) -> list[str]:
    return [ln for ln in stdout.splitlines() if ln.startswith("  #")]


@pytest.mark.e2e
@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_the_table_shows_what_is_not_the_same_all_shows_every_row_and_the_documents_hold_every_result(tmp_path, era):
    out = tmp_path / "s.jsonl"
    got = record(out, SDK_SERVER, era=era)
    assert got["protocol"] == ("2026-07-28" if era == "auto" else "2025-11-25")
    same = mcpreel("replay", str(out), "--target-command", SDK_SERVER, "--timeout", "10")
    assert same.returncode == 0 and _rows(same.stdout) == [], same.stdout
    assert "5 requests replayed: 5 same, 0 changed" in same.stdout

    doc_path, junit_path = tmp_path / "r.json", tmp_path / "r.xml"
    changed = mcpreel("replay", str(out), "--target-command", CHANGED, "--timeout", "10", "--output", str(doc_path),
                      "--junit", str(junit_path))
    assert changed.returncode == 1, changed.stdout + changed.stderr
    rows = _rows(changed.stdout)
    # the changed server lists one tool more and answers echo, add and fail otherwise; only the handshake is the same
    assert len(rows) == 4 and all("changed" in row.split() for row in rows), changed.stdout
    assert {" ".join(row.split()[1:3]) for row in rows} == {"tools/list changed", "tools/call echo",
                                                            "tools/call add", "tools/call fail"}
    assert '$.result.content[0].text: "hello" -> "HELLO"' in changed.stdout

    doc = json.loads(doc_path.read_text())
    assert [r["index"] for r in doc["results"]] == [1, 2, 3, 4, 5]
    assert doc["summary"]["requests"] == 5 and doc["summary"]["changed"] == 4 and doc["ok"] is False
    assert [r["index"] for r in doc["results"] if r["status"] == "same"] == [1]  # the handshake
    suite = ET.parse(junit_path).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "5" and suite.get("failures") == "4"
    assert len(suite.findall("testcase")) == 5
    assert (doc_path.stat().st_mode & 0o777) == 0o600 and (junit_path.stat().st_mode & 0o777) == 0o600

    every = mcpreel("replay", str(out), "--target-command", CHANGED, "--timeout", "10", "--all")
    rows = _rows(every.stdout)
    assert every.returncode == 1 and len(rows) == 5
    assert [row.split()[0] for row in rows] == ["#1", "#2", "#3", "#4", "#5"]
    # by words, not by padding: the table's columns narrow with the terminal's width
    assert sum("same" in row.split() for row in rows) == 1, every.stdout


def test_the_output_spool_writes_the_document_to_json_writes():
    import io

    from mcpreel.compare.jsondiff import Difference
    from mcpreel.render.replay import JsonSpool, to_json

    spool = JsonSpool()
    streamed = ReplayReport("s.jsonl", "server", "stdio", sink=spool.add)
    kept = ReplayReport("s.jsonl", "server", "stdio")
    for report in (kept, streamed):
        for status in ("same", "changed", "unrecorded"):
            r = _result(status)
            r.diff = [Difference("$.result.x", "changed", 1, 2)] if status == "changed" else []
            report.add(r)
            report.judged(r)
    out = io.BytesIO()
    spool.write(out, streamed)
    spool.close()
    assert json.loads(out.getvalue()) == json.loads(to_json(kept))
    assert out.getvalue().decode() == to_json(kept)
