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

from mcpreel import jsonio
from mcpreel.formats._foreign import iso_time, object_at, offset_time, rest, text_record
from mcpreel.formats._source import Source
from mcpreel.model import Message, Session, SessionInfo

NAME = "mcp-cassette-pypi"
EXTENSIONS = (".mcp.json",)
VERSIONS = (1, 2)

_SENDERS = {"client": "in", "server": "out"}
_TRANSPORTS = {"stdio": "stdio", "http": "streamable-http"}
_KINDS = ("request", "response", "notification", "raw")
_TOP_KEYS = frozenset({"format_version", "recorded_at", "transport", "server_url", "messages"})
_MSG_KEYS = frozenset({"seq", "t_offset_ms", "sender", "kind", "method", "msg_id", "payload", "exchange", "channel"})


def looks_like_cassette(doc: Any) -> bool:
    if type(doc) is not dict or "format_version" not in doc or not isinstance(doc.get("messages"), list):
        return False
    first = next((m for m in doc["messages"] if isinstance(m, dict)), None)
    return first is None or ("sender" in first and "payload" in first)


def read(source: Source) -> Session:
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
    info.url = url if isinstance(url, str) else None
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
