"""The readers issue 38 adds: OTLP JSON files of MCP spans (ours in both conventions, and another tool's
OpenInference spans) and glassport's session logs, sniffed by ``--format auto``; and the round trip that
proves the OTLP reader: our genai export -> reel -> export gives the same spans (names, kinds, parents,
nanosecond times, status, events and every attribute but the stderr count, which spans do not carry)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel.convert import write_session
from mcpreel.errors import InputError, McpreelError
from mcpreel.formats import open_session
from mcpreel.model import Kind
from mcpreel.otel.export import export_session, mapper_for
from mcpreel.otel.mapping import SpanRecord

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "eval"


def mcp_messages(session) -> list[dict[str, Any]]:
    return [m.raw for m in session if m.kind == Kind.MESSAGE]


# -- glassport -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_glassport_logs_read_as_what_the_client_did(era):
    session, detection = open_session(FIXTURES / f"glassport-{era}.jsonl")
    assert detection.format == "glassport" and detection.obvious
    info = session.info
    assert info.transport == "stdio" and info.producer == {"name": "glassport", "version": "0.8.0"}
    assert info.started is not None and info.extra["glassport"]["mode"] == "wrap"
    raws = mcp_messages(session)
    methods = [r.get("method") for r in raws if "method" in r]
    first = "initialize" if era == "legacy" else "server/discover"
    assert methods[0] == first
    calls = [r["params"]["name"] for r in raws if r.get("method") == "tools/call"]
    assert calls == ["echo", "slow", "fail"]
    assert all(m.t is not None and m.seq is not None for m in session if m.kind == Kind.MESSAGE)
    answered = {r["id"] for r in raws if "result" in r or "error" in r}
    assert answered == {r["id"] for r in raws if "method" in r and "id" in r}  # every request answered
    events = [m for m in session if m.kind == Kind.EVENT]
    assert len(events) == 1 and events[0].raw["type"] == "glassport.metrics"


def test_glassport_records_that_are_not_its_own_are_refused(tmp_path):
    bad = tmp_path / "g.jsonl"
    bad.write_text('{"type": "glassport.header", "transport": "stdio"}\n'
                   '{"schema_version": "0.2", "seq": 1, "ts": "2026-01-01T00:00:00Z", "dir": "up", "frame": {}, "raw": null}\n')
    with pytest.raises(InputError, match="line 2: dir must be c2s or s2c"):
        list(open_session(bad)[0])


# -- OTLP: our own export, both conventions ----------------------------------------------------------------


def mapped(path: Path, *, content: bool, convention: str = "genai") -> tuple[list[SpanRecord], dict[str, Any]]:
    session = open_session(path)[0]
    mapper = mapper_for(convention, session, include_content=content, ids=random.Random(7).getrandbits)
    return list(mapper.feed_all(session)), mapper.resource_attributes()


def comparable(records: list[SpanRecord]) -> list[tuple]:
    """What a span says, without its random ids: its parent by name (or 'remote' for a caller's span)."""
    by_id = {r.span_id: r for r in records}
    out = []
    for r in records:
        parent = by_id[r.parent_id].name if r.parent_id in by_id else ("remote" if r.parent_id else None)
        attrs = {k: v for k, v in r.attributes.items() if k != "mcpreel.stderr"}  # stderr is not in spans
        out.append((r.name, r.kind, r.start_ns, r.end_ns, r.error, parent, json.dumps(attrs, sort_keys=True),
                    json.dumps([(e.name, e.time_ns, e.attributes) for e in r.events], sort_keys=True),
                    len(r.links)))
    return sorted(out)


@pytest.mark.parametrize("content", [False, True], ids=["names-only", "include-content"])
@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_otlp_of_our_genai_export_reads_back_to_the_same_spans(recordings, tmp_path, era, content):
    spans_file = tmp_path / "spans.json"
    with spans_file.open("wb") as fh:
        # with content, batches of 3 spans: a file of many ExportTraceServiceRequest lines, as a long session makes
        export_session(open_session(recordings[era])[0], out=fh, include_content=content, batch=3 if content else 512)
    assert (len(spans_file.read_text().splitlines()) > 1) == content
    session, detection = open_session(spans_file)
    assert detection.format == "otlp"
    assert any("lossy" in note for note in session.info.notes)
    reel = tmp_path / "back.jsonl"
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "convert", str(spans_file), str(reel)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "lossy" in proc.stderr  # the reader's notes are said on read
    before, resource_before = mapped(recordings[era], content=content)
    after, resource_after = mapped(reel, content=content)
    assert comparable(after) == comparable(before)
    assert resource_after == resource_before
    assert len(before) >= 10


def test_openinference_export_reads_back_with_the_whole_params_and_results(recordings, tmp_path):
    spans_file = tmp_path / "oi.json"
    with spans_file.open("wb") as fh:
        export_session(open_session(recordings["legacy"])[0], out=fh, convention="openinference")
    back = mcp_messages(open_session(spans_file)[0])
    original = mcp_messages(open_session(recordings["legacy"])[0])
    def calls(raws):
        return [(r["params"]["name"], r["params"].get("arguments")) for r in raws if r.get("method") == "tools/call"]
    assert calls(back) == calls(original)
    results = [r["result"] for r in back if isinstance(r.get("result"), dict) and "content" in r["result"]]
    assert {"text": "hello <b>&</b>", "type": "text"} in [c for res in results for c in res["content"]]
    errors = [r["error"] for r in back if "error" in r]
    assert errors == [r["error"] for r in original if "error" in r]


def test_another_tools_openinference_spans_read_as_tool_calls():
    session, detection = open_session(FIXTURES / "openinference-tool.json")
    assert detection.format == "otlp"
    assert session.info.id == "weather-session-1"
    raws = mcp_messages(session)
    (call,) = [r for r in raws if r.get("method") == "tools/call"]
    assert call["params"] == {"name": "get_weather", "arguments": {"location": "San Francisco"}}
    (answer,) = [r for r in raws if "result" in r]
    assert answer["id"] == call["id"]
    assert answer["result"]["structuredContent"] == {"temperature": 18, "conditions": "partly cloudy"}
    notes = " ".join(session.info.notes)
    assert "skipped 1 span that is not an MCP request" in notes and "ids made up" in notes


def test_a_json_file_that_is_not_otlp_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "a"}]}]}]}')
    with pytest.raises(InputError, match="startTimeUnixNano"):
        open_session(bad)
    (tmp_path / "e.json").write_text('{"resourceSpans": []}')
    with pytest.raises(InputError, match="holds no spans"):
        open_session(tmp_path / "e.json")


