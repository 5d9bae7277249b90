"""Help that teaches (issue 29): ``mcpreel --help`` grouped by task, every verb's help ending in examples
that its own parser accepts, a few of them run for real, and ``mcpreel help TOPIC``."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.cli.helptext import SECTIONS, TOPICS
from tests.cli.test_vocabulary import leaf_context, walk
from tests.conftest import FIXTURES, ROOT, free_port, needs_shared, wait_port
from tests.docs.pages import all_pages, command_lines

SECTION_TITLES = [title for title, _ in SECTIONS]
#: the README's command for "your server", and what runs in its place when an example is run for real
SERVER = f"{shlex.quote(sys.executable)} -m mcpreel demo-server"


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def example_lines(cmd: click.Command) -> list[str]:
    """The command lines of a verb's epilog (its "Examples:" block)."""
    epilog = cmd.epilog or ""
    head, sep, body = epilog.partition("Examples:\n")
    return [line.strip() for line in body.splitlines() if line.strip()] if sep else []


def argv_of(line: str) -> list[str]:
    words = shlex.split(line, comments=True)
    assert words[0] == "mcpreel", line
    return words[1:]


ALL_COMMANDS = [(" ".join(path), cmd) for path, cmd in walk(cli) if path]
ALL_EXAMPLES = [(where, line) for where, cmd in ALL_COMMANDS for line in example_lines(cmd)]
#: the command lines of ``mcpreel help TOPIC`` pages (their ``sh`` blocks)
TOPIC_EXAMPLES = [(topic, line) for topic, make in TOPICS.items() for line in command_lines(make())]


def test_top_help_is_grouped_by_task_with_one_line_a_verb():
    r = run("--help")
    assert r.exit_code == 0
    lines = r.output.splitlines()
    titles = [line[:-1] for line in lines if line.endswith(":") and not line.startswith(" ")]
    # every section, in order; a verb no section names would add "Other": name it in helptext.SECTIONS
    assert titles == ["Options", *SECTION_TITLES]
    verbs = [line.split()[0] for line in lines if line.startswith("  ") and not line.startswith("   ")
             and not line.lstrip().startswith("-") and len(line.split()) > 1]
    listed = [v for v in verbs if v in {p for p, _ in ALL_COMMANDS}]
    top = sorted(cli.list_commands(click.Context(cli)))
    assert sorted(listed) == top  # every verb once
    for line in lines[1:]:  # (the usage line ends in [ARGS]...)
        assert len(line) <= 100 and not line.rstrip().endswith("..."), line  # one whole line each


def test_every_verb_ends_its_help_with_examples():
    short = [where for where, cmd in ALL_COMMANDS if not isinstance(cmd, click.Group)
             and not 2 <= len(example_lines(cmd)) <= 3]
    assert short == [], "verbs without two or three examples"
    groups = [where for where, cmd in ALL_COMMANDS if isinstance(cmd, click.Group) and not example_lines(cmd)]
    assert groups == []
    page = run("replay", "--help").output
    assert page.rstrip().endswith(example_lines(cli.get_command(click.Context(cli), "replay"))[-1])  # type: ignore[arg-type]


@pytest.mark.parametrize(("where", "line"), ALL_EXAMPLES, ids=[line for _, line in ALL_EXAMPLES])
def test_every_example_is_accepted_by_the_parser_of_its_verb(where, line):
    """Parsed with the verb's own parser (unknown, renamed or missing options fail here, not on a reader)."""
    argv = argv_of(line)
    assert " ".join(argv).startswith(where), f"an example of `{where}` runs `{' '.join(argv[:2])}`"
    ctx = leaf_context(argv)
    assert set(ctx.params) == {p.name for p in ctx.command.params if p.expose_value}  # parsed to the end


@pytest.mark.parametrize(("topic", "line"), TOPIC_EXAMPLES, ids=[line for _, line in TOPIC_EXAMPLES])
def test_every_example_of_a_help_topic_parses(topic, line):
    ctx = leaf_context(argv_of(line))
    assert set(ctx.params) == {p.name for p in ctx.command.params if p.expose_value}


def test_the_parse_check_can_fail():
    with pytest.raises(click.NoSuchOption):
        leaf_context(argv_of("mcpreel inspect session.jsonl --summaries"))
    with pytest.raises(click.BadParameter):
        leaf_context(argv_of("mcpreel check http://h/mcp --era ancient"))


def test_help_topics_print_their_reference_page():
    """Each topic is a page of the docs' reference (the same file: ``tests/docs/test_site.py``), with examples
    and a pointer on; a page is a page, not a screenful, so only its parts are pinned here."""
    for topic in TOPICS:
        r = run("help", topic)
        assert r.exit_code == 0 and r.output.startswith("# "), topic
        assert "Traceback" not in r.output
    assert len(TOPIC_EXAMPLES) >= 10
    assert "dir:c2s" in run("help", "filters").output
    eras = run("help", "eras").output
    assert "legacy era (handshake)" in eras and "modern era (stateless, 2026-07-28)" in eras
    assert "reel" in run("help", "formats").output and "har" in run("help", "formats").output
    assert "--target-command" in run("help", "names").output
    assert run("help", "replay").output == run("replay", "--help").output
    bad = run("help", "nonsense")
    assert bad.exit_code == 2 and bad.output.count("\n") == 1 and "formats, filters" in bad.output


