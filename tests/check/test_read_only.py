"""``mcpreel check`` changes nothing by default: it calls only tools annotated ``readOnlyHint: true``.

Against real servers whose tools write: ``@modelcontextprotocol/server-filesystem`` on a temp folder and
the Python ``mcp-server-git`` on a temp repository. Nothing on disk may change (the tree's bytes, the
repository's HEAD, refs and index), and the report names every write tool it skipped. Against
server-everything, ``get-env`` (called only when asked) must not put the server's environment in the
report, in any of its three forms.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpreel.check import PASS, SKIP, CheckOptions, run_check
from mcpreel.render.check import plain_lines, to_json, to_junit
from tests.conftest import ROOT

pytestmark = pytest.mark.e2e

FILESYSTEM_JS = ROOT / ".peers" / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
NOT_READ_ONLY = "not called: not annotated readOnlyHint: true; --call-all or --call"


def tree_digest(root: Path) -> str:
    """Every path, mode and byte under ``root`` (``.git`` included), as one hash."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        h.update(str(path.relative_to(root)).encode())
        st = path.lstat()
        h.update(oct(st.st_mode).encode())
        if path.is_file() and not path.is_symlink():
            h.update(path.read_bytes())
    return h.hexdigest()


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}).stdout


def skipped(report) -> dict[str, str]:
    return {r.id.removeprefix("tools-call:"): r.summary for r in report.results
            if r.id.startswith("tools-call:") and r.status == SKIP}


def called(report) -> set[str]:
    return {r.id.removeprefix("tools-call:") for r in report.results
            if r.id.startswith("tools-call:") and r.status != SKIP}


@pytest.fixture
def filesystem_js(everything_js) -> Path:
    if not FILESYSTEM_JS.is_file():
        pytest.fail(f"server-filesystem is not installed at {FILESYSTEM_JS}: run `make peers`")
    return FILESYSTEM_JS


def test_filesystem_server_is_left_as_it_was(filesystem_js, tmp_path):
    root = tmp_path / "files"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("hello\n")
    (root / "sub" / "b.json").write_text('{"k": 1}\n')
    before = tree_digest(tmp_path)
    report = run_check(command=["node", str(filesystem_js), str(root)], options=CheckOptions(profile="mcp"))
    assert tree_digest(tmp_path) == before
    skips = skipped(report)
    for write_tool in ("write_file", "edit_file", "move_file", "create_directory"):
        assert skips[write_tool].startswith(NOT_READ_ONLY) or "readOnlyHint: false" in skips[write_tool], write_tool
        assert f'--call \'{{"{write_tool}": {{...}}}}\' to call it' in skips[write_tool]
    # what the server marks read-only is called (and only that)
    assert called(report) and not called(report) & set(skips)
    assert "list_allowed_directories" in called(report)