# -- hostile input: a one-line error or a session every verb can write, never a crash -------------------


_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.text(max_size=8),
                  st.floats(allow_nan=False))
_any = st.recursive(_leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                   st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                    max_leaves=10)
_value = st.one_of(_any, st.fixed_dictionaries({}, optional={
    "stringValue": _any, "intValue": _any, "boolValue": _any, "doubleValue": _any, "arrayValue": _any,
    "kvlistValue": _any}))
_attr = st.fixed_dictionaries({"key": st.sampled_from(["mcp.method.name", "jsonrpc.request.id", "input.value",
                                                       "output.value", "openinference.span.kind", "tool.name",
                                                       "error.type", "mcpreel.unanswered", "x"]),
                               "value": _value})
_span = st.fixed_dictionaries({}, optional={
    "traceId": _any, "spanId": st.sampled_from(["a1", "b2", "c3"]), "parentSpanId": st.sampled_from(["", "a1", "zz"]),
    "name": _any, "kind": _any, "startTimeUnixNano": st.one_of(_any, st.integers(0, 2**64).map(str)),
    "endTimeUnixNano": st.one_of(_any, st.integers(0, 2**64).map(str)), "attributes": st.one_of(_any, st.lists(_attr)),
    "events": st.one_of(_any, st.lists(st.fixed_dictionaries({"name": _any, "timeUnixNano": _any,
                                                             "attributes": st.lists(_attr)}))),
    "status": _any, "flags": _any})
_otlp = st.fixed_dictionaries({"resourceSpans": st.lists(st.one_of(_any, st.fixed_dictionaries(
    {"resource": _any, "scopeSpans": st.one_of(_any, st.lists(st.fixed_dictionaries(
        {"spans": st.one_of(_any, st.lists(_span, max_size=4))})))})), max_size=2)})
_frame = st.fixed_dictionaries({"seq": _any, "ts": st.one_of(_any, st.just("2026-01-01T00:00:00Z")),
                                "dir": st.sampled_from(["c2s", "s2c", "x"]), "frame": _any, "raw": _any},
                               optional={"type": _any, "gate": _any})


def _survives(path: Path, tmp: Path) -> None:
    try:
        session = open_session(path)[0]
        write_session(session, tmp / "out.jsonl", "reel")
        write_session(session, tmp / "out.sts.jsonl", "sts")
    except McpreelError:
        pass


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(doc=_otlp)
def test_hostile_otlp_files_end_in_one_line_or_read(doc, tmp_path):
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(doc))
    _survives(path, tmp_path)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(records=st.lists(_frame, min_size=1, max_size=4))
def test_hostile_glassport_logs_end_in_one_line_or_read(records, tmp_path):
    path = tmp_path / "g.jsonl"
    header = {"type": "glassport.header", "transport": "stdio", "started_at": "2026-01-01T00:00:00Z"}
    path.write_text("\n".join(json.dumps(r) for r in [header, *records]) + "\n")
    _survives(path, tmp_path)
