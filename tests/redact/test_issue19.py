"""Redaction a test suite can live with (issue 19): keyed markers, JSONPath into JSON carried as text,
rules that matched nothing reported, counts that do not depend on the writer."""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.errors import InputError
from mcpreel.redact import Redactor, rules_from_dict
from mcpreel.redact.files import redact_file
from mcpreel.redact.keys import KEYED_MARKER, find_key, fingerprint, load_or_create_key
from tests.formats.support import req, resp, session_of, write

KEY = b"0123456789abcdef0123456789abcdef"
SK_A = "sk-" + "a" * 24
SK_B = "sk-" + "b" * 24


def _session(transport: str = "stdio") -> object:
    payload = json.dumps({"sent_to": "alice@example.com", "status": "queued"})
    return session_of(
        req("in", 1, "tools/call", name="mail", arguments={"to": "alice@example.com", "api_key": SK_A}),
        resp("out", 1, {"content": [{"type": "text", "text": payload}]}),
        req("in", 2, "tools/call", name="mail", arguments={"to": "bob@example.com", "api_key": SK_B,
                                                           "note": f"Bearer {SK_A}"}),
        resp("out", 2, {"content": [{"type": "text", "text": "Authorization: Bearer abcdefghijklmnop"}]}),
        transport=transport,
    )


def test_keyed_markers_keep_equal_secrets_equal_and_different_ones_apart() -> None:
    r = Redactor(replace(rules_from_dict({}), key=KEY))
    out = r.value({"a": {"api_key": SK_A}, "b": {"api_key": SK_B}, "c": {"token": SK_A}, "d": f"key {SK_A}"})
    a, b, c = out["a"]["api_key"], out["b"]["api_key"], out["c"]["token"]
    assert KEYED_MARKER.fullmatch(a) and KEYED_MARKER.fullmatch(b)
    assert a == c == f"[REDACTED:key:{fingerprint(KEY, SK_A)}]" and a != b
    # a pattern inside a text: the same fingerprint as the same secret under the key rule
    assert out["d"] == f"key [REDACTED:sk-key:{fingerprint(KEY, SK_A)}]"
    # never a bare hash of the secret: the fingerprint depends on the key
    assert fingerprint(b"another key, 16+ chars", SK_A) != fingerprint(KEY, SK_A)
    import hashlib
    assert fingerprint(KEY, SK_A) not in hashlib.sha256(SK_A.encode()).hexdigest()
    # a keyed marker is already redacted: a second run changes and counts nothing
    again = Redactor(replace(rules_from_dict({}), key=KEY))
    assert again.value(out) == out and again.total == 0


def test_the_key_is_created_0600_beside_the_project_and_found_again(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("MCPREEL_REDACT_KEY", raising=False)
    assert find_key(cwd=tmp_path) is None
    key = load_or_create_key(cwd=tmp_path)
    path = tmp_path / ".mcpreel" / "redact.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(key) >= 32
    assert find_key(cwd=tmp_path) == key == load_or_create_key(cwd=tmp_path)
    given = tmp_path / "k"
    given.write_text("x" * 20)
    given.chmod(0o600)  # a key others may read is refused (tests/redact/test_key_mode.py)
    monkeypatch.setenv("MCPREEL_REDACT_KEY", str(given))
    assert find_key(cwd=tmp_path) == b"x" * 20
    given.write_text("short")
    with pytest.raises(InputError, match="at least 16"):
        find_key(cwd=tmp_path)


@pytest.mark.parametrize("path", ["$.result.content[0].text.sent_to", "$..sent_to", "$.result.content[*].text.sent_to"])
def test_paths_reach_into_json_carried_as_text(path: str) -> None:
    r = Redactor(rules_from_dict({"paths": [path]}))
    msg = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text",
                                                               "text": json.dumps({"sent_to": "a@x", "n": 1})}]}}
    out = r.value(msg)
    assert json.loads(out["result"]["content"][0]["text"]) == {"sent_to": "[REDACTED]", "n": 1}
    assert r.counts == {f"path {path}": 1} and r.unmatched() == []
    assert msg["result"]["content"][0]["text"] == json.dumps({"sent_to": "a@x", "n": 1})  # copy on write
    # a text that is not JSON, or JSON without the member, is left as it was
    plain = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "sent_to: a@x"}]}}
    assert r.value(plain) is plain


