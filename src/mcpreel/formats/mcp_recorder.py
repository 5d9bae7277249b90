"""mcp-recorder cassettes (read), so its users can switch: ``fixtures/mcp-recorder/``.

``{version, metadata{recorded_at, server_url, transport_type?, protocol_version, server_info},
interactions[{type, request, response, response_is_sse, response_status, latency_ms, http_method?,
http_path?}]}``

Each interaction is one HTTP exchange, numbered in ``ctx["exchange"]``:

- ``jsonrpc_request``: the request (``in``) and its response (``out``; ``ctx.sse`` when it came as an
  SSE event, ``ctx.status``);
- ``notification`` (no response body): the notification and a transport-only record of the bodiless
  answer (``HTTP 202``);
- ``lifecycle`` (no JSON-RPC: a ``DELETE`` ending the session, the ``GET`` stream): a transport-only
  record with the HTTP method, path and status.

A cassette keeps no time per interaction, only ``recorded_at`` and each ``latency_ms``; the reader
rebuilds times by laying the interactions end to end from ``recorded_at`` (a response at its request's
time plus the latency), and says so in the session's notes. Latencies are therefore exact; absolute
times are not.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from mcpreel._infra import jsonio
from mcpreel.formats._source import Source
from mcpreel.model import Kind, Message, Session, SessionInfo
from mcpreel._infra.timeutil import MAX_MS, ms_from_any

NAME = "mcp-recorder"

_TRANSPORTS = {"streamable-http": "streamable-http", "streamable_http": "streamable-http", "http": "streamable-http",
               "sse": "sse", "http-sse": "sse", "stdio": "stdio"}


def _latency(value: Any) -> int:
    """A latency in ms; 0 for anything else (a negative, NaN or infinite number, a bool, a string)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_MS:
        return 0
    return int(round(value))


def read(source: Source) -> Session:
    doc = source.document()
    if not isinstance(doc, dict):
        raise source.fail(f"an mcp-recorder cassette is a JSON object, found {jsonio.type_name(doc)}")
    interactions = doc.get("interactions")
    if not isinstance(interactions, list):
        raise source.fail('an mcp-recorder cassette must have an "interactions" array')
    meta = doc.get("metadata")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise source.fail(f"cassette metadata must be an object, found {jsonio.type_name(meta)}")
    info = SessionInfo(source_format=NAME, path=source.name, label="mcp-recorder")
    info.metadata = dict(meta)
    version = doc.get("version")
    info.producer = {"name": "mcp-recorder", "cassette_version": version} if version is not None else {"name": "mcp-recorder"}
    info.started = ms_from_any(meta.get("recorded_at"))
    url = meta.get("server_url")
    info.url = url if isinstance(url, str) else None
    tr = meta.get("transport_type", meta.get("transport"))
    info.transport = _TRANSPORTS.get(str(tr).lower()) if tr is not None else None
    if info.transport is None and info.url is not None:
        info.transport = "streamable-http"
    default_path = urlsplit(info.url).path or "/" if info.url else None
    if info.started is not None:
        info.notes.append("times rebuilt from recorded_at and each interaction's latency_ms (a cassette keeps no other times)")
    cursor = info.started
    out: list[Message] = []
    for i, item in enumerate(interactions):
        n = i + 1
        if not isinstance(item, dict):
            raise source.fail(f"interaction {n} must be a JSON object, found {jsonio.type_name(item)}", line=n)
        request = item.get("request")
        response = item.get("response")
        for name, value in (("request", request), ("response", response)):
            if value is not None and not isinstance(value, (dict, list)):
                raise source.fail(f"interaction {n}: {name} must be a JSON-RPC object or null", line=n)
        status = item.get("response_status")
        status = status if type(status) is int else None
        latency = _latency(item.get("latency_ms"))
        http_method = item.get("http_method")
        http_path = item.get("http_path")
        req_ctx: dict[str, Any] = {"method": http_method if isinstance(http_method, str) else ("POST" if request is not None else "GET")}
        path = http_path if isinstance(http_path, str) else default_path
        if path is not None:
            req_ctx["path"] = path
        req_ctx["exchange"] = n
        resp_ctx: dict[str, Any] = {}
        if status is not None:
            resp_ctx["status"] = status
        if item.get("response_is_sse") is True:
            resp_ctx["sse"] = {"event": "message"}
        resp_ctx["exchange"] = n
        t0 = cursor
        t1 = min(cursor + latency, MAX_MS) if cursor is not None else None
        if request is not None:
            out.append(Message("in", request, t0, ctx=req_ctx, source=n))
            if response is not None:
                out.append(Message("out", response, t1, ctx=resp_ctx, source=n))
            else:
                # a bodiless answer (202 Accepted to a notification): transport only
                out.append(Message("out", None, t1, kind=Kind.TRANSPORT, ctx={**req_ctx, **resp_ctx}, source=n))
        elif response is not None:
            out.append(Message("out", response, t1, ctx=resp_ctx, source=n))
        else:
            typ = item.get("type")
            ctx = {**req_ctx, **resp_ctx}
            if isinstance(typ, str):
                ctx["event"] = typ
            ctx.pop("sse", None)
            if item.get("response_is_sse") is True:
                ctx["stream"] = True
            out.append(Message("in", None, t0, kind=Kind.TRANSPORT, ctx=ctx, source=n))
        cursor = t1
    if cursor is not None and interactions:
        info.ended = cursor
    return Session(info, out)
