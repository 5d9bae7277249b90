"""``mcpreel audit`` end to end: live SDK servers, recordings in both eras, server-everything; SARIF checked
against the SARIF 2.1.0 schema."""

from __future__ import annotations

import json

import pytest

from tests.contract.helpers import SERVER, mcpreel, record_era
from tests.sarif_schema import validate_sarif

pytestmark = pytest.mark.e2e


def test_live_poisoned_server_fails_and_clean_one_passes():
    bad = mcpreel("audit", "--command", f"{SERVER} v2", "--format", "json")
    assert bad.returncode == 1, bad.stderr
    found = {(f["rule"], f["path"]) for f in json.loads(bad.stdout)["findings"]}
    assert ("MCPA001", "/tools/search/description") in found
    good = mcpreel("audit", "--command", SERVER)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "0 errors" in good.stdout


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_recording_of_each_era(tmp_path, mode):
    reel = tmp_path / f"{mode}.jsonl"
    record_era(mode, reel, f"{SERVER} v2")
    sarif = tmp_path / "audit.sarif"
    proc = mcpreel("audit", str(reel), "--sarif", str(sarif))
    assert proc.returncode == 1, proc.stderr
    assert "MCPA001 /tools/search/description" in proc.stdout
    doc = json.loads(sarif.read_text())
    validate_sarif(doc)
    result = next(r for r in doc["runs"][0]["results"] if r["ruleId"] == "MCPA001")
    assert result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == str(reel)
    assert result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "/tools/search/description"
    assert isinstance(result["properties"]["record"], int)


def test_server_everything_has_no_errors_and_valid_sarif(everything_js):
    proc = mcpreel("audit", "--command", f"node {everything_js} stdio", "--format", "sarif")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    validate_sarif(doc)
    assert doc["runs"][0]["tool"]["driver"]["name"] == "mcpreel audit"
    assert {r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]} >= {"MCPA001", "MCPA006"}
    assert not [r for r in doc["runs"][0]["results"] if r["level"] == "error"]


def test_fail_on_rules_file_and_exit_2(tmp_path):
    reel = tmp_path / "s.jsonl"
    reel.write_text("\n".join(json.dumps(x) for x in [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "drop_table", "inputSchema": {"type": "object"}}]}},
    ]) + "\n")
    assert mcpreel("audit", str(reel)).returncode == 0  # a warning does not fail at --fail-on error
    proc = mcpreel("audit", str(reel), "--fail-on", "warning")
    assert proc.returncode == 1 and "MCPA006 /tools/drop_table/annotations" in proc.stdout
    assert mcpreel("audit", str(reel), "--fail-on", "warning", "--disable", "MCPA006").returncode == 0
    rules = tmp_path / "rules.json"
    rules.write_text('{"mcpreel_audit_rules": 1, "rules": [{"id": "X1", "kind": "wat"}]}')
    proc = mcpreel("audit", str(reel), "--rules", str(rules))
    assert proc.returncode == 2 and str(rules) in proc.stderr and "Traceback" not in proc.stderr
    proc = mcpreel("audit", str(tmp_path / "missing.jsonl"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_merged_recordings_of_two_servers(tmp_path):
    a, b, merged = tmp_path / "v1.jsonl", tmp_path / "v2.jsonl", tmp_path / "merged.jsonl"
    record_era("legacy", a)
    record_era("auto", b, f"{SERVER} v2")
    assert mcpreel("merge", str(a), str(b), "-o", str(merged)).returncode == 0
    proc = mcpreel("audit", str(merged), "--format", "json")
    assert proc.returncode == 1
    dupes = {f["path"]: f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "MCPA004"}
    assert set(dupes) == {"/tools/search", "/tools/lookup"}
    assert "v1.jsonl" in dupes["/tools/search"]["excerpt"] and "v2.jsonl" in dupes["/tools/search"]["excerpt"]
    snap = mcpreel("contract", "snapshot", str(merged))
    assert snap.returncode == 2 and "holds 2 servers" in snap.stderr
