"""agent-vcr ``.vcr`` recordings (read): ``Jarvis2021/agent-vcr`` ``core/format.py``.

``{format_version, metadata{version, recorded_at, transport: stdio|sse, client_info, server_info,
server_command, server_args[], tags{}, ...}, session{initialize_request, initialize_response,
capabilities, interactions[{sequence, timestamp, direction: client_to_server|server_to_client, request,
response|null, notifications[], latency_ms}]}}``

- The handshake is split out of the stream: ``initialize_request`` and ``initialize_response`` are read
  first, without times (the file gives them none). ``notifications/initialized`` is not stored by
  agent-vcr, and is not made up here.
- Each interaction is a request and its response: the request at ``timestamp``, the response at
  ``timestamp + latency_ms``. Timestamps have no zone in the files seen: they are read as UTC (noted).
- ``notifications`` are attached to an interaction: their place relative to the response and their own
  times are lost, so they follow the response without a time, and their direction comes from their
  method (noted when there are any).
- ``metadata`` is kept as the session's metadata; ``capabilities`` and each interaction's ``sequence``
  are kept in ``extra["agent_vcr"]``.
"""

from __future__ import annotations

import shlex
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.timeutil import MAX_MS
from mcpreel.formats._foreign import iso_time, object_at
from mcpreel.formats._source import Source
from mcpreel.formats.jsonrpc import DirectionGuesser
from mcpreel.model import Message, Session, SessionInfo

NAME = "agent-vcr"

_DIRS = {"client_to_server": ("in", "out"), "server_to_client": ("out", "in")}
_TRANSPORTS = {"stdio": "stdio", "sse": "sse", "http": "streamable-http", "streamable-http": "streamable-http"}


def looks_like_vcr(doc: Any) -> bool:
    """An agent-vcr recording's shape (what sniffing and a forced ``--format`` check before reading)."""
    return type(doc) is dict and "format_version" in doc and type(doc.get("session")) is dict and \
        isinstance(doc["session"].get("interactions"), list)


def _jsonrpc(source: Source, value: Any, what: str, where: int | None) -> dict[str, Any] | list[Any]:
    if not isinstance(value, (dict, list)):
        raise source.fail(f"{what} must be a JSON-RPC object, found {jsonio.type_name(value)}", line=where)
    return value


def _has_zone(text: Any) -> bool:
    if not isinstance(text, str) or "T" not in text:
        return True
    clock = text.split("T", 1)[1]
    return clock.endswith(("Z", "z")) or "+" in clock or "-" in clock


def read(source: Source) -> Session:
    """Read an agent-vcr recording: each interaction's request and response, in recorded order."""
    doc = source.document()
    if not looks_like_vcr(doc):
        raise source.fail('an agent-vcr recording is a JSON object with "format_version" and '
                          '"session": {"interactions": [...]}')
    meta = doc.get("metadata") or {}
    if type(meta) is not dict:
        raise source.fail(f"metadata must be an object, found {jsonio.type_name(meta)}")
    session = doc["session"]
    info = SessionInfo(source_format=NAME, path=source.name, label="agent-vcr", producer={"name": "agent-vcr"})
    info.metadata = dict(meta)
    tr = meta.get("transport")
    info.transport = _TRANSPORTS.get(tr) if isinstance(tr, str) else None
    cmd = meta.get("server_command")
    if isinstance(cmd, str) and cmd:
        try:
            info.command = shlex.split(cmd)
        except ValueError:
            info.command = [cmd]
        args = meta.get("server_args")
        if isinstance(args, list):
            info.command += [a if isinstance(a, str) else jsonio.dumps_str(a) for a in args]
    sid = meta.get("session_id")
    info.id = sid if isinstance(sid, str) else None
    info.started = iso_time(source, meta.get("recorded_at"), "metadata.recorded_at", None)
    info.extra["agent_vcr"] = {"format_version": doc["format_version"],
                               **{k: v for k, v in session.items() if k not in ("initialize_request", "initialize_response",
                                                                                  "interactions")}}
    out: list[Message] = []
    for key, d in (("initialize_request", "in"), ("initialize_response", "out")):
        value = session.get(key)
        if value is not None:
            out.append(Message(d, _jsonrpc(source, value, f"session.{key}", None), None, source=0))
    guess = DirectionGuesser()
    zoneless = notified = False
    for i, item in enumerate(session["interactions"]):
        n = i + 1
        it = object_at(source, item, "interaction", n)
        direction = it.get("direction", "client_to_server")
        dirs = _DIRS.get(direction) if isinstance(direction, str) else None
        if dirs is None:
            raise source.fail(f'interaction {n}: direction must be "client_to_server" or "server_to_client"', line=n)
        stamp = it.get("timestamp")
        zoneless = zoneless or not _has_zone(stamp)
        t = iso_time(source, stamp, f"interaction {n}: timestamp", n)
        latency = it.get("latency_ms")
        if latency is not None and (isinstance(latency, bool) or not isinstance(latency, (int, float))
                                    or latency != latency or latency < 0):
            raise source.fail(f"interaction {n}: latency_ms must be a number >= 0", line=n)
        rt = min(t + int(round(latency)), MAX_MS) if t is not None and latency is not None else t
        kept = {k: v for k, v in it.items() if k not in ("timestamp", "direction", "request", "response",
                                                       "notifications", "latency_ms")}
        extra = {"agent_vcr": kept} if kept else None
        request = it.get("request")
        if request is not None:
            out.append(Message(dirs[0], _jsonrpc(source, request, f"interaction {n}: request", n), t, source=n, extra=extra))
        response = it.get("response")
        if response is not None:
            out.append(Message(dirs[1], _jsonrpc(source, response, f"interaction {n}: response", n), rt, source=n))
        notes = it.get("notifications") or []
        if not isinstance(notes, list):
            raise source.fail(f"interaction {n}: notifications must be an array", line=n)
        for note in notes:
            raw = _jsonrpc(source, note, f"interaction {n}: notification", n)
            notified = True
            out.append(Message(guess.direction(raw), raw, None, source=n))
    if zoneless:
        info.notes.append("timestamps have no time zone: read as UTC")
    if notified:
        info.notes.append("notifications are attached to interactions without times: "
                          "placed after each response, directions from their methods")
    return Session(info, out)
