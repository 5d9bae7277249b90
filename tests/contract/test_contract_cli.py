"""``mcpreel contract snapshot|check`` end to end: real SDK servers in both eras, server-everything, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpreel.contract import from_session, load_contract
from mcpreel.formats import open_session
from tests.contract.helpers import SERVER, mcpreel, record_era

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def recordings(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("eras")
    out = {}
    for mode in ("auto", "legacy"):
        got = record_era(mode, d / f"{mode}.jsonl")
        assert got["tools"] == ["delete_all", "lookup", "search"]
        assert got["protocol"] == ("2026-07-28" if mode == "auto" else "2025-11-25")
        out[mode] = d / f"{mode}.jsonl"
    return out


def test_snapshot_of_both_eras_is_the_same_offer(recordings, tmp_path):
    docs = {}
    for mode, rec in recordings.items():
        out = tmp_path / f"{mode}.json"
        proc = mcpreel("contract", "snapshot", str(rec), "-o", str(out))
        assert proc.returncode == 0, proc.stderr
        docs[mode] = json.loads(out.read_text())
    assert docs["auto"]["protocolVersion"] == "2026-07-28"
    assert docs["legacy"]["protocolVersion"] == "2025-11-25"
    for doc in docs.values():
        doc.pop("protocolVersion")
    assert docs["auto"] == docs["legacy"]
    doc = docs["auto"]
    assert sorted(doc["tools"]) == ["delete_all", "lookup", "search"]
    assert doc["tools"]["lookup"]["annotations"]["readOnlyHint"] is True
    assert doc["tools"]["search"]["inputSchema"]["required"] == ["query"]
    assert list(doc["prompts"]) == ["summarise"]
    assert doc["server"]["name"] == "contract-peer"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_check_recording_contract_against_live_servers(recordings, tmp_path, mode):
    contract = tmp_path / "c.json"
    assert mcpreel("contract", "snapshot", str(recordings[mode]), "-o", str(contract)).returncode == 0
    same = mcpreel("contract", "check", str(contract), "--command", SERVER)
    assert same.returncode == 0, same.stdout + same.stderr
    assert "no changes" in same.stdout
    v2 = mcpreel("contract", "check", str(contract), "--command", f"{SERVER} v2", "--format", "json")
    assert v2.returncode == 1, v2.stderr
    got = {(c["class"], c["rule"], c["path"]) for c in json.loads(v2.stdout)["changes"]}
    assert got == {
        ("breaking", "tool-removed", "/tools/delete_all"),
        ("breaking", "required-property-added", "/tools/search/inputSchema/properties/limit"),
        ("dangerous", "description-changed", "/tools/search/description"),
        ("dangerous", "annotation-loosened", "/tools/lookup/annotations/readOnlyHint"),
        ("minor", "tool-added", "/tools/stats"),
    }


def test_check_a_recording_against_a_recording(recordings, tmp_path):
    contract = tmp_path / "c.json"
    assert mcpreel("contract", "snapshot", str(recordings["legacy"]), "-o", str(contract)).returncode == 0
    proc = mcpreel("contract", "check", str(contract), str(recordings["auto"]), "--fail-on", "any")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_update_accepts_the_changes(recordings, tmp_path):
    contract = tmp_path / "c.json"
    assert mcpreel("contract", "snapshot", str(recordings["legacy"]), "-o", str(contract)).returncode == 0
    assert mcpreel("contract", "check", str(contract), "--command", f"{SERVER} v2", "--update").returncode == 0
    assert "stats" in load_contract(contract).tools
    assert mcpreel("contract", "check", str(contract), "--command", f"{SERVER} v2").returncode == 0


def test_server_everything_live(everything_js, tmp_path):
    contract = tmp_path / "everything.json"
    cmd = f"node {everything_js} stdio"
    proc = mcpreel("contract", "snapshot", "--command", cmd, "-o", str(contract))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(contract.read_text())
    assert {"echo", "get-sum"} <= set(doc["tools"]) and doc["prompts"] and doc["resources"] and doc["resourceTemplates"]
    assert mcpreel("contract", "check", str(contract), "--command", cmd, "--fail-on", "any").returncode == 0
    # the kept contract says echo was read-only and described otherwise: the live server now differs
    doc["tools"]["echo"]["description"] = "Echoes back the input string"[::-1]
    doc["tools"]["echo"]["annotations"]["readOnlyHint"] = False
    doc["tools"]["gone"] = {"name": "gone", "inputSchema": {"type": "object"}}
    contract.write_text(json.dumps(doc))
    proc = mcpreel("contract", "check", str(contract), "--command", cmd, "--format", "json", "--fail-on", "breaking")
    assert proc.returncode == 1, proc.stderr
    got = {(c["class"], c["rule"], c["path"]) for c in json.loads(proc.stdout)["changes"]}
    assert got == {("breaking", "tool-removed", "/tools/gone"),
                   ("dangerous", "description-changed", "/tools/echo/description"),
                   ("minor", "annotation-tightened", "/tools/echo/annotations/readOnlyHint")}


def test_snapshot_from_a_fixture_recording(fixtures_dir):
    path = fixtures_dir / "mcp-replay-v1" / "knowledge-mcp-global-api-aws-2026-08-19T21-18-31-987Z.mcp.jsonl"
    session, _ = open_session(path)
    c = from_session(session)
    assert c.server == {"name": "AWSKnowledgeMCP", "version": "1.0.0"}
    assert "aws___get_regional_availability" in c.tools
    assert c.tools["aws___get_regional_availability"]["annotations"]["readOnlyHint"] is True


def test_could_not_run_is_exit_2(tmp_path, recordings):
    bad = tmp_path / "bad.json"
    bad.write_text('{"tools": {}}')
    proc = mcpreel("contract", "check", str(bad), str(recordings["auto"]))
    assert proc.returncode == 2 and "not an mcpreel contract" in proc.stderr and "Traceback" not in proc.stderr
    good = tmp_path / "c.json"
    assert mcpreel("contract", "snapshot", str(recordings["auto"]), "-o", str(good)).returncode == 0
    proc = mcpreel("contract", "check", str(good), "--command", "/nonexistent/server")
    assert proc.returncode == 2 and "not found" in proc.stderr
    proc = mcpreel("contract", "check", str(good), str(recordings["auto"]), "--command", SERVER)
    assert proc.returncode == 2 and "exactly one source" in proc.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    proc = mcpreel("contract", "snapshot", str(empty), "-o", str(tmp_path / "x.json"))
    assert proc.returncode == 2 and "nothing to snapshot" in proc.stderr
    assert not (tmp_path / "x.json").exists()


def test_sarif_report_is_valid_and_classes_map_to_levels(recordings, tmp_path):
    from tests.sarif_schema import validate_sarif

    contract = tmp_path / "c.json"
    assert mcpreel("contract", "snapshot", str(recordings["auto"]), "-o", str(contract)).returncode == 0
    out = tmp_path / "contract.sarif"
    proc = mcpreel("contract", "check", str(contract), "--command", f"{SERVER} v2", "--format", "sarif",
                   "--sarif", str(out))
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc == json.loads(out.read_text())
    validate_sarif(doc)
    levels = {r["ruleId"]: r["level"] for r in doc["runs"][0]["results"]}
    assert levels["contract/tool-removed"] == "error"
    assert levels["contract/annotation-loosened"] == "warning"
    assert levels["contract/tool-added"] == "note"
    same = mcpreel("contract", "check", str(contract), "--command", SERVER, "--format", "sarif")
    assert same.returncode == 0
    validate_sarif(json.loads(same.stdout))
    assert json.loads(same.stdout)["runs"][0]["results"] == []


def test_diff_of_two_recordings_reports_the_classes_and_sarif(recordings, tmp_path):
    from tests.sarif_schema import validate_sarif

    v2 = tmp_path / "v2.jsonl"
    record_era("legacy", v2, f"{SERVER} v2")
    sarif = tmp_path / "diff.sarif"
    proc = mcpreel("diff", str(recordings["legacy"]), str(v2), "--json", "--sarif", str(sarif))
    assert proc.returncode == 1, proc.stderr
    got = {(c["class"], c["rule"], c["path"]) for c in json.loads(proc.stdout)["tool_classes"]}
    assert ("breaking", "tool-removed", "/tools/delete_all") in got
    assert ("dangerous", "description-changed", "/tools/search/description") in got
    assert ("minor", "tool-added", "/tools/stats") in got
    doc = json.loads(sarif.read_text())
    validate_sarif(doc)
    assert {r["ruleId"] for r in doc["runs"][0]["results"]} >= {"contract/tool-removed", "contract/tool-added"}
    text = mcpreel("diff", str(recordings["legacy"]), str(v2))
    assert "tool contract: breaking  /tools/delete_all: tool 'delete_all' removed" in text.stdout


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
def test_live_http_server(tmp_path, transport):
    from tests.conftest import free_port
    from tests.peers import SDK_SERVER
    from tests.replay.e2e_helpers import PY, Background

    port = free_port()
    server = Background([PY, str(SDK_SERVER), transport, str(port)], port=port)
    try:
        url = f"http://127.0.0.1:{port}/" + ("mcp" if transport == "streamable-http" else "sse")
        out = tmp_path / "c.json"
        proc = mcpreel("contract", "snapshot", url, "-o", str(out))
        assert proc.returncode == 0, proc.stderr
        assert sorted(json.loads(out.read_text())["tools"]) == ["add", "ask", "echo", "fail"]
        assert mcpreel("contract", "check", str(out), "--url", url, "--fail-on", "any").returncode == 0
        audit = mcpreel("audit", url, "--format", "json")
        assert audit.returncode == 0 and json.loads(audit.stdout)["toolsSeen"] == 4
    finally:
        server.stop()
