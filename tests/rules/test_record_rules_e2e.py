"""``mcpreel record --rules`` between the official SDK client (both eras) and the SDK server, over stdio and
Streamable HTTP: what the client met, what the server got, and what the reel holds (each action recorded as
a person's decision would be: decided_by rules:NAME, modified + original, dropped, the injected answer)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import free_port
from tests.replay.e2e_helpers import MCPREEL, PY, SDK_SERVER, Background, mcpreel
from tests.rules.test_serve_rules_e2e import CLOSED, client

pytestmark = pytest.mark.e2e

SLOW_ADD = """\
- name: slow-add
  match: {direction: out, tool: add}
  delay: 0.8
  rewrite: {merge: {params: {arguments: {b: 10}}}}
"""
COMMON = SLOW_ADD + """\
- name: bye
  match: {tool: echo, path: "$.params.arguments.text", equals: bye}
  close: true
- name: echo-fails
  match: {direction: client_to_server, tool: echo}
  error: {code: -32050, message: echo is down}
  times: 1
- name: fail-dropped
  match: {tool: fail}
  drop: {error: {code: -32051, message: dropped by the test}}
"""
ANSWER_REWRITE = """\
- name: echo-rewritten
  match: {direction: server_to_client, tool: echo}
  rewrite: {set: {"$.result.content[0].text": rewritten}}
