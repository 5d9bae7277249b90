"""``mcpreel check``: does a live MCP server speak the strict HTTP-SSE format (and what MCP allows)?

Spec 05's checks are small named functions (:mod:`.http_checks`, :mod:`.protocol`, :mod:`.hygiene`, and
:mod:`.era` for the 2026-07-28 era's own rules) over a probe that talks to the server through the client
transports of :mod:`mcpreel.clients` (:mod:`.probe`: Streamable HTTP in the transport's probe mode, or a
stdio child process; :mod:`.legacy_sse`: a legacy HTTP+SSE server).
They return results as data (:mod:`.result`), redacted (:mod:`.redaction`); :mod:`mcpreel.render.check`
draws them as a table, JSON or JUnit XML. Only tools annotated ``readOnlyHint: true`` are called unless
the options say otherwise.

    report = run_check("http://127.0.0.1:8000/mcp", options=CheckOptions(profile="strict-sse"))
    report.exit_code   # 0 nothing failed, 1 a check failed; Unreachable (exit 2) is raised instead
"""

from mcpreel.check.context import ERAS, PROFILES, CheckOptions
from mcpreel.check.probe import Unreachable
from mcpreel.check.result import FAIL, PASS, SKIP, WARN, CheckReport, CheckResult
from mcpreel.check.runner import PLAN, run_check

__all__ = [
    "ERAS",
    "FAIL",
    "PASS",
    "PLAN",
    "PROFILES",
    "SKIP",
    "WARN",
    "CheckOptions",
    "CheckReport",
    "CheckResult",
    "Unreachable",
    "run_check",
]
