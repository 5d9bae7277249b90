"""End to end: real traffic of the official SDK client with server-everything (npm), recorded by a line tee,
then read, inspected, converted through every format and redacted."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import anyio
import pytest

from mcpreel.convert import convert
from mcpreel.inspection import analyze
from mcpreel.model import Kind
from mcpreel.redact.files import redact_file

from .support import assert_same_wire, messages_only, read, read_as, t1

pytestmark = pytest.mark.e2e
TEE = Path(__file__).with_name("tee_recorder.py")


async def _drive(reel: Path, everything_js: Path, errlog: Path) -> dict:
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.types import CreateMessageResult, TextContent

    async def sampling(ctx, params):
        return CreateMessageResult(role="assistant", model="fake", content=TextContent(type="text", text="42"))

    progress: list[float] = []

    async def on_progress(p, total, message):
        progress.append(p)

    params = StdioServerParameters(command=sys.executable,
                                   args=[str(TEE), str(reel), "--", shutil.which("node"), str(everything_js), "stdio"])
    seen = {}
    with anyio.fail_after(60), open(errlog, "w") as errf:
        async with stdio_client(params, errlog=errf) as (r, w):
            async with ClientSession(r, w, sampling_callback=sampling) as s:
                await s.initialize()
                seen["tools"] = [t.name for t in (await s.list_tools()).tools]
                seen["echo"] = (await s.call_tool("echo", {"message": "hi"})).content[0].text
                seen["sum"] = (await s.call_tool("get-sum", {"a": 2, "b": 3})).content[0].text
                seen["bad"] = (await s.call_tool("get-sum", {"a": "x"})).is_error
                await s.call_tool("trigger-long-running-operation", {"duration": 1, "steps": 2},
                                  progress_callback=on_progress)
                seen["sampling"] = (await s.call_tool("trigger-sampling-request",
                                                      {"prompt": "hello", "maxTokens": 7})).content[0].text
    seen["progress"] = progress
    return seen


@pytest.fixture(scope="module")
def recording(tmp_path_factory, everything_js):
    tmp = tmp_path_factory.mktemp("e2e")
    reel = tmp / "everything.jsonl"
    seen = anyio.run(_drive, reel, everything_js, tmp / "stderr.log")
    assert seen["echo"] == "Echo: hi" and seen["bad"] is True and len(seen["progress"]) == 2
    return reel, tmp


def test_recorded_traffic_reads_and_inspects(recording):
    reel, _ = recording
    session = read(reel)
    assert session.info.exit_code is not None
    report = analyze(session)
    s = report.summary
    assert s.unanswered == [] and s.orphans == []
    assert s.tools["echo"].calls == 1 and s.tools["get-sum"].calls == 2 and s.tools["get-sum"].is_errors == 1
    sampling = next(r for r in report.rows if r.label == "sampling/createMessage")
    answer = next(r for r in report.rows if r.corr == sampling.index)
    assert sampling.dir == "out" and answer.dir == "in"
    assert sum(1 for r in report.rows if r.label == "notifications/progress") == 2
    assert s.latency["tools/call"].count == 5
    assert any(r.kind == Kind.STDERR for r in report.rows)  # server-everything says hello on stderr


def test_recorded_traffic_survives_every_conversion(recording):
    reel, tmp = recording
    src = read(reel)
    semantics = t1(src)
    assert [c[1] for c in semantics["calls"]] == ["echo", "get-sum", "get-sum", "trigger-long-running-operation",
                                                  "trigger-sampling-request"]
    for fmt in ("qai", "jsonrpc", "inspector"):
        out = tmp / f"c.{fmt}"
        convert(reel, out, to=fmt)
        back = read_as(out, fmt)
        assert t1(back) == semantics, fmt
        if fmt == "qai":
            assert_same_wire(messages_only(back), messages_only(src))
            again = tmp / "again.jsonl"
            convert(out, again, to="reel")
            assert_same_wire(messages_only(read(again)), messages_only(src))
    har = tmp / "c.har"
    convert(reel, har)
    entries = json.loads(har.read_text())["log"]["entries"]
    assert {e["request"]["url"] for e in entries} == {entries[0]["request"]["url"]}
    assert entries[0]["request"]["url"].startswith("stdio://")
    assert any(e["_mcp"].get("method") == "sampling/createMessage" and e["_mcp"]["direction"] == "server_to_client"
               for e in entries)


def test_recorded_traffic_redacts(recording, tmp_path):
    reel, _ = recording
    rules = tmp_path / "rules.json"
    rules.write_text('{"paths": ["$.params.arguments.message"], "defaults": true}')
    from mcpreel.redact import load_rules

    out = tmp_path / "r.jsonl"
    result = redact_file(reel, out, rules=load_rules(rules))
    assert result.counts.get("path $.params.arguments.message") == 1
    assert '"message":"hi"' not in out.read_text()
    assert t1(read(out))["calls"][0][2] == {"message": "[REDACTED]"}
