"""Running the checks: connect, initialize, run the plan in order, report in spec order.

:data:`PLAN` is the order the checks run in (``initialize`` first, then ``notifications/initialized`` as
a client does, the checks that send odd things last, the SSE checks at the very end since they judge
every exchange of the run). The report lists results in the order of spec 05's parts.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from mcpreel.check import http_checks, hygiene, protocol
from mcpreel.check.context import (
    ERAS,
    FIRST_VERSION,
    HEADER_ERA,
    PROFILE_ALIASES,
    PROFILES,
    SKIP,
    CheckOptions,
    Run,
    meta_of,
)
from mcpreel.check.probe import HttpProbe, StdioProbe, Unreachable
from mcpreel.check.redaction import redact_report
from mcpreel.check.result import CheckReport, CheckResult
from mcpreel.errors import UsageError

__all__ = ["PLAN", "run_check"]

PLAN: list[Callable[[Run], Any]] = [
    http_checks.http_post,
    protocol.initialize,
    hygiene.notifications,
    protocol.tools_list,
    protocol.tool_schemas,
    protocol.tool_calls,
    hygiene.jsonrpc_ids,
    hygiene.unknown_method,
    protocol.version_negotiation,
    http_checks.session_id,
    http_checks.origin,
    http_checks.protocol_version_header,
    hygiene.parse_error,
    http_checks.sse_content_type,
    http_checks.sse_framing,
    hygiene.stdout_clean,
]

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def run_check(
    url: str | None = None,
    *,
    command: str | list[str] | None = None,
    options: CheckOptions | None = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    http_transport: Any = None,
    on_result: Callable[[CheckResult], None] | None = None,
) -> CheckReport:
    """Check the server at ``url`` (Streamable HTTP) or started by ``command`` (stdio).

    Raises :class:`~mcpreel.check.probe.Unreachable` (exit 2) when the server cannot be reached or
    never answers ``initialize``; every other finding is a result in the report.
    """
    opts = options or CheckOptions()
    if (url is None) == (command is None):
        raise UsageError("give a server URL or --command (one of them)")
    opts = replace(opts, profile=PROFILE_ALIASES.get(opts.profile, opts.profile))
    if opts.profile not in PROFILES:
        raise UsageError(f"unknown profile {opts.profile!r} (known: {', '.join(PROFILES)})")
    if opts.era not in ERAS:
        raise UsageError(f"unknown era {opts.era!r} (known: {', '.join(ERAS)})")
    start = time.monotonic()
    spawn: Callable[[], StdioProbe] | None = None
    if url is not None:
        probe: HttpProbe | StdioProbe = HttpProbe(url, timeout=opts.timeout, headers=opts.headers,
                                                  transport=http_transport)
    else:
        assert command is not None
        cmd = command

        def spawn() -> StdioProbe:
            return StdioProbe(cmd, timeout=opts.timeout, env=env, cwd=cwd)

        probe = spawn()
    report = CheckReport(target=probe.target, transport=probe.transport, profile=opts.profile, strict=opts.strict)
    with probe:
        run = Run(probe, opts, spawn)
        _initialize(run)
        results: list[tuple[int, CheckResult]] = []
        for index, fn in enumerate(PLAN):
            for r in _run_one(run, fn):
                results.append((index, r))
                if on_result is not None:
                    on_result(r)
        if isinstance(probe, HttpProbe):
            for sid in [*run.extra_sessions, *([run.session_id] if run.session_id else [])]:
                probe.delete(sid)
    report.results = [r for _, r in sorted(results, key=lambda p: (p[1].section or 99, p[0]))]
    if run.init_result is not None:
        info = run.init_result.get("serverInfo")
        report.server_info = info if isinstance(info, dict) else None
        report.protocol_version = run.negotiated
    redact_report(report)
    report.duration_ms = int((time.monotonic() - start) * 1000)
    return report


def _run_one(run: Run, fn: Callable[[Run], Any]) -> list[CheckResult]:
    m = meta_of(fn)

    def skipped(why: str) -> list[CheckResult]:
        return [CheckResult(id=m.id, title=m.title, status=SKIP, summary=why, section=m.section)]

    if m.only and m.only != run.probe.transport:
        return skipped("HTTP-only check: not run over stdio" if m.only == "http" else "stdio-only check")
    if "init" in m.needs and run.init_result is None:
        return skipped("not run: initialize failed")
    if "tools" in m.needs and run.tools is None:
        return skipped("not run: tools/list failed")
    probe = run.probe
    if "init" in m.needs and isinstance(probe, StdioProbe) and not probe.alive:
        return skipped(f"not run: {probe.exited_reason()} during an earlier check")
    out = fn(run)
    return out if isinstance(out, list) else [out]


def _initialize(run: Run) -> None:
    """The first exchange. No answer at all (no HTTP status, no stdout line) means unreachable: exit 2."""
    probe = run.probe
    ex = probe.request("initialize", protocol.initialize_params(FIRST_VERSION[run.profile]))
    run.init = ex
    if isinstance(probe, HttpProbe):
        if ex.status is None:
            raise Unreachable(f"{probe.url}: {ex.error or 'no HTTP answer'}")
    elif ex.response is None and not ex.messages and not ex.bad_frames:
        if not probe.alive:
            raise Unreachable(f"{probe.target}: {probe.exited_reason()} before answering initialize")
        raise Unreachable(f"{probe.target}: no answer to initialize within {run.options.timeout:g} s")
    resp = ex.response
    res = resp.get("result") if isinstance(resp, dict) else None
    if not isinstance(res, dict):
        return
    run.init_result = res
    pv = res.get("protocolVersion")
    if isinstance(pv, str):
        run.negotiated = pv
        run.versions_seen.add(pv)
    if isinstance(probe, HttpProbe):
        run.session_id = ex.headers.get("mcp-session-id") or None
        probe.session_id = run.session_id
        if isinstance(pv, str) and _DATE.fullmatch(pv) and pv >= HEADER_ERA:
            probe.protocol_version = pv
