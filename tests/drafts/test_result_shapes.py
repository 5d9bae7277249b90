"""New result shapes: SEP-3279's result variants (``outputs``, ``requestedOutputs``) and SEP-2998's partial
results (``notifications/tools/partial_result`` chunks, then the final result), with a stdio peer written
from the drafts' wire examples (tests/drafts/peers/variants_server.py), recorded through ``mcpreel record``:
one reading of a tool call's result (:func:`mcpreel.operations.facts.tool_result`), the chunks belonging to
their operation, ``diff`` (the order of outputs means nothing), ``import``, OTLP, and ``replay`` judging the
final result and saying when the chunks differ."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpreel import drafts
from mcpreel.cli import cli
from mcpreel.formats import open_session
from mcpreel.operations import operations
from mcpreel.operations.facts import first_text, partial_chunks, status_of, tool_result

PEER = Path(__file__).parent / "peers" / "variants_server.py"
CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
    "name": "generate_report", "arguments": {"topic": "Q2"},
    "requestedOutputs": [{"audience": "assistant", "format": "content"},
                         {"audience": "programmatic", "format": "structured"}],
    "_meta": {"partialResultToken": "prt-abc"}}}
CLIENT = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
              "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
          {"jsonrpc": "2.0", "method": "notifications/initialized"},
          {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, CALL]


def run(*args: object) -> tuple[int, str]:
    r = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return r.exit_code, r.stdout + r.stderr


def record(tmp: Path, version: str) -> tuple[Path, list[dict]]:
    """The client's lines through ``mcpreel record`` to the peer; what the client got back."""
    reel = tmp / f"{version}.jsonl"
    p = subprocess.run([sys.executable, "-m", "mcpreel", "record", "-o", str(reel), "--", sys.executable,
                        str(PEER), version], input="".join(json.dumps(m) + "\n" for m in CLIENT),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return reel, [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def reels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("shapes")
    out = {}
    for version in ("v1", "v2", "v3"):
        out[version], got = record(tmp, version)
        direct = subprocess.run([sys.executable, str(PEER), version], input="".join(json.dumps(m) + "\n" for m in CLIENT),
                                capture_output=True, text=True, timeout=60)
        assert got == [json.loads(line) for line in direct.stdout.splitlines() if line.strip()]  # as directly
    return out


def test_one_reading_of_a_tool_result_whatever_its_version() -> None:
    old = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "hi"}],
                                                 "structuredContent": {"n": 1}}}
    new = {"jsonrpc": "2.0", "id": 1, "result": {"outputs": [
        {"audience": "programmatic", "format": "structured", "structuredContent": {"n": 1}},
        {"audience": "assistant", "format": "content", "content": [{"type": "text", "text": "hi"}]}]}}
    failed = {"jsonrpc": "2.0", "id": 1, "result": {"isError": True, "outputs": [
        {"audience": "assistant", "format": "content", "content": [{"type": "text", "text": "boom"}]}]}}
    a, b = tool_result(old), tool_result(new)
    assert (a.shape, a.text, a.structured) == ("content", "hi", {"n": 1})
    assert (b.shape, b.text, b.structured) == ("outputs", "hi", {"n": 1})
    assert [o["audience"] for o in b.outputs] == ["assistant", "programmatic"]
    assert status_of(failed) == ("isError", None, "boom") and first_text(failed["result"]) == "boom"
    assert tool_result({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "x"}}).is_error
    assert tool_result(None).shape == "none"


def test_the_chunks_belong_to_their_operation(reels) -> None:
    session, _ = open_session(reels["v1"], "reel")
    call = next(op for op in operations(session) if op.method == "tools/call")
    chunks = partial_chunks([m for _, m in call.notes], "prt-abc")
    assert [c["params"]["seq"] for c in chunks] == [0, 1]
    answer = tool_result(call.final.response if call.final is not None else None)
    assert answer.shape == "outputs" and answer.text == "Report on Q2: revenue grew."
    assert answer.structured == {"rows": 1200}


