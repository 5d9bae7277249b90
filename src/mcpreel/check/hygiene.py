"""JSON-RPC hygiene (spec 05 part 6): ids echoed with their type, ``-32601`` for an unknown method,
``-32700`` for malformed JSON, no answer to a notification; and, over stdio, nothing but JSON-RPC on
stdout."""

from __future__ import annotations

from typing import Any

from mcpreel.check.context import FAIL, PASS, WARN, Run, check, result
from mcpreel.check.legacy_sse import SseProbe
from mcpreel.check.probe import ProbeExchange, StdioProbe, excerpt
from mcpreel.check.result import CheckResult

_RANK = {PASS: 0, WARN: 1, FAIL: 2}
MALFORMED = b'{"jsonrpc": "2.0", "id": 99, "method": "tools/list", "params": {'


def _responses(messages: list[Any]) -> list[dict[str, Any]]:
    return [m for m in messages if isinstance(m, dict) and "method" not in m and ("result" in m or "error" in m)]


@check("notifications", "Notifications get no response (202 over HTTP)", 6)
def notifications(run: Run) -> CheckResult:
    probe = run.probe
    ex = probe.notify("notifications/initialized")
    fix = "never answer a notification (a message without id); over HTTP reply 202 Accepted with no body"
    if run.http:
        answered = _responses(ex.messages)
        if answered:
            return result(notifications, FAIL, "notifications answered: notifications/initialized got a JSON-RPC "
                                               f"response {excerpt(answered[0], 120)}", ex=ex, fix=fix)
        if ex.status == 202 and not ex.body.strip():
            return result(notifications, PASS, "notifications/initialized -> 202, no body")
        if ex.ok_status and not ex.body.strip():
            return result(notifications, WARN, f"notifications/initialized -> {ex.status}; MCP asks for 202", ex=ex,
                          fix=fix)
        if ex.ok_status:
            return result(notifications, FAIL, f"notifications/initialized -> {ex.status} with a body", ex=ex, fix=fix)
        return result(notifications, FAIL, f"notifications/initialized was refused: {ex.status or ex.error}", ex=ex,
                      fix="accept notifications/initialized after initialize (202, no body)")
    # stdio, legacy SSE: whatever answers the notification arrives before (or just after) the answer to a ping
    assert isinstance(probe, (StdioProbe, SseProbe))
    ping = probe.request(run.ping, label=f"{run.ping} after notifications/initialized")
    late = probe.drain(0.15)
    stray = [m for m in _responses(ex.messages + ping.messages + late) if m is not ping.response]
    if stray:
        return result(notifications, FAIL, f"notifications answered: got {excerpt(stray[0], 120)}", ex=ex, fix=fix)
    if ping.response is None and ping.error:
        return result(notifications, FAIL, f"after notifications/initialized: {ping.error}", ex=ping, fix=fix)
    return result(notifications, PASS, "notifications/initialized got no response")


@check("jsonrpc-ids", "Ids echoed with their type; jsonrpc: \"2.0\"", 6)
def jsonrpc_ids(run: Run) -> CheckResult:
    probe = run.probe
    ping = probe.request(run.ping, id="mcpreel-check-ping", label=f"{run.ping} with a string id")
    problems: list[tuple[str, str, ProbeExchange]] = []
    judged = 0
    for ex in probe.exchanges:
        if ex.request_id is None:
            continue
        resp = ex.response
        if resp is None:
            wrong = [m for m in _responses(ex.messages) if m.get("id") is not None]
            if wrong:
                problems.append((FAIL, f"{ex.label}: sent id {ex.request_id!r}, the response has id "
                                       f"{wrong[0].get('id')!r}", ex))
            continue
        judged += 1
        if not ex.id_exact:
            problems.append((FAIL, f"{ex.label}: sent id {ex.request_id!r} ({type(ex.request_id).__name__}), got "
                                   f"{resp.get('id')!r} ({type(resp.get('id')).__name__})", ex))
        if resp.get("jsonrpc") != "2.0":
            problems.append((FAIL, f"{ex.label}: the response lacks \"jsonrpc\": \"2.0\"", ex))
        if "result" in resp and "error" in resp:
            problems.append((FAIL, f"{ex.label}: the response has both result and error", ex))
    if ping.response is not None and "error" in ping.response:
        err = ping.response.get("error")
        if isinstance(err, dict) and err.get("code") == -32601:
            problems.append((WARN, "ping is not supported (MCP requires every server to answer ping with {})", ping))
    elif ping.response is None and not any(p[2] is ping for p in problems):
        problems.append((FAIL, f"{ping.label}: {ping.error or 'no response with that id'}", ping))
    fix = "copy the request's id into the response unchanged (same value, same JSON type) with \"jsonrpc\": \"2.0\""
    if not problems:
        return result(jsonrpc_ids, PASS, f"{judged} responses: ids echoed with their type (string and number)")
    status, summary, ex = max(problems, key=lambda p: _RANK[p[0]])
    return result(jsonrpc_ids, status, summary, ex=ex, fix=fix,
                  details=[f"{s}: {t}" for s, t, _ in problems[:20]] if len(problems) > 1 else [])


