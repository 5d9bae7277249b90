"""The canonical HTTP transcript envelope of seed 000 (``streamable-http`` and ``http-sse``).

``{"transport", "transport_context"?, "entries": [{timestamp_ms?, transport_context?, request|response|sse}]}``

Reading: every entry must hold exactly one of ``request`` (client -> server), ``response`` (server ->
client, in an HTTP body) or ``sse`` (``{event?, id?, data}``, server -> client). Only ``message``
events carry MCP (an absent or null ``event`` is ``message``); ``data`` given as a string is parsed as JSON (repeatedly, so double-encoded data
works); an ``endpoint`` event, a keep-alive or data that is not JSON becomes a transport-only record.
An entry without ``timestamp_ms`` takes the message's own integer ``timestamp_ms``/``timestamp``, if
any (the import contract's order of times). Transport context never changes tool semantics; it is kept in ``Message.ctx``:
the entry's ``transport_context`` members as they are, plus ``slot`` (which of the three it was) and
``sse`` (``{"event", "id"}``) for SSE entries.

Writing: a session with a stdio transport is refused (it had no HTTP exchanges).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

from mcpreel._infra import jsonio
from mcpreel._infra.jsonstream import Encoded, ItemSpool, marker, write_document
from mcpreel._infra.timeutil import MAX_MS
from mcpreel.errors import UsageError
from mcpreel.formats._source import Source
from mcpreel.formats.jsonrpc import own_time
from mcpreel.model import Kind, Message, Session, SessionInfo, clean_ctx

NAME = "streamable-http"
LOSSES = "stderr, invalid frames, intercept edits, dropped messages and the session header"
KEEPS = frozenset({"time", "direction", "ctx", "transport"})

_SLOTS = ("request", "response", "sse")
_ENTRY_KEYS = frozenset(("timestamp_ms", "transport_context", *_SLOTS))
#: session transport names (model) <-> envelope labels
TRANSPORT_OF_LABEL = {"streamable-http": "streamable-http", "http-sse": "sse"}
LABEL_OF_TRANSPORT = {"streamable-http": "streamable-http", "sse": "http-sse"}


def _parse_data(data: Any) -> Any:
    """SSE data: an object as is; a string parsed as JSON, repeatedly; else the string."""
    for _ in range(8):
        if not isinstance(data, str):
            return data
        try:
            data = jsonio.loads(data)
        except (ValueError, UnicodeDecodeError):
            return data
    return data


def _looks_jsonrpc(value: Any) -> bool:
    """A JSON-RPC message, or a list (of lists) holding one. Iterative: lists nested to the readers' limit
    do not recurse (issue 40)."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            if any(k in item for k in ("jsonrpc", "method", "result", "error")):
                return True
        elif isinstance(item, list):
            todo.extend(item)
    return False


def read(source: Source, *, label: str | None = None) -> Session:
    """Read an HTTP transcript envelope; ``label`` is the flavour the table row asked for (a forced flavour must match
    the file)."""
    doc = source.document()
    if not isinstance(doc, dict):
        raise source.fail(f"expected a JSON object with transport and entries, found {jsonio.type_name(doc)}")
    found = doc.get("transport")
    if label is None:
        label = found if found in TRANSPORT_OF_LABEL else "streamable-http"
    if found != label:
        shown = "missing" if found is None else jsonio.dumps_str(found)
        raise source.fail(f'{label} transport must be "{label}", found {shown}')
    entries = doc.get("entries")
    if not isinstance(entries, list):
        raise source.fail(f"{label} transcript must have an entries array")
    top_ctx = doc.get("transport_context")
    if top_ctx is not None and not isinstance(top_ctx, dict):
        raise source.fail(f"{label} transport_context must be an object")
    out: list[Message] = []
    for i, entry in enumerate(entries):
        n = i + 1
        if not isinstance(entry, dict):
            raise source.fail(f"{label} entry {n} must be a JSON object", line=n)
        slots = [s for s in _SLOTS if s in entry]
        if len(slots) != 1:
            raise source.fail(f"{label} entry {n} must contain exactly one of request, response, or sse", line=n)
        unknown = sorted(k for k in entry if k not in _ENTRY_KEYS)
        if unknown:
            raise source.fail(f"{label} entry {n} has unknown member {unknown[0]!r}", line=n)
        ts = entry.get("timestamp_ms")
        if ts is not None and (type(ts) is not int or not 0 <= ts <= MAX_MS):
            raise source.fail(f"{label} entry {n}: timestamp_ms must be a non-negative integer of epoch "
                              f"milliseconds (at most {MAX_MS}, the end of year 9999)", line=n)
        tctx = entry.get("transport_context")
        if tctx is not None and not isinstance(tctx, dict):
            raise source.fail(f"{label} entry {n}: transport_context must be an object", line=n)
        slot = slots[0]
        ctx: dict[str, Any] = dict(clean_ctx(tctx) or {})
        ctx["slot"] = slot
        payload = entry[slot]
        if slot in ("request", "response"):
            if not isinstance(payload, (dict, list)):
                raise source.fail(f"{label} entry {n}: {slot} must be a JSON-RPC object", line=n)
            out.append(Message("in" if slot == "request" else "out", payload, ts if ts is not None else own_time(payload),
                               ctx=ctx, source=n))
            continue
        if not isinstance(payload, dict):
            raise source.fail(f"{label} entry {n}: sse must be an object with data", line=n)
        if "data" not in payload:
            raise source.fail(f"{label} entry {n}: sse must have data", line=n)
        event = payload.get("event")
        if event is None:
            event = "message"  # absent or null: SSE's default event type
        sse = {"event": event}
        for k, v in payload.items():
            if k not in ("event", "data"):
                sse[k] = v
        ctx["sse"] = sse
        data = _parse_data(payload["data"])
        if event == "message" and _looks_jsonrpc(data):
            if isinstance(payload["data"], str):
                sse["encoded"] = True
            out.append(Message("out", data, ts if ts is not None else own_time(data), ctx=ctx, source=n))
        else:
            ctx["data"] = payload["data"]
            out.append(Message("out", None, ts, kind=Kind.TRANSPORT, ctx=ctx, source=n))
    info = SessionInfo(
        transport=TRANSPORT_OF_LABEL[label],
        headers=top_ctx["headers"] if top_ctx and isinstance(top_ctx.get("headers"), dict) else None,
        source_format=label,
        path=source.name,
    )
    if top_ctx:
        info.extra["transport_context"] = top_ctx
    return Session(info, out)


