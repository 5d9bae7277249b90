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

Written (:func:`write`): each client request with the answer the one reading pairs it with
(:class:`~mcpreel.operations.walk.Walker`: within its client session, a reused pending id first in,
first out).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from mcpreel._infra import jsonio
from mcpreel._infra.jsonstream import ItemSpool, marker, write_document
from mcpreel._infra.timeutil import MAX_MS, ms_from_any
from mcpreel.formats._source import Source, session_url
from mcpreel.model import Kind, Message, Session, SessionInfo
from mcpreel.operations.walk import Walker

NAME = "mcp-recorder"

_TRANSPORTS = {"streamable-http": "streamable-http", "streamable_http": "streamable-http", "http": "streamable-http",
               "sse": "sse", "http-sse": "sse", "stdio": "stdio"}


def _latency(value: Any) -> int:
    """A latency in ms; 0 for anything else (a negative, NaN or infinite number, a bool, a string)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_MS:
        return 0
    return int(round(value))


def read(source: Source) -> Session:
    """Read an mcp-recorder cassette's interactions as the messages they exchanged."""
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
    info.url = session_url(source, url, "metadata.server_url")
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
            if latency:
                ctx["latency_ms"] = latency  # a lifecycle call has no answer record to carry its time
            out.append(Message("in", None, t0, kind=Kind.TRANSPORT, ctx=ctx, source=n))
        cursor = t1
    if cursor is not None and interactions:
        info.ended = cursor
    return Session(info, out)


# -- writing ----------------------------------------------------------------------------------------
#
# mcp-recorder's model (``mcp_recorder/_types.py``) is a list of client-driven HTTP exchanges: a client
# request and its response, a client notification and its 202, a GET/DELETE lifecycle call. It has no
# place for what a server sends unasked (its requests and notifications, and so the client's answers to
# them) nor for times other than each exchange's latency: the writer names what it left out.

LOSSES = "server-to-client requests and notifications, absolute times, stderr, invalid frames and intercept edits"
#: "header" and "ctx" in part: the writer names the part it drops (command and id; headers and other ctx)
KEEPS = frozenset({"direction", "header", "ctx", "transport"})
_KEPT_CTX = frozenset({"status", "sse", "method", "path", "exchange", "stream", "latency_ms", "event"})
CASSETTE_VERSION = "1.0"
_NO_CTX: dict[str, Any] = {}
_TRANSPORT_TYPES = {"stdio": "stdio", "streamable-http": "http", "sse": "http"}


