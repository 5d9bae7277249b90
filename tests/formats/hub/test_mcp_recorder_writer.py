"""The mcp-recorder cassette writer, verified by the real tool: mcp-recorder (from PyPI, in its own virtualenv
under ``.peers/mcp-recorder``, installed by ``make hub-peers``) replays a cassette mcpreel wrote, and the
official SDK client talking to it gets the recorded answers."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mcpreel.convert import convert

from ...conftest import ROOT, free_port
from ...record.http.helpers import wait_port
from ..support import fixture, read_as, t1, write
from .test_t1_extended import the_session

PEER = ROOT / ".peers" / "mcp-recorder"
PEER_PY = PEER / "bin" / "python"
REPLAY = Path(__file__).parent / "peers" / "mcp_recorder_replay.py"


def _peer() -> Path:
    if not any(PEER.glob(".installed-*")) or not PEER_PY.is_file():
        pytest.skip("mcp-recorder is not installed in .peers/mcp-recorder (`make hub-peers` could not install it "
                    "from PyPI)")
    return PEER_PY


def test_reading_and_writing_mcp_recorders_own_cassette_keeps_every_interaction(tmp_path):
    src = fixture("mcp-recorder/mcp-recorder_mock_session.json")
    out = tmp_path / "again.json"
    convert(src, out, to="mcp-recorder")
    assert json.loads(out.read_text())["interactions"] == json.loads(src.read_text())["interactions"]


def test_what_a_cassette_cannot_hold_is_named(tmp_path):
    result = convert(fixture("hub/mcp-cassette-pypi/examples__cassettes__sampling.mcp.json"), tmp_path / "c.json",
                     to="mcp-recorder")
    assert "2 server-to-client messages and answers to them (a cassette holds client-driven exchanges only)" in result.lost
    doc = json.loads((tmp_path / "c.json").read_text())
    assert [i["request"]["method"] for i in doc["interactions"]] == ["initialize", "notifications/initialized", "tools/call"]
    assert doc["interactions"][2]["latency_ms"] == 61  # the call's answer came 61 ms after it


async def _drive(url: str) -> dict:
    with anyio.fail_after(30):
        return await _calls(url)


async def _calls(url: str) -> dict:
    out: dict = {}
    async with httpx2.AsyncClient() as http, streamable_http_client(url, http_client=http) as (r, w), \
            ClientSession(r, w) as s:
        init = await s.initialize()
        out["protocol"] = init.protocol_version
        out["server"] = init.server_info.name
        out["tools"] = [t.name for t in (await s.list_tools()).tools]
        res = await s.call_tool("summarize", {"text": "a long text"})
        out["summarize"] = res.content[0].text
        try:
            await s.call_tool("add", {"a": 1, "b": "x"})
            out["add"] = "answered"
        except Exception as exc:  # the recorded JSON-RPC error comes back as the SDK's MCPError
            out["add"] = getattr(getattr(exc, "error", None), "message", str(exc))
        await s.send_ping()
    return out


def test_mcp_recorder_replays_a_cassette_we_wrote_to_the_sdk_client(tmp_path):
    python = _peer()
    session = the_session()
    session.info.transport = "streamable-http"
    session.info.url = "http://127.0.0.1:1/mcp"
    cassette = write(session, tmp_path / "ours.json", "mcp-recorder")
    # what we wrote reads back, with the same tool calls (the nested sampling exchange is not in a cassette)
    back = read_as(cassette, "mcp-recorder")
    assert [c[1:4] for c in t1(back)["calls"]] == [c[1:4] for c in t1(session)["calls"]]
    port = free_port()
    proc = subprocess.Popen([str(python), str(REPLAY), str(cassette), str(port), "sequential"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        try:
            wait_port(port, timeout=20)
        except TimeoutError:
            proc.kill()
            pytest.fail(f"mcp-recorder's replay did not start: {proc.communicate()[1][-2000:]}")
        got = anyio.run(_drive, f"http://127.0.0.1:{port}/mcp")
    finally:
        try:
            stdout, stderr = proc.communicate("", timeout=15)  # stdin closed: the replay stops and reports
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
    assert got == {"protocol": "2025-06-18", "server": "s", "tools": ["summarize", "add"],
                   "summarize": "summary: short", "add": "b must be a number"}
    report = json.loads(stdout.strip().splitlines()[-1])
    assert report == {"consumed": True, "unmatched": 0}, stderr[-2000:]
