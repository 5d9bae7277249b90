"""The docs (issue 39): a README of at most 150 lines, a site built strict with no broken link, one source for
the site's reference pages and ``mcpreel help TOPIC``, no word only this project's history explains, and the
topic pages inside an installed wheel. (Every command line of the docs is parsed in ``tests/cli/test_help.py``.)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.cli.help_cmd import cli_reference
from mcpreel.cli.helptext import TOPIC_NAMES, topic_text
from tests.conftest import FIXTURES, needs_shared
from tests.docs.pages import DOCS, README, ROOT, TOPICS, all_pages

#: the two set-up commands the README opens with, unchanged since the first README
SETUP = """```sh
make demo   # creates .venv, installs, runs the main job on the built-in demo
make test   # creates .venv, installs with dev extras and the test peers, runs ruff, mypy and the whole test suite
```"""


def test_the_readme_is_short_and_opens_with_the_two_setup_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    assert text.startswith("# mcpreel\n\n" + SETUP)
    for job in ("mcpreel wrap", "mcpreel report", "mcpreel replay", "mcp-record-mode", "mcpreel calls --failed --since yesterday"):
        assert job in text, job
    assert text.index("pip install mcpreel") < text.index("pipx install mcpreel") < text.index("uvx mcpreel")


_LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_readme_links_lead_to_files_that_exist():
    text = README.read_text(encoding="utf-8")
    missing = []
    for target in _LINK.findall(text):
        if target.startswith(("http://", "https://", "#")):
            continue
        if not (ROOT / target.partition("#")[0]).exists():
            missing.append(target)
    assert missing == []


def test_mcpreel_help_shows_the_page_the_site_renders():
    """One source: the package's topic files are the ones the site's hook serves, and ``help`` prints them."""
    assert Path(str(resources.files("mcpreel.cli").joinpath("topics"))).resolve() == TOPICS.resolve()
    assert sorted(p.stem for p in TOPICS.glob("*.md")) == sorted(TOPIC_NAMES)
    for name in TOPIC_NAMES:
        assert not (DOCS / "reference" / f"{name}.md").exists(), f"docs/reference/{name}.md: a second source"
        r = CliRunner().invoke(cli, ["help", name])
        assert r.exit_code == 0, r.output
        assert r.output.rstrip("\n") == topic_text(name).rstrip("\n")
        assert r.output.startswith("# "), name
        assert "<!-- mcpreel:" not in r.output  # every marker filled in (the site-only ones with a pointer)
    # the generated parts come from the code: every format name, every one-name concept
    from mcpreel.cli.vocabulary import CONCEPTS
    from mcpreel.formats import FORMATS

    formats = CliRunner().invoke(cli, ["help", "formats"]).output
    assert all(f"`{name}`" in formats for name in FORMATS)
    names = CliRunner().invoke(cli, ["help", "names"]).output
    assert all(f"`{c.name}`" in names for c in CONCEPTS)


def test_a_link_in_a_topic_is_spelled_out_for_the_terminal():
    text = topic_text("exit-codes")
    assert "[The Action](action.md)" not in text and "The Action (docs/reference/action.md)" in text
    assert "(docs/guides/pytest-cassettes.md)" in topic_text("pytest")


#: words only this project's history explains: each must not be said, or must have a glossary entry
INTERNAL = {
    r"\bseed \d": None,
    r"\bspec \d\d\b": None,
    r"\bK2-A\b": "K2-A",
    r"\bqai's words\b": "qai's words",
    r"\bAssay's words\b|\bassay's words\b": "Assay's words",
    r"\bissue \d+": "issue N",
}


def test_no_internal_word_without_a_glossary_entry():
    pages = all_pages()
    pages["reference/cli.md (generated)"] = cli_reference()
    pages["BENCHMARKS.md (included)"] = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    glossary = pages["reference/glossary.md"]
    entries = re.findall(r"^\*\*(.+?)\*\*$", glossary, re.M)
    for pattern, entry in INTERNAL.items():
        said = [where for where, text in pages.items() if re.search(pattern, text)]
        if entry is None:
            assert said == [], f"{pattern}: say what it means instead ({said})"
        elif said:
            assert any(entry in e for e in entries), f"{pattern} is said in {said}: the glossary needs {entry!r}"


def _mkdocs() -> None:
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (pip install -e '.[docs]'): the site is not built")
    pytest.importorskip("material", reason="mkdocs-material is not installed (pip install -e '.[docs]')")


def test_the_site_builds_strict_with_no_broken_link(tmp_path):
    """``make docs``'s build: strict, so a broken link or anchor, a page left out of the nav or a nav entry
    without its page fails it; then the generated parts are there."""
    _mkdocs()
    site = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)], cwd=ROOT,
                       capture_output=True, text=True, timeout=600, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert r.returncode == 0, r.stderr[-4000:]
    assert "WARNING" not in r.stderr, r.stderr
    for name in TOPIC_NAMES:
        assert (site / "reference" / name / "index.html").is_file(), name
    commands = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "mcpreel replay" in commands and "--target-command" in commands and "Examples:" in commands
    action = (site / "reference" / "action" / "index.html").read_text(encoding="utf-8")
    assert "target-command" in action and "check-profile" in action  # the inputs table, from action.yml
    benchmarks = (site / "explanation" / "benchmarks" / "index.html").read_text(encoding="utf-8")
    assert "proxy_stdio" in benchmarks  # BENCHMARKS.md, included


@pytest.mark.timeout(600)
def test_an_installed_wheel_has_the_help_topics(tmp_path):
    """The topics are package data: a wheel built from the sources carries them, and its ``help`` reads them."""
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    out = tmp_path / "wheels"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(tree)],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0 and "No matching distribution found for setuptools" in r.stderr:
        pytest.skip("no package index answers here: the wheel's build requirements cannot be installed")
    assert r.returncode == 0, r.stderr[-4000:]
    (wheel,) = out.glob("mcpreel-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for topic in TOPIC_NAMES:
            assert f"mcpreel/cli/topics/{topic}.md" in names, topic
        assert z.read("mcpreel/cli/topics/eras.md").decode() == (TOPICS / "eras.md").read_text(encoding="utf-8")


def test_the_conformance_tables_are_written_into_their_page(tmp_path):
    """``python bench/conformance_table.py`` writes its tables between the markers of the Conformance page
    (run with the suite's peers; here its writer alone, on a copy)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("conformance_table", ROOT / "bench" / "conformance_table.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    page = DOCS / "explanation" / "conformance.md"
    text = page.read_text(encoding="utf-8")
    assert text.count(bench.START) == 1 and text.count(bench.END) == 1
    copy = tmp_path / "conformance.md"
    copy.write_text(text, encoding="utf-8")
    bench.write_readme(copy, ["| scenario | direct |", "|---|---|", "| ping | ✓ 1/1 |"])
    written = copy.read_text(encoding="utf-8")
    assert f"{bench.START}\n| scenario | direct |" in written and written.startswith("# Judged by the official")
    source = (ROOT / "bench" / "conformance_table.py").read_text(encoding="utf-8")
    assert 'default=ROOT / "docs" / "explanation" / "conformance.md"' in source  # where it writes by default


def _readme_line(starts: str) -> str:
    from tests.docs.pages import command_lines

    (line,) = [x for x in command_lines(README.read_text(encoding="utf-8")) if x.startswith(starts)]
    return line


@needs_shared
def test_the_readme_look_and_find_commands_run_as_written(tmp_path):
    """The README's "look at a session" and "find yesterday's failed call" lines, pasted into a shell whose
    home holds one recorded session (a real SDK session with a failed call)."""
    import shlex

    home = tmp_path / "home"
    sessions = home / ".mcpreel" / "sessions"
    sessions.mkdir(parents=True)
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT / "src")}
    env.pop("MCPREEL_RUNTIME_DIR", None)
    work = tmp_path / "work"
    work.mkdir()
    convert = subprocess.run([sys.executable, "-m", "mcpreel", "convert", str(FIXTURES / "qai" / "qai_session_fastmcp.json"),
                              str(work / "session.jsonl")], capture_output=True, text=True, timeout=120, env=env)
    assert convert.returncode == 0, convert.stderr
    shutil.copy(work / "session.jsonl", sessions / "session.jsonl")
    for starts in ("mcpreel inspect session.jsonl", "mcpreel report session.jsonl", "mcpreel index",
                   "mcpreel calls --failed"):
        argv = shlex.split(_readme_line(starts), comments=True)
        r = subprocess.run([sys.executable, "-m", *argv], cwd=work, capture_output=True, text=True, timeout=300,
                           env=env, stdin=subprocess.DEVNULL)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (starts, r.stdout, r.stderr)
    assert (work / "report.html").stat().st_size > 0
    assert (home / ".mcpreel" / "corpus.duckdb").is_file()


def test_the_architecture_page_names_every_folder_of_the_package():
    """The Architecture table (once the README's) answers "where is X": a new folder gets its row."""
    table = (DOCS / "explanation" / "architecture.md").read_text(encoding="utf-8")
    folders = sorted(p.name for p in (ROOT / "src" / "mcpreel").iterdir() if p.is_dir() and not p.name.startswith("__"))
    missing = [name for name in folders if f"`{name}/`" not in table]
    assert missing == [], f"docs/explanation/architecture.md has no row for {missing}"