def test_diff_reads_outputs_in_any_order(reels) -> None:
    code, said = run("diff", reels["v1"], reels["v2"], "--json")
    assert code == 0, said  # v2 sends its outputs in another order: no difference
    code, said = run("diff", reels["v1"], reels["v3"], "--json")
    assert code == 1, said
    assert "rows" in said and "1300" in said


def test_import_and_otlp_carry_the_outputs(reels, tmp_path: Path) -> None:
    trace = tmp_path / "v1.trace.jsonl"
    code, said = run("import", reels["v1"], "-o", trace)
    assert code == 0, said
    calls = [json.loads(line) for line in trace.read_text().splitlines() if '"tool_call"' in line]
    assert calls and calls[0]["tool_name"] == "generate_report"
    assert calls[0]["result"]["outputs"][0]["audience"] in drafts.AUDIENCES
    spans = tmp_path / "spans.jsonl"
    code, said = run("export", "otlp", reels["v1"], "-o", spans, "--include-content")
    assert code == 0, said
    text = spans.read_text()
    assert "Report on Q2: revenue grew." in text and "programmatic" in text


@pytest.mark.e2e
def test_replay_judges_the_final_result_and_says_when_chunks_differ(reels, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    code, said = run("replay", reels["v1"], "--target-command", f"{sys.executable} {PEER} v2", "--output", out)
    assert code == 0, said  # the same final result (outputs in another order); other chunks
    call = next(r for r in json.loads(out.read_text())["results"] if r["method"] == "tools/call")
    assert call["status"] == "same"
    assert any("partial results differ" in n and "2 chunks recorded, 3 now" in n for n in call.get("notes", [])), call
    assert "partial results differ" in said
    code, said = run("replay", reels["v1"], "--target-command", f"{sys.executable} {PEER} v1")
    assert code == 0 and "partial results differ" not in said, said
    code, said = run("replay", reels["v1"], "--target-command", f"{sys.executable} {PEER} v3")
    assert code == 1 and "rows" in said, said


def test_otlp_puts_the_chunks_on_their_calls_span_and_names_the_variants(reels) -> None:
    from mcpreel.otel.mapping import spans

    session, _ = open_session(reels["v1"], "reel")
    got = spans(session)
    (call,) = [s for s in got if s.name.startswith("tools/call")]
    chunks = [e for e in call.events if e.name == drafts.PARTIAL_RESULT_NOTIFICATION]
    assert [(e.attributes["mcp.partial_result.seq"], e.attributes["mcp.partial_result.final"]) for e in chunks] == \
        [(0, False), (1, True)]
    assert call.attributes["mcp.tool.result.outputs"] == ["assistant/content", "programmatic/structured"]
    assert "gen_ai.tool.call.result" not in call.attributes  # content stays opt-in
    (root,) = [s for s in got if s.name.startswith("mcp session")]
    assert not [e for e in root.events if e.name == drafts.PARTIAL_RESULT_NOTIFICATION]


@pytest.mark.parametrize("trace_format", ["assay-v2", "simple"])
def test_import_keeps_the_final_result_not_a_chunk(reels, tmp_path: Path, trace_format: str) -> None:
    trace = tmp_path / "t.jsonl"
    code, said = run("import", reels["v1"], "-o", trace, "--trace-format", trace_format)
    assert code == 0, said
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    results = [x["result"] for x in lines if x.get("type") in ("tool_call", "tool_result") and "result" in x
               and isinstance(x["result"], dict)]
    assert len(results) == 1, lines  # two chunks, one call: one result, the final one
    final = tool_result({"result": results[0]})
    assert final.shape == "outputs" and final.text == "Report on Q2: revenue grew." and final.structured == {"rows": 1200}
    assert "Gathering" not in trace.read_text()
