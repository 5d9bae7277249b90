"""convert (choosing formats, naming losses, atomic output) and merge (interleave by time, keep the origin)."""

from __future__ import annotations

import json
import stat

import pytest

from mcpreel.convert import Features, choose_output_format, convert
from mcpreel.errors import FormatError, UsageError
from mcpreel.formats.reel import KEEPS as REEL_KEEPS
from mcpreel.inspection import analyze
from mcpreel.merge import merge, origin_names
from mcpreel.model import Kind, Message

from .support import fixture, read, read_as, req, resp, session_of, write


@pytest.mark.parametrize(("name", "fmt", "obvious"), [
    ("x.jsonl", "reel", True), ("x.trace.jsonl", "assay-v2", True), ("x.har", "har", True),
    ("x.json", "qai", False), ("x.qai.json", "qai", True), ("x.inspector.json", "inspector", True),
    ("x.ndjson", "jsonrpc", True), ("x.jsonrpc.jsonl", "jsonrpc", True), ("x.simple.jsonl", "simple", True),
])
def test_output_format_from_the_name(name, fmt, obvious):
    choice = choose_output_format(name)
    assert (choice.format, choice.obvious) == (fmt, obvious)


def test_output_format_given_or_refused():
    assert choose_output_format("x.bin", to="mcp-tape").format == "reel"
    with pytest.raises(UsageError, match="can be read but not written"):
        choose_output_format("x.json", to="langchain")
    with pytest.raises(UsageError, match="cannot tell the output format"):
        choose_output_format("x.bin")
    with pytest.raises(UsageError, match="unknown format 'nope'"):
        choose_output_format("x.json", to="nope")


def test_envelope_name_follows_the_transport():
    legacy = read(fixture("assay-docs/import-formats@HEAD__05.json"))
    assert choose_output_format("x.http.json", legacy).format == "http-sse"
    assert choose_output_format("x.http.json", read(fixture("assay-docs/import-formats@HEAD__01.json"))).format == "streamable-http"


def test_losses_name_what_this_session_had():
    s = session_of(req("in", 1, "ping", 5), Message(None, None, 6, kind=Kind.STDERR, text="x"),
                   Message(None, None, 7, kind=Kind.STDERR, text="y"),
                   Message("in", {"jsonrpc": "2.0", "id": 2, "method": "ping"}, 8, modified=True, original={}))
    f = Features(header=True)
    for m in s:
        f.count(m)
    assert f.lost(REEL_KEEPS) == []
    assert f.lost(frozenset({"time", "direction", "ctx", "edits", "drops", "header"})) == ["2 stderr lines"]
    assert f.lost(frozenset()) == ["the session header (id, command or URL, start and end)", "message times (2 messages)",
                                   "directions (guessed again from the methods when read)",
                                   "the originals of 1 edited message", "2 stderr lines"]


def test_convert_reports_losses_and_writes_0600(tmp_path):
    out = tmp_path / "deep" / "x.jsonl"
    result = convert(fixture("qai/qai_session_fastmcp.json"), out, to="jsonrpc")
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert result.lost_line() == ("writing jsonrpc drops the session header (id, command or URL, start and end), "
                                  "message times (19 messages), directions (guessed again from the methods when read), "
                                  "the originals of 1 edited message")
    assert result.detection.format == "qai" and result.features.records == 19
    assert convert(fixture("qai/qai_session_fastmcp.json"), tmp_path / "y.jsonl").lost_line() is None


def test_bad_input_leaves_no_output(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"messages": [{"direction": "sideways", "payload": {}}], "started_at": null}')
    out = tmp_path / "out.jsonl"
    with pytest.raises(FormatError, match="qai message 1: direction"):
        convert(bad, out)
    assert not out.exists() and list(tmp_path.iterdir()) == [bad]
    with pytest.raises(UsageError, match="stdio session"):
        convert(fixture("qai/qai_session_minimal.json"), out, to="streamable-http")
    assert list(tmp_path.iterdir()) == [bad]


