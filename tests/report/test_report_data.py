"""The report's data and page, without a browser: same figures as ``inspect``, bounded detail, escaping."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from mcpreel.errors import FormatError
from mcpreel.formats import open_session
from mcpreel.inspection import analyze
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.operations import operations
from mcpreel.report import ReportLimits, collect, render, write_report
from tests.conftest import FIXTURES, needs_shared

SESSION_FILES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".har"))


def c_errors(data) -> int:
    return data.counts["errors"] + data.counts["is_errors"]


def page_data(html: str) -> dict:
    """The JSON document the page's script reads."""
    m = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S)
    assert m, "no data block"
    return json.loads(m.group(1))


@needs_shared
@pytest.mark.parametrize("path", SESSION_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_readable_fixture_gives_the_figures_inspect_gives(path):
    try:
        session, _ = open_session(path)
        inspected = analyze(session)
    except FormatError as exc:
        pytest.skip(f"no reader takes this file: {exc}")
    data = collect(session)
    s = inspected.summary
    if all(len(op.exchanges) == 1 for op in operations(session)):
        # inspect counts calls, failures and latencies per operation, the report (still) per exchange:
        # they agree where every operation is one exchange (a multi-round-trip call or a task differs)
        assert data.tools == s.tools
        assert data.latency == s.latency
        assert c_errors(data) == len(s.errors)
    c = data.counts
    assert (c["records"], c["messages"], c["requests"], c["notifications"], c["responses"]) == (
        s.records, s.messages, s.requests, s.notifications, s.responses)
    assert (c["stderr"], c["invalid"], c["transport"], c["batches"]) == (s.stderr, s.invalid, s.transport, s.batches)
    assert c["unanswered"] == len(s.unanswered) and c["orphans"] == len(s.orphans)
    html = render(data)
    doc = page_data(html)
    assert len(doc["calls"]) == len(data.calls) == data.calls_total  # small files: every call in detail
    assert len(doc["timeline"]) >= min(c["records"], ReportLimits().timeline)
    for tool in data.tools:
        assert f'data-tool="{tool}"' in html or "&" in tool or "<" in tool or '"' in tool


def _call_session(n: int, *, latency, failed=lambda i: False, t0: int = 1_700_000_000_000) -> Session:
    """``n`` tools/call exchanges; call ``i`` takes ``latency(i)`` ms; ``failed(i)`` ones answer isError."""
    msgs: list[Message] = []
    t = t0
    for i in range(n):
        req = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
               "params": {"name": f"tool{i % 3}", "arguments": {"i": i}}}
        result = {"content": [{"type": "text", "text": f"r{i}"}]}
        if failed(i):
            result["isError"] = True
        msgs.append(Message("in", req, t=t))
        t += latency(i)
        msgs.append(Message("out", {"jsonrpc": "2.0", "id": i, "result": result}, t=t))
        t += 1
    return Session(SessionInfo(label="synthetic", transport="stdio"), msgs)


def test_a_big_session_keeps_the_first_the_slowest_and_the_failures_only():
    latency = lambda i: 1000 + i if i % 97 == 0 else i % 10  # noqa: E731  every 97th call is slow
    failed = lambda i: i % 50 == 7  # noqa: E731
    session = _call_session(3000, latency=latency, failed=failed)
    limits = ReportLimits(timeline=50, detail=10, max_errors=5)
    data = collect(session, limits)
    kept = {c["n"] for c in data.calls}
    first = set(range(10))
    slowest = set(sorted(range(3000), key=lambda i: (latency(i), i))[-10:])
    failures = [i for i in range(3000) if failed(i)]
    assert kept == first | slowest | set(failures[:5])
    assert data.failures_total == len(failures) and data.calls_total == 3000
    tags = {c["n"]: c["tags"] for c in data.calls}
    assert all("slowest" in tags[i] for i in slowest) and all("failed" in tags[i] for i in failures[:5])
    assert len(data.timeline) == 50 and data.timeline_omitted == 6000 - 50
    # the summary still counts everything
    assert sum(s.calls for s in data.tools.values()) == 3000
    assert sum(s.is_errors for s in data.tools.values()) == len(failures)
    assert data.latency["tools/call"].max_ms == max(latency(i) for i in range(3000))
    html = render(data)
    assert len(html) < 200_000
    assert f"{len(kept)} of 3,000 calls in detail" in html and "(the first 5 of 60)" in html


