"""Default names, claiming the output file, exit statuses, starting a server."""

from __future__ import annotations

import os
import signal
import stat
import sys

import pytest

from mcpreel.record import ServerStartError, default_label, default_out_path, exit_status
from mcpreel.record.lifecycle import spawn_server
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


def test_exit_status_is_what_a_shell_reports():
    assert exit_status(0) == 0
    assert exit_status(3) == 3
    assert exit_status(-signal.SIGTERM) == 143
    assert exit_status(-signal.SIGKILL) == 137


def test_a_command_that_cannot_start_is_exit_127():
    with pytest.raises(ServerStartError, match="cannot start 'no-such-server-x': No such file") as info:
        spawn_server(["no-such-server-x"])
    assert info.value.exit_code == 127
    with pytest.raises(ServerStartError, match="no server command"):
        spawn_server([])


def test_the_server_runs_in_its_own_process_group():
    proc = spawn_server([sys.executable, "-c", "import os; print(os.getpgrp(), os.getpid())"])
    out, _ = proc.communicate(timeout=20)
    pgrp, pid = out.split()
    assert pgrp == pid


def test_default_label_of_a_url_with_a_bad_port_is_still_its_host():
    assert default_label(url="http://example.com:99999/mcp") == "example.com"
