"""Issue 34, done when: real servers replayed against themselves give no false change, and their real
upgrades still show every real change, lists named by tool.

Each server is recorded by the official SDK's default client (``mcp.Client``: 2026-07-28 with a server that
speaks it, else the handshake after a refused ``server/discover``) or in the handshake era
(``mode="legacy"``), over stdio or Streamable HTTP, then replayed against itself: ``--repeat 3`` (what
varies between the runs is noise: ``flaky``, never ``changed``), learning the noise on the way
(``--learn-noise``), then once more with that noise applied (``--noise``): 0 changed each time. The 20-run
count is ``bench/replay_noise.py``'s (BENCHMARKS.md); these are a few runs each, to stay within CI's budget.
"""

from __future__ import annotations

import json

import pytest

from tests.replay import noise_peers as npeers
from tests.replay import real_servers as rs

# a recording and seven replays of a real server (four of them are runs of --repeat): minutes on a loaded machine
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]


def _peer(case: str, tmp_path) -> npeers.Peer:
    if case == "time":
        return npeers.time_peer(rs.need(rs.TIME))
    if case == "git":
        return npeers.git_peer(rs.need(rs.GIT), npeers.git_repo(tmp_path))
    if case == "git-2025":  # its git_show text holds a Python object's address: a different one each process
        return npeers.git_peer(rs.need(rs.OLD_GIT), npeers.git_repo(tmp_path))
    if case.startswith("everything"):
        rs.need(rs.EVERYTHING)
        return npeers.everything_peer(rs.EVERYTHING, "http" if case.endswith("http") else "stdio")
    return npeers.varying_peer("http" if case.endswith("http") else "stdio")


CASES = [
    ("time", "auto"), ("time", "legacy"),
    ("everything", "auto"), ("everything-http", "auto"),
    ("git", "auto"), ("git-2025", "auto"),
    ("varying", "auto"), ("varying", "legacy"),  # over HTTP: bench/replay_noise.py
]


@pytest.mark.parametrize(("case", "era"), CASES, ids=[f"{c}-{e}" for c, e in CASES])
def test_a_real_server_replayed_against_itself_is_never_changed(case, era, tmp_path):
    peer = _peer(case, tmp_path)
    recording, noise = tmp_path / "rec.jsonl", tmp_path / "noise.json"
    with npeers.serving(peer) as where:
        got = npeers.record(peer, where, recording, era)
        if era == "legacy" or case in ("everything", "everything-http", "git-2025"):
            assert got["protocol"] != "2026-07-28"
        else:
            assert got["protocol"] == "2026-07-28", got  # the SDK's default client, in the modern era
        code, doc, text = npeers.replay(recording, where, "--repeat", "3", "--learn-noise", str(noise))
        assert code == 0 and npeers.changed(doc) == [], text
        summary = doc["summary"]
        assert summary["changed"] == 0 and summary["error"] == 0, text
        assert summary["same"] + summary["flaky"] == summary["requests"] > 0, text
        learned = json.loads(noise.read_text())
        code, doc, text = npeers.replay(recording, where, "--noise", str(noise))
        assert code == 0 and npeers.changed(doc) == [] and doc["summary"]["error"] == 0, text
    paths = {(n["tool"], n["path"]) for n in learned["noise"]}
    if case.startswith("varying"):
        # each volatile answer was found, and only those: the sum is never noise
        assert {tool for tool, _ in paths} == {"now", "new_id", "pick", "report", "varying://status"}, paths
        assert all(doc_row["status"] == "same" for doc_row in doc["results"]), text
    if case == "time":
        assert ("get_current_time", "$.result.content[0].text.datetime") in paths or any(
            tool == "get_current_time" for tool, _ in paths), paths
        assert not any(tool == "convert_time" for tool, _ in paths), paths


# -- real upgrades: every real change still shown, lists named by tool ----------------------------------------

def _named_by_tool(doc: dict, method: str = "tools/list") -> list[str]:
    rows = [r for r in doc["results"] if r["method"] == method]
    assert rows and all(r["status"] == "changed" for r in rows), [r["status"] for r in rows]
    paths = [d["path"] for r in rows for d in r.get("diff", [])]
    assert paths and not [p for p in paths if ".tools[" in p and "[name=" not in p], paths  # never by position
    return paths


def test_server_everything_upgrade_shows_its_real_changes(tmp_path):
    """2025.9.25 -> 2026.8.31: ``add`` became ``get-sum`` (and 8 other tools were renamed or came)."""
    old = npeers.Peer("server-everything 2025.9.25", {"list": ["tools"], "calls": [
        ["echo", {"message": "hi"}], ["add", {"a": 2, "b": 3}]]}, stdio=rs.need(rs.OLD_EVERYTHING) + " stdio")
    new = rs.need(rs.EVERYTHING) + " stdio"
    recording = tmp_path / "old.jsonl"
    npeers.record(old, old.stdio, recording)
    code, doc, text = npeers.replay(recording, new, "--repeat", "2")
    assert code == 1, text
    paths = _named_by_tool(doc)
    assert "$.result.tools[name=add]" in paths and "$.result.tools[name=get-sum]" in paths, paths
    calls = {r["tool"]: r["status"] for r in doc["results"] if r["method"] == "tools/call"}
    assert calls["add"] == "changed", text  # the tool is gone: the call is refused now
    assert doc["summary"]["flaky"] == 0 or calls["add"] != "flaky"


def test_mcp_server_time_upgrade_shows_its_real_changes_against_the_old_release(tmp_path):
    """2025.9.25 (SDK 1.15, handshake only) -> 2026.10.19 (SDK 2.3): the old release is the baseline (what
    varies there is noise); what differs from it is changed, named by tool."""
    old_command = rs.need(rs.OLD_TIME)
    peer = npeers.time_peer(old_command)
    recording = tmp_path / "old.jsonl"
    npeers.record(peer, old_command, recording)
    code, doc, text = npeers.replay(recording, rs.need(rs.TIME), "--baseline-command", old_command)
    assert code == 1, text
    paths = _named_by_tool(doc)
    assert "$.result.tools[name=get_current_time].outputSchema" in paths, paths
    calls = [r for r in doc["results"] if r["method"] == "tools/call"]
    assert calls and all(r["status"] == "changed" for r in calls), text  # structured content came
    statuses = {r["method"]: r["status"] for r in doc["results"]}
    assert statuses.get("server/discover", "same") == "same", text  # refused then and now, whatever its code
