"""The one JUnit XML writer, for CI: ``replay``, ``diff`` and ``check`` each turn their report into cases.

A report module builds :class:`Case` objects (one per replayed request, compared item or check) and
calls :func:`junit_xml`; what a CI parser reads is decided here once: the counts, the escaping of what
XML cannot carry, the layout.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO

__all__ = ["Case", "junit_xml", "write_junit"]

#: characters XML 1.0 cannot hold, even escaped (a server's text may carry ANSI colours or NULs)
_XML_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _x(text: str) -> str:
    """``text`` with what XML cannot carry shown as ``\\xNN``, so the report stays a valid document."""
    return _XML_BAD.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


@dataclass
class Case:
    """One test case. At most one of ``failure``, ``error``, ``skipped`` is set; none: it passed."""

    name: str
    classname: str
    time_s: float | None = 0.0  # None: not timed (written as "0")
    failure: str | None = None  # the failure's message
    failure_type: str = "difference"
    error: str | None = None  # could not be judged (no answer)
    skipped: str | None = None
    details: str | None = None  # the failure's or error's text; None: the message again
    system_out: str | None = None  # what a passing case has to say (a warning)


def junit_xml(suite: str, cases: Sequence[Case], *, title: str | None = None,
              properties: Sequence[tuple[str, str]] = (), time_s: float | None = None) -> str:
    """The document: ``<testsuites>`` (named ``title`` when given) holding one ``<testsuite>``.

    ``time_s`` is the suite's duration (default: the sum of the cases' times); ``properties`` become
    the suite's ``<properties>``.
    """
    failures = sum(1 for c in cases if c.failure is not None)
    errors = sum(1 for c in cases if c.error is not None)
    skipped = sum(1 for c in cases if c.skipped is not None)
    seconds = f"{sum(c.time_s or 0.0 for c in cases) if time_s is None else time_s:.3f}"
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": str(errors), "skipped": str(skipped),
              "time": seconds}
    suites = ET.Element("testsuites", {"name": _x(title)} if title is not None else {}, **counts)
    node = ET.SubElement(suites, "testsuite", {"name": _x(suite), **counts})
    if properties:
        props = ET.SubElement(node, "properties")
        for name, value in properties:
            ET.SubElement(props, "property", name=_x(name), value=_x(value))
    for case in cases:
        tc = ET.SubElement(node, "testcase", name=_x(case.name), classname=_x(case.classname),
                           time="0" if case.time_s is None else f"{case.time_s:.3f}")
        if case.failure is not None:
            f = ET.SubElement(tc, "failure", message=_x(case.failure), type=_x(case.failure_type))
            f.text = _x(case.failure if case.details is None else case.details)
        elif case.error is not None:
            e = ET.SubElement(tc, "error", message=_x(case.error), type="no-answer")
            e.text = _x(case.error if case.details is None else case.details)
        elif case.skipped is not None:
            ET.SubElement(tc, "skipped", message=_x(case.skipped))
        if case.system_out is not None:
            ET.SubElement(tc, "system-out").text = _x(case.system_out)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def write_junit(out: BinaryIO, suite: str, cases: Sequence[Case]) -> None:
    """:func:`junit_xml` (no title, no properties, timed by its cases) into a binary file, UTF-8."""
    out.write(junit_xml(suite, cases).encode("utf-8"))
