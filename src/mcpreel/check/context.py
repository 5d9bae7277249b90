"""What every check sees: the probe, the options, and what earlier checks learned about the server.

A check is a small named function ``fn(run) -> CheckResult | list[CheckResult]`` declared with
:func:`check`, which records its id, title, the part of spec 05 it belongs to, the transport it
applies to and what it needs (a successful ``initialize``, a tool list). The runner
(:mod:`mcpreel.check.runner`) skips a check whose needs are not met, and says why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcpreel.check.legacy_sse import SseProbe
from mcpreel.check.probe import HttpProbe, ProbeExchange, StdioProbe
from mcpreel.check.result import FAIL, PASS, SKIP, WARN, CheckResult

__all__ = [
    "FAIL",
    "FIRST_VERSION",
    "HEADER_ERA",
    "PASS",
    "ERAS",
    "PROFILES",
    "PROFILE_ALIASES",
    "SKIP",
    "WARN",
    "CheckMeta",
    "CheckOptions",
    "Run",
    "check",
    "meta_of",
    "result",
]

#: ``strict-sse``: the strict format some HTTP-SSE clients need (seed 002's); ``mcp``: what the MCP
#: specification allows
PROFILES = {
    "strict-sse": "strict SSE format: JSON-RPC over HTTP POST, SSE responses, JSON strings in text content",
    "mcp": "what the MCP specification allows: JSON or SSE responses, any content type",
}
#: other names a profile answers to (``sse`` was the strict profile's first name)
PROFILE_ALIASES = {"sse": "strict-sse"}
#: ``--era``: which protocol eras the check speaks (see :mod:`mcpreel.check.era`)
ERAS = ("auto", "legacy", "modern")

#: the protocol version the check speaks first, per profile (the strict format's own example uses 2024-11-05)
FIRST_VERSION = {"strict-sse": "2024-11-05", "mcp": "2025-11-25"}
#: from this version on a client sends MCP-Protocol-Version on every HTTP request
HEADER_ERA = "2025-06-18"


@dataclass
class CheckOptions:
    """How to run.

    Tools: ``calls`` gives some tools' arguments (``--call``: those are called whatever their
    annotations say); other tools are called only when annotated ``readOnlyHint: true``, unless
    ``call_all`` (``--call-all``); ``no_call`` calls none but those in ``calls``. ``era`` picks the
    protocol eras spoken (``auto``: the 2026-07-28 era when the server answers ``server/discover``, the
    handshake era when it answers ``initialize``).
    """

    profile: str = "strict-sse"
    calls: dict[str, Any] = field(default_factory=dict)
    no_call: bool = False
    call_all: bool = False
    era: str = "auto"
    timeout: float = 10.0
    headers: dict[str, str] = field(default_factory=dict)
    strict: bool = False


@dataclass(frozen=True)
class CheckMeta:
    id: str
    title: str
    section: int
    only: str | None = None  # "http" | "stdio" | None
    needs: tuple[str, ...] = ("init",)  # "init" (the era's first exchange answered), "tools"
    handshake: bool = False  # a rule of the initialize handshake era only


def check(id: str, title: str, section: int, *, only: str | None = None, needs: tuple[str, ...] = ("init",),
          handshake: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a check function."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.meta = CheckMeta(id, title, section, only, needs, handshake)  # type: ignore[attr-defined]
        return fn

    return deco


def meta_of(fn: Callable[..., Any]) -> CheckMeta:
    return fn.meta  # type: ignore[attr-defined]


class Run:
    """One check run's state. Checks read it and add what they learn (tools, versions, sessions)."""

    def __init__(self, probe: HttpProbe | StdioProbe | SseProbe, options: CheckOptions,
                 spawn: Callable[[], StdioProbe | SseProbe] | None = None, *, modern: bool = False) -> None:
        self.probe = probe
        self.options = options
        self.modern = modern  # speaking 2026-07-28 (server/discover), not the initialize handshake
        self.spawn = spawn  # a fresh stdio server (or SSE stream), for checks that need a new connection
        self.init: ProbeExchange | None = None
        self.init_result: dict[str, Any] | None = None
        self.negotiated: str | None = None
        self.session_id: str | None = None
        self.tools: list[dict[str, Any]] | None = None
        self.versions_seen: set[str] = set()  # every protocolVersion the server agreed to
        self.extra_sessions: list[str] = []  # sessions opened by probes, deleted at the end

    @property
    def profile(self) -> str:
        return self.options.profile

    @property
    def strict_format(self) -> bool:
        """True under the strict SSE profile."""
        return self.options.profile == "strict-sse"

    @property
    def http(self) -> bool:
        return self.probe.transport == "http"

    @property
    def ping(self) -> str:
        """The cheapest request of the era: ``ping`` (2026-07-28 has none: ``server/discover`` there)."""
        return "server/discover" if self.modern else "ping"


def result(fn: Callable[..., Any], status: str, summary: str, *, ex: ProbeExchange | None = None,
           fix: str | None = None, issue: str | None = None, details: list[str] | None = None,
           id: str | None = None, title: str | None = None) -> CheckResult:
    """A result of the check ``fn``; ``ex`` (when given and not a pass) supplies sent/received."""
    m = meta_of(fn)
    r = CheckResult(id=id or m.id, title=title or m.title, status=status, summary=summary, fix=fix,
                    issue=issue, details=list(details or []), section=m.section)
    if ex is not None and status != PASS:
        r.sent = ex.sent_text()
        r.received = ex.received_text()
    return r