def write(session: Session, out: Any) -> list[str]:
    """An mcp-recorder cassette that its ``replay`` and pytest plugin serve; returns what it left out."""
    from mcpreel._infra.timeutil import iso_from_ms

    info = session.info
    # interactions go to a temporary file in order (the metadata that comes first in the document is
    # known only at the end); one that may still change (a request until answered, a notification until
    # its 202 came or another was sent) is held open there, and encoded once settled (flat memory)
    spool = ItemSpool(jsonio.dumps_indented)
    # a request waiting for its answer, by the walk's number of its exchange (the one reading pairs them)
    pending: dict[int, tuple[dict[str, Any], int, int | None]] = {}
    walk = Walker(pairing_only=True).feed
    unasked = orphans = other_ctx = unplaced = 0
    meta: dict[str, Any] = {"recorded_at": None, "server_url": info.url or "",
                            "transport_type": _TRANSPORT_TYPES.get(info.transport or ""),
                            "protocol_version": None, "server_info": None}
    first_t = info.started

    def interaction(typ: str, request: Any, status: int = 200) -> dict[str, Any]:
        return {"type": typ, "request": request, "response": None, "response_is_sse": False,
                "response_status": status, "latency_ms": 0, "http_method": None, "http_path": None}

    notified: tuple[dict[str, Any], int, int | None] | None = None  # the last notification, waiting for its 202
    transport_kind, message_kind = Kind.TRANSPORT, Kind.MESSAGE
    hold, settle = spool.hold, spool.settle
    for index, msg in enumerate(session):
        steps = walk(index, msg)
        if first_t is None and msg.t is not None:
            first_t = msg.t
        ctx = msg.ctx or _NO_CTX
        kind = msg.kind
        if kind == message_kind:
            if msg.dropped:
                continue
        elif kind != transport_kind:
            continue
        elif msg.dir == "in" and ctx.get("method") in ("GET", "DELETE"):
            it = interaction("lifecycle", None, ctx["status"] if type(ctx.get("status")) is int else 200)
            it["http_method"] = ctx["method"]
            it["http_path"] = ctx.get("path") if isinstance(ctx.get("path"), str) else "/mcp"
            it["response_is_sse"] = ctx.get("stream") is True
            if type(ctx.get("latency_ms")) is int:
                it["latency_ms"] = ctx["latency_ms"]
            spool.append(jsonio.dumps_indented(it))
            continue
        elif msg.dir == "out" and notified is not None and type(ctx.get("status")) is int:
            it, at, t0 = notified  # the bodiless answer to the notification just sent
            it["response_status"] = ctx["status"]
            if t0 is not None and msg.t is not None:
                it["latency_ms"] = max(0, msg.t - t0)
            spool.settle(at)
            notified = None
            continue
        else:
            unplaced += 1  # an SSE event with no JSON-RPC in it, a 401: no interaction holds it
            continue
        if ctx and not _KEPT_CTX.issuperset(ctx):
            other_ctx += 1
        d = msg.dir
        t = msg.t
        for step in steps:
            raw = step.member
            if raw is None or step.kind == "record":
                continue
            if d == "in" and "method" in raw:
                if step.kind == "request" and step.exchange is not None:
                    it = {"type": "jsonrpc_request", "request": raw, "response": None, "response_is_sse": False,
                          "response_status": 200, "latency_ms": 0, "http_method": None, "http_path": None}
                    pending[step.exchange.n] = (it, hold(it), t)
                else:
                    it = interaction("notification", raw, 202)
                    if notified is not None:
                        settle(notified[1])  # a 202 now answers the newer one
                    notified = (it, hold(it), t)
            elif d == "out" and "method" not in raw:
                answered = step.exchange if step.kind == "response" else None
                held = pending.pop(answered.n, None) if answered is not None else None
                if held is None:
                    orphans += 1
                    continue
                it, at, t0 = held
                it["response"] = raw
                if ctx:
                    it["response_is_sse"] = isinstance(ctx.get("sse"), dict)
                    if type(ctx.get("status")) is int:
                        it["response_status"] = ctx["status"]
                if t0 is not None and t is not None:
                    latency = t - t0
                    it["latency_ms"] = latency if latency > 0 else 0
                if it["request"].get("method") == "initialize" and isinstance(raw.get("result"), dict):
                    meta["protocol_version"] = raw["result"].get("protocolVersion")
                    meta["server_info"] = raw["result"].get("serverInfo")
                settle(at)
            else:
                unasked += 1
    if first_t is not None:
        meta["recorded_at"] = iso_from_ms(first_t).replace("Z", "+00:00")
    else:
        del meta["recorded_at"]  # mcp-recorder fills in the time it loads the file
    key = marker()
    doc = {"version": CASSETTE_VERSION, "metadata": meta, "interactions": key}
    try:
        write_document(out, doc, {key: spool})
    finally:
        spool.close()
    out.write(b"\n")
    lost = []
    if unasked:
        lost.append(f"{unasked} server-to-client message{'s' if unasked != 1 else ''} and answers to them "
                    "(a cassette holds client-driven exchanges only)")
    if orphans:
        lost.append(f"{orphans} response{'s' if orphans != 1 else ''} to no request")
    if unplaced:
        lost.append(f"{unplaced} transport-only event{'s' if unplaced != 1 else ''} (not a notification's 202 "
                    "nor a GET/DELETE)")
    if info.command or info.id:
        lost.append("the command and session id (a cassette names neither)")
    if other_ctx:
        lost.append(f"HTTP headers and other transport context ({other_ctx} message{'s' if other_ctx != 1 else ''})")
    return lost
