"""JUnit XML for CI: whatever a server answered, the report is a document a CI parser reads."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpreel.render.junit import Case, write_junit


def _parse(cases: list[Case]) -> ET.Element:
    out = io.BytesIO()
    write_junit(out, "mcpreel replay s.jsonl", cases)
    return ET.fromstring(out.getvalue())


def test_control_characters_from_a_server_keep_the_xml_valid():
    # tool output often carries ANSI colours; a NUL or an ESC is not allowed in XML 1.0, even escaped
    ansi = '$.result.content[0].text: "\x1b[31mred\x1b[0m" -> "plain\x00"'
    root = _parse([Case("#1 tools/call \x1b[1mbold", "mcpreel.replay.s", failure="1 differences", details=ansi),
                   Case("#2 ping", "mcpreel.replay.s", error="no answer: \x07"),
                   Case("#3 x", "mcpreel.replay.s", skipped="unrecorded")])
    suite = root.find("testsuite")
    assert suite is not None and root.get("skipped") == "1"
    first, second, _ = suite.findall("testcase")
    assert first.get("name") == "#1 tools/call \\x1b[1mbold"
    failure = first.find("failure")
    assert failure is not None and failure.text == '$.result.content[0].text: "\\x1b[31mred\\x1b[0m" -> "plain\\x00"'
    assert second.find("error").get("message") == "no answer: \\x07"


@settings(max_examples=60, deadline=None)
@given(st.text(), st.text(), st.text())
def test_any_text_gives_a_parseable_report(name, message, details):
    root = _parse([Case(name, "c", failure=message, details=details), Case(name, "c", error=message)])
    assert len(root.find("testsuite").findall("testcase")) == 2