def _is_challenge(ctx: dict[str, Any]) -> bool:
    """A recorded 401 that carries a ``WWW-Authenticate`` header."""
    if ctx.get("status") not in (401, "401"):
        return False
    headers = ctx.get("headers")
    return isinstance(headers, dict) and any(isinstance(k, str) and k.lower() == "www-authenticate" for k in headers)


_SESSION_HEADERS = {"mcp-protocol-version": "MCP-Protocol-Version", "mcp-session-id": "Mcp-Session-Id"}


def _note_session_headers(headers: dict[str, Any], seen: dict[str, str]) -> None:
    for name, value in headers.items():
        canonical = _SESSION_HEADERS.get(name.lower()) if isinstance(name, str) else None
        if canonical is not None and isinstance(value, str):
            seen[canonical] = value


def write(session: Session, out: BinaryIO, *, label: str | None = None) -> list[str]:
    """Write the envelope; returns what it had to drop beyond what :data:`KEEPS` says (in words).

    One pass over the session. Without a session context of its own, the document's context (which
    comes before the entries) is known only once every exchange is seen: the entries then go, encoded,
    to a temporary file and are copied in after it, which costs far less than reading the session twice.
    """
    transport = session.info.transport
    if transport == "stdio" and _spoke_http2(session):
        transport = "streamable-http"  # stdio-v2: its decoded HTTP exchanges are the entries
    if transport == "stdio" or (transport is None and label is None):
        where = f"{session.info.path}: " if session.info.path else ""
        raise UsageError(
            f"{where}a stdio session has no HTTP exchanges to write as an HTTP transcript envelope; "
            "write it as reel, qai, jsonrpc or inspector instead"
        )
    label = label or LABEL_OF_TRANSPORT.get(transport or "", "streamable-http")
    doc: dict[str, Any] = {"transport": label}
    top = session.info.extra.get("transport_context")
    if top is None and session.info.headers:
        top = {"headers": session.info.headers}
    if top:
        doc["transport_context"] = top
    key = marker()
    bodiless = [0]
    if top:
        doc["entries"] = key
        write_document(out, doc, {key: _runs(_encoded_entries(session, bodiless, None))}, indent=False)
    else:
        # without a session context of its own (a reel), the last MCP-Protocol-Version / Mcp-Session-Id the
        # exchanges carried become it, as the recorder's --envelope does (one writer, one result)
        seen: dict[str, str] = {}
        spool = ItemSpool()
        try:
            for run in _runs(_encoded_entries(session, bodiless, seen)):
                spool.append(run)
            if seen:
                doc["transport_context"] = {"headers": seen}
            doc["entries"] = key
            write_document(out, doc, {key: spool}, indent=False)  # its items are runs of entries already
        finally:
            spool.close()
    out.write(b"\n")
    if bodiless[0]:
        return [f"{bodiless[0]} HTTP answer{'s' if bodiless[0] != 1 else ''} with no body (a 202 Accepted, a GET or "
                "DELETE with no JSON-RPC in it)"]
    return []