# -- a few examples run for real: the README's files and servers stand in for the examples' names --


def _mcpreel(line: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    argv = argv_of(line.replace('"python my_server.py"', f'"{SERVER}"').replace("'python server.py'", f"'{SERVER}'"))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "mcpreel", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def _example(verb: str, starts: str) -> str:
    lines = [line for where, line in ALL_EXAMPLES if where == verb]
    found = [line for line in lines if line == starts] or [line for line in lines if line.startswith(starts)]
    assert len(found) == 1, (verb, starts, found)
    return found[0]


@needs_shared
def test_the_look_and_convert_examples_run_on_a_real_session(tmp_path):
    shutil.copy(FIXTURES / "qai" / "qai_session_fastmcp.json", tmp_path / "session.qai.json")
    (tmp_path / "rules.json").write_text('{"keys": ["api_key"], "paths": ["$.params.arguments.email"]}')
    for verb, starts, made in [
        ("convert", "mcpreel convert session.qai.json session.jsonl", "session.jsonl"),
        ("convert", "mcpreel convert session.jsonl capture.har", "capture.har"),
        ("inspect", "mcpreel inspect session.jsonl --summary", None),
        ("inspect", "mcpreel inspect session.qai.json -v --json", None),
        ("report", "mcpreel report session.jsonl", "session.html"),
        ("redact", "mcpreel redact session.jsonl shared.jsonl", "shared.jsonl"),
        ("redact", "mcpreel redact session.jsonl shared.jsonl --rules rules.json", "shared.jsonl"),
        ("import", "mcpreel import session.jsonl --trace-format simple", "calls.jsonl"),
    ]:
        r = _mcpreel(_example(verb, starts), tmp_path)
        assert r.returncode == 0, (starts, r.stderr)
        if made:
            assert (tmp_path / made).stat().st_size > 0, made
    shutil.copy(tmp_path / "session.jsonl", tmp_path / "v1.jsonl")
    shutil.copy(tmp_path / "session.jsonl", tmp_path / "v2.jsonl")
    r = _mcpreel(_example("diff", "mcpreel diff v1.jsonl v2.jsonl"), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr  # a recording agrees with itself


def test_the_check_and_contract_examples_run_against_the_demo_server(tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = subprocess.Popen([sys.executable, "-m", "mcpreel", "demo-server", "--transport", "streamable-http",
                               "--port", str(port)], env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port, 30)
        r = _mcpreel(_example("check", "mcpreel check http://127.0.0.1:8000/mcp --profile mcp")
                     .replace("http://127.0.0.1:8000/mcp", url), tmp_path, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        # the eras line in the one set of era words
        assert "modern era (stateless, 2026-07-28): server/discover answered" in r.stdout
        assert "legacy era (handshake): initialize answered" in r.stdout
    finally:
        server.terminate()
        server.wait(10)
    snap = _mcpreel(_example("contract snapshot", "mcpreel contract snapshot --target-command"), tmp_path)
    assert snap.returncode == 0, snap.stderr
    assert (tmp_path / "mcp-contract.json").is_file()
    again = _mcpreel(_example("contract check", "mcpreel contract check mcp-contract.json --target-command"),
                     tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr  # the same server: nothing changed


# -- the command lines of the README and the docs teach the same names, and parse --


#: (page, line) for every ``mcpreel ...`` line of the README's and the docs' sh code blocks
DOCS_LINES = [(where, line) for where, text in all_pages().items() for line in command_lines(text)]


def test_the_docs_show_commands():
    assert len(DOCS_LINES) > 100
    assert len([1 for where, _ in DOCS_LINES if where == "README.md"]) >= 10


@pytest.mark.parametrize(("where", "line"), DOCS_LINES, ids=[f"{w}: {line}" for w, line in DOCS_LINES])
def test_a_docs_command_uses_the_one_names_and_parses(where, line):
    from mcpreel.cli.vocabulary import CONCEPTS, SPELLED_BY_OTHERS

    argv = argv_of(line)
    allowed = {name for (path, name) in SPELLED_BY_OTHERS if " ".join(argv).startswith(path)}
    own = argv[:argv.index("--")] if "--" in argv else argv  # after --: the server's own words
    for concept in CONCEPTS:
        for word in own:
            assert word not in concept.synonyms or word in allowed, f"{word}: {where} teaches {concept.name}"
    if any(mark in line for mark in ("[", "…", "URL ", "$")) or line.endswith("URL"):
        return  # a placeholder the reader fills in ([-v], URL, …): the names above are what can be checked
    leaf_context(argv)
