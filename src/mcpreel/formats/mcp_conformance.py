"""mcp-conformance wire traces (read and write): ``tomtom215/mcp-conformance`` ``mcp-trace-validator`` ``TraceEvent``.

One event a line: ``{seq, direction: client-to-server|server-to-client, transport: stdio|streamable-http,
kind, ts?}`` and, by ``kind``: ``message`` -> ``payload`` (the JSON-RPC message as parsed); ``http`` ->
``status?``, ``headers{}`` (lowercased; credential headers already redacted by the validator);
``lifecycle`` -> ``event: transport-open|transport-close|transport-abort``.

- An ``http`` event comes just before the message(s) it carried: its status and headers go to the
  ``ctx`` of the first message after it in the same direction (``ctx.exchange`` numbers the HTTP
  exchange on every message it carried). An ``http`` event no message follows (a 202, a 400 or 404
  answer with no JSON-RPC body) is a transport-only record, as is every ``lifecycle`` event.
- ``seq`` is the format's only ordering authority; it becomes the record's ``seq``. Times only where an
  event has ``ts`` (usually none: the session's notes say so).

Write: the same events in recorded order, ``seq`` from 0; an ``http`` event before the first message of
each HTTP exchange and direction (its ``status`` and lowercased ``headers``, credential headers redacted as
the validator does), and one for an HTTP answer that carried no message; ``lifecycle`` for the transport's
open, close and abort; ``ts`` where a record has a time. Stderr, invalid frames and intercept edits have no
place in the format (the edited payload is what was forwarded, and what is written).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

from mcpreel._infra import jsonio
from mcpreel._infra.nesting import cut_repr
from mcpreel._infra.timeutil import iso_from_ms
from mcpreel.formats._foreign import iso_time, object_at
from mcpreel.formats._source import Source, iter_json_lines
from mcpreel.model import Kind, Message, Session, SessionInfo

NAME = "mcp-conformance"
LOSSES = "stderr, invalid frames, intercept edits (the forwarded payload is kept) and the secret header values"
KEEPS = frozenset({"time", "direction", "ctx", "transport"})

_DIRS = {"client-to-server": "in", "server-to-client": "out"}
_TRANSPORTS = {"stdio": "stdio", "streamable-http": "streamable-http", "sse": "sse", "http": "streamable-http"}
_KINDS = ("message", "http", "lifecycle")
_KNOWN = frozenset({"seq", "direction", "transport", "kind", "ts", "payload", "status", "headers", "event"})


def looks_like_trace_event(obj: Any) -> bool:
    """An mcp-trace-validator event's shape (seq, direction, kind)."""
    return type(obj) is dict and isinstance(obj.get("direction"), str) and obj["direction"] in _DIRS and \
        obj.get("kind") in _KINDS and "seq" in obj


def _event(source: Source, obj: Any, line: int) -> dict[str, Any]:
    ev = object_at(source, obj, "event on line", line)
    if not looks_like_trace_event(ev):
        raise source.fail(f"line {line} is not an mcp-conformance trace event (needs seq, direction "
                          "client-to-server|server-to-client and kind message|http|lifecycle)", line=line)
    return ev


def _http_ctx(ev: dict[str, Any], exchange: int) -> dict[str, Any]:
    ctx: dict[str, Any] = {"exchange": exchange}
    if type(ev.get("status")) is int:
        ctx["status"] = ev["status"]
    if type(ev.get("headers")) is dict:
        ctx["headers"] = ev["headers"]
    return ctx


def _stream(source: Source) -> Iterator[Message]:
    # per direction: the http event waiting for its message, and the exchange its messages belong to
    waiting: dict[str, tuple[dict[str, Any], int, int | None, int | None]] = {}
    current: dict[str, int] = {}
    exchanges = 0

    def flush(d: str) -> Iterator[Message]:
        held = waiting.pop(d, None)
        if held is not None:
            ev, line, t, seq = held
            yield Message(d, None, t, kind=Kind.TRANSPORT, ctx=_http_ctx(ev, current[d]), seq=seq, source=line)

    for line, obj in iter_json_lines(source):
        ev = _event(source, obj, line)
        d = _DIRS[ev["direction"]]
        t = iso_time(source, ev.get("ts"), f"line {line}: ts", line)
        seq = ev["seq"] if type(ev["seq"]) is int else None
        kind = ev["kind"]
        more = {k: v for k, v in ev.items() if k not in _KNOWN}
        extra = {"mcp_conformance": more} if more else None
        if kind == "http":
            yield from flush(d)
            if d == "in":
                yield from flush("out")  # a new request: the previous answer carried no (more) message
                current.pop("out", None)
                exchanges += 1
                current["in"] = exchanges
            elif "in" in current:
                current["out"] = current["in"]  # the answer to the request just sent: the same exchange
            else:
                exchanges += 1
                current["out"] = exchanges
            waiting[d] = (ev, line, t, seq)
            continue
        if kind == "lifecycle":
            yield from flush("in")
            yield from flush("out")
            current.clear()
            yield Message(d, None, t, kind=Kind.TRANSPORT, ctx={"event": ev.get("event")}, seq=seq, source=line, extra=extra)
            continue
        payload = ev.get("payload")
        if not isinstance(payload, (dict, list)):
            raise source.fail(f"line {line}: payload must be a JSON-RPC object or batch, found {jsonio.type_name(payload)}",
                              line=line)
        held = waiting.pop(d, None)
        if held is not None:
            ctx: dict[str, Any] | None = _http_ctx(held[0], current[d])
        elif d in current:
            ctx = {"exchange": current[d]}
        else:
            ctx = None
        yield Message(d, payload, t, seq=seq, ctx=ctx, source=line, extra=extra)
    yield from flush("in")
    yield from flush("out")


