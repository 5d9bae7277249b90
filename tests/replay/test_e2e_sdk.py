"""End to end with the official SDK: record with `mcpreel record`, then replay and serve the recording."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import free_port

from .e2e_helpers import MCPREEL, SDK_SERVER, Background, mcpreel, record, run_client

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A real session (handshake, tools/list, echo, add, fail, ask with a sampling request) and what the client saw."""
    path = tmp_path_factory.mktemp("rec") / "peer.jsonl"
    got = record(path, f"{SDK_SERVER} stdio")
    assert got["ask"]["text"] == "llm said: 42"
    return path, got


def test_replay_against_the_same_server_passes(recorded, tmp_path):
    path, _ = recorded
    out, junit = tmp_path / "results.json", tmp_path / "junit.xml"
    proc = mcpreel("replay", str(path), "--target-command", f"{SDK_SERVER} stdio", "--output", str(out),
                   "--junit", str(junit))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "6 requests replayed: 6 same, 0 changed" in proc.stdout
    results = json.loads(out.read_text())
    assert results["ok"] is True and results["summary"]["server_requests"] == 1
    ask = results["results"][-1]
    for key in ("original_request", "sent_message", "response", "error", "duration_ms", "recorded_response", "diff",
                "status"):
        assert key in ask
    assert ask["status"] == "same" and ask["response"]["result"]["content"][0]["text"] == "llm said: 42"
    assert (out.stat().st_mode & 0o777) == 0o600
    assert 'tests="6" failures="0" errors="0"' in junit.read_text()


def test_replay_against_a_changed_server_names_the_paths(recorded, tmp_path):
    path, _ = recorded
    out = tmp_path / "results.json"
    proc = mcpreel("replay", str(path), "--target-command", f"{SDK_SERVER} stdio --changed", "--output", str(out),
                   "--junit", str(tmp_path / "j.xml"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    by_tool = {r["tool"] or r["method"]: r for r in json.loads(out.read_text())["results"]}
    assert by_tool["initialize"]["status"] == "same" and by_tool["ask"]["status"] == "same"
    assert {d["path"] for d in by_tool["echo"]["diff"]} == {"$.result.content[0].text", "$.result.structuredContent.result"}
    assert [(d["path"], d["kind"], d["new"]) for d in by_tool["add"]["diff"]] == [
        ("$.result.content[0].text.note", "added", "v2")]  # JSON text compared as JSON
    assert {"path": "$.result.isError", "kind": "changed", "recorded": True, "new": False} in by_tool["fail"]["diff"]
    assert by_tool["tools/list"]["diff"][0]["path"].startswith("$.result.tools[")
    assert '$.result.content[0].text: "hello" -> "HELLO"' in proc.stdout
    assert 'failures="4"' in (tmp_path / "j.xml").read_text()
    # ignoring the changed paths makes echo the same again
    proc = mcpreel("replay", str(path), "--target-command", f"{SDK_SERVER} stdio --changed", "--output", str(out),
                   "--ignore-path", "$.result.content[*].text", "--ignore-path", "$.result.structuredContent")
    by_tool = {r["tool"] or r["method"]: r for r in json.loads(out.read_text())["results"]}
    assert by_tool["echo"]["status"] == "same" and by_tool["fail"]["status"] == "changed"


def test_replay_against_a_dead_server_cannot_run(recorded, tmp_path):
    path, _ = recorded
    dead = f"{MCPREEL[0]} -c \"import sys; print('cannot start: no database', file=sys.stderr); sys.exit(3)\""
    out = tmp_path / "results.json"
    proc = mcpreel("replay", str(path), "--target-command", dead, "--output", str(out))
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and len(proc.stderr.strip().splitlines()) == 1
    assert "exit code 3" in proc.stderr and "cannot start: no database" in proc.stderr
    assert not out.exists()
    proc = mcpreel("replay", str(path), "--target-url", f"http://127.0.0.1:{free_port()}/mcp")
    assert proc.returncode == 2 and "cannot reach" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("transport,path", [("streamable-http", "/mcp"), ("sse", "/sse")])
def test_replay_a_stdio_recording_against_the_http_server(recorded, transport, path):
    rec, _ = recorded
    port = free_port()
    server = Background([*SDK_SERVER.split(), transport, str(port)], port=port)
    try:
        proc = mcpreel("replay", str(rec), "--target-url", f"http://127.0.0.1:{port}{path}")
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "6 same" in proc.stdout and "1 server request answered" in proc.stdout


def test_serve_over_stdio_gives_the_sdk_client_the_recorded_results(recorded):
    path, got = recorded
    served = run_client("stdio", " ".join([*MCPREEL, "serve", str(path)]))
    assert served == got


@pytest.mark.parametrize("transport,where", [("streamable-http", "/mcp"), ("sse", "/sse")])
def test_serve_over_http_gives_the_sdk_client_the_recorded_results(recorded, transport, where):
    path, got = recorded
    port = free_port()
    server = Background([*MCPREEL, "serve", str(path), "--transport", transport, "--port", str(port), "--on-miss", "fail"],
                        ready="serving")
    try:
        served = run_client(transport, f"http://127.0.0.1:{port}{where}")
    finally:
        code, err = server.stop()
    assert served == got
    assert code == 0, err
    assert "0 missed" in err and f"http://127.0.0.1:{port}{where}" in err


def test_serve_forwards_misses_and_keeps_their_answers(recorded, tmp_path):
    path, _ = recorded
    cassette = tmp_path / "cassette.jsonl"
    shutil.copy(path, cassette)
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "new"}}},
    ]
    stdin = "".join(json.dumps(m) + "\n" for m in lines)
    import subprocess

    proc = subprocess.run([*MCPREEL, "serve", str(cassette), "--on-miss", "forward", "--target-command",
                           f"{SDK_SERVER} stdio"], input=stdin, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert answers[-1]["id"] == 2 and answers[-1]["result"]["content"][0]["text"] == "new"
    assert "1 forwarded" in proc.stderr
    # the cassette now answers it by itself, with no live server
    proc = subprocess.run([*MCPREEL, "serve", str(cassette), "--on-miss", "fail"], input=stdin, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1])["result"]["content"][0]["text"] == "new"
    assert (cassette.stat().st_mode & 0o777) == 0o600
    # and a miss with --on-miss fail is an error answer, a stderr line and exit 1
    miss = stdin.replace('"new"', '"other"')
    proc = subprocess.run([*MCPREEL, "serve", str(cassette), "--on-miss", "fail"], input=miss, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1
    answer = json.loads(proc.stdout.splitlines()[-1])
    assert answer["error"]["code"] == -32602 and '-> "other"' in answer["error"]["message"]
    assert "miss: tools/call" in proc.stderr and "error: 1 requests were not in the recording" in proc.stderr


def test_diff_of_two_real_recordings(recorded, tmp_path):
    path, _ = recorded
    changed = tmp_path / "changed.jsonl"
    record(changed, f"{SDK_SERVER} stdio --changed")
    proc = mcpreel("diff", str(path), str(changed), "--json")
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert [(t["name"], t["kind"]) for t in result["tools"]] == [("brand_new", "added")]
    kinds = {c["subject"]: (c["kind"], c["status_a"], c["status_b"]) for c in result["calls"]}
    assert kinds == {"echo": ("changed", "ok", "ok"), "add": ("changed", "ok", "ok"),
                     "fail": ("changed", "isError", "ok"), "ask": ("same", "ok", "ok")}
    assert mcpreel("diff", str(path), str(path)).returncode == 0
