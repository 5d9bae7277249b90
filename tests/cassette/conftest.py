"""The cassette tests' redaction key: cassettes are written redacted by default (issue 28), and a test run
must not leave a key in the folder it was started from; a test about where the key lives sets its own."""

from __future__ import annotations

import pytest

# PyYAML imported here, before any in-process pytester run: a run restores sys.modules as it found them, so a
# yaml first imported inside one (the rules marker, a format) is imported again by the next, and its C parser,
# kept from the first import, then builds nodes the new constructor does not know ("could not determine a
# constructor for the tag None" in test_the_rules_marker_... after test_a_test_that_makes_no_mcp_call_...)
import yaml  # noqa: F401


@pytest.fixture(autouse=True)
def _redaction_key(tmp_path_factory, monkeypatch):
    key = tmp_path_factory.getbasetemp() / "cassette-tests-redact.key"
    if not key.exists():
        key.write_text("the cassette tests' own key, 0123456789abcdef\n")
        key.chmod(0o600)
    monkeypatch.setenv("MCPREEL_REDACT_KEY", str(key))