"""
CALLS = ['echo:{"text": "hello"}', 'echo:{"text": "hello"}', 'add:{"a": 2, "b": 3}', 'fail:{"reason": "nope"}',
         'echo:{"text": "bye"}']


def reel(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def messages(lines: list[dict]) -> list[dict]:
    return [{**r, "message": r["raw"]} for r in lines if isinstance(r.get("raw"), dict)]


def check(got: list[dict], lines: list[dict], transport: str) -> None:
    echo1, echo2, add, fail, bye = got[:5]
    assert echo1["error"] == {"code": -32050, "message": "echo is down"}
    if transport == "stdio":
        assert echo2["text"] == "rewritten"
    else:
        assert echo2["text"] == "hello"
    # the server got the call as the rule rewrote it: 2 + 10
    assert json.loads(add["text"])["sum"] == 12 and 0.8 <= add["seconds"] < 4, add
    assert fail["error"] == {"code": -32051, "message": "dropped by the test"}
    said = bye.get("error", {}).get("message") or bye.get("exception", "")
    assert "Timeout" not in said and bye["seconds"] < 4, bye

    msgs = messages(lines)

    def calls(tool: str) -> list[dict]:
        return [r for r in msgs if r["message"].get("method") == "tools/call"
                and r["message"]["params"]["name"] == tool]

    first_echo = calls("echo")[0]
    assert first_echo.get("dropped") is True and first_echo["decided_by"] == "rules:echo-fails"
    answer = next(r for r in msgs if r.get("injected") and r["message"].get("id") == first_echo["message"]["id"])
    assert answer["message"]["error"] == {"code": -32050, "message": "echo is down"}
    assert answer["decided_by"] == "rules:echo-fails"
    (add_call,) = calls("add")
    assert add_call["modified"] is True and add_call["decided_by"] == "rules:slow-add"
    assert add_call["message"]["params"]["arguments"] == {"a": 2, "b": 10}
    assert add_call["original"]["params"]["arguments"] == {"a": 2, "b": 3}
    (fail_call,) = calls("fail")
    assert fail_call["dropped"] is True and fail_call["decided_by"] == "rules:fail-dropped"
    bye_call = calls("echo")[-1]
    assert bye_call["message"]["params"]["arguments"] == {"text": "bye"}
    assert bye_call["decided_by"] == "rules:bye" and bye_call.get("dropped") is True
    if transport == "stdio":
        rewritten = [r for r in msgs if r.get("decided_by") == "rules:echo-rewritten"]
        assert len(rewritten) == 1 and rewritten[0]["modified"] is True
        assert rewritten[0]["message"]["result"]["content"][0]["text"] == "rewritten"
        assert rewritten[0]["original"]["result"]["content"][0]["text"] == "hello"


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_record_rules_over_stdio(tmp_path, era):
    rules = tmp_path / "rules.yaml"
    rules.write_text(COMMON + ANSWER_REWRITE)
    out = tmp_path / "reel.jsonl"
    got = client("stdio", " ".join([*MCPREEL, "record", "-q", "--rules", str(rules), "--out", str(out), "--",
                                    SDK_SERVER]), era, *CALLS)
    check(got, reel(out), "stdio")
    assert got[4].get("error", {}).get("message") == CLOSED["stdio"]


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_record_rules_over_streamable_http(tmp_path, era):
    check(*record_http(tmp_path, "streamable-http", era, COMMON, CALLS), "streamable-http")


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_record_rules_over_legacy_sse_delay_and_rewrite(tmp_path, era):
    """Over legacy SSE the proxy can delay and rewrite what the client sends (drop, error and close are refused)."""
    got, lines = record_http(tmp_path, "sse", era, SLOW_ADD, ['add:{"a": 2, "b": 3}'])
    assert json.loads(got[0]["text"])["sum"] == 12 and 0.8 <= got[0]["seconds"] < 4, got
    (add_call,) = [r for r in messages(lines) if r["message"].get("method") == "tools/call"]
    assert add_call["modified"] is True and add_call["decided_by"] == "rules:slow-add"
    assert add_call["original"]["params"]["arguments"] == {"a": 2, "b": 3}


def record_http(tmp_path, transport: str, era: str, text: str, calls: list[str]) -> tuple[list[dict], list[dict]]:
    rules = tmp_path / "rules.yaml"
    rules.write_text(text)
    out = tmp_path / "reel.jsonl"
    port, listen = free_port(), free_port()
    path = "/mcp" if transport == "streamable-http" else "/sse"
    server = Background([PY, SDK_SERVER.split()[-1], transport, str(port)], port=port)
    try:
        proxy = Background([*MCPREEL, "record", "-q", "--transport", transport, "--rules", str(rules),
                            "--target", f"http://127.0.0.1:{port}{path}", "--listen", f"127.0.0.1:{listen}",
                            "--out", str(out)], port=listen)
        try:
            got = client(transport, f"http://127.0.0.1:{listen}{path}", era, *calls)
        finally:
            proxy.stop()
    finally:
        server.stop()
    return got, reel(out)


def test_record_refuses_what_a_proxy_cannot_do(tmp_path):
    rules = tmp_path / "rules.yaml"
    rules.write_text("- {name: silent, timeout: true}\n")
    r = mcpreel("record", "--rules", str(rules), "--out", str(tmp_path / "r.jsonl"), "--", PY, "-c", "pass")
    assert r.returncode == 2 and not (tmp_path / "r.jsonl").exists()
    assert r.stderr.strip().splitlines() == [f"error: {rules}: rule 1 (silent): timeout is for serve (a recording "
                                             "proxy answers every dropped request and sends JSON-RPC only)"]
    rules.write_text(ANSWER_REWRITE)
    r = mcpreel("record", "--transport", "streamable-http", "--target", "http://127.0.0.1:9/mcp",
                "--rules", str(rules), "--out", str(tmp_path / "r.jsonl"))
    assert r.returncode == 2 and "rule 1 (echo-rewritten): over HTTP a recording proxy holds client_to_server" in r.stderr
    rules.write_text(COMMON)
    r = mcpreel("record", "--transport", "sse", "--target", "http://127.0.0.1:9/sse",
                "--rules", str(rules), "--out", str(tmp_path / "r.jsonl"))
    assert r.returncode == 2 and "rule 2 (bye): close is not carried out by a legacy HTTP+SSE recording" in r.stderr
