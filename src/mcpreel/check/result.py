"""What a check found, as data: one :class:`CheckResult` per check, gathered in a :class:`CheckReport`.

Results never print; :mod:`mcpreel.render.check` draws them as a table, JSON or JUnit XML. A result
that did not pass says what was sent, what came back and how to fix it, so the report alone is enough
to act on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CheckReport", "CheckResult", "PASS", "FAIL", "WARN", "SKIP", "STATUSES"]

PASS = "pass"
FAIL = "fail"
WARN = "warn"  # allowed, but a client may trip on it (or the check could not be sure)
SKIP = "skip"  # not run: not applicable to this transport, or something it needs failed first
STATUSES = (PASS, FAIL, WARN, SKIP)


@dataclass(slots=True)
class CheckResult:
    """One check. ``id`` is stable (``sse-framing``, ``tools-call:echo``) and is what JSON and JUnit name.

    ``summary`` is one line; ``sent`` / ``received`` are short excerpts of the exchange that decided the
    result; ``fix`` says what to change; ``issue`` names a well-known failure ("Response Not Streaming") when the
    failure is one of them; ``details`` lists every further problem found by the same check.
    """

    id: str
    title: str
    status: str
    summary: str = ""
    sent: str | None = None
    received: str | None = None
    fix: str | None = None
    issue: str | None = None
    details: list[str] = field(default_factory=list)
    section: int = 0  # the numbered part of spec 05 the check belongs to (0 = beyond it)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "title": self.title, "status": self.status, "summary": self.summary}
        for key in ("sent", "received", "fix", "issue"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.details:
            out["details"] = list(self.details)
        return out


@dataclass(slots=True)
class CheckReport:
    """Every result of one run against one server, and what the run learned about the server."""

    target: str
    transport: str  # "http" (Streamable HTTP) | "stdio" | "sse" (legacy HTTP+SSE)
    profile: str  # "strict-sse" | "mcp"
    results: list[CheckResult] = field(default_factory=list)
    server_info: dict[str, Any] | None = None
    protocol_version: str | None = None
    duration_ms: int = 0
    strict: bool = False  # warnings count as failures
    eras: list[str] = field(default_factory=list)  # what each protocol era's first request got, one line each

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in STATUSES}
        for r in self.results:
            out[r.status] = out.get(r.status, 0) + 1
        return out

    @property
    def failed(self) -> bool:
        bad = (FAIL, WARN) if self.strict else (FAIL,)
        return any(r.status in bad for r in self.results)

    @property
    def exit_code(self) -> int:
        """0 nothing failed, 1 a check failed (unreachable servers never get a report: exit 2)."""
        return 1 if self.failed else 0

    def get(self, check_id: str) -> CheckResult | None:
        for r in self.results:
            if r.id == check_id:
                return r
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "transport": self.transport,
            "profile": self.profile,
            "strict": self.strict,
            "ok": not self.failed,
            "exit_code": self.exit_code,
            "server_info": self.server_info,
            "protocol_version": self.protocol_version,
            "eras": list(self.eras),
            "duration_ms": self.duration_ms,
            "counts": self.counts(),
            "checks": [r.to_dict() for r in self.results],
        }
