"""mcp-cassette (PyPI, ``cheneeheng/mcp-cassette``) ``.mcp.json`` cassettes, format versions 1 and 2 (read).

One JSON document (``src/mcp_cassette/cassette.py``): ``{format_version, recorded_at, transport:
"stdio"|"http", server_url?, session_id?, protocol_version?, server_info?, messages[]}``; each message
``{seq, t_offset_ms, sender: client|server, kind: request|response|notification|raw, method, msg_id,
payload, redacted, exchange?, channel?}`` (``exchange``/``channel`` are version 2's, null on stdio).

- ``payload`` is the message verbatim; a ``raw`` one is the line that was not JSON (an invalid frame).
  ``method``/``msg_id``/``kind`` repeat the payload and are not kept.
- ``t_offset_ms`` is milliseconds since the proxy started; the only absolute time is ``recorded_at``,
  so times are ``recorded_at + t_offset_ms`` (the session's notes say so).
- Over HTTP, ``exchange`` (one HTTP request/response pair) and ``channel`` (``post``/``get``, the stream
  a server message came on) go to ``ctx``. ``redacted`` (the recorder rewrote the payload: a number may
  have become ``"REDACTED"``) and unknown members are kept in ``Message.extra["mcp_cassette"]``; the
  header's ``session_id`` (the recorded ``Mcp-Session-Id``, evidence only), ``protocol_version`` and
  ``server_info`` in ``SessionInfo.extra["mcp_cassette"]``.
- Injected faults are not in a cassette (mcp-cassette keeps them in a ``.faults.json`` overlay).
"""

from __future__ import annotations

from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.jsonstream import RunSpool, marker, write_document
from mcpreel.formats._foreign import iso_time, object_at, offset_time, rest, text_record
from mcpreel.formats._source import Source, session_url
from mcpreel.model import Kind, Message, Session, SessionInfo

NAME = "mcp-cassette-pypi"
VERSIONS = (1, 2)

_SENDERS = {"client": "in", "server": "out"}
_TRANSPORTS = {"stdio": "stdio", "http": "streamable-http"}
_KINDS = ("request", "response", "notification", "raw")
_TOP_KEYS = frozenset({"format_version", "recorded_at", "transport", "server_url", "messages"})
_MSG_KEYS = frozenset({"seq", "t_offset_ms", "sender", "kind", "method", "msg_id", "payload", "exchange", "channel"})


def looks_like_cassette(doc: Any) -> bool:
    """An mcp-cassette (PyPI) cassette's shape (an empty messages list still is one)."""
    if type(doc) is not dict or "format_version" not in doc or not isinstance(doc.get("messages"), list):
        return False
    first = next((m for m in doc["messages"] if isinstance(m, dict)), None)
    return first is None or ("sender" in first and "payload" in first)


def read(source: Source) -> Session:
    """Read an mcp-cassette (PyPI) ``.mcp.json`` cassette, format 1 or 2."""
    doc = source.document()
    if type(doc) is not dict or "format_version" not in doc or not isinstance(doc.get("messages"), list):
        raise source.fail('an mcp-cassette .mcp.json is a JSON object with "format_version" and "messages"')
    version = doc["format_version"]
    if type(version) is not int or version not in VERSIONS:
        raise source.fail(f"format_version {jsonio.dumps_str(version)[:20]} is not supported (this reads 1 and 2)")
    info = SessionInfo(source_format=NAME, path=source.name, label="mcp-cassette", producer={"name": "mcp-cassette"})
    info.started = iso_time(source, doc.get("recorded_at"), "recorded_at", None)
    tr = doc.get("transport", "stdio")
    if not isinstance(tr, str) or tr not in _TRANSPORTS:
        raise source.fail(f'transport must be "stdio" or "http", found {jsonio.dumps_str(tr)[:30]}')
    info.transport = _TRANSPORTS[tr]
    url = doc.get("server_url")
    info.url = session_url(source, url, "the cassette URL")
    kept = rest(doc, _TOP_KEYS) or {}
    kept["format_version"] = version
    info.extra["mcp_cassette"] = kept
    if info.started is not None:
        info.notes.append("times are recorded_at + t_offset_ms (the cassette keeps offsets from the proxy's start)")
    else:
        info.notes.append("no recorded_at: messages have no times")
    out: list[Message] = []
    for i, item in enumerate(doc["messages"]):
        n = i + 1
        m = object_at(source, item, "message", n)
        sender = m.get("sender")
        d = _SENDERS.get(sender) if isinstance(sender, str) else None
        if d is None:
            raise source.fail(f'message {n}: sender must be "client" or "server", found '
                              f"{jsonio.dumps_str(m.get('sender'))[:30]}", line=n)
        kind = m.get("kind")
        if kind not in _KINDS:
            raise source.fail(f"message {n}: kind must be one of {', '.join(_KINDS)}", line=n)
        t = offset_time(source, info.started, m.get("t_offset_ms"), f"message {n}: t_offset_ms", n)
        seq = m.get("seq")
        seq = seq if type(seq) is int else None
        ctx: dict[str, Any] = {}
        if m.get("exchange") is not None:
            ctx["exchange"] = m["exchange"]
        if m.get("channel") is not None:
            ctx["channel"] = m["channel"]
        more = rest(m, _MSG_KEYS)
        if more and more.get("redacted") is False and len(more) == 1:
            more = None  # the default: nothing to keep
        extra = {"mcp_cassette": more} if more else None
        payload = m.get("payload")
        if kind == "raw":
            out.append(text_record(d, payload, t, n, extra=extra, seq=seq, ctx=ctx or None))
            continue
        if not isinstance(payload, (dict, list)):
            raise source.fail(f"message {n}: payload must be a JSON-RPC object, found {jsonio.type_name(payload)}", line=n)
        out.append(Message(d, payload, t, seq=seq, ctx=ctx or None, source=n, extra=extra))
    return Session(info, out)


