"""The SARIF writer on its own, and proof that the schema check used by the command tests can fail."""

from __future__ import annotations

import copy

import pytest

from mcpreel.render.sarif import Finding, RuleInfo, sarif_log
from tests.sarif_schema import validate_sarif


def log():
    return sarif_log("audit", [RuleInfo("R1", "a rule", "error", help="why")],
                     [Finding("R1", "error", "found it", "/tools/x/description", file="s.jsonl", properties={"record": 3}),
                      Finding("R2", "note", "no such rule in the list", "/tools/y")])


def test_log_shape_and_schema():
    doc = log()
    validate_sarif(doc)
    r0, r1 = doc["runs"][0]["results"]
    assert r0["ruleIndex"] == 0 and "ruleIndex" not in r1
    assert r0["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "s.jsonl"
    assert "physicalLocation" not in r1["locations"][0]
    assert doc["runs"][0]["invocations"] == [{"executionSuccessful": True}]


@pytest.mark.parametrize("breakage", [
    lambda d: d["runs"][0]["results"][0].update(level="fatal"),
    lambda d: d.update(version="2.0.0"),
    lambda d: d["runs"][0]["tool"]["driver"].pop("name"),
    lambda d: d["runs"][0]["results"][0].update(message="not an object"),
])
def test_schema_check_rejects_broken_logs(breakage):
    doc = copy.deepcopy(log())
    breakage(doc)
    with pytest.raises(AssertionError):
        validate_sarif(doc)


def test_unknown_level_is_refused():
    with pytest.raises(ValueError):
        sarif_log("x", [], [Finding("R", "fatal", "m", "/p")])
