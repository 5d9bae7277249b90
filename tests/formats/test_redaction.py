"""Redaction: by key, by value pattern, by the user's JSONPath/regex rules; argv too; counted; idempotent."""

from __future__ import annotations

import json
import re

import pytest

from mcpreel.errors import InputError
from mcpreel.model import Kind, Message
from mcpreel.redact import Redactor, load_rules, rules_from_dict
from mcpreel.redact.files import redact_file

from .support import fixture, read, read_as, session_of, write

M = "[REDACTED]"


@pytest.mark.parametrize(("text", "expected", "rule"), [
    ("Authorization: Bearer abc.def-ghi_jkl", "Authorization: Bearer [REDACTED]", "bearer"),
    ("Basic dXNlcjpwYXNzd29yZA==", "Basic [REDACTED]", "basic"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.SflKxwRJSMeKKF2QT4fwpM here", "jwt [REDACTED] here", "jwt"),
    ("key sk-proj-abcdefghijklmnopqrstu1234", "key [REDACTED]", "sk key"),
    ("AKIAIOSFODNN7EXAMPLE is the id", "[REDACTED] is the id", "aws access key"),
    ("tok ghp_abcdefghijklmnopqrstuvwxyz0123456789AB", "tok [REDACTED]", "github token"),
    ("tok github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "tok [REDACTED]", "github token"),
    ("postgres://app:hunter2@db:5432/x", "postgres://app:[REDACTED]@db:5432/x", "url password"),
    ("https://h/x?api_key=abc123&page=2", "https://h/x?api_key=[REDACTED]&page=2", "url parameter"),
    ("export OPENAI_API_KEY=not-a-known-shape", "export OPENAI_API_KEY=[REDACTED]", "secret assignment"),
    ("xoxb-1234567890-abcdefghij", "[REDACTED]", "slack token"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "[REDACTED]", "private key"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [REDACTED]", "aws secret"),
    ("pay sk_live_abcdefghijklmnop1234", "pay [REDACTED]", "stripe key"),
    ("glpat-abcdefghijklmnopqrst12", "[REDACTED]", "gitlab token"),
    ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "[REDACTED]", "google api key"),
])
def test_value_patterns_replace_only_the_secret(text, expected, rule):
    r = Redactor()
    assert r.text(text) == expected
    assert r.counts == {rule: 1}


def test_user_regex_with_inline_flags_still_works():
    r = Redactor(rules_from_dict({"patterns": ["(?i)secretword"]}))
    assert r.text("a SECRETWORD b") == "a [REDACTED] b"


def test_plain_text_is_left_alone():
    r = Redactor()
    for text in ("The token budget is 100", "Bearer of bad news", "see https://example.com/docs?page=2", "ask_llm"):
        assert r.text(text) == text
    assert r.total == 0


def test_message_values_by_key_and_pattern_copy_on_write():
    raw = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "login", "arguments": {"user": "bob", "password": "hunter2", "empty_token": "", "flag_secret": False},
        "_meta": {"progressToken": 7}}}
    r = Redactor()
    out = r.value(raw)
    assert out["params"]["arguments"] == {"user": "bob", "password": M, "empty_token": "", "flag_secret": False}
    assert out["params"]["_meta"] == {"progressToken": 7}
    assert raw["params"]["arguments"]["password"] == "hunter2"  # the input is not changed
    assert out["params"]["_meta"] is raw["params"]["_meta"]  # untouched parts are shared
    assert r.counts == {"key": 1}


def test_tool_schemas_keep_their_secret_named_properties():
    raw = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "login", "inputSchema": {
        "type": "object", "properties": {"password": {"type": "string"}, "api_key": {"type": "string"}},
        "required": ["password"]}}]}}
    r = Redactor()
    assert r.value(raw) == raw and r.total == 0


def test_json_held_in_a_string_is_redacted_inside():
    raw = {"result": {"content": [{"type": "text", "text": '{"token": "abc", "n": 1}'}]}}
    out = Redactor().value(raw)
    assert json.loads(out["result"]["content"][0]["text"]) == {"token": M, "n": 1}


def test_redacting_twice_counts_nothing_the_second_time():
    r = Redactor()
    once = r.value({"a": {"password": "x"}, "b": "Bearer abcdefghijkl", "c": ["sk-abcdefghijklmnopqrstuv"]})
    assert r.total == 3
    r2 = Redactor()
    assert r2.value(once) == once and r2.total == 0


def test_command_argv():
    r = Redactor()
    argv = ["npx", "-y", "server", "--token", "abc", "--api-key=xyz", "--verbose", "GITHUB_TOKEN=ghx",
            "--password", "--next", "https://u:p4ss@h/x"]
    assert r.command(argv) == ["npx", "-y", "server", "--token", M, "--api-key=" + M, "--verbose", "GITHUB_TOKEN=" + M,
                               "--password", "--next", "https://u:" + M + "@h/x"]
    assert r.counts == {"command": 3, "url password": 1}


