"""Running the checks: connect in each era, run the plans in order, redact, report in spec order.

:data:`PLAN` is the order the checks run in (``initialize`` first, then ``notifications/initialized`` as
a client does, the checks that send odd things last, the SSE checks at the very end since they judge
every exchange of the run); :data:`mcpreel.check.era.MODERN_PLAN` runs before it on a connection that
speaks 2026-07-28. The report lists results in the order of spec 05's parts (the 2026-07-28 rules after
them), with every quoted text redacted (:mod:`mcpreel.check.redaction`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace
from typing import Any

from mcpreel.check import era, http_checks, hygiene, protocol
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
from mcpreel.check.legacy_sse import SseProbe, is_legacy_sse_url
from mcpreel.check.probe import HttpProbe, ProbeExchange, StdioProbe, Unreachable, excerpt
from mcpreel.check.redaction import redact_report
from mcpreel.check.result import CheckReport, CheckResult
from mcpreel.eras import LEGACY, MODERN, era_name
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

#: the eras as every surface names them (the report's "eras" lines)
_MODERN_ERA, _LEGACY_ERA = era_name(MODERN), era_name(LEGACY)


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

    Each era is checked on a connection of its own (over stdio: a server process of its own), since a
    server serves one era per connection: ``--era modern`` the 2026-07-28 era (``server/discover``),
    ``--era legacy`` the handshake era (``initialize``), ``--era auto`` each one the server answers
    (this era's own rules only once when it answers both; every other check then runs in the handshake
    era, so no tool is called twice).

    Raises :class:`~mcpreel.check.probe.Unreachable` (exit 2) when the server cannot be reached or
    never answers the first request; every other finding is a result in the report.
    """
    opts = options or CheckOptions()
    if (url is None) == (command is None):
        raise UsageError("give a server URL or --target-command (one of them)")
    opts = replace(opts, profile=PROFILE_ALIASES.get(opts.profile, opts.profile))
    if opts.profile not in PROFILES:
        raise UsageError(f"unknown profile {opts.profile!r} (known: {', '.join(PROFILES)})")
    if opts.era not in ERAS:
        raise UsageError(f"unknown era {opts.era!r} (known: {', '.join(ERAS)})")
    start = time.monotonic()

    legacy_sse = url is not None and is_legacy_sse_url(url)
    if legacy_sse and opts.era == "modern":
        raise UsageError(f"{url} is a legacy HTTP+SSE URL: that transport has no 2026-07-28 era (drop --era modern)")

    def connect(modern: bool) -> HttpProbe | StdioProbe | SseProbe:
        if url is not None:
            kind = SseProbe if legacy_sse else era.ModernHttpProbe if modern else HttpProbe
            return kind(url, timeout=opts.timeout, headers=opts.headers, transport=http_transport)
        assert command is not None
        return (era.ModernStdioProbe if modern else StdioProbe)(command, timeout=opts.timeout, env=env, cwd=cwd)

    def spawner(modern: bool) -> Callable[[], StdioProbe | SseProbe] | None:
        return None if url is not None and not legacy_sse else lambda: connect(modern)  # type: ignore[return-value]

    notes: list[str] = []
    runs: list[tuple[Run, list[Callable[[Run], Any]]]] = []
    with ExitStack() as stack:
        modern_run: Run | None = None
        if legacy_sse:
            notes.append(f"{_MODERN_ERA}: not checked (legacy HTTP+SSE speaks only the handshake era)")
        elif opts.era in ("auto", "modern"):
            modern_stack = stack.enter_context(ExitStack())
            modern_probe = connect(True)
            modern_stack.enter_context(modern_probe)
            modern_run = Run(modern_probe, opts, spawner(True), modern=True)
            _discover(modern_run, probe_only=opts.era == "auto")
            if modern_run.init_result is not None:
                notes.append(f"{_MODERN_ERA}: server/discover answered")
            else:
                notes.append(f"{_MODERN_ERA}: not offered ({_refusal(modern_run.init, 'server/discover')})")
                if opts.era == "auto":
                    modern_stack.close()  # no server process or connection idles through the other era's run
                    modern_run = None
        else:
            notes.append(f"{_MODERN_ERA}: not checked (--era legacy)")
        legacy_run: Run | None = None
        if opts.era in ("auto", "legacy"):
            legacy_probe = connect(False)
            stack.enter_context(legacy_probe)
            legacy_run = Run(legacy_probe, opts, spawner(False))
            try:
                _initialize(legacy_run)
            except Unreachable:
                if modern_run is None:
                    raise
                legacy_run = None
                notes.append(f"{_LEGACY_ERA}: not offered (initialize got no answer)")
            else:
                if legacy_run.init_result is not None:
                    notes.append(f"{_LEGACY_ERA}: initialize answered {legacy_run.negotiated or '(no protocolVersion)'}")
                elif modern_run is not None:
                    notes.append(f"{_LEGACY_ERA}: not offered ({_refusal(legacy_run.init, 'initialize')})")
                    legacy_run = None
        else:
            notes.append(f"{_LEGACY_ERA}: not checked (--era modern)")
        if modern_run is not None:
            runs.append((modern_run, era.MODERN_PLAN if legacy_run is not None else [*era.MODERN_PLAN, *PLAN]))
        if legacy_run is not None:
            runs.append((legacy_run, PLAN))
        results: list[tuple[int, CheckResult]] = []
        for run, plan in runs:
            for fn in plan:
                for r in _run_one(run, fn):
                    results.append((len(results), r))
                    if on_result is not None:
                        on_result(r)
            probe = run.probe
            if isinstance(probe, HttpProbe):
                for sid in [*run.extra_sessions, *([run.session_id] if run.session_id else [])]:
                    probe.delete(sid)
    report = CheckReport(target=runs[0][0].probe.target, transport=runs[0][0].probe.transport,
                         profile=opts.profile, strict=opts.strict, eras=notes)
    report.results = [r for _, r in sorted(results, key=lambda p: (p[1].section or 99, p[0]))]
    if legacy_run is not None and legacy_run.init_result is not None:
        info = legacy_run.init_result.get("serverInfo")
        report.server_info = info if isinstance(info, dict) else None
        report.protocol_version = legacy_run.negotiated
    elif modern_run is not None and modern_run.init_result is not None:
        meta = modern_run.init_result.get("_meta")
        info = meta.get(era.SERVER_INFO_KEY) if isinstance(meta, dict) else None
        report.server_info = info if isinstance(info, dict) else None
        report.protocol_version = era.MODERN
    redact_report(report)
    report.duration_ms = int((time.monotonic() - start) * 1000)
    return report


