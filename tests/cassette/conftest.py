"""The cassette tests' redaction key: cassettes are written redacted by default (issue 28), and a test run
must not leave a key in the folder it was started from; a test about where the key lives sets its own."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _redaction_key(tmp_path_factory, monkeypatch):
    key = tmp_path_factory.getbasetemp() / "cassette-tests-redact.key"
    if not key.exists():
        key.write_text("the cassette tests' own key, 0123456789abcdef\n")
        key.chmod(0o600)
    monkeypatch.setenv("MCPREEL_REDACT_KEY", str(key))
