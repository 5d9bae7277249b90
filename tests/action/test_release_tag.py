"""The Action's ``@v1``: the release step that moves the tag (``make action-tag``, ``tools/action_tag.py``) checks
``action.yml`` first and moves nothing when it is not valid, and the docs page lists the inputs ``action.yml`` has
(no input the Action lacks, none it has left out), naming the tag the release step moves."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

TOOL = ROOT / "tools" / "action_tag.py"
PAGE = ROOT / "src" / "mcpreel" / "cli" / "topics" / "action.md"
#: the tag the release step moves by default, as the tool says it
TAG = re.search(r'^DEFAULT_TAG = "(v\d+)"', TOOL.read_text(encoding="utf-8"), flags=re.M).group(1)
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _inputs() -> list[str]:
    return list(yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"])


def _tool(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOL), "--root", str(repo), *args], capture_output=True, text=True,
                          timeout=60, env={**os.environ, **GIT_ENV})


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **GIT_ENV})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path):
    """A repository holding a copy of the Action (action.yml and its scripts), one commit in."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "action"
    shutil.copytree(ROOT / ".github" / "actions", repo / ".github" / "actions")
    shutil.copy(ROOT / "action.yml", repo / "action.yml")
    _git(tmp_path, "init", "-q", str(repo))
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "the Action")
    return repo


def test_this_checkouts_action_yml_passes_the_release_check():
    sys.path.insert(0, str(TOOL.parent))
    try:
        import action_tag
    finally:
        sys.path.remove(str(TOOL.parent))
    assert action_tag.check_action(ROOT) == []


def test_the_release_step_makes_then_moves_v1_to_the_current_commit(repo):
    first = _git(repo, "rev-parse", "HEAD")
    said = _tool(repo, "--dry-run")
    assert said.returncode == 0 and said.stdout.strip() == f"would move v1 (new) to {first[:12]} (action.yml is valid)"
    assert _git(repo, "tag", "--list") == ""  # a dry run moves nothing

    made = _tool(repo)
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == f"moved v1 (new) to {first[:12]}; publish it: git push --force origin v1"
    assert _git(repo, "rev-parse", "v1^{commit}") == first

    (repo / "NEWS").write_text("a fix\n")
    _git(repo, "add", "NEWS")
    _git(repo, "commit", "-q", "-m", "a fix")
    second = _git(repo, "rev-parse", "HEAD")
    moved = _tool(repo)
    assert moved.returncode == 0 and f"moved v1 from {first[:12]} to {second[:12]}" in moved.stdout
    assert _git(repo, "rev-parse", "v1^{commit}") == second
    assert _tool(repo).stdout.strip() == f"v1 is already at {second[:12]}: nothing to move"


@pytest.mark.parametrize(("change", "said"), [
    (lambda doc: doc["inputs"].update({"unused": {"description": "never read", "default": ""}}),
     "input unused is declared but no step reads it"),
    (lambda doc: doc["inputs"].pop("noise"), "inputs.noise is read by a step but not declared"),
    (lambda doc: doc["runs"].update({"using": "node20"}), "runs.using is 'node20', not 'composite'"),
    (lambda doc: doc["inputs"]["jobs"].pop("description"), "inputs.jobs has no description"),
])
def test_an_invalid_action_yml_leaves_the_tag_where_it_was(repo, change, said):
    assert _tool(repo).returncode == 0
    tagged = _git(repo, "rev-parse", "v1^{commit}")
    doc = yaml.safe_load((repo / "action.yml").read_text())
    change(doc)
    (repo / "action.yml").write_text(yaml.safe_dump(doc, sort_keys=False))
    _git(repo, "commit", "-q", "-am", "a broken Action")
    refused = _tool(repo)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith("action-tag: action.yml is not valid, v1 left as it was: ")
    assert said in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert _git(repo, "rev-parse", "v1^{commit}") == tagged


def test_uncommitted_changes_to_the_action_or_a_missing_script_are_refused(repo):
    with open(repo / "action.yml", "a") as f:
        f.write("# an edit not committed\n")
    refused = _tool(repo)
    assert refused.returncode == 2 and "uncommitted changes to the Action (M action.yml)" in refused.stderr
    _git(repo, "checkout", "-q", "action.yml")
    script = next((repo / ".github" / "actions" / "scripts").glob("run.sh"))
    script.unlink()
    _git(repo, "commit", "-q", "-am", "no run.sh")
    refused = _tool(repo)
    assert refused.returncode == 2 and "runs .github/actions/scripts/run.sh, which does not exist" in refused.stderr
    assert _git(repo, "tag", "--list") == ""
    assert "is not a major version tag" in _tool(repo, "--tag", "v1.4.0").stderr


def _yaml_blocks(text: str) -> list[str]:
    return re.findall(r"```ya?ml\n(.*?)```", text, flags=re.S)


def test_the_docs_page_lists_the_inputs_action_yml_has():
    """The page's example uses only inputs the Action has (a commented-out one too), names the tag the release
    step moves, and its inputs table (filled in from action.yml by the site's hook) has every input, in order."""
    page = PAGE.read_text(encoding="utf-8")
    inputs = _inputs()
    examples = [b for b in _yaml_blocks(page) if "mcpreel/mcpreel@" in b]
    assert examples, "the page shows no workflow using the Action"
    for block in examples:
        assert re.search(rf"uses: mcpreel/mcpreel@{TAG}\b", block)
        with_part = block.split("with:", 1)[1]
        named = re.findall(r"^\s+#?\s*([a-z][a-z-]*):", with_part, flags=re.M)
        assert named and set(named) <= set(inputs), f"not inputs of action.yml: {sorted(set(named) - set(inputs))}"
    # the prose's `name` in backticks that is spelled like an input is one (and every input the prose
    # explains is still there): the names it must mean, from the paragraphs about them
    prose = re.sub(r"```.*?```", "", page, flags=re.S)
    for name in ("target-command", "server-command", "source", "target-url", "session", "jobs", "ignore-path",
                 "compare-rules", "noise", "repeat", "check-profile", "upload-sarif"):
        assert f"`{name}`" in prose and name in inputs, name
    assert "<!-- mcpreel:action-inputs -->" in page
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (pip install -e '.[docs]'): the table is not made")
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import mkdocs_hooks
    finally:
        sys.path.remove(str(ROOT / "tools"))
    table = mkdocs_hooks.action_inputs().split("\n\n", 1)[0]
    assert re.findall(r"^\| `([a-z-]+)` \|", table, flags=re.M) == inputs


def test_the_release_step_is_documented_and_in_the_makefile():
    page = PAGE.read_text(encoding="utf-8")
    assert "make action-tag" in page and "tools/action_tag.py" in page
    assert re.search(r"^action-tag:", (ROOT / "Makefile").read_text(), flags=re.M)
    assert f"`@{TAG}`" in page
