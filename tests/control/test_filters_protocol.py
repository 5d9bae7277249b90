"""The filter tokens and the control wire's validation (pure functions)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mcpreel.control import discovery, protocol
from mcpreel.control.filters import DEFAULT_INTERCEPT, FilterError, parse
from mcpreel.errors import UsageError
from mcpreel.model import Kind, Message

CALL = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "search", "arguments": {"q": "Kiwi"}}}
NOTE = {"jsonrpc": "2.0", "method": "notifications/initialized"}
OK = {"jsonrpc": "2.0", "id": 7, "result": {"content": []}}
TOOL_ERR = {"jsonrpc": "2.0", "id": 8, "result": {"content": [], "isError": True}}
RPC_ERR = {"jsonrpc": "2.0", "id": "9", "error": {"code": -1, "message": "no"}}


@pytest.mark.parametrize(("text", "message", "direction", "expected"), [
    ("method:tools/call", CALL, "in", True),
    ("method:tools/list", CALL, "in", False),
    ("tool:search", CALL, "in", True),
    ("tool:other", CALL, "in", False),
    ("dir:c2s", CALL, "in", True),  # c2s = client -> server = the reel's "in"
    ("dir:s2c", CALL, "in", False),
    ("dir:s2c", OK, "out", True),
    ("dir:c2s dir:s2c", OK, "out", True),  # the same key twice: either
    ("dir:out", CALL, "in", True),  # the aliases: out = client -> server (mcpsnoop), = the reel's "in"
    ("dir:in", CALL, "in", False),
    ("dir:client_to_server", CALL, "in", True),
    ("dir:server_to_client", OK, "out", True),
    ("status:error", TOOL_ERR, "out", True),
    ("status:error", RPC_ERR, "out", True),
    ("status:error", OK, "out", False),
    ("status:ok", OK, "out", True),
    ("status:ok", CALL, "in", False),
    ("id:7", CALL, "in", True),
    ("id:9", RPC_ERR, "out", True),  # compared as text
    ("id:8", CALL, "in", False),
    ("kind:notification", NOTE, "in", True),
    ("kind:request", NOTE, "in", False),
    ("kind:response", OK, "out", True),
    ("text:kiwi", CALL, "in", True),  # case-insensitive substring of the JSON
    ("kiwi", CALL, "in", True),
    ("mango", CALL, "in", False),
    ("method:tools/call tool:search", CALL, "in", True),  # AND
    ("method:tools/call tool:nope", CALL, "in", False),
    ("tool:nope tool:search", CALL, "in", True),  # same key twice: OR
    ("", CALL, "in", True),
])
def test_filter_tokens(text: str, message: dict, direction: str, expected: bool) -> None:
    assert parse(text).matches(message, direction) is expected


def test_the_default_intercept_filter_holds_requests_from_the_client_only() -> None:
    f = parse(DEFAULT_INTERCEPT)
    assert f.matches(CALL, "in")
    assert not f.matches(NOTE, "in")
    assert not f.matches(OK, "out")
    assert not f.matches({**CALL, "id": 3}, "out")  # a server -> client request (sampling)


def test_a_filter_matches_records_and_reel_lines() -> None:
    f = parse("dir:out tool:search")
    assert f.matches(Message("in", CALL, 0))
    assert not f.matches(Message("out", CALL, 0))
    assert f.matches({"t": "x", "dir": "in", "raw": CALL, "seq": 3})
    stderr = Message(None, None, 0, kind=Kind.STDERR, text="Traceback: boom")
    assert parse("boom").matches(stderr) and not parse("method:x").matches(stderr)
    assert parse("text:boom").matches({"t": "x", "type": "stderr", "text": "boom!"})


@pytest.mark.parametrize(("text", "says"), [
    ("dir:sideways", "dir is c2s"), ("kind:thing", "kind is one of"), ("status:maybe", "status is error or ok"),
    ("colour:red", "unknown key 'colour'"), ("method:", "has no value"), ('"unclosed', "No closing quotation"),
])
def test_bad_filter_tokens_are_named(text: str, says: str) -> None:
    with pytest.raises(FilterError, match=says):
        parse(text)


@pytest.mark.parametrize(("message", "says"), [
    (CALL, None), (NOTE, None), (OK, None), (RPC_ERR, None), ([CALL, NOTE], None),
    ([], "empty batch"), ("x", "must be a JSON object"),
    ({"id": 1, "method": "x"}, "jsonrpc"),
    ({"jsonrpc": "2.0", "id": {}, "method": "x"}, "\"id\""),
    ({"jsonrpc": "2.0", "id": 1, "method": ""}, "method"),
    ({"jsonrpc": "2.0", "id": 1, "method": "x", "params": 3}, "params"),
    ({"jsonrpc": "2.0", "id": 1, "result": 1, "error": {"code": 1, "message": "m"}}, "not both"),
    ({"jsonrpc": "2.0", "id": 1}, "neither"),
    ({"jsonrpc": "2.0", "result": 1}, "needs its \"id\""),
    ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, "error.code"),
    ([CALL, {"jsonrpc": "1.0"}], "batch member 1"),
])
def test_validate_message(message: object, says: str | None) -> None:
    why = protocol.validate_message(message)
    if says is None:
        assert why is None
    else:
        assert why is not None and says in why


def test_parse_command_checks_and_normalizes() -> None:
    edit = protocol.parse_command({"type": "decide", "hold": "h1", "action": "edit", "message": CALL, "ref": 4})
    assert edit == {"type": "decide", "hold": "h1", "action": "edit", "message": CALL, "ref": 4}
    drop = protocol.parse_command({"type": "decide", "hold": "h1", "action": "drop", "error": {"code": -5}})
    assert drop["error"] == {"code": -5, "message": "dropped by the viewer"}
    inj = protocol.parse_command({"type": "inject", "direction": "server_to_client", "message": NOTE})
    assert inj["direction"] == "out"
    assert protocol.parse_command({"type": "intercept", "filter": None})["filter"] is None
    for bad, says in [
        ({"type": "nope"}, "unknown command type"),
        ({"type": "decide", "action": "forward"}, "needs \"hold\""),
        ({"type": "decide", "hold": "h1", "action": "explode"}, "action"),
        ({"type": "decide", "hold": "h1", "action": "edit"}, "needs the edited"),
        ({"type": "decide", "hold": "h1", "action": "edit", "message": {"id": 1}}, "not valid JSON-RPC"),
        ({"type": "decide", "hold": "h1", "action": "drop", "error": "x"}, "error object"),
        ({"type": "inject", "direction": "up", "message": NOTE}, "direction"),
        ({"type": "intercept", "filter": "dir:up"}, "dir is c2s"),
    ]:
        with pytest.raises(protocol.CommandError, match=says):
            protocol.parse_command(bad)


def test_decode_refuses_what_is_not_a_typed_object() -> None:
    assert protocol.decode(protocol.encode(protocol.ok(3))) == {"type": "ok", "ref": 3}
    for line in (b"nope", b"[1]", b'{"x":1}'):
        with pytest.raises(protocol.CommandError):
            protocol.decode(line)


def test_the_runtime_dir_is_made_private_and_a_loose_one_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = tmp_path / "rt"
    monkeypatch.setenv(discovery.ENV, str(d))
    assert discovery.runtime_dir() == d
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
    os.chmod(d, 0o755)
    with pytest.raises(UsageError, match="mode 0755"):
        discovery.runtime_dir()
    os.chmod(d, 0o700)
    link = tmp_path / "link"
    link.symlink_to(d)
    monkeypatch.setenv(discovery.ENV, str(link))
    with pytest.raises(UsageError, match="symlink"):
        discovery.runtime_dir()


def test_xdg_runtime_dir_is_used_only_when_it_is_ours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(discovery.ENV, raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert discovery.runtime_dir(create=False) == tmp_path / "mcpreel"
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "missing"))
    assert discovery.runtime_dir(create=False) == Path(f"/tmp/mcpreel-{os.getuid()}")


def test_running_drops_and_deletes_stale_entries(tmp_path: Path) -> None:
    sock, info = discovery.new_endpoint(tmp_path)
    discovery.write_info(info, {"version": 1, "pid": 2**22 + 12345, "socket": str(sock)})
    assert stat.S_IMODE(os.stat(info).st_mode) == 0o600
    assert discovery.running(tmp_path) == []
    assert not info.exists()


@pytest.mark.parametrize(("alias", "word"), [("out", "c2s"), ("client_to_server", "c2s"), ("in", "s2c"),
                                             ("server_to_client", "s2c")])
def test_every_direction_alias_means_what_its_one_word_means(alias: str, word: str) -> None:
    assert parse(f"dir:{alias}").terms == parse(f"dir:{word}").terms
    for message, direction in ((CALL, "in"), (OK, "out"), (NOTE, "in"), (CALL, "out")):
        assert parse(f"dir:{alias}").matches(message, direction) is parse(f"dir:{word}").matches(message, direction)


def test_a_bad_direction_is_refused_in_the_one_vocabulary() -> None:
    with pytest.raises(FilterError, match="dir is c2s \\(client -> server\\) or s2c \\(server -> client\\)"):
        parse("dir:up")
    assert DEFAULT_INTERCEPT == "dir:c2s kind:request"
