"""Secret query parameters (:mod:`mcpreel.redact.urls`) and the key rule in free text (stderr lines)."""

from __future__ import annotations

import os
import subprocess

import pytest

from mcpreel.redact import Redactor
from mcpreel.redact.urls import is_secret_param, redact_url, redact_urls_in
from tests.record.stdio.helpers import PY, of_type, reel_lines


@pytest.mark.parametrize("name", ["api_key", "apikey", "token", "access_token", "key", "password", "secret", "auth",
                                  "sig", "signature", "client_secret", "X-Amz-Signature", "X-Amz-Security-Token",
                                  "api%5Fkey"])
def test_secret_parameter_names(name: str) -> None:
    assert is_secret_param(name)
    assert redact_url(f"https://h/mcp?{name}=v1&x=1") == f"https://h/mcp?{name}=[REDACTED]&x=1"


@pytest.mark.parametrize("name", ["region", "monkey", "session_id", "page", "progressToken", "cursor"])
def test_other_parameters_stay(name: str) -> None:
    url = f"/mcp?{name}=v1"
    assert not is_secret_param(name) and redact_url(url) is url


def test_redact_url_keeps_everything_else() -> None:
    assert redact_url("http://u:p@h:1/a?b=1&token=t&c=2#token=frag") == "http://u:p@h:1/a?b=1&token=[REDACTED]&c=2#token=frag"
    assert redact_url("/mcp?token=&key=[REDACTED]") == "/mcp?token=&key=[REDACTED]"
    assert redact_url("/mcp?token=x", marker="<gone>") == "/mcp?token=<gone>"
    assert redact_url("http://h/mcp") == "http://h/mcp"
    assert redact_urls_in("the target http://h/mcp?apikey=S1 is unreachable; /x?sig=S2 too") == (
        "the target http://h/mcp?apikey=[REDACTED] is unreachable; /x?sig=[REDACTED] too")


@pytest.mark.parametrize(("line", "redacted"), [
    ("starting with --api-key=S3cr3t", "starting with --api-key=[REDACTED]"),
    ("--token S3cr3t --verbose", "--token [REDACTED] --verbose"),
    ("password: S3cr3t", "password: [REDACTED]"),
    ("db password=S3cr3t ok", "db password=[REDACTED] ok"),
    ("client_secret: S3cr3t", "client_secret: [REDACTED]"),
    ("Authorization: Bearer S3cr3tS3cr3t", "Authorization: Bearer [REDACTED]"),
])
def test_free_text_gets_the_argv_rule(line: str, redacted: str) -> None:
    r = Redactor()
    assert r.text(line) == redacted and r.total == 1
    assert r.text(redacted) == redacted and r.total == 1  # redacting twice finds nothing new


@pytest.mark.parametrize("line", ["progressToken: 5", "listening on http://localhost:8000/mcp", "timeout=30",
                                  "key: value is fine", "--verbose --port 80", "monkey=banana"])
def test_free_text_without_secrets_stays(line: str) -> None:
    r = Redactor()
    assert r.text(line) == line and r.total == 0


SERVER = ("import os, sys; sys.stderr.write('starting --api-key=' + os.environ['K1'] + '\\n'"
          " + 'password: ' + os.environ['K2'] + '\\n' + '--token ' + os.environ['K1'] + ' --port 1\\n'); sys.stderr.flush()")


def test_record_redact_applies_the_argv_rule_to_the_servers_stderr(tmp_path) -> None:
    env = dict(os.environ, K1="flagS3CRET77", K2="pwS3CRET88")
    want = ["starting --api-key=[REDACTED]", "password: [REDACTED]", "--token [REDACTED] --port 1"]
    out = tmp_path / "s.jsonl"
    proc = subprocess.run([PY, "-m", "mcpreel", "record", "-q", "--redact", "--out", str(out), "--", PY, "-c", SERVER],
                          input=b"", capture_output=True, timeout=30, env=env)
    assert proc.returncode == 0, proc.stderr
    assert b"flagS3CRET77" in proc.stderr  # what is passed on is never changed
    text = out.read_text()
    assert "flagS3CRET77" not in text and "pwS3CRET88" not in text
    assert [x["text"] for x in of_type(reel_lines(out), "stderr")] == want
    # the same rule set when a plain recording is redacted afterwards
    plain, red = tmp_path / "plain.jsonl", tmp_path / "red.jsonl"
    proc = subprocess.run([PY, "-m", "mcpreel", "record", "-q", "--out", str(plain), "--", PY, "-c", SERVER],
                          input=b"", capture_output=True, timeout=30, env=env)
    assert proc.returncode == 0 and "pwS3CRET88" in plain.read_text()
    proc = subprocess.run([PY, "-m", "mcpreel", "redact", str(plain), str(red)], capture_output=True, timeout=30,
                          cwd=tmp_path)  # its redaction key is made there, never in the project
    assert proc.returncode == 0, proc.stderr
    assert [x["text"] for x in of_type(reel_lines(red), "stderr")] == want
