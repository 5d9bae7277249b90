"""Default names and claiming the output file (starting the server: tests/clients/test_process.py)."""

from __future__ import annotations

import os
import stat

import pytest

from mcpreel.record import default_label, default_out_path
from mcpreel.record.naming import claim


@pytest.mark.parametrize(("command", "label"), [
    (["python", "my_server.py"], "my_server"),
    (["/usr/bin/python3.11", "-u", "/srv/tools/weather.py", "--port", "1"], "weather"),
    (["python", "-m", "pkg.server"], "pkg.server"),
    (["npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me"], "server-filesystem"),
    (["uvx", "mcp-server-git@1.2"], "mcp-server-git"),
    (["node", "dist/index.js", "stdio"], "index"),
    (["node", "/x/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"], "server-everything"),
    (["python", "/srv/weather/server.py"], "weather"),
    (["./my server"], "my-server"),
    (["/opt/bin/github-mcp"], "github-mcp"),
    ([], "session"),
])
def test_default_label_names_the_server_not_the_launcher(command, label):
    assert default_label(command) == label


def test_default_label_of_a_url_is_its_host():
    assert default_label(url="http://127.0.0.1:8000/mcp") == "127.0.0.1-8000"
    assert default_label(url="https://api.example.com/mcp") == "api.example.com"


def test_default_out_paths_are_claimed_so_two_proxies_never_share_one(tmp_path):
    a = default_out_path("srv", directory=tmp_path / "s", now=0)
    b = default_out_path("srv", directory=tmp_path / "s", now=0)
    assert a.name == "srv-19700101T000000Z.jsonl"
    assert b.name == "srv-19700101T000000Z-2.jsonl"
    assert stat.S_IMODE(os.stat(a).st_mode) == 0o600 and a.stat().st_size == 0


def test_claim_replaces_an_old_file_with_a_new_private_one(tmp_path):
    old = tmp_path / "sub" / "old.jsonl"
    old.parent.mkdir()
    old.write_text("an old session\n")
    os.chmod(old, 0o644)
    assert claim(old) == old
    assert old.read_bytes() == b""
    assert stat.S_IMODE(os.stat(old).st_mode) == 0o600
    with pytest.raises(IsADirectoryError):
        claim(tmp_path)


def test_default_label_of_a_url_with_a_bad_port_is_still_its_host():
    assert default_label(url="http://example.com:99999/mcp") == "example.com"


def test_record_stdio_without_a_command_is_a_start_error_that_still_ends_the_reel(tmp_path):
    from mcpreel.formats import open_session
    from mcpreel.record import RecordOptions, ServerStartError, StdioServer, record

    out = tmp_path / "s.jsonl"
    with pytest.raises(ServerStartError, match=r"no server command given \(put it after --\)") as info:
        record(RecordOptions(StdioServer(()), out))
    assert info.value.exit_code == 127
    assert open_session(out)[0].info.exit_code == 127