def test_user_rules_paths_regexes_keys(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({
        "keys": ["customer_id"],
        "patterns": ["cust_[0-9]{3}"],
        "paths": ["$.params.arguments.email", "$..ssn", "$.result.items[0]"],
        "rules": [{"path": "$.result.content[*].text", "regex": "\\d{3}-\\d{2}-\\d{4}"}],
        "marker": "***",
    }))
    r = Redactor(load_rules(path))
    out = r.value({"params": {"arguments": {"email": "a@b.c", "customer_id": 4, "note": "see cust_123",
                                            "deep": [{"ssn": "1"}]}}})
    assert out["params"]["arguments"] == {"email": "***", "customer_id": "***", "note": "see ***", "deep": [{"ssn": "***"}]}
    out = r.value({"result": {"items": ["x", "y"], "content": [{"text": "id 123-45-6789."}, {"text": "none"}]}})
    assert out["result"] == {"items": ["***", "y"], "content": [{"text": "id ***."}, {"text": "none"}]}
    assert r.counts == {"path $.params.arguments.email": 1, "key": 1, "pattern 1": 1, "path $..ssn": 1,
                        "path $.result.items[0]": 1, "rule 1": 1}


def test_defaults_off_keeps_only_the_users_rules():
    r = Redactor(rules_from_dict({"defaults": False, "keys": ["pin"]}))
    assert r.value({"password": "x", "pin": 1, "t": "Bearer abcdefghijk"}) == {"password": "x", "pin": M, "t": "Bearer abcdefghijk"}


@pytest.mark.parametrize(("doc", "rule"), [
    ([], "must hold one JSON object"),
    ({"keyz": []}, "unknown member 'keyz'"),
    ({"patterns": ["("]}, "patterns[0]: invalid regex"),
    ({"paths": ["params.x"]}, "paths[0]: invalid JSONPath 'params.x': a JSONPath starts with $"),
    ({"paths": ["$.a[?]"]}, "paths[0]: invalid JSONPath"),
    ({"rules": [{"path": "$.a", "regexp": "x"}]}, "rules[0] must be an object with path and/or regex"),
    ({"marker": ""}, "marker must be a non-empty string"),
])
def test_bad_rules_files(tmp_path, doc, rule):
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=re.escape(rule)):
        load_rules(path)


def test_session_everywhere_header_ctx_stderr_originals(tmp_path):
    s = session_of(
        Message("in", {"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"api_key": "k1"}}, 1,
                ctx={"headers": {"Authorization": "Bearer abcdefghijkl", "Accept": "*/*"}}, modified=True,
                original={"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"api_key": "k0"}}),
        Message(None, None, 2, kind=Kind.STDERR, text="using token=abcdef123456 now"),
        Message("out", None, 3, kind=Kind.TRANSPORT, ctx={"data": "/messages?token=t0k3n"}),
        command=["server", "--secret", "s3"], url="https://u:pw@h/mcp",
    )
    r = Redactor()
    out = r.session(s)
    m0, m1, m2 = out.messages
    assert m0.raw["params"]["api_key"] == M and m0.original["params"]["api_key"] == M
    assert m0.ctx["headers"] == {"Authorization": M, "Accept": "*/*"}
    assert m1.text == "using token=[REDACTED] now" and m2.ctx["data"] == "/messages?token=[REDACTED]"
    assert out.info.command == ["server", "--secret", M] and out.info.url == "https://u:[REDACTED]@h/mcp"
    assert s.messages[0].raw["params"]["api_key"] == "k1"  # untouched input
    assert r.total == 7 and r.counts["key"] == 2


def test_redact_file_keeps_the_format_and_counts(tmp_path):
    src = tmp_path / "in.json"
    doc = json.loads(fixture("qai/qai_session_minimal.json").read_text())
    doc["server_command"] = "python server.py --api-key sk-abcdefghijklmnopqrstuvwxyz"
    doc["messages"][3]["payload"]["params"]["arguments"]["password"] = "hunter2"
    src.write_text(json.dumps(doc))
    out = tmp_path / "out.json"
    result = redact_file(src, out)
    assert result.format == "qai" and result.total == 2 and result.counts == {"command": 1, "key": 1}
    back = json.loads(out.read_text())
    assert back["server_command"] == "python server.py --api-key '[REDACTED]'"
    assert back["messages"][3]["payload"]["params"]["arguments"]["password"] == M
    assert "hunter2" not in out.read_text() and "sk-abc" not in out.read_text()


def test_recorder_hook():
    assert Redactor().value({"params": {"token": "x"}}) == {"params": {"token": M}}


def test_redacted_reel_round_trips(tmp_path):
    src = fixture("mcp-replay-v1/mcp-context7-com-2026-08-20T17-03-48-173Z.mcp.jsonl")
    out = tmp_path / "r.jsonl"
    result = redact_file(src, out)
    assert result.format == "reel"
    assert len(read_as(out, "reel").messages) == len(read(src).messages)
    again = redact_file(out, tmp_path / "r2.jsonl")
    assert again.total == 0
    write(read(out), tmp_path / "q.json", "qai")
