"""Issue 34's gates: a default the MCP spec gives an absent member is no change, and a live snapshot
declares the client capabilities a usual client does (and says which).

The spec's defaults (``ToolAnnotations``: readOnlyHint false, destructiveHint true, idempotentHint false,
openWorldHint true; ``ToolExecution.taskSupport``: "forbidden") spelled out or left out are the same
promise: server-memory 2025.4.25 -> 2026.8.31 added ``execution: {taskSupport: "forbidden"}`` to its 9 tools
and was judged "dangerous" 9 times; server-filesystem 2025.8.21 -> 2026.8.31, 14 of its 14 tools.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from mcpreel.contract import compare
from mcpreel.contract.defaults import effective_tool
from mcpreel.contract.snapshot import from_lists
from tests.contract.helpers import mcpreel
from tests.replay import real_servers as rs

_T = "2026-01-01T00:00:00.000Z"
FORBIDDEN = {"taskSupport": "forbidden"}


def _tool(name: str = "t", **extra) -> dict:
    return {"name": name, "description": "d", "inputSchema": {"type": "object"}, **extra}


def _changes(before: dict, after: dict) -> list[tuple[str, str, str]]:
    diff = compare(from_lists({"tools": [before]}), from_lists({"tools": [after]}))
    return [(c.cls, c.rule, c.path) for c in diff.changes]


@pytest.mark.parametrize(("before", "after"), [
    ({}, {"execution": FORBIDDEN}),
    ({"execution": FORBIDDEN}, {}),
    ({}, {"execution": {}}),
    ({"execution": {}}, {"execution": FORBIDDEN}),
    ({}, {"annotations": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
                          "openWorldHint": True}}),
    ({"annotations": {}}, {"execution": FORBIDDEN, "annotations": {"destructiveHint": True}}),
], ids=["forbidden-added", "forbidden-removed", "empty-added", "empty-to-forbidden", "annotation-defaults",
        "both"])
def test_a_default_spelled_out_or_left_out_is_no_change(before, after):
    assert _changes(_tool(**before), _tool(**after)) == []


@pytest.mark.parametrize("support", ["optional", "required"])
def test_task_support_off_its_default_is_still_a_change(support):
    got = _changes(_tool(), _tool(execution={"taskSupport": support}))
    assert got == [("dangerous", "member-changed", "/tools/t/execution")]
    # and from the default spelled out, the same change
    assert _changes(_tool(execution=FORBIDDEN), _tool(execution={"taskSupport": support})) == got


def test_a_value_of_another_type_is_not_the_default():
    # true is not "forbidden", 0 is not false: only the default itself is dropped
    assert effective_tool(_tool(annotations={"readOnlyHint": 0})) == _tool(annotations={"readOnlyHint": 0})
    assert _changes(_tool(), _tool(execution={"taskSupport": True})) != []


def _reel(path: Path, tools: list[dict]) -> str:
    lines = [{"v": 1, "type": "meta", "startedAt": _T, "label": "t", "command": []},
             {"t": _T, "dir": "in", "raw": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}},
             {"t": _T, "dir": "out", "raw": {"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}}}]
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return str(path)


def test_diff_counts_no_tool_change_for_a_default_spelled_out(tmp_path):
    a = _reel(tmp_path / "a.jsonl", [_tool("x"), _tool("y")])
    b = _reel(tmp_path / "b.jsonl", [_tool("x", execution=FORBIDDEN, annotations={"openWorldHint": True}),
                                     _tool("y", description="now other")])
    proc = mcpreel("diff", a, b, "--json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert [(t["name"], t["kind"]) for t in doc["tools"]] == [("y", "changed")]  # x: the same promise
    assert {(c["class"], c["path"]) for c in doc["tool_classes"]} == {("dangerous", "/tools/y/description")}


# -- the real upgrades ---------------------------------------------------------------------------------------

def _snapshot(tmp_path: Path, name: str, server: str, env: dict[str, str] | None = None) -> Path:
    out = tmp_path / f"{name}.json"
    proc = mcpreel("contract", "snapshot", "--target-command", server, "-o", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.mark.e2e
@pytest.mark.timeout(600)
def test_server_memory_upgrade_is_no_longer_dangerous(tmp_path, monkeypatch):
    """2025.4.25 -> 2026.8.31: the new release adds the forbidden task support, annotations, titles and
    output schemas to its 9 tools; none of it can break a client."""
    old, new = rs.need(rs.OLD_MEMORY), rs.need(rs.MEMORY)
    monkeypatch.setenv("MEMORY_FILE_PATH", str(tmp_path / "memory.json"))
    contract = _snapshot(tmp_path, "memory", old)
    assert len(json.loads(contract.read_text())["tools"]) == 9
    proc = mcpreel("contract", "check", str(contract), "--target-command", new, "--format", "json", timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["counts"]["breaking"] == doc["counts"]["dangerous"] == 0
    assert not [c for c in doc["changes"] if "/execution" in c["path"]]
    assert {c["rule"] for c in doc["changes"]} >= {"output-schema-added", "annotation-tightened"}


@pytest.mark.e2e
@pytest.mark.timeout(600)
def test_server_filesystem_upgrade_fails_on_its_real_changes_only(tmp_path):
    """2025.8.21 -> 2026.8.31: what fails is what changed for a client (search_files turned into a glob,
    read_multiple_files needs a path), not the task support spelled out on all 14 tools."""
    root = tmp_path / "root"
    root.mkdir()
    old, new = rs.need(rs.OLD_FILESYSTEM), rs.need(rs.FILESYSTEM)
    contract = _snapshot(tmp_path, "filesystem", f"{old} {root}")
    proc = mcpreel("contract", "check", str(contract), "--target-command", f"{new} {root}", "--format", "json",
                   timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failing = [c for c in json.loads(proc.stdout)["changes"] if c["class"] in ("breaking", "dangerous")]
    assert {c["path"].split("/")[2] for c in failing} == {"read_media_file", "read_multiple_files", "search_files"}
    assert ("dangerous", "/tools/search_files/description") in {(c["class"], c["path"]) for c in failing}
    assert not [c for c in failing if "/execution" in c["path"]]


# -- a live snapshot declares the usual client capabilities ------------------------------------------------------

@pytest.mark.e2e
@pytest.mark.timeout(600)
def test_live_snapshot_declares_the_usual_capabilities_and_says_which(tmp_path, everything_js):
    server = f"node {everything_js} stdio"
    usual = mcpreel("contract", "snapshot", "--target-command", server, timeout=120)
    assert usual.returncode == 0, usual.stderr
    assert "declared client capabilities: sampling, elicitation, roots" in usual.stderr
    tools = set(json.loads(usual.stdout)["tools"])
    assert len(tools) == 17  # what the SDK's client sees when it can sample, elicit and list roots
    bare = mcpreel("contract", "snapshot", "--target-command", server, "--capabilities", "none", timeout=120)
    assert "declared client capabilities: none" in bare.stderr
    only = set(json.loads(bare.stdout)["tools"])
    assert only < tools and len(tools - only) == 4  # the 4 of 17
    sampling = mcpreel("contract", "snapshot", "--target-command", server, "--capabilities", '{"sampling": {}}',
                       timeout=120)
    assert "declared client capabilities: sampling" in sampling.stderr
    assert only < set(json.loads(sampling.stdout)["tools"]) < tools


def test_capabilities_refused_plainly(tmp_path):
    reel = _reel(tmp_path / "a.jsonl", [_tool("x")])
    for args, said in [(["--target-command", "x", "--capabilities", "telepathy"], "unknown capability 'telepathy'"),
                       (["--target-command", "x", "--capabilities", "[1]"], "unknown capability"),
                       (["--target-command", "x", "--capabilities", '{"sampling": 1}'], "a JSON object of objects"),
                       ([reel, "--capabilities", "roots"], "--capabilities is what a live server is told")]:
        proc = mcpreel("contract", "snapshot", *args)
        assert proc.returncode == 2 and said in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
