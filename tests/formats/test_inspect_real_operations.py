"""``inspect`` on real recordings (tests/peers/operations_sessions.py): two SDK clients (the default mode
and ``mode="legacy"``) through one ``mcpreel record --transport streamable-http`` proxy, a 2025-11-25 task
against server-everything, a 2026-07-28 listen stream the SDK client leaves with its cancel."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.peers import operations_sessions as peers


def _inspect_json(reel: Path) -> dict[str, Any]:
    proc = subprocess.run([*peers.MCPREEL, "inspect", "--json", str(reel)], capture_output=True, text=True,
                          timeout=60, env=peers._env())
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_two_http_clients_pair_within_their_own_session(tmp_path: Path):
    rec = peers.multi_session_http(tmp_path)
    doc = _inspect_json(rec.reel)
    assert len(doc["session"]["sessions"]) == 2
    rows = doc["rows"]
    by_index = {r["index"]: r for r in rows}
    answered = [r for r in rows if r["corr"] is not None]
    assert answered and all(by_index[r["corr"]]["session"] == r["session"] for r in answered)
    assert {r["session"] for r in rows if r["kind"] == "message"} == {1, 2}
    s = doc["summary"]
    assert s["unanswered"] == [] and s["orphans"] == []
    # what the two clients did, each once per client: echo, touch and fail (fail is an isError result)
    assert rec.seen["auto"]["fail"] is True and rec.seen["legacy"]["fail"] is True
    assert {name: (t["calls"], t["is_errors"]) for name, t in s["tools"].items()} == {
        "echo": (2, 0), "touch": (2, 0), "fail": (2, 2)}
    text = subprocess.run([*peers.MCPREEL, "inspect", str(rec.reel)], capture_output=True, text=True, timeout=60,
                          env=peers._env()).stdout
    assert " s1 " in text and " s2 " in text and "[ORPHAN]" not in text and "[UNANSWERED]" not in text


@pytest.mark.skipif(not peers.EVERYTHING_JS.is_file(), reason="server-everything not installed (make peers)")
def test_a_real_task_is_one_call_with_its_polls(tmp_path: Path):
    rec = peers.task_session(tmp_path)
    doc = _inspect_json(rec.reel)
    s = doc["summary"]
    polls = sum(1 for r in doc["rows"] if r["label"] == "tasks/get")
    assert s["tasks"] == 1 and s["polls"] == polls and polls >= 1
    assert s["tools"]["simulate-research-query"]["calls"] == 1
    assert s["latency"]["tools/call"]["count"] == 1 and "tasks/get" not in s["latency"]
    call = next(r for r in doc["rows"] if r["label"] == "tools/call")
    parts = [r for r in doc["rows"] if r["label"] in ("tasks/get", "tasks/result")]
    assert parts and all(r["part_of"] == call["index"] and r["task"] is not None for r in parts)


def test_a_real_listen_stream_left_by_the_client_is_ended(tmp_path: Path):
    rec = peers.listen_session(tmp_path)
    doc = _inspect_json(rec.reel)
    s = doc["summary"]
    listen = next(r for r in doc["rows"] if r["label"] == "subscriptions/listen")
    assert s["ended"] == [listen["index"]] and listen["ended"] and not listen["unanswered"]
    assert listen["index"] not in s["unanswered"]
