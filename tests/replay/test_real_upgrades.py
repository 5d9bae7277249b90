"""Issue 34, done when: the real upgrades still show every real change, lists named by tool, not position.

For mcp-server-git, mcp-server-fetch (2025 releases in their own virtualenv with the 1.x SDK they need ->
2026 releases), server-memory 2025.4.25 -> 2026.8.31 and server-filesystem 2025.8.21 -> 2026.8.31 (npm): a
short session is recorded against the OLD release by the official SDK's default client through ``mcpreel
record``; the noise is learned against the old release (``--repeat 3 --learn-noise``), then the recording is
replayed against the NEW release with that noise (``--noise``), as the README's CI recipe does. Each test
checks that the release's known changes are ``changed`` and named by tool (``tools[name=...]``, never
``tools[3]``), and that what did not change is not reported (a call the same, or only the part that came).
server-everything's and mcp-server-time's upgrades are ``test_noise_real_peers.py``'s.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import shlex
import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.replay import noise_peers as npeers
from tests.replay import real_servers as rs

# a recording, three replays against the old release and one against the new: a minute on a loaded machine
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

_BY_POSITION = re.compile(r"\.(tools|prompts|resources)\[\d")


def _upgrade(peer: npeers.Peer, new: str, tmp_path: Path) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """Record ``peer`` (the old release), learn its noise against itself, replay against ``new`` with it:
    (the replay's JSON, its text, the noise learned)."""
    assert peer.stdio is not None
    recording, noise = tmp_path / "old.jsonl", tmp_path / "noise.json"
    npeers.record(peer, peer.stdio, recording)
    # a generous wait per answer: the old fetch takes seconds over its first page, more on a loaded machine
    code, doc, text = npeers.replay(recording, peer.stdio, "--repeat", "3", "--learn-noise", str(noise),
                                    "--timeout", "120")
    assert code == 0 and npeers.changed(doc) == [], text  # the old release against itself: nothing changed
    learned = json.loads(noise.read_text())
    code, doc, text = npeers.replay(recording, new, "--noise", str(noise), "--timeout", "120")
    assert code == 1, text
    assert doc["summary"]["error"] == 0 and doc["summary"]["flaky"] == 0, text
    return doc, text, learned


def _rows(doc: dict[str, Any], method: str, tool: str | None = None) -> list[dict[str, Any]]:
    return [r for r in doc["results"] if r["method"] == method and (tool is None or r.get("tool") == tool)]


def _paths(row: dict[str, Any]) -> list[str]:
    return [d["path"] for d in row.get("diff", [])]


def _diff(row: dict[str, Any], path: str) -> dict[str, Any]:
    found = [d for d in row.get("diff", []) if d["path"] == path]
    assert found, (path, _paths(row))
    return found[0]


def _tools_named_by_tool(doc: dict[str, Any]) -> list[str]:
    """The tools/list differences: changed, every path under ``tools`` naming its tool, none a position."""
    rows = _rows(doc, "tools/list")
    assert rows and all(r["status"] == "changed" for r in rows), [r["status"] for r in rows]
    paths = [p for r in rows for p in _paths(r)]
    assert paths and all(p.startswith("$.result.tools[name=") for p in paths), paths
    assert not [p for p in paths if _BY_POSITION.search(p)], paths
    return paths


def _refused_then_and_now(doc: dict[str, Any]) -> None:
    """The SDK's ``server/discover`` probe, refused by both releases (whatever the code): plumbing, same."""
    assert all(r["status"] == "same" for r in _rows(doc, "server/discover")), doc["results"]


def test_mcp_server_git_upgrade_shows_its_real_changes(tmp_path):
    """2025.9.25 (SDK 1.15) -> 2026.10.19: git_show no longer prints a Python object's address (the old
    release's noise, learned and masked), git_log no longer quotes the hash; status and branch unchanged."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    old_command, new_command = rs.need(rs.OLD_GIT), rs.need(rs.GIT)
    repo = npeers.git_repo(tmp_path)
    doc, text, learned = _upgrade(npeers.git_peer(old_command, repo), f"{new_command} --repository {repo}", tmp_path)
    # the old release's git_show varies by a hex address from one process to the next (where the system
    # randomises addresses): learned as a mask on that text, and nothing else is noise
    assert {(n["tool"], n.get("mask")) for n in learned["noise"]} <= {("git_show", "0x[0-9a-fA-F]{4,16}")}, learned
    paths = _tools_named_by_tool(doc)
    assert "$.result.tools[name=git_show].description" in paths, paths
    assert "$.result.tools[name=git_add].inputSchema.properties.files.minItems" in paths, paths
    assert "$.result.tools[name=git_status].annotations" in paths, paths
    calls = {r["tool"]: r for r in _rows(doc, "tools/call")}
    assert {t: r["status"] for t, r in calls.items()} == {
        "git_status": "same", "git_log": "changed", "git_show": "changed", "git_branch": "same"}, text
    show = _diff(calls["git_show"], "$.result.content[0].text")
    # shown with the learned mask on the address; the new release prints no object at all
    assert "tzoffset object at " in show["recorded"] and "object at" not in show["new"], show
    assert "object at <masked>" in show["recorded"] or not learned["noise"], show
    log = _diff(calls["git_log"], "$.result.content[0].text")
    assert "Commit: '" in log["recorded"] and "Commit: '" not in log["new"], log
    _refused_then_and_now(doc)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the test's page without a line on stderr per request."""

    def log_message(self, format: str, *args: Any) -> None:
        """The test's output stays the test's."""


@contextmanager
def _local_site(root: Path) -> Iterator[str]:
    """A page served over HTTP from ``root`` on 127.0.0.1, on a port the system picks: its URL."""
    (root / "index.html").write_text("<html><head><title>Hello</title></head><body><h1>Hello</h1>"
                                     "<p>A page served locally.</p></body></html>")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)


