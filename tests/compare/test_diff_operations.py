"""`diff` pairs operations (issue 24, finding 4): a multi-round-trip request is one call, a task one call.

The same server recorded with a 2026-07-28 client (an ``input_required`` answer, then a retry carrying its
``requestState``) and with a handshake-era client (the server's ``elicitation/create`` mid-call, then the
result) asked the same thing and got the same outcome: no difference."""

from __future__ import annotations

import pytest

from mcpreel.compare.diff import DiffOptions, diff_sessions
from mcpreel.formats import open_session
from mcpreel.model import Message, Session, SessionInfo
from tests.peers.operations_sessions import mrtr_session


def _diff(a: Session, b: Session):
    return diff_sessions(a, b, DiffOptions())


def _calls(report) -> list:
    return [c for c in report.calls if c.kind != "same"]


@pytest.mark.e2e
def test_a_multi_round_trip_request_is_one_call_across_the_eras(tmp_path):
    modern = mrtr_session(tmp_path / "modern", "auto")
    legacy = mrtr_session(tmp_path / "legacy", "legacy")
    a = open_session(modern.reel)[0]
    b = open_session(legacy.reel)[0]
    report = _diff(a, b)
    assert not _calls(report), [(c.kind, c.label, c.arguments, c.result) for c in _calls(report)]


def test_a_task_is_one_call_whatever_its_polls():
    def task(polls: int) -> Session:
        recs = [Message("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                               "params": {"name": "research", "arguments": {"topic": "x"}, "task": {"ttl": 1}}}, 0),
                Message("out", {"jsonrpc": "2.0", "id": 1, "result": {"task": {"taskId": f"T{polls}", "status": "working"}}}, 1)]
        for i in range(polls):
            status = "completed" if i == polls - 1 else "working"
            recs += [Message("in", {"jsonrpc": "2.0", "id": 10 + i, "method": "tasks/get", "params": {"taskId": f"T{polls}"}}, 2 + i),
                     Message("out", {"jsonrpc": "2.0", "id": 10 + i, "result": {"taskId": f"T{polls}", "status": status}}, 2 + i)]
        recs += [Message("in", {"jsonrpc": "2.0", "id": 99, "method": "tasks/result", "params": {"taskId": f"T{polls}"}}, 50),
                 Message("out", {"jsonrpc": "2.0", "id": 99, "result": {"content": [{"type": "text", "text": "done"}]}}, 51)]
        return Session(SessionInfo(transport="stdio"), recs)

    assert not _calls(_diff(task(2), task(7)))
    changed = task(3)
    changed.messages[-1].raw["result"]["content"][0]["text"] = "other"
    diffs = _calls(_diff(task(2), changed))
    assert len(diffs) == 1 and diffs[0].method == "tools/call"