def test_a_streaming_session_is_read_once_and_never_held():
    """A reader's streaming session: the report iterates it once and keeps only bounded detail."""
    passes = []
    n = 60_000

    def factory():
        passes.append(1)
        for i in range(n):
            yield Message("in", {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "t", "arguments": {}}},
                          t=1_000_000 + 2 * i)
            yield Message("out", {"jsonrpc": "2.0", "id": i, "result": {"content": []}}, t=1_000_001 + 2 * i)

    session = Session.streaming(SessionInfo(label="stream"), factory)
    data = collect(session, ReportLimits(timeline=100, detail=20))
    assert passes == [1]
    assert data.counts["messages"] == 2 * n and len(data.calls) <= 40
    assert len(data.activity["c2s"]) <= 96 and sum(data.activity["c2s"]) == n
    assert len(render(data)) < 300_000


def test_session_text_cannot_break_out_of_the_page():
    evil = '</script><script>alert(1)</script><img src=x onerror=alert(2)>'
    msgs = [
        Message("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": evil, "arguments": {"x": evil}}}, t=1),
        Message("out", {"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": evil}}, t=2),
        Message(None, None, t=3, kind="stderr", text=evil),
    ]
    html = render(collect(Session(SessionInfo(label=evil, command=["srv", evil]), msgs)))
    assert html.count("<script") == 2  # the data block and the page's own script, nothing else
    assert "<img" not in html and "</script><script>alert" not in html
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in html  # the label, shown as text
    doc = page_data(html)
    assert doc["calls"][0]["target"] == evil and doc["calls"][0]["message"] == evil


def test_the_page_asks_for_nothing_over_the_network(recordings):
    html = render(collect(open_session(recordings["legacy"])[0]))
    assert "default-src 'none'" in html
    assert not re.search(r'\b(?:src|href)\s*=\s*["\']?(?:https?:)?//', html)
    assert "@import" not in html and "url(" not in html


