"""One reading of a tool call's result (:func:`mcpreel.operations.facts.tool_result`) in every verb that reads
one: a failed SEP-3279 result (``outputs``, no ``content``) gives its message to the corpus row and the report
as a 2026-07-28 one does, and ``audit`` reads each variant's text (a secret in the ``user`` copy is found)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpreel.audit import audit_session, builtin_rules
from mcpreel.corpus.index import index_paths
from mcpreel.corpus.query import run_sql
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.report.data import collect

SECRET = "GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyz"
FAILED_OLD = {"isError": True, "content": [{"type": "text", "text": "quota exceeded"}]}
FAILED_NEW = {"isError": True, "outputs": [
    {"audience": "user", "format": "content", "content": [{"type": "text", "text": "<b>quota</b>"}]},
    {"audience": "assistant", "format": "content", "content": [{"type": "text", "text": "quota exceeded"}]}]}


def messages(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}},
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {},
                                               "serverInfo": {"name": "s", "version": "1"}}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "fetch", "arguments": {},
                                                                       "requestedOutputs": []}},
        {"jsonrpc": "2.0", "id": 1, "result": result},
    ]


def session(result: dict[str, Any]) -> Session:
    return Session(SessionInfo(), [Message("in" if "method" in m else "out", m, 1_800_000_000_000 + i)
                                   for i, m in enumerate(messages(result))])


@pytest.mark.parametrize("result", [FAILED_OLD, FAILED_NEW], ids=["content", "outputs"])
def test_the_corpus_row_and_the_report_read_a_failed_tools_message_whatever_its_shape(tmp_path: Path, result) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "a.jsonrpc.jsonl").write_text("".join(json.dumps(m) + "\n" for m in messages(result)))
    db = tmp_path / "c.duckdb"
    index_paths([folder], db)
    rows = run_sql(db, "SELECT status, failed, message FROM operations WHERE method = 'tools/call'").rows
    assert [tuple(r) for r in rows] == [("isError", True, "quota exceeded")]
    data = collect(session(result))
    assert [c.get("text") or c.get("message") for c in data.calls if c.get("status") == "isError"] == \
        ["quota exceeded"], data.calls


def test_audit_reads_every_variant_of_a_result() -> None:
    leak = {"outputs": [{"audience": "assistant", "format": "content", "content": [{"type": "text", "text": "ok"}]},
                        {"audience": "programmatic", "format": "structured", "structuredContent": {"env": SECRET}}]}
    report = audit_session(session(leak), builtin_rules())
    assert any(f.path.startswith("/calls/fetch/result/outputs/1/structuredContent") for f in report.findings), \
        report.findings


def test_check_judges_a_result_variants_answer_by_its_assistant_content() -> None:
    from types import SimpleNamespace

    from mcpreel.check.protocol import _first_text, _judge_content

    run: Any = SimpleNamespace(strict_format=False)
    variants = {"outputs": [{"audience": "assistant", "format": "content",
                             "content": [{"type": "text", "text": "sunny"}]}]}
    status, summary, *_ = _judge_content(run, variants)
    assert status == "pass", summary  # a SEP-3279 answer is not "result.content is missing"
    assert _first_text({**FAILED_NEW}) == "quota exceeded"
    status, summary, *_ = _judge_content(run, {"isError": False})
    assert status == "fail" and "missing" in summary  # no content of any shape: still a failure
