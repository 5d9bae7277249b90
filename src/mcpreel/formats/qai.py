"""qai proxy session files (seed 003): one JSON document, read and written.

``{id, started_at, ended_at, transport, server_command, server_url, messages[], metadata}``; each message
``{proxy_id, sequence, timestamp, direction, transport, jsonrpc_id, method, correlated_id, modified,
payload, original_payload?}``.

What real files do, and what we do about it:

- ``correlated_id`` ignores direction, so a server request and a client request with the same id
  collide (``fixtures/qai/qai_session_id_collision.json``). It is never read: correlation is computed
  by the one reading (:class:`~mcpreel.operations.walk.Walker`: within a client session, by direction of
  the request and id, a reused pending id first in, first out). When writing, it is computed the same way:
  the ``proxy_id`` of the request a response answers, as the walk pairs them.
- ``jsonrpc_id`` and ``method`` repeat what the payload says; they are derived from the payload.
- Timestamps carry microseconds; the model keeps milliseconds. The reader keeps each original string
  (with ``proxy_id``) in ``Message.extra["qai"]``, and the writer writes it back whenever it still names
  the message's millisecond, so qai -> qai and qai -> reel -> qai keep every timestamp byte for byte.
  Times the model made (or changed) are written with microseconds ``000``.
- ``server_command`` is one string; the model keeps argv (split like a shell would) and the string.

Additive members, ignored by qai (its models drop unknown fields) and read back by us so that a reel
survives reel -> qai -> reel: per message ``ctx`` (transport context) and ``dropped`` (an intercept
drop, which qai itself does not mark: ``qai_session_dropped.json``); per session ``label`` (the name
``record --label`` gave, so qai -> reel keeps it), ``transport_context``, ``exit_code`` and
``end_reason``. Stderr lines, invalid frames and transport-only events have no place in a qai file and
are dropped (the one warning line of ``mcpreel convert`` says so).
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Iterator
from typing import Any, BinaryIO

from mcpreel._infra import jsonio
from mcpreel._infra.jsonstream import encode_run
from mcpreel._infra.nesting import cut_repr
from mcpreel._infra.timeutil import iso_second, ms_from_any, ms_from_iso
from mcpreel.formats import _jsondoc
from mcpreel.formats._identity import SESSION_NS, fallback_label, session_document_id
from mcpreel.formats._source import Source, session_text, session_url
from mcpreel.model import Kind, Message, Session, SessionInfo, clean_ctx
from mcpreel.operations.walk import Walker

NAME = "qai"
LOSSES = "stderr lines, invalid frames, transport-only events and other producers' lines"
#: what a qai file keeps of a session (see :mod:`mcpreel.convert`)
KEEPS = frozenset({"time", "direction", "ctx", "edits", "drops", "header"})

DIRECTIONS = {"client_to_server": "in", "server_to_client": "out"}
QAI_DIRECTION = {"in": "client_to_server", "out": "server_to_client"}
_NS = SESSION_NS
_NS_BYTES = _NS.bytes
_KNOWN_MESSAGE_KEYS = frozenset((
    "proxy_id", "sequence", "timestamp", "direction", "transport", "jsonrpc_id", "method", "correlated_id",
    "modified", "payload", "original_payload", "ctx", "dropped", "injected", "decided_by",
))


# -- reading ----------------------------------------------------------------------------------------


def _time(value: Any, source: Source, where: str, line: int | None = None) -> int | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return ms_from_iso(value)
        except ValueError:
            pass
    elif not isinstance(value, bool) and isinstance(value, (int, float)):
        ms = ms_from_any(value)  # None for NaN, infinities and times past year 9999
        if ms is not None:
            return ms
    raise source.fail(f"{where} is not an ISO-8601 time: {jsonio.dumps_str(value)}", line=line)


def _command(value: Any) -> list[str]:
    if isinstance(value, str):
        try:
            return shlex.split(value)
        except ValueError:
            return [value]  # unbalanced quotes: keep the string whole
    if isinstance(value, list):  # a word that is not text: its cut repr (str() of a deep value recurses)
        return [v if isinstance(v, str) else cut_repr(v) for v in value]
    return []


def _info(doc: dict[str, Any], source: Source) -> SessionInfo:
    info = SessionInfo(source_format=NAME, path=source.name)
    sid = doc.get("id")
    info.id = sid if isinstance(sid, str) else (cut_repr(sid) if sid is not None else None)
    stash: dict[str, Any] = {}
    for key, attr in (("started_at", "started"), ("ended_at", "ended")):
        value = doc.get(key)
        setattr(info, attr, _time(value, source, f"qai {key}"))
        if isinstance(value, str):
            stash[key] = value
    tr = doc.get("transport")
    info.transport = tr if isinstance(tr, str) else None
    cmd = doc.get("server_command")
    info.command = _command(cmd)
    if isinstance(cmd, str) and shlex.join(info.command) != cmd:
        stash["server_command"] = cmd
    url = doc.get("server_url")
    info.url = session_url(source, url, "the session URL")
    meta = doc.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise source.fail(f"qai metadata must be an object, found {jsonio.type_name(meta)}")
    info.metadata = dict(meta) if meta else {}
    tctx = doc.get("transport_context")
    if isinstance(tctx, dict):
        info.extra["transport_context"] = tctx
        if isinstance(tctx.get("headers"), dict):
            info.headers = tctx["headers"]
    code = doc.get("exit_code")
    info.exit_code = code if type(code) is int else None
    reason = doc.get("end_reason")
    info.end_reason = reason if isinstance(reason, str) else None
    info.label = session_text(doc.get("label")) or info.label
    if stash:
        info.extra["qai"] = stash
    return info


def _message(item: Any, n: int, session_transport: str | None, source: Source) -> Message:
    if not isinstance(item, dict):
        raise source.fail(f"qai message {n} must be a JSON object, found {jsonio.type_name(item)}", line=n)
    direction = item.get("direction")
    d = DIRECTIONS.get(direction) if isinstance(direction, str) else None
    if d is None:
        raise source.fail(
            f'qai message {n}: direction must be "client_to_server" or "server_to_client", '
            f"found {jsonio.dumps_str(direction) if 'direction' in item else 'none'}",
            line=n,
        )
    if "payload" not in item:
        raise source.fail(f"qai message {n} has no payload", line=n)
    payload = item["payload"]
    if not isinstance(payload, (dict, list)):
        raise source.fail(f"qai message {n}: payload must be a JSON-RPC object, found {jsonio.type_name(payload)}", line=n)
    ts = item.get("timestamp")
    t = _time(ts, source, f"qai message {n}: timestamp", line=n)
    seq = item.get("sequence")
    modified = item.get("modified") is True
    ctx = item.get("ctx")
    stash: dict[str, Any] = {}
    if "proxy_id" in item and item["proxy_id"] is not None:
        stash["proxy_id"] = item["proxy_id"]
    if isinstance(ts, str):
        stash["timestamp"] = ts
    tr = item.get("transport")
    if isinstance(tr, str) and tr != session_transport:
        stash["transport"] = tr
    more = {k: v for k, v in item.items() if k not in _KNOWN_MESSAGE_KEYS}
    if more:
        stash["more"] = more
    return Message(
        d,
        payload,
        t,
        seq=seq if type(seq) is int else None,
        ctx=clean_ctx(ctx),
        modified=modified,
        original=item.get("original_payload") if modified else None,
        dropped=item.get("dropped") is True,
        source=n,
        extra={"qai": stash} if stash else None,
        injected=item.get("injected") is True,
        decided_by=decided_by if isinstance(decided_by := item.get("decided_by"), str) else None,
    )


#: files from this size on are read as a stream (smaller ones are parsed at once: faster, same model)
STREAM_FROM = 1 << 20


def scan(source: Source) -> _jsondoc.Scan | None:
    """The document's header and where its messages are, found by one streaming pass (cached on the
    source, so sniffing and reading share it); None when it is small, ``--strict`` or unusual, and read whole."""
    if source.strict or source.size() < STREAM_FROM:
        return None
    cached = source.scanned.get("messages", False)
    if cached is False:
        cached = source.scanned["messages"] = _jsondoc.scan(source, "messages")
    return cached


def read(source: Source) -> Session:
    """Read a qai session file; a big one is streamed message by message instead of parsed whole."""
    found = scan(source)
    if found is not None:
        info = _info(found.members, source)
        transport = info.transport

        def stream() -> Iterator[Message]:
            for i, item in enumerate(_jsondoc.elements(source, found), 1):
                yield _message(item, i, transport, source)

        return Session.streaming(info, stream)
    doc = source.document()
    if not isinstance(doc, dict):
        raise source.fail(f"a qai session is a JSON object with a messages array, found {jsonio.type_name(doc)}")
    messages = doc.get("messages")
    if not isinstance(messages, list):
        raise source.fail('a qai session must have a "messages" array')
    info = _info(doc, source)
    out = [_message(item, i + 1, info.transport, source) for i, item in enumerate(messages)]
    return Session(info, out)


# -- writing ----------------------------------------------------------------------------------------


def iso_micro(ms: int) -> str:
    """Epoch ms -> qai's own form, ``2026-11-20T21:46:46.725000+00:00`` (no fraction on a whole second,
    as ``datetime.isoformat`` writes it). The date and clock are computed once per second."""
    secs, rem = divmod(int(ms), 1000)
    return iso_second(secs) + _FRACTION[rem]


#: the end of the text for each millisecond of a second
_FRACTION = ["+00:00"] + [f".{rem * 1000:06d}+00:00" for rem in range(1, 1000)]


def _uuid5(name: str) -> str:
    """``str(uuid.uuid5(_NS, name))`` without building a UUID object (a third of writing a message)."""
    return _uuid_text(hashlib.sha1(_NS_BYTES + name.encode("utf-8")).digest())


def _uuid_text(digest: bytes) -> str:
    """A SHA-1 digest as the text of a version-5 UUID: its version nibble 5, its variant bits 10."""
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-5{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:32]}"


_VARIANT = {c: "89ab"[int(c, 16) & 3] for c in "0123456789abcdef"}


class _ProxyIds:
    """The proxy ids derived for one session, ``_uuid5(f"{session_id}/{index}")``: the hash of the
    namespace and the session's part is computed once and copied per message (half the hashing).
    Made on first use: a file whose messages all keep their own proxy_id never hashes its session id."""

    __slots__ = ("_session_id", "_base")

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        self._base: Any = None

    def __call__(self, index: int) -> str:
        base = self._base
        if base is None:
            base = self._base = hashlib.sha1(_NS_BYTES + f"{self._session_id}/".encode())
        h = base.copy()
        h.update(b"%d" % index)
        return _uuid_text(h.digest())


def _stamp(ms: int | None, original: Any) -> str | None:
    """The original string when it still names ``ms``; else ``ms`` written anew."""
    if ms is None:
        return None
    if isinstance(original, str):
        try:
            if ms_from_iso(original) == ms:
                return original
        except ValueError:
            pass
    return iso_micro(ms)


def _header(session: Session) -> tuple[dict[str, Any], int | None]:
    info = session.info
    stash = info.extra.get("qai")
    if not isinstance(stash, dict):
        stash = {}
    started = info.started
    if started is None and not session.is_streaming:
        started = next((m.t for m in session.messages if m.t is not None), None)
    command = None
    if info.command:
        command = shlex.join(info.command)
        original = stash.get("server_command")
        if isinstance(original, str) and _command(original) == info.command:
            command = original
    return {
        "id": session_document_id(info),
        "started_at": _stamp(started, stash.get("started_at")),
        "ended_at": _stamp(info.ended, stash.get("ended_at")),
        "transport": info.transport or ("streamable-http" if info.url else "stdio"),
        "server_command": command,
        "server_url": info.url,
    }, started


def message_entry(msg: Message, *, index: int, sequence: int, session_id: str, transport: str,
                  t: int | None, correlated: str | None = None, ids: _ProxyIds | None = None) -> dict[str, Any]:
    """One qai message for a record (``t`` is the time to write: the record's, or the last known).
    ``correlated`` is the ``proxy_id`` of the request it answers (as the walk pairs them: the caller's);
    ``ids`` derives the proxy ids of ``session_id`` (a writer passes one for the whole session)."""
    extra = msg.extra
    stash = extra.get("qai") if extra else None
    if not isinstance(stash, dict):
        stash = _NO_STASH
    proxy_id = stash.get("proxy_id")
    if proxy_id is None:
        proxy_id = (ids or _ProxyIds(session_id))(index)
    d = msg.dir
    if d != "in" and d != "out":
        d = "in"
    raw = msg.raw
    jid: Any = None
    method: Any = None
    if isinstance(raw, dict):
        jid = raw.get("id")
        if not isinstance(jid, (str, int, float)) or isinstance(jid, bool):
            jid = None
        m = raw.get("method")
        method = m if isinstance(m, str) else None
    if stash is _NO_STASH:
        timestamp = iso_micro(t) if t is not None else None
        tr = transport
    else:
        timestamp = _stamp(t, stash.get("timestamp") if t == msg.t else None)
        own = stash.get("transport")
        tr = own if isinstance(own, str) else transport
    modified = bool(msg.modified)
    entry: dict[str, Any] = {
        "proxy_id": proxy_id,
        "sequence": sequence,
        "timestamp": timestamp,
        "direction": QAI_DIRECTION[d],
        "transport": tr,
        "jsonrpc_id": jid,
        "method": method,
        "correlated_id": correlated,
        "modified": modified,
        "payload": raw,
    }
    if modified:
        entry["original_payload"] = msg.original
    more = stash.get("more")
    if isinstance(more, dict):
        for k, v in more.items():
            entry.setdefault(k, v)
    if msg.ctx:
        entry["ctx"] = msg.ctx
    if msg.dropped:
        entry["dropped"] = True
    if msg.injected:
        entry["injected"] = True
    if msg.decided_by:
        entry["decided_by"] = msg.decided_by
    return entry


_NO_STASH: dict[str, Any] = {}


#: messages encoded per orjson call
_BATCH = 256


def _entries(batch: list[dict[str, Any]], *, first: bool) -> bytes:
    """A run of messages as they stand in the ``messages`` array (each after ``,\n    ``, or ``\n    ``
    for the array's first), encoded by one orjson call (:func:`~mcpreel._infra.jsonstream.encode_run`)."""
    return (b"\n    " if first else b",\n    ") + encode_run(batch, 4)


def _indent(block: bytes, prefix: bytes) -> bytes:
    # JSON text never holds a raw newline inside a string, so every newline is structure
    return block.replace(b"\n", b"\n" + prefix)


def write(session: Session, out: BinaryIO) -> None:
    """Write ``session`` as a qai session file, streaming its messages (memory stays flat)."""
    info = session.info
    header, started = _header(session)
    sid = header["id"]
    transport = header["transport"]
    out.write(b"{\n")
    for key, value in header.items():
        out.write(b'  "' + key.encode() + b'": ' + jsonio.dumps(value) + b",\n")
    out.write(b'  "messages": [')
    walk = Walker(pairing_only=True).feed  # the one reading's pairing
    asked: dict[int, str] = {}  # walk exchange number -> the proxy_id of its request, until answered
    ids = _ProxyIds(sid)
    last = started
    sequence = -1
    keep_sequence = info.source_format == "qai"
    index = 0
    batch: list[dict[str, Any]] = []
    for at, msg in enumerate(session):
        steps = walk(at, msg)
        if msg.kind != Kind.MESSAGE:
            continue
        correlated = None
        asks = False
        for step in steps:
            kind = step.kind
            if kind == "response":
                answered = step.exchange
                found = asked.pop(answered.n, None) if answered is not None else None
                if correlated is None:
                    correlated = found
            elif kind == "request":
                asks = True
        t = msg.t
        if t is not None:
            last = t
        # seed 003: a 0-based monotonic number over the messages. A qai file's own numbers are kept
        # (they may have gaps where qai lost a line), also through a reel; others are numbered 0, 1, 2, ...
        if (keep_sequence or (msg.extra and "qai" in msg.extra)) and msg.seq is not None and msg.seq > sequence:
            sequence = msg.seq
        else:
            sequence += 1
        entry = message_entry(msg, index=index, sequence=sequence, session_id=sid, transport=transport,
                              t=t if t is not None else last, correlated=correlated, ids=ids)
        if asks:
            for step in steps:
                if step.kind == "request" and step.exchange is not None:
                    asked[step.exchange.n] = entry["proxy_id"]
        batch.append(entry)
        index += 1
        if len(batch) >= _BATCH:
            out.write(_entries(batch, first=index == len(batch)))
            batch.clear()
    if batch:
        out.write(_entries(batch, first=index == len(batch)))
    out.write(b"\n  ],\n" if index else b"],\n")
    tail: dict[str, Any] = {"metadata": info.metadata or {}}
    if info.label and info.label != fallback_label(info):  # one a reel made up is made up again, not kept
        tail["label"] = info.label
    tctx = info.extra.get("transport_context")
    if tctx is None and info.headers:
        tctx = {"headers": info.headers}
    if tctx:
        tail["transport_context"] = tctx
    if info.exit_code:
        tail["exit_code"] = info.exit_code  # 0 is what a v1 reel's end line says when nothing else is known
    if info.end_reason is not None:
        tail["end_reason"] = info.end_reason
    for i, (key, value) in enumerate(tail.items()):
        sep = b",\n" if i < len(tail) - 1 else b"\n"
        out.write(b'  "' + key.encode() + b'": ' + _indent(jsonio.dumps_indented(value), b"  ") + sep)
    out.write(b"}\n")