def test_messages_are_cut_and_redacted_unless_asked_not_to():
    secret = "Bearer abcdefghijklmnopqrstuvwxyz0123456789"
    msgs = [Message("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "t", "arguments": {"auth": secret, "blob": "x" * 50_000}}}, t=1),
            Message("out", {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}, t=2)]
    session = Session(SessionInfo(), msgs)
    plain = collect(session, ReportLimits(payload_chars=1000), redact=False)
    request = plain.calls[0]["request"]
    assert secret in request and "more characters of" in request and len(request) < 1100
    redacted = collect(session, ReportLimits(payload_chars=1000))  # the default (issue 28)
    assert secret not in redacted.calls[0]["request"] and "[REDACTED]" in redacted.calls[0]["request"]
    assert all(secret not in e.get("json", "") for e in redacted.timeline)


def test_both_recorded_eras(recordings):
    seen = recordings["seen"]
    legacy = collect(open_session(recordings["legacy"])[0])
    modern = collect(open_session(recordings["modern"])[0])
    assert legacy.era == "legacy era (handshake)" and legacy.protocol_version == "2025-11-25"
    assert modern.era == "modern era (stateless, 2026-07-28)" and modern.protocol_version == "2026-07-28"
    for data in (legacy, modern):
        assert data.server == "report-peer" and data.client and data.client.startswith("mcp")
        assert set(data.tools) == {"echo", "slow", "ask", "fail"}
        assert data.tools["echo"].calls == 2 and data.tools["fail"].is_errors == 1
        assert data.counts["stderr"] >= 1  # the server's "report peer ready" line
        by_method = {}
        for call in data.calls:
            by_method.setdefault(call["method"], []).append(call)
        assert {c["target"] for c in by_method["prompts/get"]} == {"greet", "no-such-prompt"}
        assert by_method["resources/read"][0]["target"] == "res://motd"
        missing = [c for c in by_method["prompts/get"] if c["target"] == "no-such-prompt"]
        assert missing[0]["status"] == "error"
        progress = [e for e in data.timeline if e["label"] == "notifications/progress"]
        slow = [c for c in data.calls if c["target"] == "slow"][0]
        assert len(progress) == 3 and {e["rel"] for e in progress} == {slow["row"]}
    # legacy: the server asked the client to sample, and the client answered: part of the `ask` call
    assert not [c for c in legacy.calls if c["method"] == "sampling/createMessage"]
    ask = next(c for c in legacy.calls if c["target"] == "ask")
    sampling = ask["children"]
    assert len(sampling) == 1 and sampling[0]["dir"] == "out" and sampling[0]["status"] == "ok"
    assert sampling[0]["method"] == "sampling/createMessage"
    # with its JSON both ways, for the page to draw under the call
    assert json.loads(sampling[0]["request"])["method"] == "sampling/createMessage"
    assert "result" in json.loads(sampling[0]["response"]) and sampling[0]["response_row"] > sampling[0]["row"]
    assert seen["legacy"]["ask"] is False
    # modern: no back-channel, the ask call failed with the SDK's -32600
    ask = [c for c in modern.calls if c["target"] == "ask"][0]
    assert seen["modern"]["ask"] == -32600 and ask["status"] == "error" and ask["code"] == -32600


def test_cli_writes_the_page_and_refuses_bad_input(tmp_path, recordings):
    out = tmp_path / "r" / "legacy.html"
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "report", str(recordings["legacy"]), "-o", str(out)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert out.is_file() and (os.stat(out).st_mode & 0o777) == 0o600
    assert "calls" in proc.stderr and page_data(out.read_text())["calls"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"meta","version":1}\n{"dir":"in","raw":{"jsonrpc":"2.0",\n')
    target = tmp_path / "bad.html"
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "report", str(bad), "-o", str(target), "--format", "reel"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "bad.jsonl" in lines[0] and "Traceback" not in proc.stderr
    assert not target.exists() and not list(tmp_path.glob(".bad.html*"))


def test_write_report_returns_what_it_wrote(tmp_path):
    session = _call_session(5, latency=lambda i: 10 * i)
    data = write_report(session, tmp_path / "x.html")
    doc = page_data((tmp_path / "x.html").read_text())
    assert [c["n"] for c in doc["calls"]] == [c["n"] for c in data.calls] == list(range(5))
    assert data.latency["tools/call"].p50_ms == 20 and data.latency["tools/call"].max_ms == 40


def test_a_file_holding_several_sessions(recordings, tmp_path):
    """``mcpreel merge`` of the two eras' recordings: one page, two sessions; one root span per session."""
    from mcpreel.otel.mapping import spans

    merged = tmp_path / "merged.jsonl"
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "merge", str(recordings["legacy"]), str(recordings["modern"]),
                           "-o", str(merged)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    session = open_session(merged)[0]
    data = collect(session)
    assert data.sessions == 2 and data.era.startswith("both")
    assert data.tools["echo"].calls == 4 and data.counts["unanswered"] == 0 and data.counts["orphans"] == 0
    assert {c["origin"] for c in data.calls} == {"legacy.jsonl", "modern.jsonl"}
    records = spans(session)
    roots = {r.attributes["mcpreel.session.file"]: r for r in records if r.parent_id is None}
    assert set(roots) == {"legacy.jsonl", "modern.jsonl"}
    assert roots["legacy.jsonl"].attributes["mcp.protocol.version"] == "2025-11-25"
    assert roots["modern.jsonl"].attributes["mcp.protocol.version"] == "2026-07-28"
    by_id = {r.span_id: r for r in records}
    for r in records:
        if r.parent_id is not None and not r.parent_remote:
            parent = by_id[r.parent_id]
            if parent.parent_id is not None:  # a server request under the call that caused it
                assert r.name == "sampling/createMessage" and parent.name == "tools/call ask"
                parent = by_id[parent.parent_id]
            assert parent is roots[r.attributes["mcpreel.session.file"]]
