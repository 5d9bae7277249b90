"""Tasks and listen streams with real peers: recorded with ``mcpreel record``, replayed against the unchanged
and a changed server, served by ``mcpreel serve`` to a real client.

- Tasks (2025-11-25, handshake era: server-everything speaks no other): ``simulate-research-query`` called
  with ``params.task`` by a raw JSON-RPC client (``peers/task_client.py``); the changed server is the same
  server-everything whose reports say "Summary" (``peers/changed_everything.py``).
- Listen (2026-07-28 only: ``subscriptions/listen`` does not exist before): the SDK ``Client.listen()``
  against an SDK ``MCPServer`` whose ``reload`` notifies tools changed; ``--changed`` no longer notifies.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.replay.e2e_helpers import MCPREEL, PEERS, PY, Background, mcpreel

LISTEN_SERVER = PEERS / "listen_server.py"


def _client(argv: list[str], timeout: float = 120) -> dict[str, Any]:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _task_client(polls: int, interval: float, server: list[str]) -> dict[str, Any]:
    return _client([PY, str(PEERS / "task_client.py"), str(polls), str(interval), "--", *server])


def _listen_client(target: str) -> dict[str, Any]:
    return _client([PY, str(PEERS / "listen_client.py"), target])


def _replay(reel: Path, command: str, out: Path) -> tuple[int, dict[str, Any]]:
    proc = mcpreel("replay", str(reel), "--target-command", command, "--output", str(out), timeout=180)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return proc.returncode, json.loads(out.read_text())


@pytest.fixture(scope="module")
def task_reel(tmp_path_factory, everything_js) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("task") / "task.jsonl"
    seen = _task_client(0, 0.3, [*MCPREEL, "record", "-q", "--out", str(out), "--", "node", str(everything_js), "stdio"])
    return {"reel": out, "seen": seen}


@pytest.fixture(scope="module")
def listen_reel(tmp_path_factory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("listen") / "listen.jsonl"
    seen = _listen_client(shlex.join([*MCPREEL, "record", "-q", "--out", str(out), "--", PY, str(LISTEN_SERVER)]))
    assert seen["protocol"] == "2026-07-28" and seen["events"] == ["ToolsListChanged"]
    return {"reel": out, "seen": seen}


def test_a_task_replays_against_the_unchanged_server_as_one_operation(task_reel, everything_js, tmp_path) -> None:
    recorded_polls = len(task_reel["seen"]["statuses"])
    assert recorded_polls > 2  # the recording polled many times: they are not each judged
    code, report = _replay(task_reel["reel"], f"node {everything_js} stdio", tmp_path / "r.json")
    assert code == 0, [(r["method"], r["status"], r["diff"], r["error"]) for r in report["results"]]
    assert [r["method"] for r in report["results"]] == ["initialize", "tools/call"]
    task = report["results"][1]
    assert task["status"] == "same" and task["tool"] == "simulate-research-query"
    op = task["operation"]
    assert op["kind"] == "task" and op["recorded_polls"] == recorded_polls
    assert op["task_id"] != op["recorded_task_id"]  # the live server's id stood for the recorded one
    assert task["response"]["status"] == "completed"


def test_a_task_whose_result_changed_replays_as_different_at_its_path(task_reel, everything_js, tmp_path) -> None:
    changed = f"{PY} {PEERS / 'changed_everything.py'} {everything_js}"
    code, report = _replay(task_reel["reel"], changed, tmp_path / "r.json")
    assert code == 1
    task = report["results"][1]
    assert task["status"] == "changed"
    assert [d["path"] for d in task["diff"]] == ["$.result.content[0].text"]
    assert "Research Summary" in task["diff"][0]["new"] and "Research Report" in task["diff"][0]["recorded"]


@pytest.mark.parametrize(("polls", "interval"), [(0, 1.0), (40, 0.02)], ids=["fewer-polls", "more-polls"])
def test_serve_gives_a_polling_client_the_recorded_result(task_reel, polls, interval) -> None:
    recorded = task_reel["seen"]
    got = _task_client(polls, interval, [*MCPREEL, "serve", str(task_reel["reel"])])
    assert got["created"]["task"]["taskId"] == recorded["created"]["task"]["taskId"]
    assert got["statuses"][-1] == "completed"
    if polls:
        assert len(got["statuses"]) == polls > len(recorded["statuses"])
        assert got["statuses"][:len(recorded["statuses"])] == recorded["statuses"]  # in order, then the terminal
    else:
        assert len(got["statuses"]) < len(recorded["statuses"])
    assert got["result"] == recorded["result"]


def test_a_listen_stream_replays_against_the_unchanged_server(listen_reel, tmp_path) -> None:
    code, report = _replay(listen_reel["reel"], f"{PY} {LISTEN_SERVER}", tmp_path / "r.json")
    assert code == 0, [(r["method"], r["status"], r["diff"], r["error"]) for r in report["results"]]
    stream = next(r for r in report["results"] if r["method"] == "subscriptions/listen")
    assert stream["status"] == "same"
    assert stream["operation"]["ended_by"] == "cancel"
    assert stream["response"] == {"acknowledged": {"notifications": {"toolsListChanged": True}},
                                  "notifications": [{"method": "notifications/tools/list_changed"}]}


def test_a_server_that_stops_notifying_replays_as_different_at_its_path(listen_reel, tmp_path) -> None:
    code, report = _replay(listen_reel["reel"], f"{PY} {LISTEN_SERVER} --changed", tmp_path / "r.json")
    assert code == 1
    different = [r for r in report["results"] if r["status"] != "same"]
    assert [r["method"] for r in different] == ["subscriptions/listen"]
    assert [d["path"] for d in different[0]["diff"]] == ["$.notifications[0]"]


def test_serve_keeps_a_listen_stream_for_the_sdk_over_stdio(listen_reel) -> None:
    got = _listen_client(shlex.join([*MCPREEL, "serve", str(listen_reel["reel"])]))
    assert got["honored"] == {"toolsListChanged": True}
    assert got["events"] == ["ToolsListChanged"]
    assert got["text"] == "reloaded"


def test_serve_keeps_a_listen_stream_for_the_sdk_over_streamable_http(listen_reel, free_tcp_port) -> None:
    server = Background([*MCPREEL, "serve", str(listen_reel["reel"]), "--transport", "streamable-http",
                         "--port", str(free_tcp_port)], port=free_tcp_port)
    try:
        got = _listen_client(f"http://127.0.0.1:{free_tcp_port}/mcp")
    finally:
        code, err = server.stop()
    assert got["honored"] == {"toolsListChanged": True}
    assert got["events"] == ["ToolsListChanged"], err


def test_a_listen_stream_recorded_over_streamable_http_replays_there(tmp_path, free_tcp_port_factory) -> None:
    """Over HTTP the SDK ends the stream by closing its POST's event stream (no notifications/cancelled):
    the replayer judges it at the end of the session, once what it carried has come."""
    same, changed, proxy = (free_tcp_port_factory() for _ in range(3))
    reel = tmp_path / "listen-http.jsonl"
    servers = [Background([PY, str(LISTEN_SERVER), "streamable-http", str(same)], port=same),
               Background([PY, str(LISTEN_SERVER), "streamable-http", str(changed), "--changed"], port=changed)]
    try:
        recorder = Background([*MCPREEL, "record", "-q", "--transport", "streamable-http", "--target",
                               f"http://127.0.0.1:{same}/mcp", "--listen", f"127.0.0.1:{proxy}", "--out", str(reel)],
                              port=proxy)
        try:
            seen = _listen_client(f"http://127.0.0.1:{proxy}/mcp")
        finally:
            recorder.proc.send_signal(2)  # SIGINT: the recorder ends its reel
            recorder.proc.wait(timeout=20)
        assert seen["events"] == ["ToolsListChanged"]
        results = {}
        for port in (same, changed):
            proc = mcpreel("replay", str(reel), "--target-url", f"http://127.0.0.1:{port}/mcp", "--output",
                           str(tmp_path / f"{port}.json"), timeout=180)
            results[port] = (proc.returncode, json.loads((tmp_path / f"{port}.json").read_text()))
    finally:
        for s in servers:
            s.stop()
    code, report = results[same]
    assert code == 0, [(r["method"], r["status"], r["diff"]) for r in report["results"]]
    assert next(r for r in report["results"] if r["method"] == "subscriptions/listen")["status"] == "same"
    code, report = results[changed]
    assert code == 1
    stream = next(r for r in report["results"] if r["method"] == "subscriptions/listen")
    assert [d["path"] for d in stream["diff"]] == ["$.notifications[0]"]
