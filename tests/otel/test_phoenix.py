"""Against a real backend: Arize Phoenix receives the spans of recorded sessions over OTLP/HTTP and gives
them back through its own REST API (names, attributes, parent/child links, times).

Phoenix lives in its own virtualenv under ``.peers/phoenix`` (``make phoenix``); without it the test
skips with a warning. It runs on 127.0.0.1 with ports the test picks and its SQLite default in the
test's temporary directory; its gRPC receiver, which Phoenix binds to every interface, is put on
loopback by ``phoenix_serve.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
import warnings
from datetime import datetime
from pathlib import Path

import pytest

from mcpreel.formats import open_session
from mcpreel.otel.mapping import spans as map_spans
from tests.conftest import ROOT, free_port
from tests.report.peers.drive import TRACEPARENT

PHOENIX_PY = ROOT / ".peers" / "phoenix" / "bin" / "python"
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]  # Phoenix takes ~20-90 s to start here


def _get(url: str, timeout: float = 5) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as r:  # loopback only
        return r.read()


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    if not (ROOT / ".peers" / "phoenix" / ".installed").exists():
        warnings.warn("Phoenix test skipped: .peers/phoenix is not installed (`make phoenix`)", stacklevel=1)
        pytest.skip("Arize Phoenix is not installed in .peers/phoenix: run `make phoenix`")
    work = tmp_path_factory.mktemp("phoenix")
    port, grpc_port = free_port(), free_port()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(work), "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc_port), "PHOENIX_WORKING_DIR": str(work),
           "PHOENIX_TELEMETRY_ENABLED": "false"}
    log = open(work / "phoenix.log", "wb")
    proc = subprocess.Popen([str(PHOENIX_PY), str(Path(__file__).with_name("phoenix_serve.py"))], env=env,
                            stdout=log, stderr=subprocess.STDOUT, cwd=work)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180  # ~20 s on an idle 2-core box, much more when it is shared
        while True:
            if proc.poll() is not None:
                pytest.fail(f"phoenix exited with {proc.returncode}: {(work / 'phoenix.log').read_text()[-2000:]}")
            try:
                if _get(url + "/healthz", 2):
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("phoenix did not answer /healthz within 180 s")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()


def _phoenix_spans(url: str, session_id: str, count: int) -> list[dict]:
    """Phoenix's spans of one session (every span carries ``mcp.session.id``), once it has ingested
    ``count`` of them (it inserts in bulk)."""
    deadline = time.monotonic() + 30
    while True:
        doc = json.loads(_get(f"{url}/v1/projects/default/spans?limit=1000"))
        got = [s for s in doc["data"] if s["attributes"].get("mcp.session.id") == session_id]
        if len(got) >= count or time.monotonic() > deadline:
            return got
        time.sleep(0.5)


def _ns(iso: str) -> int:
    dt = datetime.fromisoformat(iso)
    return int(dt.timestamp()) * 1_000_000_000 + dt.microsecond * 1000


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_phoenix_receives_the_spans_of_a_recorded_session(phoenix, recordings, era):
    path = recordings[era]
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "export", "otlp", str(path), "--endpoint", phoenix],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    session = open_session(path)[0]
    mapped = map_spans(session)  # what was sent, but for the random ids
    traced = TRACEPARENT.split("-")[1]
    mine = _phoenix_spans(phoenix, session.info.id, len(mapped))
    assert sorted(s["name"] for s in mine) == sorted(r.name for r in mapped)
    (root,) = [s for s in mine if s["parent_id"] is None]
    assert root["name"] == "mcp session report-peer"
    assert sorted((s["name"], _ns(s["start_time"]), _ns(s["end_time"])) for s in mine) == sorted(
        (r.name, r.start_ns, r.end_ns) for r in mapped)
    ask = next(s for s in mine if s["name"] == "tools/call ask")
    for span in mine:
        if span is not root and span["context"]["trace_id"] != traced:
            # the sampling the `ask` call caused is part of that operation: a child of its span
            parent = ask["context"]["span_id"] if span["name"] == "sampling/createMessage" else root["context"]["span_id"]
            assert span["parent_id"] == parent
            assert span["context"]["trace_id"] == root["context"]["trace_id"]
    by_name = {s["name"]: s for s in mine}
    echo = [s for s in mine if s["parent_id"] == TRACEPARENT.split("-")[2]]
    assert len(echo) == 1 and echo[0]["context"]["trace_id"] == traced
    fail = by_name["tools/call fail"]
    assert fail["status_code"] == "ERROR" and fail["attributes"]["error.type"] == "tool_error"
    assert fail["attributes"]["gen_ai.tool.name"] == "fail" and fail["attributes"]["gen_ai.operation.name"] == "execute_tool"
    assert fail["attributes"]["mcp.method.name"] == "tools/call" and fail["attributes"]["network.transport"] == "pipe"
    assert by_name["resources/read res://motd"]["attributes"]["mcp.resource.uri"] == "res://motd"
    assert by_name["prompts/get greet"]["attributes"]["gen_ai.prompt.name"] == "greet"
    assert [e["name"] for e in by_name["tools/call slow"]["events"]] == ["notifications/progress"] * 3
    version = "2025-11-25" if era == "legacy" else "2026-07-28"
    assert root["attributes"]["mcp.protocol.version"] == version
    assert ("server/discover" in by_name) == (era == "modern")


def test_phoenix_shows_the_openinference_export_as_tool_spans(phoenix, recordings, tmp_path):
    """``--convention openinference``: Phoenix takes each ``tools/call`` span as a TOOL span (its own
    ``span_kind``), with the call's input and output as JSON, the tool's listed description and schema, and
    the session's spans grouped by ``session.id``."""
    from mcpreel.convert import write_session

    session = open_session(recordings["legacy"])[0]
    session.info.id = f"openinference-{session.info.id}"  # apart from the genai test's spans of this recording
    reel = tmp_path / "oi.jsonl"
    write_session(session, reel, "reel")
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "export", "otlp", str(reel), "--endpoint", phoenix,
                           "--convention", "openinference"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    mapped = map_spans(open_session(reel)[0])
    mine = _phoenix_spans(phoenix, session.info.id, len(mapped))
    assert sorted(s["name"] for s in mine) == sorted(r.name for r in mapped)
    kinds = {s["name"]: s["span_kind"] for s in mine}
    assert kinds["tools/call fail"] == kinds["tools/call slow"] == kinds["tools/call ask"] == "TOOL"
    assert kinds["prompts/get greet"] == "PROMPT"
    assert kinds["mcp session report-peer"] == kinds["tools/list"] == kinds["resources/read res://motd"] == "CHAIN"
    tools = [s for s in mine if s["span_kind"] == "TOOL"]
    assert len(tools) == 5  # echo twice, slow, ask, fail
    for span in tools:
        attrs = span["attributes"]
        assert attrs["tool.name"] == span["name"].split(" ", 1)[1]
        assert attrs["input.mime_type"] == attrs["output.mime_type"] == "application/json"
        assert json.loads(attrs["input.value"])["name"] == attrs["tool.name"]
        assert attrs["tool.parameters.type"] == "object"  # the listed input schema, parsed as JSON by Phoenix
        assert attrs["session.id"] == session.info.id
        assert not any(key.startswith("gen_ai.") for key in attrs)
    fail = next(s for s in tools if s["name"] == "tools/call fail")
    assert fail["status_code"] == "ERROR" and json.loads(fail["attributes"]["output.value"])["isError"] is True
    echo = next(s for s in tools if s["name"] == "tools/call echo" and "traced" not in s["attributes"]["input.value"])
    assert json.loads(echo["attributes"]["output.value"])["content"] == [{"text": "hello <b>&</b>", "type": "text"}]