@check("unknown-method", "Unknown method -> -32601", 6)
def unknown_method(run: Run) -> CheckResult:
    ex = run.probe.request("mcpreel/no-such-method", {}, label="an unknown method")
    fix = 'answer a method you do not know with {"error": {"code": -32601, "message": "Method not found"}}'
    resp = ex.response
    if resp is None:
        return result(unknown_method, FAIL, f"no -32601: {ex.error or 'no JSON-RPC response'}", ex=ex, fix=fix)
    err = resp.get("error")
    if not isinstance(err, dict):
        return result(unknown_method, FAIL, "no -32601: an unknown method got a result", ex=ex, fix=fix)
    if err.get("code") != -32601:
        return result(unknown_method, FAIL, f"no -32601: an unknown method got error {err.get('code')}", ex=ex, fix=fix)
    return result(unknown_method, PASS, "-32601 Method not found")


@check("parse-error", "Malformed JSON -> -32700", 6)
def parse_error(run: Run) -> CheckResult:
    probe = run.probe
    fix = 'answer a body that is not JSON with {"jsonrpc": "2.0", "id": null, "error": {"code": -32700, ...}}'
    if run.http:
        ex = probe.send(MALFORMED, label="malformed JSON")
        messages = ex.messages
    else:
        assert isinstance(probe, (StdioProbe, SseProbe))
        ex = probe.send(MALFORMED, label="malformed JSON line" if isinstance(probe, StdioProbe) else "malformed JSON")
        after = probe.request(run.ping, label=f"{run.ping} after a malformed line")
        messages = ex.messages + after.messages + probe.drain(0.1)
        if not probe.alive:
            return result(parse_error, FAIL, f"a malformed line ended the server: {probe.exited_reason()}", ex=ex,
                          fix=fix)
        messages = [m for m in messages if m is not after.response]
    errors = [e for e in (m.get("error") for m in _responses(messages)) if isinstance(e, dict)]
    codes = [e.get("code") for e in errors]
    if -32700 in codes:
        resp = next(m for m in _responses(messages) if isinstance(m.get("error"), dict)
                    and m["error"].get("code") == -32700)
        if resp.get("id", "missing") is not None:
            return result(parse_error, WARN, f"-32700, but with id {resp.get('id', 'missing')!r} (must be null)",
                          ex=ex, fix=fix)
        status = f" (HTTP {ex.status})" if ex.status else ""
        return result(parse_error, PASS, f"-32700 Parse error, id null{status}")
    if codes:
        return result(parse_error, FAIL, f"no -32700: malformed JSON got error {codes[0]}", ex=ex, fix=fix)
    if run.http:
        if ex.ok_status:
            return result(parse_error, FAIL, f"no -32700: malformed JSON was answered {ex.status}", ex=ex, fix=fix)
        if ex.status is not None and 400 <= ex.status < 500:
            return result(parse_error, WARN, f"no -32700: HTTP {ex.status} without a JSON-RPC error (MCP allows "
                                             "that, JSON-RPC 2.0 asks for -32700)", ex=ex, fix=fix)
        return result(parse_error, FAIL, f"no -32700: malformed JSON got {ex.status or ex.error}", ex=ex, fix=fix)
    if isinstance(probe, SseProbe) and ex.error and ex.error.startswith("POST answered 4"):
        return result(parse_error, WARN, f"no -32700: the {ex.error.split(':')[0]} without a JSON-RPC error (MCP "
                                         "allows that, JSON-RPC 2.0 asks for -32700)", ex=ex, fix=fix)
    return result(parse_error, WARN, "no -32700: a malformed line got no answer (JSON-RPC 2.0 asks for one; "
                                     "the official SDKs stay silent on stdio)", ex=ex, fix=fix)


@check("stdout-clean", "stdout carries only JSON-RPC (stdio)", 0, only="stdio", needs=())
def stdout_clean(run: Run) -> CheckResult:
    probe = run.probe
    assert isinstance(probe, StdioProbe)
    if not probe.noise:
        return result(stdout_clean, PASS, "every stdout line was a JSON-RPC message")
    r = result(stdout_clean, FAIL, f"{len(probe.noise)} stdout line(s) are not JSON: {excerpt(probe.noise[0], 100)}",
               fix="write logs to stderr: stdout must carry only newline-delimited JSON-RPC messages",
               details=[excerpt(line, 160) for line in probe.noise[:10]])
    r.received = excerpt(probe.noise[0])
    return r
