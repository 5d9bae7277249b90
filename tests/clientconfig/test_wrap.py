"""``mcpreel wrap`` / ``unwrap`` on every client's real-looking config: safe, idempotent, exactly undone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomlkit
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.clientconfig.jsonc import parse
from tests.clientconfig.configs import CASES

MCPREEL = "/opt/mcpreel/bin/mcpreel"


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
    path.write_bytes(text.encode("utf-8"))
    path.chmod(0o644)
    return path


def run(env, *args: str):
    home, project = env
    result = CliRunner().invoke(cli, [*args, "--home", str(home), "--project", str(project)], catch_exceptions=False)
    return result


def servers(path: Path) -> dict:
    text = path.read_text()
    if path.suffix == ".toml":
        return tomlkit.parse(text).unwrap()["mcp_servers"]
    root = parse(text).value
    return root["servers" if "vscode" in str(path) else "mcpServers"]


@pytest.mark.parametrize("case", list(CASES))
def test_list_finds_every_server_with_its_transport(env, case):
    place(env, case)
    r = run(env, "wrap", "--list")
    assert r.exit_code == 0, r.output
    _, _, stdio, http = CASES[case]
    lines = r.output.splitlines()
    for name in stdio:
        assert any(line.split()[:2] == [name, "stdio"] for line in lines), r.output
    for name in http:
        row = next(line for line in lines if line.split()[:1] == [name])
        assert row.split()[1] in ("streamable-http", "sse")
        assert "record it: mcpreel record --transport" in r.output and "client URL: http://127.0.0.1:8765/" in r.output


@pytest.mark.parametrize("case", list(CASES))
def test_wrap_then_unwrap_restores_byte_for_byte(env, case):
    path = place(env, case)
    original = path.read_bytes()
    before = servers(path)
    r = run(env, "wrap", "--all", "--mcpreel", MCPREEL)
    assert r.exit_code == 0, r.output
    after = servers(path)
    _, _, stdio, http = CASES[case]
    home = env[0]
    for name in stdio:
        entry = after[name]
        assert entry["command"] == MCPREEL
        old_argv = [before[name]["command"], *before[name].get("args", [])]
        client = "claude-code" if case == "claude-code-project" else case
        # a project's file (committed) gets no path of this machine: ~ is expanded by mcpreel record
        root = "~/.mcpreel/sessions" if CASES[case][0].startswith("project:") else str(home / ".mcpreel" / "sessions")
        assert entry["args"] == ["record", "-q", "--label", name, "--out-dir", f"{root}/{client}/{name}", "--",
                                 *old_argv]
        rest = {k: v for k, v in entry.items() if k not in ("command", "args")}
        assert rest == {k: v for k, v in before[name].items() if k not in ("command", "args")}
        assert [k for k in entry if k in before[name]] == list(before[name])  # key order kept
    for name in http:
        assert after[name] == before[name]
    # the file keeps its mode, a backup of the original and the state sit next to it
    assert path.stat().st_mode & 0o777 == 0o644
    assert path.with_name(path.name + ".mcpreel-backup").read_bytes() == original
    assert path.with_name(path.name + ".mcpreel-wrap.json").stat().st_mode & 0o777 == 0o600
    # comments and unrelated lines survive
    for line in original.decode().splitlines():
        if line.strip().startswith(("//", "/*", "#")) or '"theme"' in line or "numStartups" in line:
            assert line in path.read_text()
    # idempotent
    wrapped = path.read_bytes()
    r = run(env, "wrap", "--all", "--mcpreel", MCPREEL)
    assert r.exit_code == 0 and "already wrapped" in r.output
    assert path.read_bytes() == wrapped
    # exactly undone, and nothing left behind
    r = run(env, "unwrap")
    assert r.exit_code == 0, r.output
    assert path.read_bytes() == original
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name)) == [path.name]


@pytest.mark.parametrize("case", list(CASES))
def test_unwrap_keeps_edits_made_elsewhere(env, case):
    path = place(env, case)
    original = path.read_text()
    _, _, stdio, http = CASES[case]
    assert run(env, "wrap", stdio[0], "--mcpreel", MCPREEL).exit_code == 0
    # the user edits the file after wrapping: a line at the end, outside the wrapped entry
    edited_tail = "\n# added later\n" if path.suffix == ".toml" else "\n// added later\n"
    if path.suffix != ".toml" and case != "vscode":
        edited_tail = "\n"  # plain JSON clients: a trailing newline (comments are not theirs)
    path.write_text(path.read_text() + edited_tail)
    r = run(env, "unwrap", stdio[0])
    assert r.exit_code == 0, r.output
    assert path.read_text() == original + edited_tail


def test_unwrap_restores_even_after_other_entries_changed(env):
    path = place(env, "claude-desktop")
    original = path.read_text()
    assert run(env, "wrap", "filesystem", "--mcpreel", MCPREEL).exit_code == 0
    text = path.read_text().replace('"ghcr.io/github/github-mcp-server"', '"ghcr.io/github/github-mcp-server:v2"')
    path.write_text(text)
    assert run(env, "unwrap").exit_code == 0
    assert path.read_text() == original.replace("github-mcp-server\"", "github-mcp-server:v2\"")


def test_unwrap_leaves_an_entry_edited_since_unless_forced(env):
    path = place(env, "cursor")
    original = path.read_bytes()
    assert run(env, "wrap", "web-search", "--mcpreel", MCPREEL).exit_code == 0
    path.write_text(path.read_text().replace('"-q"', '"-q", "--redact"'))
    edited = path.read_bytes()
    r = run(env, "unwrap")
    assert r.exit_code == 1 and "edited since" in r.output
    assert path.read_bytes() == edited
    assert run(env, "unwrap", "--force").exit_code == 0
    assert path.read_bytes() == original


def test_dry_run_prints_the_diff_and_writes_nothing(env):
    path = place(env, "vscode")
    original = path.read_bytes()
    r = run(env, "wrap", "--all", "--dry-run", "--mcpreel", MCPREEL)
    assert r.exit_code == 0
    assert "-      \"command\": \"npx\"," in r.output and f"+      \"command\": \"{MCPREEL}\"," in r.output
    assert path.read_bytes() == original
    assert not path.with_name(path.name + ".mcpreel-backup").exists()


@pytest.mark.parametrize(("case", "breakage"), [("claude-desktop", '"globalShortcut": "Ctrl+Space",,'),
                                                ("codex", "[mcp_servers.context7\n"), ("vscode", "/* open comment")])
def test_a_file_that_does_not_parse_is_never_written(env, case, breakage):
    path = place(env, case)
    path.write_text(path.read_text() + breakage if case != "claude-desktop"
                    else path.read_text().replace('"globalShortcut": "Ctrl+Space"', breakage))
    broken = path.read_bytes()
    r = run(env, "wrap", "--all")
    assert r.exit_code == 2
    assert str(path) in r.output and "Traceback" not in r.output
    assert path.read_bytes() == broken
    assert not path.with_name(path.name + ".mcpreel-backup").exists()


def test_select_by_name_and_client_and_unknown_name(env):
    place(env, "cursor")
    gem = place(env, "gemini")
    r = run(env, "wrap", "pythonTools", "--client", "gemini", "--mcpreel", MCPREEL, "--redact")
    assert r.exit_code == 0, r.output
    assert "--redact" in servers(gem)["pythonTools"]["args"]
    r = run(env, "wrap", "nope")
    assert r.exit_code == 2 and "no server named nope" in r.output
    r = run(env, "wrap")
    assert r.exit_code == 2 and "--all" in r.output


def test_config_option_and_crlf_file(tmp_path):
    path = tmp_path / "custom.json"
    original = CASES["claude-desktop"][1].replace("\n", "\r\n").encode()
    path.write_bytes(original)
    runner = CliRunner()
    r = runner.invoke(cli, ["wrap", "--config", str(path), "--all", "--mcpreel", MCPREEL])
    assert r.exit_code == 0, r.output
    assert b"\n" not in path.read_bytes().replace(b"\r\n", b"")  # no bare LF slipped in
    assert json.loads(path.read_text())["mcpServers"]["github"]["command"] == MCPREEL
    assert runner.invoke(cli, ["unwrap", "--config", str(path)]).exit_code == 0
    assert path.read_bytes() == original


def test_macos_and_windows_locations(tmp_path):
    from mcpreel.clientconfig import candidate_files

    mac = {f.client: f.path for f in candidate_files(tmp_path, platform="darwin", env={}) if f.scope == "user"}
    assert mac["claude-desktop"] == tmp_path / "Library/Application Support/Claude/claude_desktop_config.json"
    assert mac["vscode"] == tmp_path / "Library/Application Support/Code/User/mcp.json"
    win = {f.client: f.path for f in candidate_files(tmp_path, platform="win32", env={"APPDATA": str(tmp_path / "AD")})
           if f.scope == "user"}
    assert win["claude-desktop"] == tmp_path / "AD/Claude/claude_desktop_config.json"
    codex = {f.client: f.path for f in candidate_files(tmp_path, env={"CODEX_HOME": str(tmp_path / "cx")})}
    assert codex["codex"] == tmp_path / "cx/config.toml"


def test_transport_of_each_http_shape():
    from mcpreel.clientconfig.clients import ClientFile
    from mcpreel.clientconfig.wrapping import ServerInfo

    def kind(client, entry):
        return ServerInfo(ClientFile(client, "user", Path("/x"), "json", "mcpServers"), "s", entry, False).transport

    assert kind("gemini", {"url": "http://h/events"}) == "sse"
    assert kind("gemini", {"httpUrl": "http://h/mcp"}) == "streamable-http"
    assert kind("windsurf", {"serverUrl": "http://h/mcp"}) == "streamable-http"
    assert kind("cursor", {"url": "http://h/sse"}) == "sse"
    assert kind("vscode", {"type": "sse", "url": "http://h/events"}) == "sse"
    assert kind("claude-code", {"type": "stdio", "command": "x"}) == "stdio"


def test_wrap_http_then_unwrap_every_shape(env):
    for case in ("claude-code", "cursor", "windsurf", "gemini", "codex", "vscode"):
        path = place(env, case)
        original = path.read_bytes()
        r = run(env, "wrap", *CASES[case][3], "--http", "9100")
        assert r.exit_code == 0, r.output
        for name in CASES[case][3]:
            entry = servers(path)[name]
            assert any(isinstance(v, str) and v.startswith("http://127.0.0.1:91") for v in entry.values()), entry
        assert "start the recording proxy with mcpreel record --transport" in r.output
        assert run(env, "unwrap").exit_code == 0
        assert path.read_bytes() == original
        path.unlink()


def test_client_prefixed_names_touch_only_that_client(env):
    cursor, desktop = place(env, "cursor"), place(env, "claude-desktop")
    c0, d0 = cursor.read_bytes(), desktop.read_bytes()
    assert run(env, "wrap", "claude-desktop:github", "--mcpreel", MCPREEL).exit_code == 0
    assert cursor.read_bytes() == c0 and desktop.read_bytes() != d0
    assert run(env, "unwrap", "cursor:github").exit_code == 0
    assert desktop.read_bytes() != d0  # the prefix names another client: nothing restored
    assert run(env, "unwrap", "claude-desktop:github").exit_code == 0
    assert desktop.read_bytes() == d0


def test_wrap_all_leaves_mcpreels_own_corpus_server_alone(env):
    """`wrap --all` records every server but mcpreel's corpus server: recording an agent's questions to the
    corpus would put them into the corpus it reads (issue 38)."""
    home, _ = env
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"mcpServers": {
        "corpus": {"command": "mcpreel", "args": ["mcp-server", "--db", "~/.mcpreel/corpus.duckdb"]},
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}}}))
    r = run(env, "wrap", "--all", "--mcpreel", MCPREEL)
    assert r.exit_code == 0, r.output
    after = servers(path)
    assert after["corpus"] == {"command": "mcpreel", "args": ["mcp-server", "--db", "~/.mcpreel/corpus.duckdb"]}
    assert after["files"]["args"][:1] == ["record"], after["files"]
    assert "corpus: mcpreel's own corpus server, left as it is" in r.output


@pytest.mark.parametrize("client_file,key", [(".cursor/mcp.json", "mcpServers"), (".codex/config.toml", "mcp_servers")])
def test_wrap_adds_the_corpus_server_once_keeping_the_file_as_it_was(env, client_file, key):
    """`wrap --add-corpus-server`: mcpreel's corpus server joins the client's servers (issue 38: "wrap can add
    it"), after the others and nothing else touched; a second run finds it there and writes nothing."""
    home, _ = env
    path = home / client_file
    path.parent.mkdir(parents=True)
    if path.suffix == ".toml":
        text = '# my servers\n[mcp_servers.files]\ncommand = "npx"  # the npm one\nargs = ["-y", "server-filesystem"]\n'
    else:
        text = '{\n  // my servers\n  "mcpServers": {\n    "files": {"command": "npx", "args": ["-y", "server-filesystem"]}\n  }\n}\n'
    path.write_text(text)
    r = run(env, "wrap", "--add-corpus-server", "--corpus-db", "/data/corpus.duckdb", "--mcpreel", MCPREEL)
    assert r.exit_code == 0, r.output
    after = servers(path)
    assert list(after) == ["files", "mcpreel-corpus"]
    assert after["mcpreel-corpus"] == {"command": MCPREEL, "args": ["mcp-server", "--db", "/data/corpus.duckdb"]}
    new = path.read_text()
    kept = 'command = "npx"  # the npm one' if path.suffix == ".toml" else \
        '"files": {"command": "npx", "args": ["-y", "server-filesystem"]}'
    assert "my servers" in new and kept in new  # comments and the other entries as they were written
    assert "mcpreel-corpus: added" in r.output
    again = run(env, "wrap", "--add-corpus-server", "--mcpreel", MCPREEL)
    assert again.exit_code == 0 and path.read_text() == new
    assert "already there" in again.output
    wrapped = run(env, "wrap", "--all", "--mcpreel", MCPREEL)  # and wrapping everything leaves it alone
    assert wrapped.exit_code == 0, wrapped.output
    assert servers(path)["mcpreel-corpus"] == after["mcpreel-corpus"]
