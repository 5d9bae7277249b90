"""``wrap`` / ``unwrap`` on the files that hurt (issue 28): committed project files, links, broken neighbours,
odd names and types, lone surrogates, and Claude Code's per-project servers in ``~/.claude.json``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.clientconfig.jsonc import parse
from tests.clientconfig.configs import CASES

PROJECT_CASES = [case for case, (rel, *_rest) in CASES.items() if rel.startswith("project:")]


@pytest.fixture
def env(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return home, project


def place(env, case: str) -> Path:
    home, project = env
    rel, text, _, _ = CASES[case]
    path = project / rel.removeprefix("project:") if rel.startswith("project:") else home / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run(env, *args: str):
    home, project = env
    return CliRunner().invoke(cli, [*args, "--home", str(home), "--project", str(project)], catch_exceptions=False)


def errors(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("error: ")]


# -- a project's file is committed: no path of this machine in it unless asked ---------------------------
@pytest.mark.parametrize("case", PROJECT_CASES)
def test_a_project_file_gets_no_path_of_this_machine_unless_asked(env, case):
    path = place(env, case)
    original = path.read_text()
    r = run(env, "wrap", "--all")
    assert r.exit_code == 0, r.output
    text = path.read_text()
    for machine in {str(env[0]), str(env[1]), sys.executable, str(Path(sys.executable).parent), str(Path.home())}:
        assert machine not in text, (machine, text)
    name = CASES[case][2][0]
    client = "claude-code" if case == "claude-code-project" else case
    entry = parse(text).value["servers" if case == "vscode" else "mcpServers"][name]
    assert entry["command"] == "mcpreel"
    assert entry["args"][:6] == ["record", "-q", "--label", name, "--out-dir", f"~/.mcpreel/sessions/{client}/{name}"]
    assert run(env, "unwrap").exit_code == 0 and path.read_text() == original

    # asked: this machine's paths, as for a user's own file
    r = run(env, "wrap", "--all", "--absolute-paths")
    assert r.exit_code == 0, r.output
    entry = parse(path.read_text()).value["servers" if case == "vscode" else "mcpServers"][name]
    assert Path(entry["command"]).is_absolute() and entry["args"][5] == str(env[0] / ".mcpreel" / "sessions" / client / name)


def test_a_user_file_keeps_the_absolute_paths_clients_need(env):
    path = place(env, "claude-desktop")  # Claude Desktop starts servers with a minimal PATH
    assert run(env, "wrap", "--all").exit_code == 0
    entry = parse(path.read_text()).value["mcpServers"]["filesystem"]
    assert Path(entry["command"]).is_absolute() and Path(entry["args"][5]).is_absolute()


def test_record_expands_the_tilde_of_a_wrapped_out_dir(tmp_path):
    import subprocess

    from tests.record.stdio.helpers import RAW

    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "record", "-q", "--label", "raw", "--out-dir",
                           "~/.mcpreel/sessions/x/raw", "--", sys.executable, RAW],
                          input=b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', capture_output=True, timeout=30,
                          env={**os.environ, "HOME": str(home)}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(list((home / ".mcpreel" / "sessions" / "x" / "raw").glob("raw-*.jsonl"))) == 1
    assert not (tmp_path / "~").exists()


# -- links ------------------------------------------------------------------------------------------------
def test_a_linked_config_has_its_target_edited_and_stays_a_link(env):
    home, project = env
    dotfiles = home / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "cursor-mcp.json"
    target.write_text(CASES["cursor"][1])
    link = home / ".cursor" / "mcp.json"
    link.parent.mkdir()
    link.symlink_to(target)
    original = target.read_text()
    r = run(env, "wrap", "--all")
    assert r.exit_code == 0, r.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert "mcpreel" in target.read_text() and target.read_text() != original
    assert f"{link} is a symbolic link: its target {target} is edited, the link kept" in r.stderr
    r = run(env, "unwrap")
    assert r.exit_code == 0, r.output
    assert link.is_symlink() and os.readlink(link) == str(target) and target.read_text() == original


def test_a_project_link_that_leads_outside_the_project_is_refused_in_one_line(env):
    home, project = env
    outside = home / "elsewhere.json"
    outside.write_text(CASES["claude-code-project"][1])
    before = outside.read_bytes()
    (project / ".mcp.json").symlink_to(outside)
    r = run(env, "wrap", "--all")
    assert r.exit_code == 2
    assert errors(r) == [f"error: {project / '.mcp.json'}: a symbolic link to {outside}, outside the project: "
                         "not followed (skipped)"]
    assert outside.read_bytes() == before and (project / ".mcp.json").is_symlink()
    assert "Traceback" not in r.output


# -- one bad file does not stop the others ----------------------------------------------------------------
@pytest.mark.parametrize("bad", ['{"mcpServers": {broken', '{"mcpServers": []}', "\xff\xfe not utf-8"])
def test_a_bad_config_is_one_line_and_the_others_go_on(env, bad):
    home, project = env
    good = place(env, "cursor")
    broken = place(env, "claude-desktop")  # where a client looks for it
    broken.write_bytes(bad.encode("latin-1") if bad.startswith("\xff") else bad.encode())
    for args in (["wrap", "--list"], ["wrap", "--all"], ["unwrap"]):
        r = run(env, *args)
        assert r.exit_code == 2, (args, r.output)
        lines = errors(r)
        assert len(lines) == 1 and lines[0].startswith(f"error: {broken}: ") and lines[0].endswith("(skipped)"), lines
        assert "Traceback" not in r.output
        if args == ["wrap", "--list"]:
            assert "web-search" in r.stdout  # the good file is listed
        elif args == ["wrap", "--all"]:
            assert "mcpreel" in good.read_text()
        else:
            assert good.read_text() == CASES["cursor"][1]
    assert broken.read_bytes() == (bad.encode("latin-1") if bad.startswith("\xff") else bad.encode())


# -- odd names and types ----------------------------------------------------------------------------------
ODD = {
    "../../evil": {"command": "x"},
    "a/b": {"command": "x"},
    "..": {"command": "x"},
    "-rf": {"command": "x"},
    "tab\there": {"command": "x"},
    "list-command": {"command": ["node", "server.js"]},
    "number-args": {"command": "node", "args": [1, {"a": 2}]},
    "object-args": {"command": "node", "args": {"0": "x"}},
    "no-command": {"command": None},
    "nul": {"command": "node", "args": ["a\x00b"]},
}


def test_odd_names_and_types_are_refused_one_line_each_and_the_rest_is_wrapped(env):
    home, project = env
    path = project / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {**ODD, "fine": {"command": "node", "args": ["s.js"]}}}, indent=2))
    r = run(env, "wrap", "--all")
    assert r.exit_code == 2
    lines = errors(r)
    assert len(lines) == len(ODD), lines
    assert all(f"{path}: " in line and ": not wrapped: " in line for line in lines)
    assert any("'command' is a list, not a non-empty string" in line for line in lines)
    assert any("'args'[0] is a number, not a string" in line for line in lines)
    assert any("'args' is an object, not a list of strings" in line for line in lines)
    assert any(r"tab\u0009here: not wrapped" in line for line in lines)
    servers = parse(path.read_text()).value["mcpServers"]
    assert servers["fine"]["command"] == "mcpreel"
    assert {name: servers[name] for name in ODD} == ODD  # untouched
    assert not (home / ".mcpreel").exists() and not (home.parent / "evil").exists()
    assert "Traceback" not in r.output


@pytest.mark.parametrize("where", ["name", "args", "env"])
def test_a_lone_surrogate_is_no_traceback(env, where):
    home, project = env
    path = project / ".mcp.json"
    entries = {
        "name": '{"mcpServers": {"a\\ud800": {"command": "x"}, "b": {"command": "y"}}}',
        "args": '{"mcpServers": {"a": {"command": "x", "args": ["\\ud800"]}, "b": {"command": "y"}}}',
        "env": '{"mcpServers": {"a": {"command": "x", "env": {"K": "\\udfff"}}, "b": {"command": "y"}}}',
    }
    path.write_text(entries[where])
    r = run(env, "wrap", "--list")
    assert "Traceback" not in r.output
    r = run(env, "wrap", "--all")
    assert "Traceback" not in r.output
    text = path.read_text()  # the file stays UTF-8, the surrogate written back as the escape it was
    parse(text)
    servers = parse(text).value["mcpServers"]
    assert servers["b"]["command"] == "mcpreel"
    if where == "env":
        assert r.exit_code == 0 and servers["a"]["command"] == "mcpreel" and servers["a"]["env"]["K"] == "\udfff"
        assert "\\udfff" in text
    else:
        said = {"name": "a\\ud800: not wrapped: a server name that cannot be a folder",
                "args": "a: not wrapped: 'args'[0] holds a NUL, a control character or a lone surrogate"}[where]
        assert r.exit_code == 2 and len(errors(r)) == 1 and said in errors(r)[0], errors(r)
    assert run(env, "unwrap").exit_code == 0 and path.read_text() == entries[where]


# -- Claude Code's per-project servers --------------------------------------------------------------------
CLAUDE_JSON = """{
  "numStartups": 3,
  "projects": {
    "/home/me/app": {
      "allowedTools": [],
      "mcpServers": {
        "local-db": {"type": "stdio", "command": "npx", "args": ["-y", "db-mcp"], "env": {}}
      }
    },
    "/home/me/other": {"mcpServers": {}},
    "/home/me/web": {
      "mcpServers": {
        "local-db": {"command": "uvx", "args": ["db-mcp"]},
        "search": {"type": "http", "url": "https://example.com/mcp"}
      }
    }
  },
  "mcpServers": {
    "airtable": {"type": "stdio", "command": "npx", "args": ["-y", "airtable-mcp-server"]}
  }
}
"""


def test_claude_codes_per_project_servers_are_found_wrapped_and_unwrapped(env):
    home, project = env
    path = home / ".claude.json"
    path.write_text(CLAUDE_JSON)
    r = run(env, "wrap", "--list")
    assert r.exit_code == 0, r.output
    assert "claude-code (local /home/me/app)" in r.stdout and "claude-code (local /home/me/web)" in r.stdout
    assert "/home/me/other" not in r.stdout  # no servers there
    rows = [line.split()[:2] for line in r.stdout.splitlines() if line.startswith("  ")]
    assert rows.count(["local-db", "stdio"]) == 2 and ["airtable", "stdio"] in rows and ["search", "streamable-http"] in rows

    r = run(env, "wrap", "--all")
    assert r.exit_code == 0, r.output
    root = parse(path.read_text()).value
    for project_path, command in (("/home/me/app", "npx"), ("/home/me/web", "uvx")):
        entry = root["projects"][project_path]["mcpServers"]["local-db"]
        assert Path(entry["command"]).name == "mcpreel" and command in entry["args"]
    assert Path(root["mcpServers"]["airtable"]["command"]).name == "mcpreel"
    assert root["projects"]["/home/me/web"]["mcpServers"]["search"] == {"type": "http", "url": "https://example.com/mcp"}
    r = run(env, "wrap", "--list")
    assert sum(1 for line in r.stdout.splitlines() if " wrapped " in line) == 3

    r = run(env, "unwrap", "local-db")
    assert r.exit_code == 0, r.output
    root = parse(path.read_text()).value
    assert root["projects"]["/home/me/app"]["mcpServers"]["local-db"]["command"] == "npx"
    assert Path(root["mcpServers"]["airtable"]["command"]).name == "mcpreel"
    assert run(env, "unwrap").exit_code == 0
    assert path.read_text() == CLAUDE_JSON
    assert sorted(p.name for p in home.iterdir()) == [".claude.json"]
