"""``mcpreel check --sarif``: a live SDK server's check report as valid SARIF, one result per failed or warned check."""

from __future__ import annotations

import json

import pytest

from tests.contract.helpers import SERVER, mcpreel
from tests.sarif_schema import validate_sarif

pytestmark = pytest.mark.e2e


def test_check_sarif_matches_the_json_report(tmp_path):
    sarif = tmp_path / "check.sarif"
    proc = mcpreel("check", "--command", SERVER, "--profile", "mcp", "--no-call", "--format", "json",
                   "--sarif", str(sarif))
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    doc = json.loads(sarif.read_text())
    validate_sarif(doc)
    expected = {(f"check/{c['id']}", {"fail": "error", "warn": "warning"}[c["status"]])
                for c in report["checks"] if c["status"] in ("fail", "warn")}
    assert {(r["ruleId"], r["level"]) for r in doc["runs"][0]["results"]} == expected
    assert len(doc["runs"][0]["tool"]["driver"]["rules"]) == len({c["id"] for c in report["checks"]})