# -- writing ----------------------------------------------------------------------------------------
#
# The cassette the PyPI mcp-cassette loads (its pydantic ``Cassette``, format_version 2). Offsets are taken
# from the session's start; the header members the model has no place for come back from what the reader
# kept, else from the ``initialize`` exchange (protocol version, server info). A batch is written one
# message per member (a cassette message holds one object); stderr and transport-only records have no place.

LOSSES = "stderr, transport-only events, transport context other than exchange/channel, the command and intercept edits"
#: "header" and "ctx" in part: the writer names the part it drops (the command and id; other ctx members)
KEEPS = frozenset({"time", "direction", "invalid", "foreign:mcp_cassette", "header", "ctx"})
FORMAT_VERSION = 2


def _kind_of(raw: dict[str, Any]) -> str:
    if "method" in raw:
        return "request" if "id" in raw else "notification"
    return "response"


def write(session: Session, out: Any) -> list[str]:
    """The ``.mcp.json`` document; returns what of the header and the transport context it left out."""
    from mcpreel._infra.timeutil import iso_from_ms

    info = session.info
    start = info.started  # else the first record's time, found as the records pass
    kept = info.extra.get("mcp_cassette")
    if not isinstance(kept, dict):
        kept = {}
    doc: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "recorded_at": None,  # set below, once the start is known
        "transport": "http" if info.transport in ("streamable-http", "sse") else "stdio",
        "server_url": info.url,
        "session_id": kept.get("session_id"),
        "protocol_version": kept.get("protocol_version"),
        "server_info": kept.get("server_info"),
        "messages": [],
    }
    # the messages are encoded as they are made, a run at a time, into a temporary file: the header
    # members that come first in the document are known only at the end (flat memory)
    messages = RunSpool(depth=4)
    append = messages.append
    seq = 0
    last = 0
    other_ctx = 0
    MESSAGE, INVALID = Kind.MESSAGE, Kind.INVALID
    for msg in session:
        t = msg.t
        if t is not None:
            if start is None:
                start = t
            last = t - start if t > start else 0
        kind = msg.kind
        if msg.dropped or (kind != MESSAGE and kind != INVALID):
            continue
        sender = "client" if msg.dir == "in" else "server"
        ctx = msg.ctx
        if ctx:
            if kind == MESSAGE and any(k not in ("exchange", "channel") for k in ctx):
                other_ctx += 1
            exchange = ctx.get("exchange") if type(ctx.get("exchange")) is int else None
            channel = ctx.get("channel") if ctx.get("channel") in ("post", "get") else None
        else:
            exchange = channel = None
        stash = msg.extra.get("mcp_cassette") if msg.extra else None
        if not isinstance(stash, dict):
            stash = None
        redacted = stash is not None and stash.get("redacted") is True
        parts: Any
        if kind == INVALID:
            parts = (("raw", msg.text or ""),)
        elif type(msg.raw) is dict:
            parts = ((_kind_of(msg.raw), msg.raw),)
        else:
            parts = [(_kind_of(raw), raw) for raw in msg.members()]
        for part_kind, payload in parts:
            if isinstance(payload, dict):
                if part_kind == "response" and sender == "server" and doc["protocol_version"] is None and \
                        payload.get("id") is not None and isinstance(payload.get("result"), dict) and \
                        "serverInfo" in payload["result"]:
                    doc["protocol_version"] = payload["result"].get("protocolVersion")
                    doc["server_info"] = payload["result"].get("serverInfo")
                method = payload.get("method")
                if not isinstance(method, str):
                    method = None
                msg_id = payload.get("id")
                if not isinstance(msg_id, (str, int)) or isinstance(msg_id, bool):
                    msg_id = None
            else:
                method = msg_id = None
            entry = {"seq": seq, "t_offset_ms": last, "sender": sender, "kind": part_kind,
                     "method": method, "msg_id": msg_id, "payload": payload, "redacted": redacted,
                     "exchange": exchange, "channel": channel}
            if stash:
                for k, v in stash.items():
                    entry.setdefault(k, v)
            append(entry)
            seq += 1
    doc["recorded_at"] = iso_from_ms(start if start is not None else 0)
    key = marker()
    doc["messages"] = key
    try:
        write_document(out, doc, {key: messages})
    finally:
        messages.close()
    out.write(b"\n")
    lost = []
    if info.command or info.id:
        lost.append("the command and session id (a cassette names neither)")
    if other_ctx:
        lost.append(f"transport context other than exchange and channel ({other_ctx} message{'s' if other_ctx != 1 else ''})")
    return lost
