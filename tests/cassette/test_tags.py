"""``--tag`` in the cassette flows: a recorded cassette's header carries the tags, over stdio, Streamable HTTP
and legacy SSE (:func:`cassette_server`, ``serve --record-mode --tag``), and through the pytest plugin
(``--mcp-tag`` and the marker's ``tags=``). A replay writes nothing, so it tags nothing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mcpreel.cassette.server import CassetteSetup, cassette_server
from tests.conftest import free_port
from tests.replay.e2e_helpers import Background

from .helpers import DEAD, ECHO, SDK_SERVER, drive

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.e2e

TAGS = (("team", "qa"), ("suite", "tags"))


def _header(path):
    first = json.loads(path.read_bytes().splitlines()[0])
    assert first["type"] == "meta"
    return first


def test_a_stdio_cassette_recorded_with_tags_carries_them_and_a_replay_adds_none(tmp_path):
    cassette, log = tmp_path / "tagged.jsonl", tmp_path / "err.log"
    with cassette_server(cassette, "once", command=[*SDK_SERVER, "stdio"], setup=CassetteSetup(tags=TAGS)) as server:
        argv = server.argv
        assert argv[argv.index("--tag") + 1] == "team=qa"
        assert drive(server, [ECHO], log)["calls"] == ["hello"]
    assert server.problems() == []
    assert _header(cassette)["metadata"]["tags"] == dict(TAGS)
    recorded = cassette.read_bytes()
    with cassette_server(cassette, "once", command=DEAD, setup=CassetteSetup(tags=(("other", "x"),))) as server:
        assert "--tag" not in server.argv  # a replay: nothing is written
        assert drive(server, [ECHO], log)["calls"] == ["hello"]
    assert cassette.read_bytes() == recorded


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
def test_an_http_cassette_recorded_with_tags_carries_them(tmp_path, transport):
    port = free_port()
    bg = Background([*SDK_SERVER, transport, str(port)], port=port)
    cassette, log = tmp_path / f"{transport}.jsonl", tmp_path / "err.log"
    path = "/mcp" if transport == "streamable-http" else "/sse"
    try:
        with cassette_server(cassette, "all", url=f"http://127.0.0.1:{port}{path}", setup=CassetteSetup(tags=TAGS)) as server:
            assert server.transport == transport
            assert drive(server, [ECHO], log)["calls"] == ["hello"]
    finally:
        bg.stop()
    assert server.problems() == []
    head = _header(cassette)
    assert head["transport"] == transport and head["metadata"]["tags"] == dict(TAGS)


def test_serve_refuses_a_tag_without_a_record_mode(tmp_path):
    r = subprocess.run([sys.executable, "-m", "mcpreel", "serve", str(tmp_path / "none.jsonl"), "--tag", "a=b"],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and r.stderr.strip() == (
        "error: --tag goes with --record-mode (it tags the recording written to the cassette)")


PLUGIN_TEST = '''
import asyncio
import pytest
from mcp import ClientSession, stdio_client

async def echo(params):
    with open("server-stderr.log", "a") as err:
        async with stdio_client(params, errlog=err) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                return (await s.call_tool("echo", {{"text": "tagged"}})).content[0].text

@pytest.mark.mcp_cassette("tagged.jsonl", command={command!r}, tags={{"case": "echo", "team": "marker"}})
def test_echo(mcp_server):
    assert asyncio.run(echo(mcp_server.stdio_parameters())) == "tagged"
'''


def test_the_pytest_plugin_tags_from_its_option_and_the_marker(pytester):
    pytester.makepyfile(test_tagged=PLUGIN_TEST.format(command=[*SDK_SERVER, "stdio"]))
    result = pytester.runpytest("-p", "no:mcp_recorder", "-p", "no:xdist", "-p", "no:cacheprovider",
                                "--mcp-tag", "team=option", "--mcp-tag", "ci=yes")
    result.assert_outcomes(passed=1)
    # the run's tags, then the marker's (the marker's value wins for a key in both)
    assert _header(pytester.path / "tagged.jsonl")["metadata"]["tags"] == {"team": "marker", "ci": "yes", "case": "echo"}


def test_the_pytest_plugin_refuses_tags_that_are_not_a_dict_of_strings(pytester):
    pytester.makepyfile(test_bad='''
import pytest

@pytest.mark.mcp_cassette("x.jsonl", command=["true"], tags=["team=qa"])
def test_bad(mcp_server):
    pass
''')
    result = pytester.runpytest("-p", "no:mcp_recorder", "-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    assert "mcp_cassette: @pytest.mark.mcp_cassette: tags is a dict of str to str, not ['team=qa']" in result.stdout.str()
