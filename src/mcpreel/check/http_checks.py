"""Checks of the HTTP layer: the POST endpoint, SSE responses and their framing (spec 05 parts 1 and 2),
and Streamable HTTP hygiene: session id, Origin, MCP-Protocol-Version (part 7).

The SSE checks judge every exchange the run made, so a server that streams ``initialize`` but answers
``tools/call`` with plain JSON is caught on the call that did it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from mcpreel._infra import jsonio
from mcpreel.check.context import FAIL, HEADER_ERA, PASS, SKIP, WARN, Run, check, result
from mcpreel.check.probe import ProbeExchange, excerpt
from mcpreel.check.result import CheckResult

NOT_STREAMING = "Response Not Streaming"
STREAM_FIX = (
    'answer every POST that carries a request with "Content-Type: text/event-stream" and the response as '
    'one "event: message" event (e.g. StreamingResponse(stream(), media_type="text/event-stream"))'
)
_RANK = {PASS: 0, SKIP: 0, WARN: 1, FAIL: 2}


def _worst(problems: list[tuple[str, str, ProbeExchange | None]]) -> tuple[str, str, ProbeExchange | None]:
    return max(problems, key=lambda p: _RANK[p[0]])


def _from_problems(fn: Callable[..., Any], problems: list[tuple[str, str, ProbeExchange | None]], ok: str, *,
                   fix: str | None = None, issue: str | None = None) -> CheckResult:
    if not problems:
        return result(fn, PASS, ok)
    status, summary, ex = _worst(problems)
    details = [f"{s}: {text}" for s, text, _ in problems[:25]]
    if len(problems) > 25:
        details.append(f"... and {len(problems) - 25} more")
    return result(fn, status, summary, ex=ex, fix=fix, issue=issue if status == FAIL else None,
                  details=details if len(problems) > 1 else [])


@check("http-post", "POST with a JSON-RPC body is accepted", 1, only="http", needs=())
def http_post(run: Run) -> CheckResult:
    ex = run.init
    assert ex is not None
    if ex.ok_status:
        ctype = ex.headers.get("content-type", "")
        return result(http_post, PASS, f"{ex.status} {ctype} in {ex.elapsed_ms} ms".replace("  ", " "))
    status = ex.status
    path = urlsplit(ex.url or "").path
    if status in (404, 405):
        fix = "expose a POST endpoint for JSON-RPC at this URL (e.g. /mcp)"
        if path in ("", "/"):
            fix += "; the URL has no path: did you mean …/mcp?"
        fix += ("; if this is a legacy HTTP+SSE server, check its event stream URL instead: mcpreel check "
                "http://…/sse")
    elif status in (401, 403):
        challenge = ex.headers.get("www-authenticate")
        fix = "the server wants credentials: pass them with --header 'Authorization: Bearer …'"
        if challenge:
            fix += f" (it said WWW-Authenticate: {challenge})"
    elif status == 406:
        fix = "accept requests whose Accept header lists application/json and text/event-stream"
    elif status == 415:
        fix = "accept Content-Type: application/json on the POST endpoint"
    elif status is not None and status >= 500:
        fix = "the server failed on initialize: see its logs"
    elif status is not None and 300 <= status < 400:
        fix = f"the endpoint redirects (to {ex.headers.get('location', '?')}): check with the final URL"
    else:
        fix = "answer a JSON-RPC POST with 200 and the response"
    return result(http_post, FAIL, f"{ex.label} POST answered {status}", ex=ex, fix=fix)


@check("sse-content-type", "Responses are text/event-stream", 2, only="http", needs=())
def sse_content_type(run: Run) -> CheckResult:
    judged = [e for e in run.probe.exchanges if e.request_id is not None and e.http_method == "POST" and e.ok_status]
    if not judged:
        return result(sse_content_type, SKIP, "no request was answered with a 2xx status")
    problems: list[tuple[str, str, ProbeExchange | None]] = []
    sse = json = 0
    for e in judged:
        ctype = e.content_type
        if ctype == "text/event-stream":
            sse += 1
        elif not e.body.strip():
            problems.append((FAIL, f"{e.label}: {e.status} with an empty body, no response", e))
        elif ctype == "application/json":
            json += 1
            if run.strict_format:
                problems.append((FAIL, f"{e.label} answered application/json, not text/event-stream", e))
        else:
            problems.append((FAIL, f"{e.label} answered {e.headers.get('content-type') or 'no Content-Type'}", e))
    if run.strict_format:
        ok = f"all {sse} responses are text/event-stream"
    else:
        ok = f"{sse} SSE and {json} JSON responses (MCP allows both)"
    return _from_problems(sse_content_type, problems, ok, fix=STREAM_FIX, issue=NOT_STREAMING)


_EVENT_LINE = re.compile(rb"(?:^|[\r\n])event:")
_DATA_LINE = re.compile(rb"(?:^|[\r\n])data(?::|[\r\n]|$)")


@check("sse-framing", "SSE events: event: message, data: <one JSON-RPC message>, blank line", 2, only="http",
       needs=())
def sse_framing(run: Run) -> CheckResult:
    streams = [e for e in run.probe.exchanges if e.http_method == "POST" and e.ok_status and e.is_sse]
    if not streams:
        return result(sse_framing, SKIP, "no SSE response to judge")
    problems: list[tuple[str, str, ProbeExchange | None]] = []
    events = 0
    crlf = False
    for e in streams:
        crlf = crlf or b"\r\n" in e.body
        for ev in e.events:
            if ev.comment is not None:
                continue
            events += 1
            raw = ev.raw
            if ev.data == "":
                if run.strict_format and not e.side:
                    problems.append((WARN, f"{e.label}: an event with empty data (the MCP 2025-11-25 priming event); "
                                           "the strict-sse profile expects every event to carry a message", e))
                continue
            if ev.event != "message":
                problems.append((FAIL, f"{e.label}: event type {ev.event!r}; MCP clients read only message "
                                       "events, so this message is lost", e))
                continue
            if not _EVENT_LINE.search(raw) and run.strict_format:
                problems.append((FAIL, f"{e.label}: the event has no 'event: message' line", e))
            if len(_DATA_LINE.findall(raw)) > 1 and run.strict_format:
                problems.append((WARN, f"{e.label}: the message is split over several data lines", e))
            try:
                msg = jsonio.loads(ev.data)
            except (ValueError, UnicodeDecodeError, RecursionError):
                problems.append((FAIL, f"{e.label}: data is not JSON: {excerpt(ev.data, 120)}", e))
                continue
            if not isinstance(msg, (dict, list)) or (isinstance(msg, dict) and msg.get("jsonrpc") != "2.0"):
                problems.append((FAIL, f"{e.label}: data is not a JSON-RPC 2.0 message: {excerpt(ev.data, 120)}", e))
        if e.unterminated is not None:
            problems.append((FAIL, f"{e.label}: the stream ended without the blank line after an event (the "
                                   "double newline is required): a client never sees that event", e))
        if e.bad_frames and not e.events and e.body.strip():
            problems.append((FAIL, f"{e.label}: text/event-stream body holds no SSE event", e))
    ends = "CRLF" if crlf else "LF"
    ok = f"{events} events in {len(streams)} streams, well framed ({ends} line ends)"
    return _from_problems(
        sse_framing, problems, ok,
        fix='write each message as "event: message\\ndata: <the JSON-RPC message on one line>\\n\\n"',
    )


_VISIBLE_ASCII = re.compile(r"[\x21-\x7e]+")


@check("session-id", "Mcp-Session-Id issued, then required", 7, only="http", handshake=True)
def session_id(run: Run) -> CheckResult:
    sid = run.session_id
    probe = run.probe
    if not sid:
        return result(session_id, WARN,
                      "no Mcp-Session-Id on the initialize response: a stateless server (MCP allows it), so the "
                      "session checks do not apply", ex=run.init,
                      fix="to keep per-client state, issue Mcp-Session-Id on the initialize response")
    problems: list[tuple[str, str, ProbeExchange | None]] = []
    if not _VISIBLE_ASCII.fullmatch(sid):
        problems.append((FAIL, f"the session id {sid!r} has characters outside visible ASCII", run.init))
    missing = probe.request("ping", label="ping without Mcp-Session-Id", session=False)
    if missing.ok_status:
        problems.append((FAIL, "a request without Mcp-Session-Id was accepted: the session id is not required",
                         missing))
    elif missing.status is None:
        problems.append((FAIL, f"a request without Mcp-Session-Id got no HTTP answer ({missing.error})", missing))
    elif missing.status != 400:
        problems.append((WARN, f"a request without Mcp-Session-Id got {missing.status}; MCP asks for 400", missing))
    unknown = probe.request("ping", label="ping with an unknown Mcp-Session-Id",
                            session_id="mcpreel-check-unknown-session")
    if unknown.ok_status:
        problems.append((FAIL, "a request with a made-up Mcp-Session-Id was accepted", unknown))
    elif unknown.status is None:
        problems.append((FAIL, f"a request with an unknown Mcp-Session-Id got no HTTP answer ({unknown.error})",
                         unknown))
    elif unknown.status != 404:
        problems.append((WARN, f"an unknown Mcp-Session-Id got {unknown.status}, not 404: on 404 a client starts a "
                               "new session (after a server restart, say), on other statuses it gives up", unknown))
    return _from_problems(
        session_id, problems, "issued on initialize; 400 without it, 404 for an unknown one",
        fix="answer 400 to any request but initialize without Mcp-Session-Id, and 404 to an unknown session id",
    )


@check("origin", "Origin validated", 7, only="http")
def origin(run: Run) -> CheckResult:
    ex = run.probe.request(run.ping, label=f"{run.ping} from a foreign Origin",
                           headers={"Origin": "http://mcpreel-check.invalid"})
    fix = ("reject requests whose Origin header is present and not one of yours with 403 (MCP: servers must "
           "validate Origin, against DNS rebinding); bind local servers to 127.0.0.1")
    if ex.status == 403:
        return result(origin, PASS, "a foreign Origin gets 403")
    if ex.status is not None and 400 <= ex.status < 500:
        return result(origin, PASS, f"a foreign Origin gets {ex.status} (403 is the status MCP names)")
    if ex.ok_status:
        return result(origin, WARN, "Origin not validated: a request from http://mcpreel-check.invalid was accepted",
                      ex=ex, fix=fix)
    return result(origin, FAIL, f"a request with a foreign Origin got {ex.status or ex.error}", ex=ex, fix=fix)


@check("protocol-version-header", "MCP-Protocol-Version honoured", 7, only="http")
def protocol_version_header(run: Run) -> CheckResult:
    ex = run.probe.request(run.ping, label=f"{run.ping} with MCP-Protocol-Version: 1999-01-01",
                           headers={"MCP-Protocol-Version": "1999-01-01"})
    fix = "answer 400 to a request whose MCP-Protocol-Version header names a version you do not support"
    if ex.status == 400:
        return result(protocol_version_header, PASS, "an unsupported MCP-Protocol-Version gets 400")
    if ex.status is not None and 400 <= ex.status < 500:
        return result(protocol_version_header, PASS, f"an unsupported MCP-Protocol-Version gets {ex.status}")
    header_era = sorted(v for v in run.versions_seen if v >= HEADER_ERA)
    if ex.ok_status:
        if header_era:
            return result(protocol_version_header, FAIL,
                          "an unsupported MCP-Protocol-Version was accepted, though the server speaks "
                          f"{header_era[-1]}",
                          ex=ex, fix=fix)
        return result(protocol_version_header, WARN,
                      "an unsupported MCP-Protocol-Version was accepted (the server speaks only versions before "
                      f"{HEADER_ERA}, which have no such header)", ex=ex, fix=fix)
    return result(protocol_version_header, FAIL, f"answered {ex.status or ex.error}", ex=ex, fix=fix)
