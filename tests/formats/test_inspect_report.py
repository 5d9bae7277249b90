"""inspect as data (rows + summary) and as text (plain when piped, rich on a terminal)."""

from __future__ import annotations

import io
import json

from rich.console import Console

from mcpreel.inspection import analyze, percentile
from mcpreel.model import Kind, Message
from mcpreel.render.inspect import plain_lines, renderables, row_text

from .support import fixture, note, read, req, resp, session_of


def _session():
    return session_of(
        req("in", 1, "initialize", 1000),
        resp("out", 1, {"protocolVersion": "2025-11-25"}, 1012),
        note("in", "notifications/initialized", 1013),
        req("in", 2, "tools/call", 1020, name="echo", arguments={"text": "hi"}),
        req("out", 2, "sampling/createMessage", 1021),  # the server's own id 2
        resp("in", 2, {"role": "assistant"}, 1022),  # the client's answer to sampling
        resp("out", 2, {"content": [{"type": "text", "text": "bad"}], "isError": True}, 1040),
        Message("in", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {}}},
                1050, modified=True, original={"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                               "params": {"name": "echo", "arguments": {"x": 1}}}),
        resp("out", 3, t=1150, error={"code": -32602, "message": "bad params"}),
        req("in", 4, "tools/call", 1200, name="slow", arguments={}),
        Message("in", {"jsonrpc": "2.0", "id": 5, "method": "ping"}, 1201, dropped=True),
        resp("out", 9, t=1300),
        Message(None, None, 1301, kind=Kind.STDERR, text="Traceback (most recent call last)"),
        Message("out", None, 1302, kind=Kind.INVALID, text="{not json"),
        Message("out", None, 1303, kind=Kind.TRANSPORT, ctx={"status": 401, "headers": {"WWW-Authenticate": "Bearer scope=x"}}),
        command=["python", "server.py"], id="s-1", started=1000,
    )


def test_rows_and_summary():
    report = analyze(_session())
    rows = report.rows
    assert [r.label for r in rows[:4]] == ["initialize", "(response)", "notifications/initialized", "tools/call"]
    assert rows[1].corr == 0 and rows[1].latency_ms == 12
    assert rows[3].tool == "echo"
    assert rows[5].corr == 4 and rows[5].dir == "in"  # the client's answer pairs with the server's request
    assert rows[6].corr == 3 and rows[6].is_error and rows[6].latency_ms == 20
    assert rows[7].modified and rows[8].error == {"code": -32602, "message": "bad params"}
    assert rows[9].unanswered and rows[10].dropped and not rows[10].unanswered
    assert rows[11].orphan
    assert (rows[12].kind, rows[13].kind, rows[14].kind) == ("stderr", "invalid", "transport")
    s = report.summary
    assert s.unanswered == [9] and s.orphans == [11]
    assert [(e.kind, e.row) for e in s.errors] == [("isError", 6), ("jsonrpc", 8)]
    assert s.tools["echo"].calls == 2 and s.tools["echo"].is_errors == 1 and s.tools["echo"].errors == 1
    assert s.tools["slow"].unanswered == 1
    assert s.tools["echo"].p50_ms == 20 and s.tools["echo"].p95_ms == 100
    assert s.latency["tools/call"].count == 2 and s.latency["tools/call"].max_ms == 100
    assert (s.stderr, s.invalid, s.transport, s.modified, s.dropped) == (1, 1, 1, 1, 1)
    assert report.header.messages == 12 and report.header.command == ["python", "server.py"]


def test_row_text_reads_like_qai():
    rows = analyze(_session()).rows
    assert row_text(rows[0]) == "#000 > initialize id=1"
    assert row_text(rows[1]) == "#001 < (response) id=1 corr=#000 12ms"
    assert row_text(rows[3]) == "#003 > tools/call id=2 echo"
    assert row_text(rows[6]) == "#006 < (response) id=2 corr=#003 20ms [isError]"
    assert row_text(rows[7]) == "#007 > tools/call id=3 echo [MODIFIED]"
    assert row_text(rows[8]) == "#008 < (response) id=3 corr=#007 100ms [ERROR -32602 bad params]"
    assert row_text(rows[9]) == "#009 > tools/call id=4 slow [UNANSWERED]"
    assert row_text(rows[10]) == "#010 > ping id=5 [DROPPED]"
    assert row_text(rows[11]) == "#011 < (response) id=9 [ORPHAN]"
    assert row_text(rows[12]) == "#012 ! stderr: Traceback (most recent call last)"
    assert row_text(rows[13]) == "#013 < [INVALID] {not json"
    assert row_text(rows[14]) == "#014 < (transport) HTTP 401 WWW-Authenticate: Bearer scope=x"


def test_plain_output_and_verbose_payloads():
    report = analyze(_session(), payloads=True)
    text = "\n".join(plain_lines(report, verbose=True))
    assert text.startswith("Session:        s-1\nTransport:      stdio\nServer command: python server.py\n")
    assert "Messages:       12 (and 1 stderr line, 1 invalid frame, 1 transport event)" in text
    assert '"text": "hi"' in text and "original (before the edit):" in text and '"x": 1' in text
    assert "\x1b[" not in text and "─" not in text  # plain: no colour, no box drawing
    summary = text[text.index("Summary:"):]
    assert "Summary: 12 messages (7 c2s >, 5 s2c <), 6 requests, 5 responses, 1 notification, 1 modified, 1 dropped, " \
           "5 operations, 2 errors, 1 unanswered, 1 orphan" in summary
    assert "  echo  2      1       1        0           20ms  100ms" in summary
    assert "#006 tools/call echo id=2: isError: bad" in summary
    assert "#008 tools/call echo id=3: JSON-RPC error -32602 bad params" in summary
    short = "\n".join(plain_lines(report, rows=False))
    assert "#000 >" not in short.split("Summary:")[0] and "Unanswered:" in short


