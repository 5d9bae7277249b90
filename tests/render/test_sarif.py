"""The SARIF writer on its own, where a live server's results are located, and proof that the schema check
used by the command tests can fail."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from mcpreel.render.sarif import RuleInfo, SarifFinding, Target, live_target, sarif_log
from tests.sarif_schema import validate_sarif

SERVER = Target("python server.py", "command", "server.py")


def log():
    return sarif_log("audit", [RuleInfo("R1", "a rule", "error", help="why")],
                     [SarifFinding("R1", "error", "found it", "/tools/x/description", file="s.jsonl", properties={"record": 3}),
                      SarifFinding("R2", "note", "no such rule in the list", "/tools/y")], target=SERVER)


def test_log_shape_and_schema():
    doc = log()
    validate_sarif(doc)
    r0, r1 = doc["runs"][0]["results"]
    assert r0["ruleIndex"] == 0 and "ruleIndex" not in r1
    assert r0["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "s.jsonl"  # the file judged first
    assert r1["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "server.py"
    for r in (r0, r1):
        assert {"fullyQualifiedName": "python server.py", "name": "python server.py", "kind": "module"} \
            in r["locations"][0]["logicalLocations"]
    assert doc["runs"][0]["properties"]["server"] == "python server.py"
    assert doc["runs"][0]["invocations"] == [{"executionSuccessful": True}]


@pytest.mark.parametrize("breakage", [
    lambda d: d["runs"][0]["results"][0].update(level="fatal"),
    lambda d: d.update(version="2.0.0"),
    lambda d: d["runs"][0]["tool"]["driver"].pop("name"),
    lambda d: d["runs"][0]["results"][0].update(message="not an object"),
    lambda d: d["runs"][0]["results"][1]["locations"][0].pop("physicalLocation"),
    lambda d: d["runs"][0]["results"][1].pop("locations"),
    lambda d: d["runs"][0]["results"][1]["locations"][0]["physicalLocation"]["artifactLocation"].update(uri="a b.py"),
    lambda d: d["runs"][0]["results"][1]["locations"][0]["physicalLocation"]["artifactLocation"].update(uri=""),
], ids=["level", "version", "driver-name", "message", "no-physical-location", "no-location", "uri-space", "uri-empty"])
def test_schema_check_rejects_broken_logs(breakage):
    doc = copy.deepcopy(log())
    breakage(doc)
    with pytest.raises(AssertionError):
        validate_sarif(doc)


def test_unknown_level_is_refused():
    with pytest.raises(ValueError, match="level"):
        sarif_log("x", [], [SarifFinding("R", "fatal", "m", "/p", file="f")])


def test_a_result_that_cannot_be_placed_is_refused():
    with pytest.raises(ValueError, match="file or a target"):
        sarif_log("x", [], [SarifFinding("R", "note", "m", "/p")])


# -- where a live server is located ---------------------------------------------------------------------------

def test_a_command_is_located_at_its_script_in_the_repository(tmp_path: Path):
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv" / "server.py").write_text("print()\n")
    t = live_target(command="python srv/server.py --token s3cr3t-value", root=tmp_path)
    assert t.artifact == "srv/server.py" and t.kind == "command" and t.line is None
    assert "s3cr3t-value" not in t.name and t.name.startswith("python srv/server.py --token ")


def test_the_workflow_that_names_the_server_and_its_line(tmp_path: Path):
    wf = tmp_path / ".github" / "workflows" / "mcp.yml"
    wf.parent.mkdir(parents=True)
    wf.write_text("on: pull_request\njobs:\n  g:\n    steps:\n      - with:\n          server-command: npx -y srv\n")
    t = live_target(command="npx -y srv", workflow_ref="acme/app/.github/workflows/mcp.yml@refs/pull/7/merge",
                    root=tmp_path)
    assert (t.artifact, t.line) == (".github/workflows/mcp.yml", 6)
    doc = sarif_log("check", [], [SarifFinding("check/x", "error", "m", "/checks/x")], target=t)
    validate_sarif(doc)
    physical = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert physical == {"artifactLocation": {"uri": ".github/workflows/mcp.yml"}, "region": {"startLine": 6}}
    # a workflow outside the folder (a ref to another repository's file) is not named
    assert live_target(command="npx -y srv", workflow_ref="acme/app/../../etc/passwd@x", root=tmp_path).artifact != \
        "../../etc/passwd"


def test_a_url_is_located_at_itself_without_its_secrets(tmp_path: Path):
    t = live_target(url="https://user:pw@[::1]:8443/mcp?api_key=s3cr3t&page=1 2", root=tmp_path)
    assert t.kind == "url" and "s3cr3t" not in t.name and "pw" not in t.name and t.name.startswith("https://[::1]:8443/mcp?")
    doc = sarif_log("check", [], [SarifFinding("check/x", "warning", "m", "/checks/x")], target=t)
    validate_sarif(doc)
    loc = doc["runs"][0]["results"][0]["locations"][0]
    uri = loc["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.startswith("https://[::1]:8443/mcp?api_key=") and "s3cr3t" not in uri and " " not in uri
    assert loc["logicalLocations"][1]["kind"] == "resource"


def test_a_command_outside_the_repository_is_located_at_its_program(tmp_path: Path):
    t = live_target(command="sh -c true", root=tmp_path)
    assert t.artifact.startswith("file:///") and t.artifact.endswith("/sh")
    t = live_target(command="no-such-program-here --x", root=tmp_path)
    assert t.artifact == "no-such-program-here"
    validate_sarif(sarif_log("check", [], [SarifFinding("check/x", "warning", "m", "/checks/x")], target=t))


@pytest.mark.parametrize(("given", "uri"), [
    ("reports/a b.jsonl", "reports/a%20b.jsonl"),
    ("C:\\work\\contract.json", "C:/work/contract.json"),
    ("sessions/caf\u00e9.reel", "sessions/caf%C3%A9.reel"),
    ("sessions/\udcff.reel", "sessions/%FF.reel"),  # an undecodable file name byte, as Python holds it
    ("sessions/\ud800.reel", "sessions/%3F.reel"),
    ("runs/#1?.reel", "runs/%231%3F.reel"),
])
def test_file_names_become_uri_references(given, uri):
    doc = sarif_log("audit", [], [SarifFinding("R", "note", "m", "/p", file=given)])
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == uri