def test_git_server_is_left_as_it_was(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("first\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "first")
    (repo / "README.md").write_text("first\nsecond, staged\n")
    git(repo, "add", "README.md")
    (repo / "notes.txt").write_text("untracked\n")
    head, refs = git(repo, "rev-parse", "HEAD"), git(repo, "show-ref")
    index = (repo / ".git" / "index").read_bytes()
    before = tree_digest(tmp_path)
    report = run_check(command=[sys.executable, "-m", "mcp_server_git", "--repository", str(repo)],
                       options=CheckOptions(profile="mcp"))
    assert report.get("tools-list").status == PASS
    assert (git(repo, "rev-parse", "HEAD"), git(repo, "show-ref")) == (head, refs)
    assert (repo / ".git" / "index").read_bytes() == index
    assert tree_digest(tmp_path) == before
    skips = skipped(report)
    for write_tool in ("git_commit", "git_reset", "git_checkout", "git_add", "git_create_branch"):
        assert write_tool in skips, write_tool
        assert "--call-all" in skips[write_tool]
    assert not called(report) & {"git_commit", "git_reset", "git_checkout", "git_add", "git_create_branch"}


def everything_tools(everything_js) -> dict[str, dict]:
    from mcpreel.check.probe import StdioProbe
    from mcpreel.check.protocol import initialize_params

    with StdioProbe(["node", str(everything_js), "stdio"], timeout=10) as probe:
        probe.request("initialize", initialize_params("2025-11-25"))
        probe.notify("notifications/initialized")
        return {t["name"]: t for t in probe.request("tools/list").response["result"]["tools"]}


def test_server_everything_gets_only_its_read_only_tools_called_and_get_env_leaks_nothing(everything_js):
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    env = {**os.environ, "MCPREEL_TEST_MARKER": "plain-marker-value-42", "GITHUB_TOKEN": secret}
    quick = {"trigger-long-running-operation": {"duration": 0.2, "steps": 2}}  # read-only, 10 s by default
    report = run_check(command=f"node {everything_js} stdio", env=env, options=CheckOptions(profile="mcp", calls=quick))
    tools = everything_tools(everything_js)
    read_only = {name for name, t in tools.items() if (t.get("annotations") or {}).get("readOnlyHint") is True}
    assert called(report) == read_only
    assert set(skipped(report)) == set(tools) - read_only
    assert skipped(report)["gzip-file-as-resource"].startswith("not called: annotated readOnlyHint: false; ")
    # get-env says it is read-only, and answers with the server's environment: the report quotes none of it
    assert "get-env" in called(report)
    assert_no_environment(report, secret)


def test_a_quoted_get_env_answer_keeps_the_names_and_loses_the_values(everything_js):
    """What a failing check would quote of get-env's real answer (the exchange, cut to an excerpt)."""
    from mcpreel.check.probe import StdioProbe
    from mcpreel.check.protocol import initialize_params
    from mcpreel.check.redaction import redact_report
    from mcpreel.check.result import FAIL, CheckReport, CheckResult

    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    env = {"PATH": "/opt/node/bin:/usr/bin:/bin", "HOME": "/home/someone", "GITHUB_TOKEN": secret,
           "MCPREEL_TEST_MARKER": "plain-marker-value-42"}
    with StdioProbe(["node", str(everything_js), "stdio"], timeout=10, env=env) as probe:
        probe.request("initialize", initialize_params("2025-11-25"))
        ex = probe.request("tools/call", {"name": "get-env", "arguments": {}})
    full = ex.received_text()
    cut, cut_short = full[:full.index("/home/someone") + 8] + "…", full[:full.index("/usr/bin") + 4] + "…"
    assert "/home/so" in cut and "/opt/node" in cut_short  # what the quotes would leak without redaction
    report = CheckReport(target="x", transport="stdio", profile="mcp",
                         results=[CheckResult("a", "a", FAIL, "x", received=full, details=[cut, cut_short])])
    assert redact_report(report) >= 4
    r = report.results[0]
    for text in (r.received, *r.details):
        assert "/home/so" not in text and secret not in text and "/opt/node" not in text
        assert "PATH" in text and "[REDACTED]" in text
    assert "plain-marker-value-42" not in r.received


def assert_no_environment(report, secret: str) -> None:
    forms = {"text": "\n".join(plain_lines(report)), "json": to_json(report), "junit": to_junit(report)}
    for name, form in forms.items():
        assert secret not in form, name
        assert "plain-marker-value-42" not in form, name
        assert os.environ["PATH"] not in form, name
        assert json.dumps(os.environ["PATH"]) not in form, name


def test_the_cli_lists_the_skipped_write_tools_in_junit(filesystem_js, tmp_path):
    import xml.etree.ElementTree as ET

    from tests.check.test_cli import mcpreel

    (tmp_path / "a.txt").write_text("hello\n")
    before = tree_digest(tmp_path)
    p = mcpreel("check", "--profile", "mcp", "--format", "junit", "--command", f"node {filesystem_js} {tmp_path}")
    assert p.returncode == 0, p.stderr
    assert tree_digest(tmp_path) == before
    cases = {c.get("name"): c for c in ET.fromstring(p.stdout).iter("testcase")}
    skipped_write = cases["tools-call:write_file"].find("skipped")
    assert skipped_write is not None and "--call-all" in skipped_write.get("message")
