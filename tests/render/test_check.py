"""The report drawn three ways: a table (rich, into a string), JSON, JUnit XML."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

from rich.console import Console

from mcpreel.check.result import FAIL, PASS, SKIP, WARN, CheckReport, CheckResult
from mcpreel.render.check import plain_lines, renderables, to_json, to_junit


def report(strict: bool = False) -> CheckReport:
    return CheckReport(
        target="http://127.0.0.1:9/mcp", transport="http", profile="sse", strict=strict, duration_ms=1234,
        server_info={"name": "srv", "version": "2.0"}, protocol_version="2024-11-05",
        results=[
            CheckResult("http-post", "POST accepted", PASS, "200 text/event-stream", section=1),
            CheckResult("sse-content-type", "Responses are text/event-stream", FAIL,
                        "tools/list answered application/json", sent="POST /mcp {...}",
                        received="200 application/json {}", fix="stream it", issue="Response Not Streaming",
                        section=2),
            CheckResult("origin", "Origin validated", WARN, "Origin not validated", fix="check Origin\x00", section=7),
            CheckResult("stdout-clean", "stdout", SKIP, "stdio-only check"),
        ],
    )


def test_text_table():
    buf = io.StringIO()
    console = Console(file=buf, width=120, color_system=None)
    for item in renderables(report()):
        console.print(item)
    out = buf.getvalue()
    assert "mcpreel check http://127.0.0.1:9/mcp  (http)" in out
    assert "server: srv 2.0 · protocol 2024-11-05 · 1.2 s" in out
    assert "sse-content-type" in out and "tools/list answered application/json" in out
    assert "FAIL sse-content-type · Responses are text/event-stream  [Response Not Streaming]" in out
    assert "received  200 application/json {}" in out
    assert "4 checks: 1 pass · 1 fail · 1 warn · 1 skip  ->  FAILED (a check failed; exit 1)" in out


def test_plain_lines():
    lines = list(plain_lines(report()))
    assert "  sse-content-type  fail  tools/list answered application/json" in lines
    assert "  fix       stream it" in lines
    assert lines[-1].endswith("FAILED (a check failed; exit 1)")


def test_json():
    doc = json.loads(to_json(report()))
    assert doc["ok"] is False and doc["exit_code"] == 1
    assert doc["counts"] == {"pass": 1, "fail": 1, "warn": 1, "skip": 1}
    failed = next(c for c in doc["checks"] if c["status"] == "fail")
    assert failed["issue"] == "Response Not Streaming" and failed["sent"] == "POST /mcp {...}"
    assert "sent" not in doc["checks"][0]


def test_junit():
    root = ET.fromstring(to_junit(report()))
    assert root.tag == "testsuites" and root.get("tests") == "4" and root.get("failures") == "1"
    cases = {c.get("name"): c for c in root.iter("testcase")}
    fail = cases["sse-content-type"].find("failure")
    assert fail.get("message") == "tools/list answered application/json"
    assert fail.get("type") == "Response Not Streaming"
    assert "fix: stream it" in fail.text
    assert cases["stdout-clean"].find("skipped") is not None
    warn = cases["origin"].find("system-out")
    assert warn.text.startswith("warning: Origin not validated") and "\x00" not in warn.text
    strict = ET.fromstring(to_junit(report(strict=True)))
    assert strict.get("failures") == "2"
    assert next(c for c in strict.iter("testcase") if c.get("name") == "origin").find("failure") is not None


def test_strict_turns_warnings_into_exit_1():
    r = report()
    r.results = [x for x in r.results if x.status != FAIL]
    assert r.exit_code == 0
    r.strict = True
    assert r.exit_code == 1