def _refusal(ex: ProbeExchange | None, method: str) -> str:
    """How a server turned down the first request of an era, in a few words."""
    resp = ex.response if ex is not None else None
    err = resp.get("error") if isinstance(resp, dict) else None
    if isinstance(err, dict):
        return f"{method} answered error {err.get('code')}: {excerpt(err.get('message'), 80)}"
    if ex is not None and ex.status is not None and not ex.ok_status:
        return f"{method} answered HTTP {ex.status}"
    return f"{method}: {ex.error if ex is not None and ex.error else 'no JSON-RPC response'}"


def _run_one(run: Run, fn: Callable[[Run], Any]) -> list[CheckResult]:
    m = meta_of(fn)

    def skipped(why: str) -> list[CheckResult]:
        return [CheckResult(id=m.id, title=m.title, status=SKIP, summary=why, section=m.section)]

    if m.only and m.only != run.probe.transport:
        if m.only == "stdio":
            return skipped("stdio-only check")
        return skipped("HTTP-only check: not run over stdio" if run.probe.transport == "stdio" else
                       "Streamable HTTP check: not run over legacy HTTP+SSE")
    if m.handshake and run.modern:
        why = "--era modern" if run.options.era == "modern" else f"the server speaks only {era.MODERN}"
        return skipped(f"a rule of the initialize handshake era: not run ({why})")
    if "init" in m.needs and run.init_result is None:
        return skipped(f"not run: {'server/discover' if run.modern else 'initialize'} failed")
    if "tools" in m.needs and run.tools is None:
        return skipped("not run: tools/list failed")
    probe = run.probe
    if "init" in m.needs and isinstance(probe, (StdioProbe, SseProbe)) and not probe.alive:
        return skipped(f"not run: {probe.exited_reason()} during an earlier check")
    out = fn(run)
    return out if isinstance(out, list) else [out]


def _discover(run: Run, *, probe_only: bool) -> None:
    """The first exchange of the 2026-07-28 era. With ``probe_only`` (``--era auto``) a server that says
    nothing within ``--timeout`` is taken as one that does not speak it (the handshake era's connection
    then says whether it can be reached at all); else that is exit 2."""
    probe = run.probe
    ex = probe.request("server/discover", None)
    run.init = ex
    if not probe_only:
        if isinstance(probe, HttpProbe) and ex.status is None:
            raise Unreachable(f"{probe.url}: {ex.error or 'no HTTP answer'}")
        if isinstance(probe, StdioProbe) and ex.response is None and not ex.messages and not ex.bad_frames:
            if not probe.alive:
                raise Unreachable(f"{probe.target}: {probe.exited_reason()} before answering server/discover")
            raise Unreachable(f"{probe.target}: no answer to server/discover within {run.options.timeout:g} s")
    res = era.discovered(ex)
    if res is not None:
        run.init_result = res
        run.negotiated = era.MODERN
        run.versions_seen.add(era.MODERN)


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
