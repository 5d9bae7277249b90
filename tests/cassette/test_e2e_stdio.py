"""Each record mode over stdio: the official SDK client launches the argv, the SDK server is the real one."""

from __future__ import annotations

import json
import sys

import pytest

from mcpreel.cassette.server import cassette_server
from mcpreel.errors import InputError

from .helpers import ADD, ASK, DEAD, ECHO, SDK_SERVER, drive

pytestmark = pytest.mark.e2e

SERVER = [*SDK_SERVER, "stdio"]


def _messages(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _tool_calls(path):
    return [m["raw"]["params"]["name"] for m in _messages(path)
            if m.get("dir") == "in" and m["raw"].get("method") == "tools/call"]


def test_once_records_then_replays_without_the_server(tmp_path):
    cassette, log = tmp_path / "cassettes" / "once.jsonl", tmp_path / "err.log"
    with cassette_server(cassette, "once", command=SERVER) as server:
        assert server.action == "record"
        first = drive(server, [ECHO, ADD, ASK], log)
    assert server.problems() == [] and [e["event"] for e in server.events()] == ["plan", "ready", "saved"]
    assert first["calls"][0] == "hello" and first["calls"][2] == "llm said: 42"
    assert (cassette.stat().st_mode & 0o777) == 0o600
    assert [p.name for p in cassette.parent.iterdir()] == ["once.jsonl"]  # no temporary file left behind
    recorded = cassette.read_bytes()

    with cassette_server(cassette, "once", command=DEAD) as server:  # the real server would fail now
        assert server.action == "replay"
        again = drive(server, [ECHO, ADD, ASK], log)  # the sampling request is replayed too
    assert again == first
    assert server.problems() == []
    assert [e for e in server.events() if e["event"] == "done"][0]["answered"] == 5
    assert cassette.read_bytes() == recorded


def test_new_episodes_appends_a_new_call_then_none_replays_it(tmp_path):
    cassette, log = tmp_path / "ne.jsonl", tmp_path / "err.log"
    with cassette_server(cassette, "new_episodes", command=SERVER) as server:
        assert server.action == "record"  # missing: recorded whole
        drive(server, [ECHO], log)
    assert _tool_calls(cassette) == ["echo"]

    with cassette_server(cassette, "new_episodes", command=SERVER) as server:
        got = drive(server, [ECHO, ADD], log)
    assert got["calls"][1].startswith("{") and '"sum": 5' in got["calls"][1]
    done = [e for e in server.events() if e["event"] == "done"][0]
    assert (done["forwarded"], done["missed"], server.problems()) == (1, 0, [])
    assert _tool_calls(cassette) == ["echo", "add"]

    with cassette_server(cassette, "none", command=DEAD) as server:
        assert drive(server, [ECHO, ADD], log) == got
    assert server.problems() == []


def test_none_fails_on_a_miss_with_the_closest_request(tmp_path):
    cassette, log = tmp_path / "none.jsonl", tmp_path / "err.log"
    with cassette_server(cassette, "once", command=SERVER) as server:
        drive(server, [ECHO], log)
    recorded = cassette.read_bytes()
    with cassette_server(cassette, "none") as server:  # no real server at all
        got = drive(server, [("echo", {"text": "bye"})], log)
    assert got["calls"][0].startswith("error -32602: no recorded tools/call matches these params; closest is")
    problems = server.problems()
    assert len(problems) == 1
    assert "was not answered from the cassette" in problems[0] and "record mode none" in problems[0]
    assert '$.params.arguments.text: "hello" -> "bye"' in problems[0]
    assert cassette.read_bytes() == recorded


def test_all_records_again_and_keeps_the_cassette_when_the_recording_breaks_off(tmp_path):
    cassette, log = tmp_path / "all.jsonl", tmp_path / "err.log"
    with cassette_server(cassette, "all", command=SERVER) as server:
        assert drive(server, [ECHO], log)["calls"] == ["hello"]
    with cassette_server(cassette, "all", command=[*SERVER, "--changed"]) as server:
        assert server.action == "record"
        assert drive(server, [ECHO], log)["calls"] == ["HELLO"]
    assert "HELLO" in cassette.read_text() and "brand_new" in cassette.read_text()
    recorded = cassette.read_bytes()

    # a server that dies after reading initialize: the recording breaks off, the cassette stays as it was
    crash = [sys.executable, "-c", "import sys; sys.stdin.readline(); sys.exit(1)"]
    with cassette_server(cassette, "all", command=crash) as server:
        with pytest.raises(BaseException):
            drive(server, [ECHO], log)
    assert cassette.read_bytes() == recorded
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".all")] == []
    problems = server.problems()
    assert len(problems) == 1 and "recording not saved (server exited with code 1 before the client ended" in problems[0]