def test_mcp_server_fetch_upgrade_shows_it_refuses_private_addresses(tmp_path, monkeypatch):
    """2025.4.7 (SDK 1.15) -> 2026.10.24: a page on 127.0.0.1, fetched by the old release (as markdown and
    raw), is refused by the new one (not a public address); its schema's bounds changed, named by tool."""
    old_command, new_command = rs.need(rs.OLD_FETCH), rs.need(rs.FETCH)
    for name in ("NO_PROXY", "no_proxy"):  # a proxy of the machine's never sees the local page
        monkeypatch.setenv(name, "127.0.0.1")
    site = tmp_path / "site"
    site.mkdir()
    with _local_site(site) as url:
        peer = npeers.Peer("mcp-server-fetch", {"list": ["tools"], "calls": [
            ["fetch", {"url": url}], ["fetch", {"url": url, "raw": True}]]}, stdio=old_command)
        doc, text, learned = _upgrade(peer, new_command, tmp_path)
    assert learned["noise"] == [], learned  # the same page, the same answer: nothing varies
    paths = _tools_named_by_tool(doc)
    assert "$.result.tools[name=fetch].inputSchema.properties.max_length.maximum" in paths, paths
    assert "$.result.tools[name=fetch].inputSchema.properties.max_length.exclusiveMaximum" in paths, paths
    calls = _rows(doc, "tools/call", "fetch")
    assert [r["status"] for r in calls] == ["changed", "changed"], text
    for row in calls:
        assert _diff(row, "$.result.isError") == {"path": "$.result.isError", "kind": "changed",
                                                  "recorded": False, "new": True}, row
        refused = _diff(row, "$.result.content[0].text")
        assert "A page served locally." in refused["recorded"], refused
        assert "not a public address" in refused["new"], refused
    _refused_then_and_now(doc)


_FRESH_MEMORY = """\
import os, subprocess, sys
path = sys.argv[1]
if os.path.exists(path):
    os.unlink(path)
env = {**os.environ, "MEMORY_FILE_PATH": path}
if os.name == "posix":
    os.execvpe(sys.argv[2], sys.argv[2:], env)
sys.exit(subprocess.call(sys.argv[2:], env=env))
"""


