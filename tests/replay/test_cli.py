"""The replay, serve and diff commands as a user meets them: words in, lines and exit codes out."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mcpreel.cli import cli

from .e2e_helpers import SDK_SERVER


def invoke(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def test_diff_of_a_fixture_with_itself_is_clean(fixtures_dir):
    path = str(fixtures_dir / "qai" / "qai_session_fastmcp.json")
    r = invoke("diff", path, path)
    assert r.exit_code == 0, r.output
    assert "0 differences" in r.output


def test_diff_across_formats_finds_changed_calls_and_writes_junit(fixtures_dir, tmp_path):
    a = fixtures_dir / "qai" / "qai_session_fastmcp.json"
    b = fixtures_dir / "qai" / "qai_session_minimal.json"
    junit = tmp_path / "d.xml"
    r = invoke("diff", str(a), str(b), "--json", "--junit", str(junit))
    assert r.exit_code == 1
    result = json.loads(r.output)
    assert result["differences"] > 0 and result["ok"] is False
    assert any(c["kind"] in ("removed", "added") for c in result["calls"])
    assert "<failure" in junit.read_text() and (junit.stat().st_mode & 0o777) == 0o600


def test_diff_reports_latency_shifts_and_counts_them_only_when_asked(tmp_path):
    def write(path, ms):
        lines = [
            {"v": 1, "type": "meta", "startedAt": "2026-01-01T00:00:00.000Z", "label": "x", "command": []},
            {"t": "2026-01-01T00:00:00.000Z", "dir": "in", "raw": {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                                                    "params": {"name": "slow", "arguments": {}}}},
            {"t": f"2026-01-01T00:00:00.{ms:03d}Z", "dir": "out", "raw": {"jsonrpc": "2.0", "id": 1, "result": {}}},
        ]
        path.write_text("".join(json.dumps(x) + "\n" for x in lines))
        return str(path)

    fast, slow = write(tmp_path / "a.jsonl", 10), write(tmp_path / "b.jsonl", 900)
    r = invoke("diff", fast, slow)
    assert r.exit_code == 0 and "tools/call slow #1: 10 ms -> 900 ms" in r.output
    assert invoke("diff", fast, slow, "--fail-on-latency").exit_code == 1
    assert invoke("diff", fast, slow, "--latency-factor", "100").exit_code == 0


def test_bad_input_is_one_line_and_exit_2(tmp_path, fixtures_dir):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"v":1,"type":"meta"}\n{not json\n')
    for args in (["diff", str(bad), str(bad)], ["replay", str(bad), "--target-command", "true"],
                 ["serve", str(bad)]):
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 2, (args, r.output)
        assert r.output.startswith("error: ") and "bad.jsonl" in r.output and "line 2" in r.output
        assert len(r.output.strip().splitlines()) == 1
    agent = next((fixtures_dir / "mcp-replay-v1").glob("*.agent.jsonl"))
    r = CliRunner().invoke(cli, ["replay", str(agent), "--target-command", "true"])
    assert r.exit_code == 2 and "no client requests to replay" in r.output


def test_an_output_that_cannot_be_written_is_one_line_and_exit_2(tmp_path, fixtures_dir):
    (tmp_path / "a-file").write_text("")
    blocked = tmp_path / "a-file" / "report.xml"
    path = str(fixtures_dir / "qai" / "qai_session_minimal.json")
    r = CliRunner().invoke(cli, ["diff", path, path, "--junit", str(blocked)])
    assert r.exit_code == 2, r.output
    assert r.output.splitlines()[-1].startswith(f"error: {blocked}: cannot write: ")
    assert "Traceback" not in r.output


@pytest.mark.parametrize("args,message", [
    (["replay", "{s}"], "give the server to replay against"),
    (["replay", "{s}", "--target-command", "x", "--target-url", "http://h/"], "give the server to replay against"),
    (["replay", "{s}", "--target-command", "x", "--ignore-path", "$.a["], "--ignore-path"),
    (["serve", "{s}", "--on-miss", "forward"], "--on-miss forward needs a live server"),
    (["serve", "{s}", "--target-command", "x"], "serve only --on-miss forward"),
])
def test_usage_errors(fixtures_dir, args, message):
    s = str(fixtures_dir / "qai" / "qai_session_minimal.json")
    r = CliRunner().invoke(cli, [a.format(s=s) for a in args])
    assert r.exit_code == 2 and message in r.output, r.output


def test_forwarding_refuses_a_recording_it_cannot_write_back(fixtures_dir):
    cassette = str(fixtures_dir / "hub" / "agent-vcr" / "examples__recordings__calculator-v1.vcr")  # read-only format
    r = CliRunner().invoke(cli, ["serve", cassette, "--on-miss", "forward", "--target-command", "x"])
    assert r.exit_code == 2 and "cannot be written" in r.output


def test_serve_over_stdio_in_process(fixtures_dir):
    """The qai fastmcp recording: handshake, an edited call, a sampling request, progress, an error, a string id."""
    path = str(fixtures_dir / "qai" / "qai_session_fastmcp.json")
    msgs = [
        {"jsonrpc": "2.0", "id": 10, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        {"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "slow_progress", "arguments": {},
                                                                        "_meta": {"progressToken": "mine"}}},
        {"jsonrpc": "2.0", "id": 12, "method": "no/such_method"},
    ]
    import os
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "mcpreel", "serve", path], input="".join(json.dumps(m) + "\n" for m in msgs),
                          capture_output=True, text=True, timeout=60, env=os.environ)
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [m.get("id", m.get("method")) for m in out] == [10, "notifications/progress", "notifications/message", 11, 12]
    assert out[1]["params"]["progressToken"] == "mine"  # recorded as "p1": progress follows this client's token
    assert out[3]["result"]["content"][0]["text"] == "done"
    assert out[4]["error"]["code"] == -32602  # the recorded error, under the incoming id
    assert proc.returncode == 0 and "served 3 requests: 3 answered" in proc.stderr


def test_a_client_that_closed_stdin_is_not_waited_for(fixtures_dir):
    """`ask_llm` was recorded with a sampling request before its answer: a client piping requests in and
    closing stdin can never answer it, so the answer goes out at once instead of after --answer-timeout."""
    import os
    import subprocess
    import sys
    import time

    path = str(fixtures_dir / "qai" / "qai_session_fastmcp.json")
    ask = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ask_llm", "arguments": {"question": "meaning?"}}}
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "serve", path, "--answer-timeout", "8"],
                          input=json.dumps(ask) + "\n", capture_output=True, text=True, timeout=60, env=os.environ)
    seconds = time.monotonic() - t0
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [m.get("method") or m["id"] for m in out] == ["sampling/createMessage", 7]
    assert proc.returncode == 0 and seconds < 6, (seconds, proc.stderr)


def test_what_a_reader_noticed_is_said(fixtures_dir):
    agent = str(next((fixtures_dir / "mcp-replay-v1").glob("*.agent.jsonl")))
    r = CliRunner().invoke(cli, ["diff", agent, agent])
    assert r.exit_code == 0
    assert "A: kind 'llm': this file holds no MCP messages" in r.output
    assert "(A and B have no tools/list answer)" in r.output
    import os
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "mcpreel", "serve", agent], input="", capture_output=True, text=True,
                          timeout=60, env=os.environ)
    assert proc.returncode == 0 and f"serve: {agent}: kind 'llm': this file holds no MCP messages" in proc.stderr


def test_serve_on_a_taken_port_is_one_line_and_exit_2(fixtures_dir):
    import socket

    s = str(fixtures_dir / "qai" / "qai_session_minimal.json")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        r = CliRunner().invoke(cli, ["serve", s, "--transport", "streamable-http", "--port", str(port)])
    assert r.exit_code == 2, r.output
    assert r.output == (f"error: cannot listen on 127.0.0.1:{port}: Address already in use (another program has "
                        f"it: give --listen 127.0.0.1:0 to take a free port)\n")


def test_proxy_replay_is_the_qai_spelling(tmp_path):
    session = tmp_path / "s.json"
    session.write_text(json.dumps([
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}},
        {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "hi"}], "isError": False,
                                               "structuredContent": {"result": "hi"}}},
    ]))
    out = tmp_path / "v2_results.json"
    r = CliRunner().invoke(cli, ["proxy", "replay", "--session-file", str(session), "--target-command",
                                 f"{SDK_SERVER} stdio", "--output", str(out)])
    assert r.exit_code == 0, r.output
    results = json.loads(out.read_text())["results"]
    # the recording's initialize had no answer (JSON-RPC files lose nothing but this one is bare): unrecorded
    assert [x["status"] for x in results] == ["unrecorded", "same"]