@pytest.mark.parametrize("mode", ["once", "new_episodes", "none", "all"])
def test_a_corrupt_cassette_is_refused_and_left_byte_identical(tmp_path, mode):
    cassette = tmp_path / "corrupt.jsonl"
    good = '{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00Z","label":"x","command":[]}\n'
    cassette.write_bytes((good + '{"t":"2026-01-01T00:00:00Z","dir":"in","raw":{"jsonrpc":"2.0",\n').encode())
    before = cassette.read_bytes()
    with pytest.raises(InputError) as info:
        cassette_server(cassette, mode, command=SERVER)
    assert str(info.value).startswith(f"{cassette}: ") and "line 2" in str(info.value)
    assert cassette.read_bytes() == before
    assert list(tmp_path.iterdir()) == [cassette]


def test_once_with_server_everything_records_and_replays_a_sampling_round_trip(tmp_path, everything_js):
    cassette, log = tmp_path / "everything.jsonl", tmp_path / "err.log"
    calls = [("echo", {"message": "hi"}), ("trigger-sampling-request", {"prompt": "hello", "maxTokens": 7})]
    with cassette_server(cassette, "once", command=["node", str(everything_js), "stdio"]) as server:
        first = drive(server, calls, log)
    assert first["server"] == "mcp-servers/everything" and first["calls"][0] == "Echo: hi"
    assert "42" in first["calls"][1] and server.problems() == []
    with cassette_server(cassette, "once", command=DEAD) as server:
        assert drive(server, calls, log) == first
    assert server.problems() == []


def test_new_episodes_never_resends_the_request_that_crashed_the_live_server(tmp_path):
    command = [*SDK_SERVER, "stdio", "--as", "proxy"]
    cassette, log = tmp_path / "heal.jsonl", tmp_path / "err.log"
    with cassette_server(cassette, "once", command=command) as server:
        drive(server, [ECHO], log)
    effects = tmp_path / "side-effects.txt"
    with cassette_server(cassette, "new_episodes", command=command, env={"SDK_PEER_SIDE_EFFECTS": str(effects)}) as server:
        got = drive(server, [ECHO, ("crash", {}), ("echo", {"text": "after"})], log)
    # the crash kills the live server with the request in hand: it may have done what it was asked (a
    # tool's side effect), so that request fails and is not sent again; the next miss starts it again
    assert got["calls"][0] == "hello" and got["calls"][1].startswith("error -32603: ")
    assert "not sent again" in got["calls"][1]
    assert got["calls"][2] == "after"
    assert effects.read_text() == "crash\n"  # the crash tool ran once, not again on a retry
    said = [e["message"] for e in server.events() if e["event"] == "forward"]
    restarts = [m for m in said if m.endswith("starting the live server again")]
    assert len(restarts) == 1 and said.count("retrying tools/call once on the new session") == 1, said
    assert [e["method"] for e in server.misses()] == ["tools/call"]  # the crash
    assert _tool_calls(cassette) == ["echo", "echo"]
