"""Each record mode over Streamable HTTP (and legacy SSE): a cassette server started for the test, the SDK server as the real one."""

from __future__ import annotations

import json

import pytest

from mcpreel.cassette.server import cassette_server
from mcpreel.errors import InputError, UsageError
from tests.conftest import free_port
from tests.replay.e2e_helpers import Background

from .helpers import ADD, ASK, ECHO, SDK_SERVER, drive

pytestmark = pytest.mark.e2e


def _server(*extra: str) -> tuple[Background, str]:
    port = free_port()
    return Background([*SDK_SERVER, "streamable-http", str(port), *extra], port=port), f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def real():
    bg, url = _server()
    yield url
    bg.stop()


@pytest.fixture(scope="module")
def changed():
    bg, url = _server("--changed")
    yield url
    bg.stop()


def _tool_calls(path):
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [m["raw"]["params"]["name"] for m in lines
            if m.get("dir") == "in" and isinstance(m.get("raw"), dict) and m["raw"].get("method") == "tools/call"]


def test_once_records_then_replays_with_the_server_gone(tmp_path, real):
    cassette, log = tmp_path / "once.jsonl", tmp_path / "err.log"
    with cassette_server(cassette, "once", url=real) as server:
        assert server.transport == "streamable-http" and server.url.startswith("http://127.0.0.1:")
        first = drive(server, [ECHO, ADD], log)
    assert server.problems() == [] and [e["event"] for e in server.events()][-1] == "saved"
    assert server.exit_code == 0
    assert (cassette.stat().st_mode & 0o777) == 0o600 and _tool_calls(cassette) == ["echo", "add"]
    recorded = cassette.read_bytes()

    nowhere = f"http://127.0.0.1:{free_port()}/mcp"  # nothing listens there
    with cassette_server(cassette, "once", url=nowhere) as server:
        assert server.action == "replay"
        assert drive(server, [ECHO, ADD], log) == first
    assert server.problems() == [] and cassette.read_bytes() == recorded


def test_new_episodes_appends_and_none_fails_on_a_miss(tmp_path, real):
    cassette, log = tmp_path / "ne.jsonl", tmp_path / "err.log"
    with cassette_server(cassette, "once", url=real) as server:
        drive(server, [ECHO], log)
    with cassette_server(cassette, "new_episodes", url=real) as server:
        got = drive(server, [ECHO, ADD], log)
    assert '"sum": 5' in got["calls"][1] and server.problems() == []
    assert _tool_calls(cassette) == ["echo", "add"]

    with cassette_server(cassette, "none", transport="streamable-http") as server:
        assert server.url is not None
        missed = drive(server, [ECHO, ("add", {"a": 2, "b": 4})], log)
    assert missed["calls"][0] == "hello" and missed["calls"][1].startswith("error -32602: no recorded tools/call")
    problems = server.problems()
    assert len(problems) == 1 and "$.params.arguments.b: 3 -> 4" in problems[0]
    # the serving process ended as --on-miss fail does: exit 1 after saying how many missed
    done = [e for e in server.events() if e["event"] == "done"]
    assert done and done[0]["missed"] == 1 and server.exit_code == 1


def test_all_records_again_but_not_from_an_unreachable_server(tmp_path, real, changed):
    cassette, log = tmp_path / "all.jsonl", tmp_path / "err.log"
    with cassette_server(cassette, "all", url=real) as server:
        assert drive(server, [ECHO], log)["calls"] == ["hello"]
    with cassette_server(cassette, "all", url=changed) as server:
        assert drive(server, [ECHO], log)["calls"] == ["HELLO"]
    assert "HELLO" in cassette.read_text()
    recorded = cassette.read_bytes()

    with cassette_server(cassette, "all", url=f"http://127.0.0.1:{free_port()}/mcp") as server:
        with pytest.raises(BaseException):
            drive(server, [ECHO], log)
    problems = server.problems()
    assert len(problems) == 1 and "recording not saved (the real server could not be reached" in problems[0]
    assert cassette.read_bytes() == recorded
    assert sorted(p.name for p in tmp_path.iterdir()) == ["all.jsonl"]


def test_a_corrupt_cassette_is_refused_before_a_server_starts(tmp_path, real):
    cassette = tmp_path / "c.jsonl"
    cassette.write_bytes(b"not json at all\n")
    with pytest.raises(InputError, match="c.jsonl: not JSON"):
        cassette_server(cassette, "all", url=real)
    assert cassette.read_bytes() == b"not json at all\n"
    with pytest.raises(UsageError, match="give its URL"):
        cassette_server(tmp_path / "missing.jsonl", "once", transport="streamable-http")



def test_none_without_a_cassette_fails_only_a_test_that_asks_for_something(tmp_path, real):
    missing, log = tmp_path / "missing.jsonl", tmp_path / "err.log"
    with cassette_server(missing, "none", url=real) as server:  # a test that makes no MCP call
        assert server.url is not None
    assert server.problems() == []
    with cassette_server(missing, "none", url=real) as server:
        with pytest.raises(BaseException):
            drive(server, [ECHO], log)
    assert server.problems() == [f"{missing} (record mode none): no such cassette, and the test made "
                                 "MCP requests (record mode none replays only: record it with once or all)"]
    assert not missing.exists()


def test_legacy_sse_records_and_replays_a_sampling_round_trip(tmp_path):
    port = free_port()
    bg = Background([*SDK_SERVER, "sse", str(port)], port=port)
    cassette, log = tmp_path / "sse.jsonl", tmp_path / "err.log"
    try:
        with cassette_server(cassette, "once", url=f"http://127.0.0.1:{port}/sse") as server:
            assert server.transport == "sse" and server.url.endswith("/sse")
            first = drive(server, [ECHO, ASK], log)
    finally:
        bg.stop()
    assert first["calls"] == ["hello", "llm said: 42"] and server.problems() == []
    with cassette_server(cassette, "none", transport="sse") as server:
        assert drive(server, [ECHO, ASK], log) == first
    assert server.problems() == []


def test_new_episodes_opens_a_new_session_when_the_live_server_restarted(tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    live = Background([*SDK_SERVER, "streamable-http", str(port)], port=port)
    cassette, log = tmp_path / "heal.jsonl", tmp_path / "err.log"
    try:
        with cassette_server(cassette, "once", url=url) as server:
            drive(server, [ECHO], log)
        with cassette_server(cassette, "new_episodes", url=url) as server:
            assert json.loads(drive(server, [ECHO, ADD], log)["calls"][1])["sum"] == 5  # forwarded: session 1
            live.stop()  # the live server restarts: the forwarder's session id is now stale (HTTP 404)
            live = Background([*SDK_SERVER, "streamable-http", str(port)], port=port)
            got = drive(server, [ECHO, ("add", {"a": 5, "b": 6})], log)
    finally:
        live.stop()
    assert json.loads(got["calls"][1])["sum"] == 11, got
    assert server.problems() == []
    said = [e["message"] for e in server.events() if e["event"] == "forward"]
    assert any("HTTP 404" in m and "opening a new session" in m for m in said), said
    assert "retrying tools/call once on the new session" in said
    assert _tool_calls(cassette) == ["echo", "add", "add"]