def test_verbose_payload_lines_split_where_splitlines_splits():
    # a payload's indented JSON keeps U+2028 and U+0085 unescaped: splitlines breaks the line there, and
    # each piece is padded like any payload line (one padded block for the rest)
    edited = {"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"a": "x\u2028y", "b": "p\x85q"}}
    report = analyze(session_of(req("in", 1, "tools/call", 1000, name="t", arguments={"s": "one\u2028two"}),
                                Message("in", {"jsonrpc": "2.0", "id": 2, "method": "ping"}, 1001, modified=True,
                                        original=edited)), payloads=True)
    lines = "\n".join(plain_lines(report, verbose=True)).split("\n")
    at = lines.index('            "s": "one')
    assert lines[at - 1:at + 3] == ['          "arguments": {', '            "s": "one', '      two"', '          }']
    at = lines.index('            "a": "x')
    assert lines[at:at + 5] == ['            "a": "x', '        y",', '            "b": "p', '        q"', '          }']


def test_rich_output_renders_the_same_facts():
    console = Console(file=io.StringIO(), width=120, force_terminal=True, color_system="truecolor")
    for item in renderables(analyze(_session(), payloads=True), verbose=True):
        console.print(item)
    out = console.file.getvalue()
    assert "\x1b[" in out
    plain = Console(file=io.StringIO(), width=120)
    for item in renderables(analyze(_session(), payloads=True), verbose=True):
        plain.print(item)
    text = plain.file.getvalue()
    for needle in ("#009 > tools/call id=4 slow [UNANSWERED]", "Tools", "Latency per method", "[MODIFIED]", "original"):
        assert needle in text


def test_json_document():
    doc = analyze(_session(), payloads=True).to_dict()
    json.dumps(doc)  # plain JSON types
    assert doc["session"]["id"] == "s-1"
    assert doc["rows"][7]["original"]["params"]["arguments"] == {"x": 1}
    assert "original" not in doc["rows"][0]
    assert doc["summary"]["unanswered"] == [9]
    assert "payload" not in analyze(_session()).to_dict(payloads=False)["rows"][0]


def test_percentile_nearest_rank():
    assert percentile([5], 50) == 5
    assert percentile([1, 2, 3, 4], 50) == 2
    assert percentile(list(range(1, 101)), 95) == 95


def test_batches_and_merged_files_correlate_per_member_and_per_file():
    s = session_of(
        Message("in", [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "ping"}], 1,
                extra={"file": "a"}),
        Message("in", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, 2, extra={"file": "b"}),
        Message("out", [{"jsonrpc": "2.0", "id": 2, "result": {}}, {"jsonrpc": "2.0", "id": 1, "result": {}}], 3,
                extra={"file": "a"}),
        Message("out", {"jsonrpc": "2.0", "id": 1, "result": {}}, 4, extra={"file": "b"}),
    )
    report = analyze(s)
    assert row_text(report.rows[0]) == "#000 > [a] (batch of 2)"
    assert report.rows[2].corr == 0 and report.rows[3].corr == 1
    assert report.summary.unanswered == [] and report.summary.orphans == [] and report.summary.batches == 2


def test_fixture_agent_file_says_it_holds_no_mcp():
    report = analyze(read(fixture("mcp-replay-v1/mcp-deepwiki-com-2026-08-20T17-10-35-825Z.agent.jsonl")))
    assert report.header.messages == 0
    assert any("holds no MCP messages" in n for n in report.header.notes)
    assert {r.kind for r in report.rows} == {"event"}


def test_fixture_unanswered_calls_of_a_real_session():
    report = analyze(read(fixture("mcp-replay-v1/knowledge-mcp-global-api-aws-2026-08-19T21-18-31-987Z.mcp.jsonl")))
    unanswered = [report.rows[i] for i in report.summary.unanswered]
    assert sum(1 for r in unanswered if r.label == "tools/call") == 37


def test_names_in_the_tables_are_shown_as_they_are_never_as_markup():
    # tool and method names come from the peers: "[/]" once crashed rich, "[bold red]x" lost its brackets
    session = session_of(req("in", 1, "tools/call", 100, name="[/]", arguments={}), resp("out", 1, t=105),
                         req("in", 2, "tools/call", 110, name="[bold red]x", arguments={}), resp("out", 2, t=112),
                         req("in", 3, "[italic]odd/method", 120), resp("out", 3, t=121))
    console = Console(file=io.StringIO(), width=120, force_terminal=True)
    for item in renderables(analyze(session)):
        console.print(item)
    plain = Console(file=io.StringIO(), width=120)
    for item in renderables(analyze(session)):
        plain.print(item)
    text = plain.file.getvalue()
    assert "[/]" in text and "[bold red]x" in text and "[italic]odd/method" in text
