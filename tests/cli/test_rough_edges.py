"""The command line's last rough edges (issue 39), one test each: a mistyped verb, shell completion, read-only
folders, a command that cannot start, a port in use, a folder for a file, a bad URL, replay's differences,
the report's examples, ``wrap --dry-run``'s words, lines never broken when piped, options under headings."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.shell_completion import ShellComplete
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.cli.option_groups import GROUPS, flags_of
from tests.corpus.test_index import reel

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _invoke(*args: Any) -> Any:
    return CliRunner().invoke(cli, [str(a) for a in args])


def _mcpreel(*args: Any, cwd: Path | None = None, env: dict[str, str] | None = None,
             timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "mcpreel", *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)


def _one_line_exit_2(result: Any, *, stderr: str | None = None) -> str:
    text = result.stderr if stderr is None else stderr
    lines = [line for line in text.splitlines() if line.strip()]
    assert getattr(result, "exit_code", getattr(result, "returncode", None)) == 2, text
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in text, text
    return lines[0]


def test_a_mistyped_verb_is_answered_with_the_verbs_it_is_close_to() -> None:
    r = _invoke("inspct", "x.jsonl")
    assert r.exit_code == 2 and "No such command 'inspct'. Did you mean 'inspect'?" in r.output
    assert "Did you mean 'calls'?" in _invoke("call", "--failed").output
    far = _invoke("frobnicate")
    assert far.exit_code == 2 and "No such command 'frobnicate'." in far.output and "Did you mean" not in far.output


# -- completion --------------------------------------------------------------------------------------


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_the_shells_script(shell: str) -> None:
    r = _invoke("completion", shell)
    assert r.exit_code == 0 and "_MCPREEL_COMPLETE" in r.stdout and f"{shell}_complete" in r.stdout
    assert _invoke("completion", "powershell").exit_code == 2


def _completions(args: list[str], incomplete: str) -> list[str]:
    return [c.value for c in ShellComplete(cli, {}, "mcpreel", "_MCPREEL_COMPLETE").get_completions(args, incomplete)]


def test_format_names_and_help_topics_complete() -> None:
    from mcpreel.formats.table import reader_names, writer_names

    read_only = set(reader_names()) - set(writer_names())
    assert read_only  # (else the check below checks nothing)
    to = _completions(["convert", "in.json", "out.jsonl", "--to"], "")
    assert "reel" in to and "har" in to and not read_only & set(to)  # --to: what can be written
    assert set(reader_names()) <= set(_completions(["inspect", "--format"], ""))
    assert _completions(["inspect", "--format"], "qa") == ["qai"]
    topics = _completions(["help"], "")
    assert {"formats", "filters", "rules", "eras", "record", "calls"} <= set(topics)
    assert _completions(["help"], "fil") == ["filters"]
    assert "calls" in _completions([], "cal")
    # and through the shell's own protocol (what the script runs on Tab)
    proc = _mcpreel(env={"_MCPREEL_COMPLETE": "bash_complete", "COMP_WORDS": "mcpreel help for", "COMP_CWORD": "2"})
    assert proc.returncode == 0 and "plain,formats" in proc.stdout.splitlines()


# -- read-only folders, a command that cannot start, a port in use -----------------------------------


@pytest.mark.parametrize("blocked", ["a file in the way", "a read-only folder"])
def test_no_traceback_when_the_default_output_folder_cannot_be_written(tmp_path: Path, blocked: str) -> None:
    if blocked == "a file in the way":
        (tmp_path / "mcpreel-sessions").write_text("not a folder")
    else:
        if AS_ROOT:
            pytest.skip("root writes into a read-only folder")
        tmp_path.chmod(0o500)
    try:
        proc = _mcpreel("record", "--", PY, "-c", "pass", cwd=tmp_path)
    finally:
        tmp_path.chmod(0o700)
    line = _one_line_exit_2(proc)
    assert line.startswith("error: mcpreel-sessions: cannot write the session there") and "-o FILE" in line


@pytest.mark.parametrize("blocked", ["a file in the way", "a read-only folder"])
def test_no_traceback_when_the_index_folder_cannot_be_written(tmp_path: Path, blocked: str) -> None:
    sessions = reel(tmp_path / "s" / "a.jsonl").parent
    if blocked == "a file in the way":
        (tmp_path / "RO").write_text("a file")
    else:
        if AS_ROOT:
            pytest.skip("root writes into a read-only folder")
        (tmp_path / "RO").mkdir(mode=0o500)
    proc = _mcpreel("index", sessions, "--db", tmp_path / "RO" / "x.duckdb")
    line = _one_line_exit_2(proc)
    assert "cannot write the index there" in line and "--db FILE" in line
    nested = _mcpreel("index", sessions, "--db", tmp_path / "RO" / "deeper" / "x.duckdb")
    assert "cannot write the index there" in _one_line_exit_2(nested)


def test_cannot_start_is_said_before_anything_that_reads_like_success(tmp_path: Path) -> None:
    proc = _mcpreel("record", "-o", tmp_path / "s.jsonl", "--", "no-such-mcp-server-x", "--flag")
    assert proc.returncode == 127 and "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0] == "error: cannot start 'no-such-mcp-server-x': No such file or directory", lines
    assert not any(re.search(r"\brecording\b|session recorded|control:", line) for line in lines), lines
    assert lines[1:] == [f"mcpreel: the failed start is recorded in {tmp_path / 's.jsonl'}"]


def test_a_port_in_use_suggests_a_free_one(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        for args in (["demo-server", "--transport", "streamable-http", "--listen", f"127.0.0.1:{port}"],
                     ["record", "--transport", "streamable-http", "--target-url", "http://127.0.0.1:9/mcp",
                      "--listen", f"127.0.0.1:{port}", "-o", str(tmp_path / "r.jsonl"), "--no-control"]):
            r = _invoke(*args)
            line = _one_line_exit_2(r, stderr=r.output)
            assert "Address already in use" in line and "give --listen 127.0.0.1:0 to take a free port" in line


# -- a folder for a file, a bad URL ------------------------------------------------------------------


@pytest.mark.parametrize("args", [["inspect", "{d}"], ["report", "{d}"], ["diff", "{d}", "{d}"], ["convert", "{d}",
                                                                                                    "out.jsonl"]])
def test_a_folder_where_a_file_is_expected_says_what_to_do_with_a_folder(tmp_path: Path, args: list[str]) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    r = _invoke(*[a.format(d=folder) for a in args])
    assert r.exit_code == 2 and "Traceback" not in r.output
    said = " ".join(r.output.split())
    assert f"{folder} is a folder, not a session file" in said
    assert f"mcpreel index {folder}" in said and "mcpreel report --db" in said


def test_one_wording_for_a_bad_url(tmp_path: Path) -> None:
    recording = reel(tmp_path / "a.jsonl")
    wording = "is not an http:// or https:// URL with a host (such as http://127.0.0.1:8000/mcp)"
    said = {
        "record": _invoke("record", "--transport", "streamable-http", "--target-url", "htp:/x?api_key=sk-123",
                          "--no-control", "-o", tmp_path / "r.jsonl"),
        "check": _invoke("check", "ftp://example.com/mcp"),
        "replay": _invoke("replay", recording, "--target-url", "example.com/mcp"),
        "export": _invoke("export", "otlp", recording, "--endpoint", "ftp://x"),
    }
    for verb, r in said.items():
        assert wording in r.output, (verb, r.output)
        assert r.exit_code == 2 and "Traceback" not in r.output, (verb, r.output)
    assert "sk-123" not in said["record"].output  # the URL's secret stays out of the message


# -- replay's differences, the report's examples, wrap --dry-run, piped lines -------------------------


def test_replay_prints_each_difference_once() -> None:
    from mcpreel.compare.jsondiff import Difference
    from mcpreel.render.replay import result_lines
    from mcpreel.replay.results import RequestResult

    diff = [Difference(f"$.result.content[{i}].text", "changed", "a", "b") for i in range(2)]
    lines = result_lines(RequestResult(2, "tools/call", "echo", "changed", {"jsonrpc": "2.0", "id": 2}, diff=diff))
    text = "\n".join(lines)
    assert text.count("tools/call") == 1 and text.count("#2") == 1  # the row names it; no header repeats it
    for i in range(2):
        assert text.count(f"$.result.content[{i}].text") == 1
    error = result_lines(RequestResult(3, "tools/call", "echo", "error", {"jsonrpc": "2.0", "id": 3}, error="boom"))
    assert error[1:] == ["    boom"] and "\n".join(error).count("#3") == 1


def test_the_report_help_shows_no_har_input() -> None:
    page = _invoke("report", "--help").output
    assert ".har" not in page and "mcpreel report qai_session.json" in page


def test_wrap_dry_run_says_would_wrap(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text('{"mcpServers": {"gh": {"command": "npx", "args": ["gh-mcp"]}}}')
    before = (home / ".claude.json").read_text()
    r = _invoke("wrap", "--all", "--dry-run", "--home", home, "--project", tmp_path)
    assert r.exit_code == 0, r.output
    assert "gh: would wrap; sessions would go to" in r.stderr and ": wrapped" not in r.stderr
    assert (home / ".claude.json").read_text() == before
    done = _invoke("wrap", "--all", "--home", home, "--project", tmp_path)
    assert "gh: wrapped; sessions go to" in done.stderr
    undo = _invoke("unwrap", "--all", "--dry-run", "--home", home, "--project", tmp_path)
    assert "gh: would restore" in undo.stderr and ": restored" not in undo.stderr


def test_no_line_is_broken_when_the_output_is_not_a_terminal(tmp_path: Path) -> None:
    deep = tmp_path / ("a-folder-with-a-long-name-" * 6)
    a = reel(deep / "a.jsonl", description="one")
    b = reel(deep / "b.jsonl", description="two", calls=4)
    r = _invoke("diff", a, b)
    assert r.exit_code == 1, r.output
    assert f"A: {a}" in r.stdout.splitlines() and f"B: {b}" in r.stdout.splitlines()  # > 120 columns, one line each
    from io import StringIO

    from rich.table import Table

    from mcpreel.cli import output

    out = StringIO()
    table = Table("name", "detail")
    table.add_row("x", "y" * 400)
    output.show(["z" * 500, table], output.console(out))
    assert "z" * 500 in out.getvalue().splitlines() and any("y" * 400 in line for line in out.getvalue().splitlines())


# -- options under headings --------------------------------------------------------------------------


def test_record_options_are_grouped_with_the_common_ones_first() -> None:
    page = _invoke("record", "--help").output
    headings = [line[:-1] for line in page.splitlines() if line.endswith(":") and not line.startswith(" ")]
    assert headings == ["Target (the server: a command after --, or a URL)", "Output", "HTTP listener", "Redaction",
                        "Live view", "Faults", "Other options"]
    assert page.index("--target-url") < page.index("--output") < page.index("--listen") < page.index("--keep-secrets")
    assert page.index("--keep-secrets") < page.index("--intercept") < page.index("--rules") < page.index("--help")


class _Rows(click.HelpFormatter):
    """A help formatter that keeps each section's rows (what the verb's help lists, by heading)."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[tuple[str, list[str]]] = []

    def write_heading(self, heading: str) -> None:
        self.sections.append((heading, []))

    def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
        self.sections[-1][1].extend(first for first, _ in rows)


@pytest.mark.parametrize("verb", sorted(GROUPS))
def test_every_option_of_a_grouped_verb_is_shown_once_under_a_heading(verb: str) -> None:
    root = click.Context(cli)
    cmd = cli.get_command(root, verb)
    assert cmd is not None
    shown = flags_of(cmd)
    named = [flag for _, flags in GROUPS[verb] for flag in flags]
    assert all(any(flag in f for f in shown) or flag == "command" for flag in named), "a heading names no option"
    rows = _Rows()
    cmd.format_options(click.Context(cmd, info_name=verb, parent=root), rows)
    assert [h for h, _ in rows.sections] == [h for h, _ in GROUPS[verb]] + ["Other options"]  # --help is last
    listed = [row for _, section in rows.sections for row in section]
    assert len(listed) == len(set(listed))  # none twice
    for flags in shown:  # every shown option under some heading
        assert sum(any(re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", row) for f in flags) for row in listed) == 1, \
            (flags, listed)
