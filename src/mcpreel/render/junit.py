"""The one JUnit XML writer, for CI: ``replay``, ``diff`` and ``check`` each turn their report into cases.

A report module builds :class:`Case` objects (one per replayed request, compared item or check) and
calls :func:`junit_xml`; what a CI parser reads is decided here once: the counts, the escaping of what
XML cannot carry, the layout.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO

__all__ = ["Case", "JunitSpool", "junit_xml", "write_junit"]

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
    #: a case that passed but varied (a flaky replay): Surefire's ``<flakyFailure>`` inside a passing case,
    #: its text (``flaky_details``, else the message) in ``<stackTrace>``; not counted as a failure
    flaky: str | None = None
    flaky_details: str | None = None


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
        node.append(_testcase(case))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _testcase(case: Case) -> ET.Element:
    tc = ET.Element("testcase", name=_x(case.name), classname=_x(case.classname),
                    time="0" if case.time_s is None else f"{case.time_s:.3f}")
    if case.failure is not None:
        f = ET.SubElement(tc, "failure", message=_x(case.failure), type=_x(case.failure_type))
        f.text = _x(case.failure if case.details is None else case.details)
    elif case.error is not None:
        e = ET.SubElement(tc, "error", message=_x(case.error), type="no-answer")
        e.text = _x(case.error if case.details is None else case.details)
    elif case.skipped is not None:
        ET.SubElement(tc, "skipped", message=_x(case.skipped))
    elif case.flaky is not None:
        flaky = ET.SubElement(tc, "flakyFailure", message=_x(case.flaky), type="flaky")
        ET.SubElement(flaky, "stackTrace").text = _x(case.flaky if case.flaky_details is None else case.flaky_details)
    if case.system_out is not None:
        ET.SubElement(tc, "system-out").text = _x(case.system_out)
    return tc


class JunitSpool:
    """:func:`junit_xml` for reports too long to hold: cases are written to a temporary file as they
    come and counted, and :meth:`write` puts the header (which needs the counts) before them.

    The document is the same, byte for byte, as :func:`junit_xml` of the same cases (no title).
    """

    def __init__(self) -> None:
        self._spool = tempfile.TemporaryFile()
        self.tests = self.failures = self.errors = self.skipped = 0
        self.time_s = 0.0

    def add(self, case: Case) -> None:
        """Add one test case, spooled to disk so a long run's report does not sit in memory."""
        self.tests += 1
        self.failures += case.failure is not None
        self.errors += case.error is not None
        self.skipped += case.skipped is not None
        self.time_s += case.time_s or 0.0
        tc = _testcase(case)
        ET.indent(tc, level=2)
        self._spool.write(b"    " + ET.tostring(tc, encoding="unicode").encode("utf-8") + b"\n")

    def write(self, out: BinaryIO, suite: str) -> None:
        """The whole document into ``out``; the spool is closed."""
        counts = {"tests": str(self.tests), "failures": str(self.failures), "errors": str(self.errors),
                  "skipped": str(self.skipped), "time": f"{self.time_s:.3f}"}
        if not self.tests:
            out.write(junit_xml(suite, []).encode("utf-8"))
            self._spool.close()
            return

        def opening(tag: str, attrs: dict[str, str]) -> str:
            return ET.tostring(ET.Element(tag, attrs), encoding="unicode").removesuffix(" />") + ">"

        head = (f'<?xml version="1.0" encoding="UTF-8"?>\n{opening("testsuites", counts)}\n'
                f'  {opening("testsuite", {"name": _x(suite), **counts})}\n')
        out.write(head.encode("utf-8"))
        self._spool.seek(0)
        shutil.copyfileobj(self._spool, out)
        out.write(b"  </testsuite>\n</testsuites>\n")
        self._spool.close()

    def append_to(self, other: JunitSpool) -> None:
        """Add this spool's cases, in order, after ``other``'s."""
        other.tests += self.tests
        other.failures += self.failures
        other.errors += self.errors
        other.skipped += self.skipped
        other.time_s += self.time_s
        self._spool.seek(0)
        shutil.copyfileobj(self._spool, other._spool)

    def close(self) -> None:
        """Close (and so delete) the spool."""
        self._spool.close()


def write_junit(out: BinaryIO, suite: str, cases: Sequence[Case]) -> None:
    """:func:`junit_xml` (no title, no properties, timed by its cases) into a binary file, UTF-8."""
    out.write(junit_xml(suite, cases).encode("utf-8"))