def _spoke_http2(session: Session) -> bool:
    """Whether a stdio recording's pipe spoke HTTP/2 (the ``stdio-v2`` draft; a byte scan of its reel, which
    the recorder marks ``"framing":"h2"``): it then holds the HTTP exchanges decoded from the frames."""
    from mcpreel.formats.reel import raw_marks

    path = session.info.path
    return path is not None and "h2" in raw_marks(path)


def _runs(entries: Iterator[bytes], size: int = 256) -> Iterator[Encoded]:
    """The encoded entries joined by commas, ``size`` at a time: the compact array writer puts a comma
    between its items, so a run of entries given as one item is written exactly as they would be one by
    one, with a fraction of the per-item work (here and in the spool)."""
    run: list[bytes] = []
    for encoded in entries:
        run.append(encoded)
        if len(run) >= size:
            yield Encoded(b",".join(run))
            run.clear()
    if run:
        yield Encoded(b",".join(run))


def _encoded_entries(session: Session, bodiless: list[int], seen: dict[str, str] | None) -> Iterator[bytes]:
    """Each record's entry, encoded; counts the bodiless answers in ``bodiless[0]`` and, given ``seen``,
    notes the session headers the records carry there.

    The common record (a message with no context but its slot) is encoded from a byte template; the
    rest go through :func:`_entry_of`.
    """
    dumps = jsonio.dumps
    message = Kind.MESSAGE
    for msg in session:
        ctx = msg.ctx
        if ctx:
            if seen is not None:
                headers = ctx.get("headers")
                if isinstance(headers, dict):
                    _note_session_headers(headers, seen)
            plain = len(ctx) == 1 and "slot" in ctx and ctx["slot"] != "sse"
        else:
            plain = True
        if plain and msg.kind == message and not msg.dropped and type(msg.t) is int:
            yield (_PLAIN_REQUEST if msg.dir == "in" else _PLAIN_RESPONSE) % (msg.t, dumps(msg.raw))
            continue
        entry = _entry_of(msg, bodiless)
        if entry is not None:
            yield dumps(entry)


#: the entry of a timed message with no transport context but its slot, as :func:`_entry_of` makes it
_PLAIN_REQUEST = b'{"timestamp_ms":%d,"request":%s}'
_PLAIN_RESPONSE = b'{"timestamp_ms":%d,"response":%s}'


def _entry_of(msg: Message, bodiless: list[int]) -> dict[str, Any] | None:
    """The entry of one record, or None (a dropped message, a record of another kind, a bodiless answer,
    counted in ``bodiless[0]``)."""
    if msg.dropped or msg.kind not in (Kind.MESSAGE, Kind.TRANSPORT):
        return None
    entry: dict[str, Any] = {}
    if msg.t is not None:
        entry["timestamp_ms"] = msg.t
    ctx = dict(msg.ctx or {})
    slot = ctx.pop("slot", None)
    sse = ctx.pop("sse", None)
    data = ctx.pop("data", None)
    if msg.kind == Kind.TRANSPORT:
        if sse is None:
            # a transport event that rode no SSE stream: an HTTP answer with no JSON-RPC in it.
            # One whose body was a JSON object (a 401's OAuth error) goes in a response slot, so the
            # status and WWW-Authenticate challenge reach K2-A; a bodiless 202 has no slot.
            if not isinstance(data, dict):
                if _is_challenge(ctx):
                    # a 401 whose body was empty or text: its challenge must still reach K2-A, so it
                    # takes a response slot with an empty object (no JSON-RPC meaning on import)
                    ctx.pop("body", None)
                    entry["transport_context"] = ctx
                    entry["response"] = {}
                    return entry
                bodiless[0] += 1  # an entry holds a request, a response or an SSE event: none of these
                return None
            ctx.pop("body", None)
            entry["transport_context"] = ctx
            entry["response"] = data
            return entry
        if ctx:
            entry["transport_context"] = ctx
        ev = {k: v for k, v in sse.items() if k != "encoded"}
        ev["data"] = data
        entry["sse"] = ev
        return entry
    if ctx:
        entry["transport_context"] = ctx
    if sse is not None or slot == "sse":
        sse = dict(sse or {"event": "message"})
        encoded = sse.pop("encoded", False)
        sse["data"] = jsonio.dumps_str(msg.raw) if encoded else msg.raw
        entry["sse"] = sse
    elif msg.dir == "in":
        entry["request"] = msg.raw
    else:
        entry["response"] = msg.raw
    return entry
