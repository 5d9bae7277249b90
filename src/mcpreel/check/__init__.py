"""``mcpreel check``: does a live MCP server speak the format seed 002 describes (and what MCP allows)?

Spec 05's checks are small named functions (:mod:`.transport`, :mod:`.protocol`, :mod:`.hygiene`) over a
probe that talks to the server (:mod:`.probe`: Streamable HTTP with httpx2, or a stdio child process).
They return results as data (:mod:`.result`); :mod:`.render` draws them as a table, JSON or JUnit XML.

    report = run_check("http://127.0.0.1:8000/mcp", options=CheckOptions(profile="sse"))
    report.exit_code   # 0 nothing failed, 1 a check failed; Unreachable (exit 2) is raised instead
"""

from mcpreel.check.context import PROFILES, CheckOptions
from mcpreel.check.probe import Unreachable
from mcpreel.check.result import FAIL, PASS, SKIP, WARN, CheckReport, CheckResult
from mcpreel.check.runner import PLAN, run_check

__all__ = [
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
