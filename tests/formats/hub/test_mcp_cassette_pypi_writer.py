"""The mcp-cassette (PyPI) ``.mcp.json`` writer: each published cassette read and written again is the same
document; a session written to it reads back and imports to the reel's trace; and, where the tool can be
installed (``make hub-peers``; it is not on every package index), the tool itself loads and inspects it."""

from __future__ import annotations

import json
import subprocess

import pytest

from mcpreel.convert import convert

from ...conftest import ROOT, needs_shared
from ..support import FIXTURES, fixture, messages_only, read_as, t1, write
from .test_t1_extended import the_session

PYPI = FIXTURES / "hub" / "mcp-cassette-pypi"
PEER = ROOT / ".peers" / "mcp-cassette"


@needs_shared
@pytest.mark.parametrize("name", sorted(p.name for p in PYPI.glob("*.mcp.json")))
def test_a_published_cassette_comes_back_the_same(name, tmp_path):
    src = PYPI / name
    out = tmp_path / "again.mcp.json"
    result = convert(src, out, to="mcp-cassette-pypi")
    assert result.lost == []
    want, got = json.loads(src.read_text()), json.loads(out.read_text())
    assert got["format_version"] == 2  # as mcp-cassette itself saves a v1 cassette it loaded
    assert got["recorded_at"][:23] == want["recorded_at"][:23]  # to the millisecond the model keeps
    if want["format_version"] == 1:  # version 2 only adds members that default to null
        for m in got["messages"]:
            assert m.pop("exchange") is None and m.pop("channel") is None
        assert got.pop("server_url") is None and got.pop("session_id") is None
    for doc in (want, got):
        doc.pop("recorded_at")
        doc.pop("format_version")
    assert got == want


def test_a_session_written_as_a_cassette_imports_to_the_reels_trace(tmp_path):
    session = the_session()
    reel = read_as(write(session, tmp_path / "s.reel.jsonl", "reel"), "reel")
    back = read_as(write(session, tmp_path / "s.mcp.json", "mcp-cassette-pypi"), "mcp-cassette-pypi")
    assert t1(back) == t1(reel)
    assert messages_only(back) == messages_only(reel)
    doc = json.loads((tmp_path / "s.mcp.json").read_text())
    sampling = doc["messages"][7]
    assert (sampling["sender"], sampling["kind"], sampling["msg_id"]) == ("server", "request", "s1")
    assert doc["protocol_version"] == "2025-06-18" and doc["server_info"] == {"name": "s", "version": "1"}


def test_what_a_cassette_cannot_hold_is_named(tmp_path):
    from .samples import write_mcpsnoop

    result = convert(write_mcpsnoop(tmp_path / "snoop.jsonl"), tmp_path / "s.mcp.json", to="mcp-cassette-pypi")
    assert result.lost == ["1 stderr line", "the source recorder's own members of 1 record (kept only by a reel)",
                           "the command and session id (a cassette names neither)",
                           "transport context other than exchange and channel (4 messages)"]


def test_the_real_tool_loads_and_inspects_a_cassette_we_wrote(tmp_path):
    if not (PEER / ".installed").is_file():
        pytest.skip("mcp-cassette is not installed in .peers/mcp-cassette: `make hub-peers` could not get it from "
                    "the package index (it was not on the index reachable when this was written)")
    cassette = write(the_session(), tmp_path / "s.mcp.json", "mcp-cassette-pypi")
    load = subprocess.run([str(PEER / "bin" / "python"), "-c",
                           "import sys; from mcp_cassette.cassette import Cassette; "
                           "c = Cassette.load(sys.argv[1]); print(len(c.messages), c.transport)", str(cassette)],
                          capture_output=True, text=True, timeout=60)
    assert load.returncode == 0, load.stderr[-2000:]
    assert load.stdout.split() == ["14", "stdio"]
    inspect = subprocess.run([str(PEER / "bin" / "mcp-cassette"), "inspect", str(cassette)],
                             capture_output=True, text=True, timeout=60)
    assert inspect.returncode == 0, inspect.stderr[-2000:]
    assert "messages: 14" in inspect.stdout and "tools/call: 2" in inspect.stdout


def test_the_output_name_chooses_the_format(tmp_path):
    result = convert(fixture("hub/mcp-vcr/fixtures__with_notifications.yaml"), tmp_path / "session.mcp.json")
    assert result.to == "mcp-cassette-pypi" and result.output_choice.obvious
    assert json.loads((tmp_path / "session.mcp.json").read_text())["messages"][5]["method"] == "notifications/tools/list_changed"