def test_server_memory_upgrade_shows_its_real_changes(tmp_path):
    """2025.4.25 -> 2026.8.31: structured content came for every tool (the text of the writes unchanged),
    the graph's text lost its ``type`` fields, and a search now returns the relations of what it found."""
    old_js, new_js = rs.need(rs.OLD_MEMORY), rs.need(rs.MEMORY)
    # each server process starts from an empty memory file of the test's (a replay creates the same entities)
    wrapper = tmp_path / "fresh_memory.py"
    wrapper.write_text(_FRESH_MEMORY)
    fresh = f"{shlex.quote(sys.executable)} {shlex.quote(str(wrapper))} {shlex.quote(str(tmp_path / 'memory.jsonl'))}"
    people = [{"name": "Alice", "entityType": "person", "observations": ["likes tea"]},
              {"name": "Bob", "entityType": "person", "observations": ["plays chess"]}]
    peer = npeers.Peer("server-memory", {"list": ["tools"], "calls": [
        ["create_entities", {"entities": people}],
        ["create_relations", {"relations": [{"from": "Alice", "to": "Bob", "relationType": "knows"}]}],
        ["search_nodes", {"query": "tea"}],
        ["read_graph", {}]]}, stdio=f"{fresh} {old_js}")
    doc, text, learned = _upgrade(peer, f"{fresh} {new_js}", tmp_path)
    assert learned["noise"] == [], learned
    paths = _tools_named_by_tool(doc)
    for tool in ("create_entities", "create_relations", "search_nodes", "read_graph", "open_nodes"):
        assert f"$.result.tools[name={tool}].outputSchema" in paths, paths
    calls = {r["tool"]: r for r in _rows(doc, "tools/call")}
    assert all(r["status"] == "changed" for r in calls.values()), text
    for tool in ("create_entities", "create_relations"):  # the text the same: only what came is shown
        assert _paths(calls[tool]) == ["$.result.structuredContent"], calls[tool]
    # JSON inside the text compared as JSON: the relation the search now returns, the type fields gone
    found = _diff(calls["search_nodes"], "$.result.content[0].text.relations[0]")
    assert found["kind"] == "added" and found["new"] == {"from": "Alice", "to": "Bob", "relationType": "knows"}
    graph = _paths(calls["read_graph"])
    assert "$.result.content[0].text.entities[0].type" in graph, graph
    assert "$.result.content[0].text.relations[0].type" in graph, graph
    assert not [p for p in graph if p.endswith((".name", ".observations", ".relationType"))], graph
    _refused_then_and_now(doc)


def test_server_filesystem_upgrade_shows_search_became_a_glob(tmp_path):
    """2025.8.21 -> 2026.8.31: ``search_files`` takes a glob (``txt`` found two files, now none; ``*.txt``
    found none, now two); structured content came, the text of a read and a listing unchanged."""
    old_js, new_js = rs.need(rs.OLD_FILESYSTEM), rs.need(rs.FILESYSTEM)
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("alpha\n")
    (root / "notes.txt").write_text("n\n")
    (root / "sub" / "b.md").write_text("# b\n")
    where = str(root)
    peer = npeers.Peer("server-filesystem", {"list": ["tools"], "calls": [
        ["read_text_file", {"path": str(root / "a.txt")}],
        ["list_directory", {"path": where}],
        ["search_files", {"path": where, "pattern": "txt"}],
        ["search_files", {"path": where, "pattern": "*.txt"}]]}, stdio=f"{old_js} {shlex.quote(where)}")
    doc, text, learned = _upgrade(peer, f"{new_js} {shlex.quote(where)}", tmp_path)
    assert learned["noise"] == [], learned
    paths = _tools_named_by_tool(doc)
    assert "$.result.tools[name=search_files].description" in paths, paths
    assert "$.result.tools[name=read_text_file].outputSchema" in paths, paths
    calls = _rows(doc, "tools/call")
    assert [(r["tool"], r["status"]) for r in calls] == [
        ("read_text_file", "changed"), ("list_directory", "changed"),
        ("search_files", "changed"), ("search_files", "changed")], text
    for row in calls[:2]:  # the same text: only the structured content that came
        assert _paths(row) == ["$.result.structuredContent"], row
    txt = [str(root / "a.txt"), str(root / "notes.txt")]
    substring, glob = (_diff(r, "$.result.content[0].text") for r in calls[2:])
    assert sorted(substring["recorded"].splitlines()) == txt and substring["new"] == "No matches found", substring
    assert glob["recorded"] == "No matches found" and sorted(glob["new"].splitlines()) == txt, glob
    assert [r["status"] for r in _rows(doc, "initialize")] == ["changed"], text
    assert _paths(_rows(doc, "initialize")[0]) == ["$.result.capabilities.tools.listChanged"], text
    _refused_then_and_now(doc)
