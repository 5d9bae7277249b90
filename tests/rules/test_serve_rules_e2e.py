"""``mcpreel serve --rules`` against the official SDK client (``mcp.Client``), over stdio and Streamable HTTP,
in both eras (2026-07-28 by default, ``mode="legacy"``): each action does to the client what it says."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import free_port
from tests.replay.e2e_helpers import MCPREEL, PY, SDK_SERVER, Background, mcpreel, record

pytestmark = pytest.mark.e2e

CLIENT = Path(__file__).parent / "peers" / "rules_client.py"
RULES = """\
- name: bye
  match: {tool: echo, path: "$.params.arguments.text", equals: bye}
  close: true
- name: echo-fails
  match: {direction: client_to_server, tool: echo}
  error: {code: -32050, message: echo is down}
  times: 1
- name: echo-rewritten
  match: {direction: server_to_client, tool: echo}
  rewrite: {set: {"$.result.content[0].text": rewritten}}
- name: slow-add
  match: {direction: out, tool: add}
  delay: 0.8
- name: fail-dropped
  match: {tool: fail}
  drop: {error: {code: -32051, message: dropped by the test}}
"""
CALLS = ['echo:{"text": "hello"}', 'echo:{"text": "hello"}', 'add:{"a": 2, "b": 3}', 'fail:{"reason": "nope"}',
         'echo:{"text": "bye"}']


@pytest.fixture(scope="module", params=["auto", "legacy"])
def recorded(request, tmp_path_factory):
    out = tmp_path_factory.mktemp("rec") / f"{request.param}.jsonl"
    record(out, SDK_SERVER, era=request.param)
    return request.param, out


def client(mode: str, target: str, era: str, *calls: str, timeout: float = 60) -> list[dict]:
    proc = subprocess.run([PY, str(CLIENT), mode, target, "--era", era, *calls], capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


#: how the SDK client says the connection ended under it: stdout closed (stdio), the POST's stream broken (HTTP)
CLOSED = {"stdio": "Connection closed", "streamable-http": "SSE stream ended without a response",
          "sse": "Connection closed"}


def check_the_actions(got: list[dict], transport: str) -> None:
    echo1, echo2, add, fail, bye = got[:5]
    assert echo1["error"] == {"code": -32050, "message": "echo is down"}
    assert echo2["text"] == "rewritten"
    assert json.loads(add["text"])["sum"] == 5 and 0.8 <= add["seconds"] < 4, add
    assert echo1["seconds"] < 0.8 and echo2["seconds"] < 0.8
    assert fail["error"] == {"code": -32051, "message": "dropped by the test"}
    # close: the connection ends, the client learns it at once (not its 5 s timeout)
    said = bye.get("error", {}).get("message") or bye.get("exception", "")
    assert said == CLOSED[transport], bye
    assert bye["seconds"] < 4, bye


def test_serve_rules_over_stdio(tmp_path, recorded):
    era, cassette = recorded
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    got = client("stdio", " ".join([*MCPREEL, "serve", str(cassette), "--rules", str(rules)]), era, *CALLS)
    check_the_actions(got, "stdio")


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
def test_serve_rules_over_http(tmp_path, recorded, transport):
    era, cassette = recorded
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    port = free_port()
    mock = Background([*MCPREEL, "serve", str(cassette), "--rules", str(rules), "--transport", transport,
                       "--port", str(port)], port=port)
    try:
        path = "/mcp" if transport == "streamable-http" else "/sse"
        got = client(transport, f"http://127.0.0.1:{port}{path}", era, *CALLS)
    finally:
        _, err = mock.stop()
    check_the_actions(got, transport)
    for name in ("bye", "echo-fails", "echo-rewritten", "slow-add", "fail-dropped"):
        assert f"rules:{name}:" in err, err


def test_a_bad_rules_file_is_one_line_and_exit_2(tmp_path, recorded):
    _, cassette = recorded
    rules = tmp_path / "rules.yaml"
    rules.write_text("- name: x\n  match: {tool: echo}\n  delay: soon\n")
    r = mcpreel("serve", str(cassette), "--rules", str(rules))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [f"error: {rules}: rule 1 (x): delay is seconds between 0 and 3600, not 'soon'"]


def test_malformed_and_timeout_on_the_wire_over_stdio(tmp_path, recorded):
    """What the SDK client cannot show: the broken line itself, and a request never answered."""
    era, cassette = recorded
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([
        {"name": "broken", "match": {"direction": "server_to_client", "id": 2}, "malformed": True},
        {"name": "silent", "match": {"id": 3}, "timeout": True},
    ]))
    lines = [{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hello"}}}
             for i in (1, 2, 3, 4)]
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    stdin = "".join(json.dumps(m) + "\n" for m in [init, *lines])
    proc = subprocess.run([*MCPREEL, "serve", str(cassette), "--rules", str(rules)], input=stdin,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    answers = {}
    broken = []
    for line in out:
        try:
            answers[json.loads(line)["id"]] = True
        except ValueError:
            broken.append(line)
    assert sorted(answers) == [0, 1, 4]  # 2 went out broken, 3 never
    assert len(broken) == 1 and broken[0].startswith('{"jsonrpc":"2.0","id":2')
    assert "rules:broken: malformed <- the answer to 2" in proc.stderr
    assert "rules:silent: drop -> tools/call" in proc.stderr


def test_a_json_only_http_client_gets_the_broken_body_then_a_dropped_connection_and_a_forgotten_session(tmp_path):
    """The one-JSON-body answer of Streamable HTTP: ``malformed`` is the body, ``close`` breaks the connection
    and the session is gone (404) afterwards."""
    import httpx2

    cassette = tmp_path / "s.jsonl"
    record(cassette, SDK_SERVER, era="legacy")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([
        {"name": "broken", "match": {"tool": "echo", "direction": "server_to_client"}, "malformed": "{not json"},
        {"name": "gone", "match": {"tool": "add"}, "close": True},
    ]))
    port = free_port()
    mock = Background([*MCPREEL, "serve", str(cassette), "--rules", str(rules), "--transport", "streamable-http",
                       "--port", str(port)], port=port)
    url = f"http://127.0.0.1:{port}/mcp"
    headers = {"accept": "application/json", "content-type": "application/json"}
    try:
        with httpx2.Client(timeout=10) as http:
            init = http.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
            sid = init.headers["mcp-session-id"]
            session = {**headers, "mcp-session-id": sid}
            r = http.post(url, headers=session, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                                      "params": {"name": "echo", "arguments": {"text": "hello"}}})
            assert (r.status_code, r.content) == (200, b"{not json")
            with pytest.raises(httpx2.TransportError):
                http.post(url, headers=session, json={"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                                      "params": {"name": "add", "arguments": {"a": 2, "b": 3}}})
            after = http.post(url, headers=session, json={"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
            assert after.status_code == 404
    finally:
        mock.stop()
