"""A task that needs input, with real peers: recorded with ``mcpreel record``, replayed against the unchanged
and a changed server, served by ``mcpreel serve`` to a real client that answers the elicitation.

2025-11-25 Tasks (handshake era): server-everything's ``simulate-research-query`` with ``ambiguous: true``
goes ``input_required`` and delivers its elicitation only through ``tasks/result``; the client is the
official TypeScript SDK's experimental tasks client (``tests/peers/ts_task_client.mjs``), which asks
``tasks/result`` on ``input_required`` and answers the elicitation ("historical"). The changed server is
server-everything whose reports say "Summary" (``peers/changed_everything.py``).

2026-07-28 Tasks extension: no released server or Python client speaks it, so both sides are the official
Python SDK (mcp 2.3) with the extension written from its specification through the SDK's own extension
interfaces (``peers/tasks_ext_server.py``: an ``MCPServer`` ``Extension``; ``peers/tasks_ext_client.py``: the
default ``Client`` with a ``ClientExtension``), playing the spec's example: ``input_required`` with an
elicitation in ``inputRequests``, answered with ``tasks/update``; ``--changed`` greets with "Hi".
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LISTEN127
from tests.replay.e2e_helpers import MCPREEL, PEERS, PY, Background, mcpreel

TS_TASK_CLIENT = Path(__file__).resolve().parent.parent / "peers" / "ts_task_client.mjs"
SDK_JS = TS_TASK_CLIENT.parent.parent.parent / ".peers" / "node_modules" / "@modelcontextprotocol" / "sdk"

needs_node = pytest.mark.skipif(shutil.which("node") is None or not SDK_JS.is_dir(),
                                reason="needs node and the TypeScript SDK in .peers (make peers)")
EXT_SERVER = PEERS / "tasks_ext_server.py"
EXT_CLIENT = PEERS / "tasks_ext_client.py"


def _ts_client(*argv: str, timeout: float = 120) -> tuple[dict[str, Any], str]:
    proc = subprocess.run(["node", str(TS_TASK_CLIENT), *argv], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout), proc.stderr


@pytest.fixture(scope="module")
def asking_reel(tmp_path_factory, everything_js) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("asking") / "asking.jsonl"
    seen, _ = _ts_client("stdio", *MCPREEL, "record", "-q", "--out", str(out), "--", "node", str(everything_js), "stdio")
    assert seen["error"] is None and "input_required" in seen["statuses"]
    assert len(seen["elicitations"]) == 1 and seen["elicitations"][0]["relatedTask"] is not None
    assert "(historical)" in seen["text"]
    return {"reel": out, "seen": seen}


def _replay(reel: Path, command: str, out: Path) -> tuple[int, dict[str, Any]]:
    proc = mcpreel("replay", str(reel), "--target-command", command, "--output", str(out), timeout=180)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return proc.returncode, json.loads(out.read_text())


@needs_node
def test_a_task_that_asked_replays_the_same_against_the_unchanged_server(asking_reel, everything_js, tmp_path) -> None:
    code, report = _replay(asking_reel["reel"], f"node {everything_js} stdio", tmp_path / "r.json")
    assert code == 0, [(r["method"], r["status"], r["diff"], r["error"]) for r in report["results"]]
    assert [r["method"] for r in report["results"]] == ["initialize", "tools/call"]
    task = report["results"][1]
    assert task["status"] == "same" and task["tool"] == "simulate-research-query"
    assert task["operation"]["input"] == "tasks/result"  # asked while input_required, as the recording did
    assert task["response"]["status"] == "completed"
    assert "(historical)" in task["response"]["result"]["content"][0]["text"]  # the recorded answer was given
    [asked] = report["server_requests"]
    assert asked["method"] == "elicitation/create" and asked["answered_from"]
    # no bound was waited for (the recording's duration + 30 s, what the old runner spent): the task
    # ended when the server ended it
    assert task["duration_ms"] < task["recorded_duration_ms"] + 20_000


@needs_node
def test_a_task_that_asked_and_whose_result_changed_is_changed_at_its_path(asking_reel, everything_js, tmp_path) -> None:
    changed = f"{PY} {PEERS / 'changed_everything.py'} {everything_js}"
    code, report = _replay(asking_reel["reel"], changed, tmp_path / "r.json")
    assert code == 1
    task = report["results"][1]
    assert task["status"] == "changed"
    assert [d["path"] for d in task["diff"]] == ["$.result.content[0].text"]


@needs_node
def test_a_task_that_asked_replays_the_same_over_streamable_http(asking_reel, everything_js, tmp_path,
                                                                  free_tcp_port) -> None:
    # server-everything sends the elicitation on the response stream of the POST that asked tasks/result
    server = Background(["node", "--require", str(LISTEN127), str(everything_js), "streamableHttp"],
                        port=free_tcp_port, env={"PORT": str(free_tcp_port)})
    out = tmp_path / "r.json"
    try:
        proc = mcpreel("replay", str(asking_reel["reel"]), "--target-url", f"http://127.0.0.1:{free_tcp_port}/mcp",
                       "--output", str(out), timeout=180)
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert report["results"][1]["status"] == "same" and report["results"][1]["operation"]["input"] == "tasks/result"
    assert [s["answered_from"] is not None for s in report["server_requests"]] == [True]


@needs_node
def test_serve_sends_the_recorded_elicitation_to_a_real_client_over_stdio(asking_reel) -> None:
    seen, stderr = _ts_client("stdio", *MCPREEL, "serve", str(asking_reel["reel"]))
    recorded = asking_reel["seen"]
    assert seen["text"] == recorded["text"] and seen["error"] is None
    assert [e["message"] for e in seen["elicitations"]] == [e["message"] for e in recorded["elicitations"]]
    assert seen["elicitations"][0]["relatedTask"] is not None
    assert "0 missed" in stderr and "recorded server requests: 1 sent" in stderr


@needs_node
def test_serve_sends_the_recorded_elicitation_over_streamable_http(asking_reel, free_tcp_port) -> None:
    server = Background([*MCPREEL, "serve", str(asking_reel["reel"]), "--transport", "streamable-http",
                         "--port", str(free_tcp_port)], port=free_tcp_port)
    try:
        seen, _ = _ts_client("http", f"http://127.0.0.1:{free_tcp_port}/mcp")
    finally:
        _, stderr = server.stop()
    assert seen["text"] == asking_reel["seen"]["text"] and seen["error"] is None
    assert len(seen["elicitations"]) == 1
    assert "recorded server requests: 1 sent" in stderr


# -- the 2026-07-28 Tasks extension ----------------------------------------------------------------------


def _ext_client(*argv: str, timeout: float = 120) -> dict[str, Any]:
    proc = subprocess.run([PY, str(EXT_CLIENT), *argv], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def extension_reel(tmp_path_factory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("ext") / "ext.jsonl"
    seen = _ext_client("stdio", *MCPREEL, "record", "-q", "--out", str(out), "--", PY, str(EXT_SERVER))
    assert seen["protocol"] == "2026-07-28" and seen["text"] == "Hello, Luca!"
    assert "input_required" in seen["statuses"] and [a["method"] for a in seen["asked"]] == ["elicitation/create"]
    return {"reel": out, "seen": seen}


def test_an_extension_task_that_asked_replays_the_same(extension_reel, tmp_path) -> None:
    code, report = _replay(extension_reel["reel"], f"{PY} {EXT_SERVER}", tmp_path / "r.json")
    assert code == 0, [(r["method"], r["status"], r["diff"], r["error"]) for r in report["results"]]
    assert report["era"] == "modern"
    task = next(r for r in report["results"] if r["method"] == "tools/call")
    assert task["status"] == "same" and task["operation"]["input"] == "tasks/update"
    assert task["response"] == {"status": "completed", "result": {
        "content": [{"type": "text", "text": "Hello, Luca!"}], "structuredContent": {"result": "Hello, Luca!"},
        "isError": False}}
    [asked] = report["server_requests"]
    assert asked["method"] == "elicitation/create" and asked["answered_from"]
    assert not any(r["method"] == "tasks/update" for r in report["results"])  # part of the task, not a request


def test_an_extension_task_whose_greeting_changed_is_changed(extension_reel, tmp_path) -> None:
    code, report = _replay(extension_reel["reel"], f"{PY} {EXT_SERVER} --changed", tmp_path / "r.json")
    assert code == 1
    task = next(r for r in report["results"] if r["method"] == "tools/call")
    assert task["status"] == "changed"
    assert [d["path"] for d in task["diff"]] == ["$.result.content[0].text", "$.result.structuredContent.result"]


def test_serve_gives_the_sdk_client_the_input_request_and_the_result_over_stdio(extension_reel) -> None:
    seen = _ext_client("stdio", *MCPREEL, "serve", str(extension_reel["reel"]))
    assert seen["text"] == "Hello, Luca!"
    assert seen["asked"] == extension_reel["seen"]["asked"]
    assert seen["statuses"][-1] == "completed" and "input_required" in seen["statuses"]


def test_serve_gives_the_sdk_client_the_input_request_over_streamable_http(extension_reel, free_tcp_port) -> None:
    server = Background([*MCPREEL, "serve", str(extension_reel["reel"]), "--transport", "streamable-http",
                         "--port", str(free_tcp_port)], port=free_tcp_port)
    try:
        seen = _ext_client("http", f"http://127.0.0.1:{free_tcp_port}/mcp")
    finally:
        _, stderr = server.stop()
    assert seen["text"] == "Hello, Luca!" and seen["asked"] == extension_reel["seen"]["asked"]
    assert "0 missed" in stderr and "recorded server requests: 1 sent" in stderr


def test_an_extension_task_that_asked_replays_the_same_over_streamable_http(extension_reel, tmp_path,
                                                                           free_tcp_port) -> None:
    server = Background([PY, str(EXT_SERVER), "streamable-http", str(free_tcp_port)], port=free_tcp_port, timeout=60)
    out = tmp_path / "r.json"
    try:
        proc = mcpreel("replay", str(extension_reel["reel"]), "--target-url", f"http://127.0.0.1:{free_tcp_port}/mcp",
                       "--output", str(out), timeout=180)
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    task = next(r for r in json.loads(out.read_text())["results"] if r["method"] == "tools/call")
    assert task["status"] == "same" and task["operation"]["input"] == "tasks/update"