def test_convert_in_place(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(fixture("mcp-replay-v1/readme-minimal.jsonl").read_bytes())
    convert(path, path, to="reel")
    assert [m.raw["id"] for m in read(path)] == [1, 1]


# -- merge ------------------------------------------------------------------------------------------


def _two_servers(tmp_path):
    a = write(session_of(req("in", 1, "tools/call", 100, name="fs_read", arguments={}), resp("out", 1, t=300),
                         Message(None, None, 310, kind=Kind.STDERR, text="a says"),
                         label="fs", id="A", command=["fs-server"], started=90),
              tmp_path / "a.jsonl", "reel")
    b = write(session_of(req("in", 1, "tools/call", 200, name="web_get", arguments={}), resp("out", 1, t=250),
                         req("in", 2, "ping", None),  # no time: after its predecessor in its own file
                         label="web", id="B", command=["web-server"], started=150),
              tmp_path / "b.json", "qai")
    return a, b


def test_merge_interleaves_by_time_and_keeps_the_origin(tmp_path):
    a, b = _two_servers(tmp_path)
    out = tmp_path / "m.jsonl"
    result = merge([a, b], out)
    assert result.format == "reel" and result.records == 6 and result.lost == []
    merged = read(out)
    order = [(m.extra["file"], m.t) for m in merged]
    assert order == [("a.jsonl", 100), ("b.json", 200), ("b.json", 250), ("b.json", 250), ("a.jsonl", 300), ("a.jsonl", 310)]
    assert [m.seq for m in merged] == list(range(6))
    meta = merged.info.metadata["merged"]
    assert [(x["file"], x.get("label"), x["format"], x["session"]) for x in meta] == [
        ("a.jsonl", "fs", "reel", "A"), ("b.json", "web", "qai", "B")]  # qai keeps the label (additive member)
    assert merged.info.started == 90 and merged.info.transport == "stdio"
    # both servers use id 1: correlation stays per file
    report = analyze(merged)
    assert report.summary.orphans == [] and report.summary.unanswered == [3]
    line = next(x for x in out.read_text().splitlines() if '"stderr"' in x)
    assert json.loads(line)["file"] == "a.jsonl"


def test_merge_refuses_what_cannot_work(tmp_path):
    a, b = _two_servers(tmp_path)
    with pytest.raises(UsageError, match="at least two"):
        merge([a], tmp_path / "m.jsonl")
    with pytest.raises(UsageError, match="named twice"):
        merge([a, a], tmp_path / "m.jsonl")
    with pytest.raises(UsageError, match="is one of the inputs"):
        merge([a, b], a)


def test_merge_keeps_other_producers_lines(tmp_path):
    out = tmp_path / "m.jsonl"
    merge([fixture("mcp-replay-v1/format-extensions-rcan-example.jsonl"), fixture("mcp-replay-v1/readme-minimal.jsonl")], out)
    merged = read_as(out, "reel")
    events = [m for m in merged if m.kind == Kind.EVENT]
    assert len(events) == 3 and all(e.raw["file"] == "format-extensions-rcan-example.jsonl" for e in events)
    assert [m.extra["file"] for m in merged if m.kind == Kind.MESSAGE] == ["readme-minimal.jsonl"] * 2


def test_origin_names_fall_back_to_paths():
    assert origin_names(["x/a.jsonl", "y/b.jsonl"]) == ["a.jsonl", "b.jsonl"]
    assert origin_names(["x/a.jsonl", "y/a.jsonl"]) == ["x/a.jsonl", "y/a.jsonl"]


@pytest.mark.parametrize("middle", ["x.jsonl", "x.qai.json"])
def test_envelope_session_headers_survive_a_reel_or_qai(tmp_path, middle):
    # the envelope's top-level transport_context (MCP-Protocol-Version, Mcp-Session-Id) is session state
    src = fixture("assay-docs/import-formats@HEAD__01.json")
    convert(src, tmp_path / middle)
    convert(tmp_path / middle, tmp_path / "back.json", to="streamable-http")
    assert json.loads((tmp_path / "back.json").read_text()) == json.loads(src.read_text())


def test_converting_twice_gives_the_same_bytes(tmp_path):
    src = fixture("assay-docs/import-formats@HEAD__05.json")
    convert(src, tmp_path / "a.jsonl")
    convert(src, tmp_path / "b.jsonl")
    convert(src, tmp_path / "c.qai.json")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    meta = json.loads((tmp_path / "a.jsonl").read_text().splitlines()[0])
    assert meta["session"] == json.loads((tmp_path / "c.qai.json").read_text())["id"]  # one derived id


def test_the_envelope_names_the_bodiless_answers_it_drops(tmp_path):
    # a cassette's 202 to a notification, its GET stream and its DELETE have no place in an envelope entry
    src = fixture("mcp-recorder/mcp-recorder_mock_session.json")
    bare = [m for m in read(src) if m.kind == Kind.TRANSPORT and not isinstance((m.ctx or {}).get("data"), dict)]
    result = convert(src, tmp_path / "e.json", to="streamable-http")
    assert len(bare) == 3
    assert "3 HTTP answers with no body (a 202 Accepted, a GET or DELETE with no JSON-RPC in it)" in result.lost
    assert len(json.loads((tmp_path / "e.json").read_text())["entries"]) == result.features.records - 3
