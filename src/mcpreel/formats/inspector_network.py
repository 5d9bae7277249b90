"""MCP Inspector v2 network export (read): ``inspector-network-<server>-<time>.json``.

A JSON array of ``FetchRequestEntry`` (``modelcontextprotocol/inspector`` ``core/mcp/types.ts``):
``{id, timestamp, method, url, requestHeaders{}, requestBody?, responseStatus?, responseStatusText?,
responseHeaders?, responseBody?, duration?, error?, category: auth|transport}``. Bodies are strings.

- ``transport`` entries carry MCP: a JSON request body is the client's message (``in``, at
  ``timestamp``); a JSON response body is the server's answer, an ``text/event-stream`` body is split
  into its events, one message each (``ctx.sse``), at ``timestamp + duration``. A request without a body
  (the GET stream, a DELETE) and an answer without one (a 202) are transport-only records; a body that
  is not JSON is kept as an invalid frame.
- ``auth`` entries (OAuth discovery and token requests) are not MCP: transport-only records whose ``ctx``
  keeps the method, URL, status and body text.
- Every record's ``ctx`` holds the HTTP method, URL, headers and status (``exchange`` numbers the entry).
  ``Authorization``, ``Cookie``, ``Set-Cookie`` and other credential headers are redacted on read, as
  mcpreel's recorder does; the session's notes say how many.
"""

from __future__ import annotations

from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.credentials import MARKER, is_secret_header
from mcpreel._infra.sse import SSEParser
from mcpreel._infra.timeutil import MAX_MS
from mcpreel.formats._foreign import iso_time, object_at
from mcpreel.formats._source import Source, session_url
from mcpreel.model import Kind, Message, Session, SessionInfo

NAME = "inspector-network"


def is_network_entry(item: Any) -> bool:
    """One request of a network export: what tells it from any other recorder's record."""
    return type(item) is dict and "url" in item and "requestHeaders" in item and "method" in item


def looks_like_network_export(doc: Any) -> bool:
    """A network export: an array whose first entry is a request (what sniffing checks)."""
    return isinstance(doc, list) and bool(doc) and is_network_entry(doc[0])


def _headers(source: Source, value: Any, what: str, n: int, count: list[int]) -> dict[str, Any] | None:
    if value is None:
        return None
    if type(value) is not dict:
        raise source.fail(f"entry {n}: {what} must be an object, found {jsonio.type_name(value)}", line=n)
    out = {}
    for k, v in value.items():
        if is_secret_header(k) and v != MARKER:
            count[0] += 1
            v = MARKER
        out[k] = v
    return out


def _is_jsonrpc(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_is_jsonrpc(v) for v in value)
    return type(value) is dict and ("jsonrpc" in value or "method" in value or
                                    ("id" in value and ("result" in value or "error" in value)))


