"""Every real fixture file: reads; converts to every writer; tool semantics (T1) equal after every
conversion that can be read back; the lossless round trips keep every message, direction, order, payload
and millisecond time."""

from __future__ import annotations

import stat

import pytest

from mcpreel.convert import convert
from mcpreel.errors import UsageError
from mcpreel.formats import FORMATS, writer_names

from ..conftest import needs_shared
from .support import assert_same_wire, fixture_files, messages_only, read, read_as, t1, wire

pytestmark = needs_shared

FILES = fixture_files()
IDS = [f"{p.parent.name}/{p.name}" for p in FILES]
HTTP_LABELS = ("streamable-http", "http-sse")
EXCHANGES_END_TO_END = {"mcp-recorder"}
FOLDING_LOSES_LAST_RESPONSE = {("examples__cassettes__sampling.mcp.json", "inspector")}


def test_the_fixtures_are_there():
    names = {p.name for p in FILES}
    assert "qai_session_id_collision.json" in names
    assert "mcp-recorder_mock_session.json" in names
    assert len([p for p in FILES if p.parent.name == "mcp-replay-v1"]) == 10


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_every_fixture_converts_to_every_writer(path, tmp_path):
    source = read(path)
    before = t1(source)
    is_http = source.info.transport in ("streamable-http", "sse") or (
        source.info.transport is None and (source.info.url is not None or any(m.ctx for m in source)))
    for name in writer_names():
        out = tmp_path / f"out.{name}"
        if name in HTTP_LABELS and source.info.transport == "stdio":
            with pytest.raises(UsageError, match="stdio session"):
                convert(path, out, to=name)
            assert not out.exists()
            continue
        result = convert(path, out, to=name)
        assert out.exists()  # an empty file is right for a session with no messages as jsonrpc / no calls as simple
        assert stat.S_IMODE(out.stat().st_mode) == 0o600
        assert result.to == name
        if not FORMATS[name].reads:
            continue
        back = read_as(out, name)
        got = t1(back)
        if (path.name, name) in FOLDING_LOSES_LAST_RESPONSE:
            # the Inspector export folds each response into its request's entry: of two responses in
            # the same millisecond (the tool call's and the nested sampling answer's) it cannot say
            # which came last, so only the final output may differ
            got["final_output"] = before["final_output"]
        if name in EXCHANGES_END_TO_END:
            # an mcp-recorder cassette keeps latencies only: read back, its exchanges are laid end to end, so
            # concurrent calls come back one after the other -- the same calls, steps and results, in
            # request order rather than answer order (and so possibly another last response)
            got["calls"], want = sorted(got["calls"]), {**before, "calls": sorted(before["calls"])}
            got["final_output"] = want["final_output"]
            assert got == want, f"tool semantics changed through {name}"
            continue
        assert got == before, f"tool semantics changed through {name}"
        if name in ("reel", "qai") or (name in HTTP_LABELS and is_http):
            assert_same_wire(messages_only(back), messages_only(source))
        if name == "reel":
            assert_same_wire(wire(back), wire(source))


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_reel_to_qai_and_to_the_envelope_and_back(path, tmp_path):
    """The issue's round trips, from the reel of every fixture: reel -> qai -> reel, and for HTTP
    sessions reel -> HTTP envelope -> reel, keep every message, direction, order, payload and ms time."""
    reel = tmp_path / "a.jsonl"
    convert(path, reel, to="reel")
    first = read_as(reel, "reel")
    targets = ["qai"]
    if first.info.transport in ("streamable-http", "sse") or (first.info.transport is None and first.info.url):
        targets.append("http-sse" if first.info.transport == "sse" else "streamable-http")
    for fmt in targets:
        mid = tmp_path / f"b.{fmt}"
        convert(reel, mid, to=fmt)
        back_path = tmp_path / f"c.{fmt}.jsonl"
        convert(mid, back_path, to="reel")
        back = read_as(back_path, "reel")
        assert messages_only(back) == messages_only(first), fmt
        assert t1(back) == t1(first), fmt
