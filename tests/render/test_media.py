"""Reports as data: the library never prints, and one JUnit writer serves replay, diff and check."""

from __future__ import annotations

import ast
import io
import xml.etree.ElementTree as ET
from pathlib import Path

import mcpreel
from mcpreel.check.result import FAIL, PASS, SKIP, WARN, CheckReport, CheckResult
from mcpreel.render import check as render_check
from mcpreel.render.junit import Case, junit_xml, write_junit

SRC = Path(mcpreel.__file__).parent
_STREAMS = ("stdout", "stderr", "__stdout__", "__stderr__")


def _stream(node: ast.AST) -> bool:
    """``sys.stdout`` (or stderr, and their dunder forms)."""
    return (isinstance(node, ast.Attribute) and node.attr in _STREAMS and isinstance(node.value, ast.Name)
            and node.value.id == "sys")


def _problems(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            if isinstance(fn, ast.Name) and fn.id == "print":
                found.append(f"line {node.lineno}: print()")
            if isinstance(fn, ast.Attribute) and fn.attr == "echo" and isinstance(fn.value, ast.Name) \
                    and fn.value.id == "click":
                found.append(f"line {node.lineno}: click.echo()")
            if (isinstance(fn, ast.Name) and fn.id == "Console") or (isinstance(fn, ast.Attribute)
                                                                      and fn.attr == "Console"):
                file = next((k.value for k in node.keywords if k.arg == "file"), None)
                to_stderr = any(k.arg == "stderr" for k in node.keywords)
                if file is None or _stream(file) or to_stderr:
                    found.append(f"line {node.lineno}: a rich Console on a real stream")
        # sys.stdout.write(...), sys.stderr.buffer, print(file=sys.stderr): any use but .fileno()
        if isinstance(node, ast.Attribute) and _stream(node.value) and node.attr != "fileno":
            found.append(f"line {node.lineno}: sys.{node.value.attr}.{node.attr}")  # type: ignore[attr-defined]
    return found


def test_no_module_outside_the_cli_prints():
    offenders = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if rel.parts[0] == "cli" or str(rel) == "__main__.py":  # the entry point is the CLI's (its notice sink)
            continue
        problems = _problems(ast.parse(path.read_text(encoding="utf-8")))
        if problems:
            offenders[str(rel)] = problems
    # (mock/server.py's sys.stdout.fileno() is the stdio mock's MCP wire, not words for a person)
    assert offenders == {}


def test_the_printing_check_sees_what_it_must():
    code = ("import sys, click\nfrom rich.console import Console\nprint(1)\nsys.stdout.write('x')\n"
            "sys.stderr.buffer.write(b'x')\nclick.echo('x')\nConsole()\nConsole(stderr=True)\n"
            "Console(file=sys.stdout)\nConsole(file=buf)\nsys.stdout.fileno()\n")
    lines = {int(p.split(":")[0].removeprefix("line ")) for p in _problems(ast.parse(code))}
    assert lines == {3, 4, 5, 6, 7, 8, 9}


def test_one_junit_writer():
    writers = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "xml.etree" in text or "<testsuite" in text or '"testsuite"' in text:
            writers.append(str(path.relative_to(SRC)))
    assert writers == ["render/junit.py"]


def test_the_writer_counts_and_carries_every_outcome():
    cases = [Case("pass", "c", 0.5), Case("fail", "c", 0.25, failure="2 differences", details="a\nb"),
             Case("bare", "c", failure="tool added"), Case("err", "c", error="no answer"),
             Case("skip", "c", skipped="unrecorded"), Case("warn", "c", None, system_out="warning: slow"),
             Case("typed", "c", failure="bad", failure_type="Response Not Streaming", details="")]
    root = ET.fromstring(junit_xml("suite", cases, title="t", properties=[("target", "x")], time_s=1.0))
    assert (root.get("name"), root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped"),
            root.get("time")) == ("t", "7", "3", "1", "1", "1.000")
    suite = root.find("testsuite")
    assert suite.find("properties/property").attrib == {"name": "target", "value": "x"}
    by = {c.get("name"): c for c in suite.iter("testcase")}
    assert by["fail"].find("failure").text == "a\nb" and by["fail"].get("time") == "0.250"
    assert by["bare"].find("failure").text == "tool added"  # no details: the message again
    assert by["err"].find("error").get("type") == "no-answer"
    assert by["warn"].get("time") == "0" and by["warn"].find("system-out").text == "warning: slow"
    typed = by["typed"].find("failure")
    assert typed.get("type") == "Response Not Streaming" and typed.text is None  # empty, as check writes it
    untitled = ET.fromstring(junit_xml("suite", cases[:2]))
    assert untitled.get("name") is None and untitled.get("time") == "0.750"
    assert untitled.find("testsuite/properties") is None
    out = io.BytesIO()
    write_junit(out, "suite", cases)
    assert out.getvalue() == junit_xml("suite", cases).encode("utf-8")


def test_check_replay_and_diff_all_write_through_it():
    import mcpreel.render.check as c
    import mcpreel.render.diff as d
    import mcpreel.render.replay as r

    for module in (c, d, r):
        assert module.junit_xml is junit_xml
    report = CheckReport(target="t", transport="http", profile="mcp", results=[
        CheckResult("a", "A", PASS, "ok"), CheckResult("b", "B", FAIL, "no", fix="do"),
        CheckResult("c", "C", WARN, "hm"), CheckResult("d", "D", SKIP, "n/a")])
    root = ET.fromstring(render_check.to_junit(report))
    assert root.get("name") == "mcpreel check" and root.get("failures") == "1" and root.get("skipped") == "1"
    assert root.find("testsuite").get("name") == "mcpreel check t (profile mcp)"