def _body(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        # an export written by another tool may hold the parsed body: take it as its JSON text
        return jsonio.dumps_str(value)
    return value


def _content_type(headers: dict[str, Any] | None) -> str:
    for k, v in (headers or {}).items():
        if k.lower() == "content-type" and isinstance(v, str):
            return v.lower()
    return ""


def _messages(d: str, body: str, t: int | None, ctx: dict[str, Any], n: int, sse: bool) -> list[Message]:
    if sse:
        out = []
        parser = SSEParser()
        events = list(parser.feed(body.encode("utf-8", "surrogatepass") + b"\n\n"))
        for ev in events:
            if ev.comment is not None and not ev.data:
                continue
            sse_ctx = {"event": ev.event}
            if ev.id is not None:
                sse_ctx["id"] = ev.id
            out.extend(_messages(d, ev.data, t, {**ctx, "sse": sse_ctx}, n, False))
        return out
    try:
        value = jsonio.loads(body)
    except (ValueError, UnicodeDecodeError):
        return [Message(d, None, t, kind=Kind.INVALID, text=body, ctx=ctx, source=n)]
    if _is_jsonrpc(value):
        return [Message(d, value, t, ctx=ctx, source=n)]
    return [Message(d, None, t, kind=Kind.TRANSPORT, ctx={**ctx, "body": body}, source=n)]


def read(source: Source) -> Session:
    """Read an Inspector network export, credential headers redacted on read (the export holds the user's
    Authorization)."""
    doc = source.document()
    if not isinstance(doc, list) or not doc or not is_network_entry(doc[0]):
        raise source.fail("an Inspector network export is a JSON array of requests "
                          "({id, timestamp, method, url, requestHeaders, ...})")
    info = SessionInfo(source_format=NAME, path=source.name, label="mcp-inspector", producer={"name": "mcp-inspector"})
    redacted = [0]
    out: list[Message] = []
    for i, item in enumerate(doc):
        n = i + 1
        e = object_at(source, item, "entry", n)
        if not is_network_entry(e):
            raise source.fail(f"entry {n} is not a network request (needs method, url and requestHeaders)", line=n)
        t = iso_time(source, e.get("timestamp"), f"entry {n}: timestamp", n)
        duration = e.get("duration")
        rt = t
        if t is not None and not isinstance(duration, bool) and isinstance(duration, (int, float)) and 0 <= duration <= MAX_MS:
            rt = min(t + int(duration), MAX_MS)
        base: dict[str, Any] = {"method": e.get("method"), "url": e.get("url"), "exchange": n}
        kept = {k: e[k] for k in ("id", "category") if k in e}
        req_ctx = {**base, "headers": _headers(source, e.get("requestHeaders"), "requestHeaders", n, redacted) or {}}
        resp_headers = _headers(source, e.get("responseHeaders"), "responseHeaders", n, redacted)
        resp_ctx: dict[str, Any] = dict(base)
        if type(e.get("responseStatus")) is int:
            resp_ctx["status"] = e["responseStatus"]
        if isinstance(e.get("responseStatusText"), str):
            resp_ctx["status_text"] = e["responseStatusText"]
        if resp_headers is not None:
            resp_ctx["headers"] = resp_headers
        if e.get("error") is not None:
            resp_ctx["error"] = e["error"]
        req_body = _body(e.get("requestBody"))
        resp_body = _body(e.get("responseBody"))
        first = len(out)
        if e.get("category") == "auth":
            if req_body is not None:
                req_ctx["body"] = req_body
            if resp_body is not None:
                resp_ctx["body"] = resp_body
            out.append(Message("in", None, t, kind=Kind.TRANSPORT, ctx=req_ctx, source=n))
            out.append(Message("out", None, rt, kind=Kind.TRANSPORT, ctx=resp_ctx, source=n))
        else:
            if req_body is None:
                out.append(Message("in", None, t, kind=Kind.TRANSPORT, ctx=req_ctx, source=n))
            else:
                out.extend(_messages("in", req_body, t, req_ctx, n, False))
            answered = "status" in resp_ctx or "error" in resp_ctx or resp_body is not None
            if resp_body is not None:
                sse = "text/event-stream" in _content_type(resp_headers)
                got = _messages("out", resp_body, rt, resp_ctx, n, sse)
                out.extend(got)
                if not got:  # an event stream with no events in it
                    out.append(Message("out", None, rt, kind=Kind.TRANSPORT, ctx=resp_ctx, source=n))
            elif answered:
                out.append(Message("out", None, rt, kind=Kind.TRANSPORT, ctx=resp_ctx, source=n))
        if kept:
            for m in out[first:]:
                m.extra = {"inspector": kept}
    if out:
        url = next((m.ctx.get("url") for m in out if m.kind == Kind.MESSAGE and m.ctx), None)
        info.url = session_url(source, url, "the session URL")
        info.started = next((m.t for m in out if m.t is not None), None)
    if redacted[0]:
        info.notes.append(f"{redacted[0]} credential header{'s' if redacted[0] != 1 else ''} "
                          "(Authorization, cookies, ...) redacted on read")
    return Session(info, out)