def test_a_rule_that_never_matched_in_the_file_is_reported(tmp_path: Path) -> None:
    src = write(_session(), tmp_path / "in.jsonl", "reel")
    rules = rules_from_dict({"keys": ["to", "ssn"], "paths": ["$..sent_to", "$..sent_too"],
                             "patterns": ["cust_[0-9]{6}"], "rules": [{"path": "$..note", "regex": "zzz"}]})
    result = redact_file(src, tmp_path / "out.jsonl", rules=rules)
    assert result.unmatched == ["key 'ssn'", "pattern 1 ('cust_[0-9]{6}')", "path $..sent_too",
                                "rule 1 ($..note zzz)"]
    rules_file = tmp_path / "rules.json"
    rules_file.write_text(json.dumps({"paths": ["$..sent_too"]}))
    r = CliRunner().invoke(cli, ["redact", str(src), str(tmp_path / "o2.jsonl"), "--rules", str(rules_file),
                                 "--plain"])
    assert r.exit_code == 0, r.output
    assert r.stderr == f"warning: {rules_file}: path $..sent_too matched nothing in {src}\n"


@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
@pytest.mark.parametrize("to", ["reel", "assay-v2", "simple", "har", "qai", "mcp-cassette-pypi", "jsonrpc"])
def test_counts_are_the_models_whatever_the_writer(tmp_path: Path, to: str, transport: str) -> None:
    """A trace writer reads an HTTP session twice (auth discovery, then the calls): still counted once."""
    src = write(_session(transport), tmp_path / "in.jsonl", "reel")
    base = redact_file(src, tmp_path / "base.jsonl", to="reel")
    out = redact_file(src, tmp_path / f"out.{to}", to=to)
    assert base.total == 4 and out.total == base.total and out.counts == base.counts


def test_the_cli_writes_keyed_markers_with_the_project_key_or_plain_ones(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("MCPREEL_REDACT_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    src = write(_session(), tmp_path / "in.jsonl", "reel")
    r = CliRunner().invoke(cli, ["redact", str(src), "keyed.jsonl"])
    assert r.exit_code == 0, r.output
    assert r.stderr.startswith("created the redaction key .mcpreel/redact.key (mode 0600)")
    again = CliRunner().invoke(cli, ["redact", str(src), "again.jsonl"])
    assert again.exit_code == 0 and again.stderr == ""
    key = (tmp_path / ".mcpreel" / "redact.key").read_bytes().strip()
    text = (tmp_path / "keyed.jsonl").read_text()
    assert f"[REDACTED:key:{fingerprint(key, SK_A)}]" in text and f"[REDACTED:key:{fingerprint(key, SK_B)}]" in text
    assert f"Bearer [REDACTED:bearer:{fingerprint(key, SK_A)}]" in text and SK_A not in text
    # the same key on the next run: the same markers (files redacted apart can be compared)
    assert KEYED_MARKER.findall((tmp_path / "again.jsonl").read_text()) == KEYED_MARKER.findall(text)
    given = tmp_path / "ci.key"
    given.write_text("k" * 32)
    given.chmod(0o600)
    r = CliRunner().invoke(cli, ["redact", str(src), "given.jsonl", "--redact-key", str(given)])
    assert r.exit_code == 0 and fingerprint(b"k" * 32, SK_A) in (tmp_path / "given.jsonl").read_text()
    r = CliRunner().invoke(cli, ["redact", str(src), "plain.jsonl", "--plain"])
    plain = (tmp_path / "plain.jsonl").read_text()
    assert r.exit_code == 0 and "[REDACTED]" in plain and not re.search(r"\[REDACTED:", plain)
    r = CliRunner().invoke(cli, ["redact", str(src), "x.jsonl", "--plain", "--redact-key", str(given)])
    assert r.exit_code == 2 and "exclude each other" in r.output and not os.path.exists("x.jsonl")