def read(source: Source) -> Session:
    """Read an mcp-conformance wire trace, HTTP exchanges and their headers included (credential headers redacted)."""
    first = None
    timed = False
    for line, obj in iter_json_lines(source):
        ev = _event(source, obj, line)
        if first is None:
            first = ev
        if "ts" in ev:
            timed = True
            break
    info = SessionInfo(source_format=NAME, path=source.name, label="mcp-conformance",
                       producer={"name": "mcp-trace-validator"})
    if first is None:  # what the writer makes of a session with no messages: an empty session again
        info.notes.append("the trace holds no events")
        return Session(info, [])
    tr = first.get("transport")
    info.transport = _TRANSPORTS.get(tr) if isinstance(tr, str) else None
    info.started = iso_time(source, first.get("ts"), "line 1: ts", 1)
    if not timed:
        info.notes.append("the trace has no times (ts is optional and absent): order is seq order")
    return Session.streaming(info, lambda: _stream(source))


_WRITE_DIRS = {"in": "client-to-server", "out": "server-to-client"}
_LIFECYCLE = frozenset({"transport-open", "transport-close", "transport-abort"})


def _http_event(ctx: dict[str, Any]) -> dict[str, Any]:
    from mcpreel._infra.credentials import redact_headers

    ev: dict[str, Any] = {}
    if type(ctx.get("status")) is int:
        ev["status"] = ctx["status"]
    headers = ctx.get("headers")
    ev["headers"] = redact_headers({str(k).lower(): v for k, v in headers.items()}) if isinstance(headers, dict) else {}
    return ev


def _exchange_key(value: Any) -> Any:
    """``ctx.exchange`` as a set member: a list or object where a number belongs (a hand-edited or hostile
    file) is keyed by its short text (it is never hashable as it is)."""
    if value is None or isinstance(value, (str, int, float)):
        return value
    return ("text", cut_repr(value))


def write(session: Session, out: BinaryIO) -> list[str]:
    """The session as trace events, one a line (see the module's docstring); returns what it could not keep."""
    transport = session.info.transport if session.info.transport in ("stdio", "streamable-http", "sse") else "stdio"
    seq = 0
    seen: set[tuple[str, Any]] = set()  # (direction, HTTP exchange) whose http event was written
    left_out = 0  # transport-only records the format has no event for (the rest convert counts itself)

    def emit(direction: str, kind: str, t: int | None, body: dict[str, Any]) -> None:
        nonlocal seq
        ev: dict[str, Any] = {"seq": seq, "direction": _WRITE_DIRS[direction], "transport": transport, "kind": kind}
        if t is not None:
            ev["ts"] = iso_from_ms(t)
        ev.update(body)
        out.write(jsonio.dumps(ev) + b"\n")
        seq += 1

    for msg in session:
        d = msg.dir
        if d not in _WRITE_DIRS or msg.dropped:  # a dropped message never crossed the wire
            left_out += msg.kind == Kind.TRANSPORT
            continue
        ctx = msg.ctx if isinstance(msg.ctx, dict) else {}
        if msg.kind == Kind.MESSAGE:
            if not isinstance(msg.raw, (dict, list)):
                continue
            exchange = _exchange_key(ctx.get("exchange"))
            if exchange is not None and (d, exchange) not in seen and ("headers" in ctx or "status" in ctx):
                seen.add((d, exchange))
                emit(d, "http", msg.t, _http_event(ctx))
            emit(d, "message", msg.t, {"payload": msg.raw})
        elif msg.kind == Kind.TRANSPORT and isinstance(ctx.get("event"), str) and ctx["event"] in _LIFECYCLE:
            emit(d, "lifecycle", msg.t, {"event": ctx["event"]})
        elif msg.kind == Kind.TRANSPORT and ("status" in ctx or "headers" in ctx):
            exchange = _exchange_key(ctx.get("exchange"))
            if exchange is None or (d, exchange) not in seen:
                if exchange is not None:
                    seen.add((d, exchange))
                emit(d, "http", msg.t, _http_event(ctx))
        elif msg.kind == Kind.TRANSPORT:
            left_out += 1
    if not left_out:
        return []
    return [f"{left_out} transport-only {'event' if left_out == 1 else 'events'} with no place in the format "
            "(neither an HTTP answer nor a transport open, close or abort)"]
