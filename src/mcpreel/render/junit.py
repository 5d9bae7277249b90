"""JUnit XML for CI: one test case per replayed request or compared item."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import BinaryIO

__all__ = ["Case", "write_junit"]

#: characters XML 1.0 cannot hold, even escaped (a server's text may carry ANSI colours or NULs)
_XML_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _x(text: str) -> str:
    """``text`` with what XML cannot carry shown as ``\\xNN``, so the report stays a valid document."""
    return _XML_BAD.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


@dataclass
class Case:
    name: str
    classname: str
    time_s: float = 0.0
    failure: str | None = None  # a difference: the message, then the details
    error: str | None = None  # could not be judged (no answer)
    skipped: str | None = None
    details: str = ""


def write_junit(out: BinaryIO, suite: str, cases: list[Case]) -> None:
    failures = sum(1 for c in cases if c.failure is not None)
    errors = sum(1 for c in cases if c.error is not None)
    skipped = sum(1 for c in cases if c.skipped is not None)
    total = sum(c.time_s for c in cases)
    suites = ET.Element("testsuites", tests=str(len(cases)), failures=str(failures), errors=str(errors),
                        skipped=str(skipped), time=f"{total:.3f}")
    node = ET.SubElement(suites, "testsuite", name=_x(suite), tests=str(len(cases)), failures=str(failures),
                         errors=str(errors), skipped=str(skipped), time=f"{total:.3f}")
    for case in cases:
        tc = ET.SubElement(node, "testcase", name=_x(case.name), classname=_x(case.classname),
                           time=f"{case.time_s:.3f}")
        if case.failure is not None:
            f = ET.SubElement(tc, "failure", message=_x(case.failure), type="difference")
            f.text = _x(case.details or case.failure)
        elif case.error is not None:
            e = ET.SubElement(tc, "error", message=_x(case.error), type="no-answer")
            e.text = _x(case.details or case.error)
        elif case.skipped is not None:
            ET.SubElement(tc, "skipped", message=_x(case.skipped))
    ET.indent(suites)
    out.write(b'<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(suites, encoding="utf-8"))
    out.write(b"\n")


def replay_cases(report: "ReplayReport") -> list[Case]:
    """One case per replayed request, plus one per server request the recording could not answer."""
    classname = f"mcpreel.replay.{report.session or 'session'}"
    cases = []
    for r in report.results:
        name = f"#{r.index} {r.method}" + (f" {r.tool}" if r.tool else "")
        case = Case(name, classname, (r.duration_ms or 0.0) / 1000.0)
        if r.status == "different":
            case.failure = f"{len(r.diff)} differences"
            case.details = "\n".join(d.describe(200) for d in r.diff)
        elif r.status == "error":
            case.error = r.error or "no answer"
        elif r.status == "unrecorded":
            case.skipped = "the recording holds no answer to compare with"
        cases.append(case)
    for s in report.unmatched_server_requests:
        cases.append(Case(f"server request {s.method}", classname, failure=s.error or "not in the recording"))
    return cases


def diff_cases(d: "SessionDiff") -> list[Case]:
    classname = "mcpreel.diff"
    cases = []
    for diff_ in d.server:
        cases.append(Case(f"server {diff_.path}", classname, failure=diff_.describe(200)))
    for t in d.tools:
        details = "\n".join(x.describe(200) for x in t.differences)
        cases.append(Case(f"tool {t.name}", classname, failure=f"tool {t.kind}", details=details))
    for c in d.calls:
        case = Case(c.label, classname, (c.latency_b or 0) / 1000.0)
        if c.kind != "same":
            lines = [x.describe(200) for x in c.arguments + c.result]
            if c.status_a != c.status_b and c.kind == "changed":
                lines.append(f"error status: {c.status_a} -> {c.status_b}")
            case.failure = f"call {c.kind}"
            case.details = "\n".join(lines)
        elif c.latency_shift and d.options.fail_on_latency:
            case.failure = f"latency {c.latency_a} ms -> {c.latency_b} ms"
        cases.append(case)
    return cases


from mcpreel.compare.diff import SessionDiff  # noqa: E402
from mcpreel.replay.verify import ReplayReport  # noqa: E402
