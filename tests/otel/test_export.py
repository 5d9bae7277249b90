"""``mcpreel export otlp``: to a file, and over OTLP/HTTP protobuf to a real receiver, on real recordings.

The receiver (``receiver.py``) is a minimal OTLP/HTTP endpoint that decodes what arrives with
``opentelemetry-proto``; the Phoenix test (``test_phoenix.py``) does the same against a real backend.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from mcpreel.formats import open_session
from mcpreel.otel.mapping import spans as map_spans
from tests.otel.receiver import Receiver
from tests.report.peers.drive import TRACEPARENT

pytestmark = pytest.mark.e2e


def mcpreel(*args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mcpreel", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def expected(path) -> list[tuple]:
    """What the mapping says the file's spans are (ids aside), to hold the wire to."""
    return sorted((r.name, {"client": 3, "server": 2, "internal": 1}[r.kind], r.start_ns, r.end_ns)
                  for r in map_spans(open_session(path)[0]))


def check_recorded(spans: list[dict], era: str) -> None:
    names = [s["name"] for s in spans]
    for name in ("tools/call echo", "tools/call slow", "tools/call fail", "tools/call ask", "prompts/get greet",
                 "resources/read res://motd", "prompts/get no-such-prompt", "tools/list"):
        assert name in names, (name, names)
    (root,) = [s for s in spans if s["parent_id"] is None]
    assert root["name"] == "mcp session report-peer" and root["kind"] == 1
    assert root["resource"]["service.name"] == "report-peer"
    traced = [s for s in spans if s["trace_id"] == TRACEPARENT.split("-")[1]]
    assert [s["name"] for s in traced] == ["tools/call echo"]
    assert traced[0]["parent_id"] == TRACEPARENT.split("-")[2] and traced[0]["links"] == [(root["trace_id"], root["span_id"])]
    ask = next(s for s in spans if s["name"] == "tools/call ask")
    for s in spans:
        if s is root or s in traced:
            continue
        # the sampling the `ask` call caused is part of that operation: a child of its span
        parent = ask["span_id"] if s["name"] == "sampling/createMessage" else root["span_id"]
        assert s["trace_id"] == root["trace_id"] and s["parent_id"] == parent
        assert root["start"] <= s["start"] <= s["end"] <= root["end"]
        assert s["attributes"]["network.transport"] == "pipe"
    slow = next(s for s in spans if s["name"] == "tools/call slow")
    assert [e[0] for e in slow["events"]] == ["notifications/progress"] * 3
    fail = next(s for s in spans if s["name"] == "tools/call fail")
    assert fail["attributes"]["error.type"] == "tool_error" and fail["status"][0] == 2
    assert fail["attributes"]["gen_ai.tool.name"] == "fail" and fail["attributes"]["gen_ai.operation.name"] == "execute_tool"
    if era == "legacy":
        assert "initialize" in names and "sampling/createMessage" in names
        assert next(s for s in spans if s["name"] == "sampling/createMessage")["kind"] == 2
        assert root["attributes"]["mcp.protocol.version"] == "2025-11-25"
    else:
        assert "server/discover" in names and "initialize" not in names
        ask = next(s for s in spans if s["name"] == "tools/call ask")
        assert ask["attributes"]["error.type"] == "-32600" and ask["attributes"]["rpc.response.status_code"] == "-32600"
        assert root["attributes"]["mcp.protocol.version"] == "2026-07-28"


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_export_to_an_otlp_http_receiver(recordings, era):
    with Receiver() as rx:
        proc = mcpreel("export", "otlp", str(recordings[era]), "--endpoint", rx.url)
        assert proc.returncode == 0, proc.stderr
        assert "exported" in proc.stderr and f"{rx.url}/v1/traces" in proc.stderr
        got = rx.spans()
    check_recorded(got, era)
    assert sorted((s["name"], s["kind"], s["start"], s["end"]) for s in got) == expected(recordings[era])
    assert {s["scope"] for s in got} == {"mcpreel"}


def test_export_to_a_json_file_matches_what_the_endpoint_gets(recordings, tmp_path):
    out = tmp_path / "spans.json"
    proc = mcpreel("export", "otlp", str(recordings["legacy"]), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert (os.stat(out).st_mode & 0o777) == 0o600
    lines = out.read_text().splitlines()
    assert len(lines) == 1
    doc = json.loads(lines[0])
    flat = []
    for rs in doc["resourceSpans"]:
        resource = {a["key"]: next(iter(a["value"].values())) for a in rs["resource"]["attributes"]}
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                flat.append({"name": s["name"], "kind": s["kind"], "trace_id": s["traceId"], "span_id": s["spanId"],
                             "parent_id": s.get("parentSpanId"), "start": int(s["startTimeUnixNano"]),
                             "end": int(s["endTimeUnixNano"]), "resource": resource, "scope": ss["scope"]["name"],
                             "attributes": {a["key"]: next(iter(a["value"].values())) for a in s.get("attributes", [])},
                             "events": [(e["name"], int(e["timeUnixNano"]), {}) for e in s.get("events", [])],
                             "links": [(link["traceId"], link["spanId"]) for link in s.get("links", [])],
                             "status": (s.get("status", {}).get("code", 0), s.get("status", {}).get("message", ""))})
    check_recorded(flat, "legacy")


def test_the_standard_environment_variables_are_respected(recordings):
    with Receiver() as rx:
        proc = mcpreel("export", "otlp", str(recordings["modern"]), "--include-content",
                       env={"OTEL_EXPORTER_OTLP_ENDPOINT": rx.url, "OTEL_EXPORTER_OTLP_HEADERS": "x-team=mcp,x-key=abc"})
        assert proc.returncode == 0, proc.stderr
        assert rx.headers and rx.headers[0]["x-team"] == "mcp" and rx.headers[0]["x-key"] == "abc"
        echo = next(s for s in rx.spans() if s["name"] == "tools/call echo" and s["parent_id"] != TRACEPARENT.split("-")[2])
    assert json.loads(echo["attributes"]["gen_ai.tool.call.arguments"]) == {"text": "hello <b>&</b>"}
    assert "hello <b>&</b>" in echo["attributes"]["gen_ai.tool.call.result"]


def test_refusals_are_one_line_and_exit_2(recordings, tmp_path):
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": ""}
    cases = [
        (["export", "otlp", str(recordings["legacy"])], "no OTLP endpoint"),
        (["export", "otlp", str(recordings["legacy"]), "--out", str(tmp_path / "a.json"), "--endpoint", "http://x"],
         "give one of them"),
        (["export", "otlp", str(recordings["legacy"]), "--endpoint", "ftp://x"], "not an http:// or https:// URL"),
        (["export", "otlp", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "b.json")], "missing.jsonl"),
    ]
    for args, words in cases:
        proc = mcpreel(*args, env=env)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and words in lines[0] and lines[0].startswith("error: "), proc.stderr
    assert not list(tmp_path.iterdir())


def test_a_dead_collector_is_an_error_not_a_hang(recordings):
    with Receiver() as rx:
        dead = rx.url  # the port was ours; after the with block nobody listens there
    started = time.monotonic()
    proc = mcpreel("export", "otlp", str(recordings["legacy"]), "--endpoint", dead, "--timeout", "2", timeout=60)
    assert proc.returncode == 2 and "error: the OTLP endpoint refused or did not take" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert time.monotonic() - started < 30
