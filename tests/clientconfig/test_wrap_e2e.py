"""End to end: wrap a client's config, start the wrapped server as that client would, drive it with the SDK
client (both eras), find the recording, unwrap, and get the original file back byte for byte."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcpreel.formats import open_session

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
PY = sys.executable
CONTRACT_SERVER = HERE.parent / "contract" / "peers" / "contract_server.py"


def mcpreel(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "mcpreel", *args, "--home", str(home), "--project", str(home / "proj")],
                          capture_output=True, text=True, timeout=60)


def drive(config: Path, key: str, name: str, mode: str, tool: str, args: dict) -> dict:
    proc = subprocess.run([PY, str(HERE / "peers" / "start_as_client.py"), str(config), key, name, mode, tool,
                           json.dumps(args)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def methods(reel: Path) -> list[str]:
    session, _ = open_session(reel)
    return [m.method for m in session if m.is_request and m.dir == "in"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_claude_desktop_sdk_server_both_eras(tmp_path, mode):
    home = tmp_path / "home"
    config = home / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    (home / "proj").mkdir()
    original = (
        '{\n  "mcpServers": {\n    "peer": {\n      "command": "%s",\n      "args": ["%s"],\n'  # noqa: UP031 (JSON text: %-format keeps its braces single)
        '      "env": {"PEER_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}\n    }\n  },\n'
        '  "globalShortcut": ""\n}\n' % (PY, CONTRACT_SERVER)
    ).encode()
    config.write_bytes(original)
    r = mcpreel(home, "wrap", "--all", "--redact")
    assert r.returncode == 0, r.stderr
    got = drive(config, "mcpServers", "peer", mode, "lookup", {"key": "k"})
    assert got["tools"] == ["delete_all", "lookup", "search"] and got["text"] == "k"
    assert got["protocol"] == ("2026-07-28" if mode == "auto" else "2025-11-25")
    reels = list((home / ".mcpreel" / "sessions" / "claude-desktop" / "peer").glob("peer-*.jsonl"))
    assert len(reels) == 1, reels
    seen = methods(reels[0])
    assert "tools/list" in seen and "tools/call" in seen
    assert ("server/discover" in seen) == (mode == "auto") and ("initialize" in seen) == (mode == "legacy")
    r = mcpreel(home, "unwrap")
    assert r.returncode == 0, r.stderr
    assert config.read_bytes() == original


def test_codex_toml_server_everything(tmp_path, everything_js):
    home = tmp_path / "home"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    (home / "proj").mkdir()
    original = (
        '# my codex\nmodel = "gpt-5-codex"\n\n[mcp_servers.everything]\ncommand = "node"  # from PATH\n'
        f'args = [\n  "{everything_js}",\n  "stdio",\n]\n\n[mcp_servers.everything.env]\nEXAMPLE = "1"\n'
    ).encode()
    config.write_bytes(original)
    r = mcpreel(home, "wrap", "everything")
    assert r.returncode == 0, r.stderr
    got = drive(config, "mcp_servers", "everything", "legacy", "echo", {"message": "hi"})
    assert got["text"] == "Echo: hi" and "get-sum" in got["tools"]
    reels = list((home / ".mcpreel" / "sessions" / "codex" / "everything").glob("*.jsonl"))
    assert len(reels) == 1
    assert {"initialize", "tools/list", "tools/call"} <= set(methods(reels[0]))
    assert mcpreel(home, "unwrap", "everything").returncode == 0
    assert config.read_bytes() == original


def test_entry_without_args_gets_them_after_command(tmp_path):
    home = tmp_path / "home"
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir(parents=True)
    (home / "proj").mkdir()
    original = b'{"mcpServers": {"solo": {"command": "/usr/local/bin/solo-server", "env": {"A": "1"}}}}'
    config.write_bytes(original)
    assert mcpreel(home, "wrap", "solo", "--mcpreel", "/bin/mcpreel").returncode == 0
    entry = json.loads(config.read_text())["mcpServers"]["solo"]
    assert list(entry) == ["command", "args", "env"]
    assert entry["args"][-2:] == ["--", "/usr/local/bin/solo-server"]
    assert mcpreel(home, "unwrap").returncode == 0
    assert config.read_bytes() == original


def test_http_server_pointed_at_a_recording_proxy(tmp_path):
    """wrap --http: the client's URL becomes the proxy's; the printed command starts the proxy; unwrap restores."""
    import re
    import shlex

    from tests.conftest import free_port
    from tests.peers import SDK_SERVER
    from tests.replay.e2e_helpers import Background, run_client

    home = tmp_path / "home"
    config = home / "proj" / ".vscode" / "mcp.json"
    config.parent.mkdir(parents=True)
    server_port, proxy_port = free_port(), free_port()
    original = ('{\n  // team servers\n  "servers": {\n    "api": {"type": "http", "url": "http://127.0.0.1:%d/mcp"}\n'  # noqa: UP031 (JSON text: %-format keeps its braces single)
                '  }\n}\n' % server_port).encode()
    config.write_bytes(original)
    r = mcpreel(home, "wrap", "api", "--http", str(proxy_port))
    assert r.returncode == 0, r.stderr
    url = parse_url(config)
    assert url == f"http://127.0.0.1:{proxy_port}/mcp"
    command = re.search(r"start the recording proxy with (mcpreel record .*)$", r.stderr, re.M).group(1)
    argv = [PY, "-m", "mcpreel", *shlex.split(command)[1:], "--out", str(tmp_path / "api.jsonl")]
    server = Background([PY, str(SDK_SERVER), "streamable-http", str(server_port)], port=server_port)
    proxy = Background(argv, port=proxy_port)
    try:
        got = run_client("streamable-http", url)
        assert got["echo"]["text"] == "hello"
    finally:
        proxy.stop()
        server.stop()
    assert "tools/call" in methods(tmp_path / "api.jsonl")
    assert mcpreel(home, "unwrap").returncode == 0
    assert config.read_bytes() == original


def parse_url(config: Path) -> str:
    from mcpreel.clientconfig.jsonc import parse

    return parse(config.read_text()).value["servers"]["api"]["url"]
