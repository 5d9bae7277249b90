"""glassport session logs (read): PyPI ``glassport`` 0.8, ``glassport/tap.py`` (the frame log schema, ``SessionLog``).

JSONL. A ``{"type": "glassport.header", schema_version, glassport_version, transport, mode, strict,
redacted[], started_at, remote?, ...}`` line first (older logs may have none), then one frame a wire
line: ``{schema_version: "0.2", seq, ts (ISO 8601), dir: "c2s"|"s2c", frame (the parsed JSON-RPC
message, or null), raw (the line, only when it was not JSON), gate?, sse_meta?, http_observation?,
wire_b64?}``, and at the end a ``{"type": "glassport.metrics", ...}`` line of the tap's own counts.

- A frame becomes a message (``c2s`` in, ``s2c`` out) at ``ts``, ``seq`` kept; a ``raw`` line an invalid
  frame kept as text.
- What the model has no place for is kept in ``extra["glassport"]``: the frame's ``gate`` decision,
  ``sse_meta``, ``http_observation`` and ``wire_b64`` (the HTTP tap's bytes); the header (less its time and
  transport) in the session's ``extra["glassport"]``; the metrics line as another producer's line.
- The transport is the header's (``stdio``, ``http``); an HTTP log's remote URL is not in the file
  (glassport keeps only its scheme, host, port and a hash of its path): the session has no URL.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpreel._infra import jsonio
from mcpreel.formats._foreign import iso_time, object_at, text_record
from mcpreel.formats._source import Source, iter_json_lines
from mcpreel.model import Kind, Message, Session, SessionInfo

NAME = "glassport"

_DIRS = {"c2s": "in", "s2c": "out"}
_HEADER = "glassport.header"
_METRICS = "glassport.metrics"
_TRANSPORTS = {"stdio": "stdio", "http": "streamable-http"}
#: a frame's members the reader maps; the rest go to ``extra["glassport"]``
_FRAME_KEYS = frozenset({"schema_version", "seq", "ts", "dir", "frame", "raw"})


def looks_like_glassport(obj: Any) -> bool:
    """glassport's header line, or one of its frame records (``seq``, ``ts``, ``dir`` c2s/s2c, ``frame``)."""
    if type(obj) is not dict:
        return False
    if obj.get("type") == _HEADER:
        return True
    direction = obj.get("dir")  # a dict or a list there is no direction (and cannot be looked up: unhashable)
    return isinstance(direction, str) and direction in _DIRS and "seq" in obj and "ts" in obj and "frame" in obj \
        and "raw" in obj


def _frames(source: Source) -> Iterator[Message]:
    for line, obj in iter_json_lines(source):
        rec = object_at(source, obj, "record on line", line)
        kind = rec.get("type")
        if kind == _HEADER:
            continue
        t = iso_time(source, rec.get("ts"), f"line {line}: ts", line)
        if kind is not None:
            yield Message("event", rec, t, kind=Kind.EVENT, source=line)  # the metrics line, or a newer one
            continue
        direction = rec.get("dir")
        if direction not in _DIRS:
            raise source.fail(f"line {line}: dir must be c2s or s2c, found {jsonio.dumps_str(direction)[:40]}", line=line)
        seq = rec.get("seq") if type(rec.get("seq")) is int else None
        kept = {k: v for k, v in rec.items() if k not in _FRAME_KEYS}
        extra = {"glassport": kept} if kept else None
        frame = rec.get("frame")
        d = _DIRS[direction]
        if frame is None:
            yield text_record(d, rec.get("raw", ""), t, line, extra=extra, seq=seq)
            continue
        if not isinstance(frame, (dict, list)):
            raise source.fail(f"line {line}: frame must be a JSON-RPC object or batch, found {jsonio.type_name(frame)}",
                              line=line)
        yield Message(d, frame, t, seq=seq, source=line, extra=extra)


def read(source: Source) -> Session:
    """Read a glassport session log (header, frames, metrics)."""
    info = SessionInfo(source_format=NAME, path=source.name, producer={"name": "glassport"})
    for line, obj in iter_json_lines(source):
        first = object_at(source, obj, "record on line", line)
        if not looks_like_glassport(first):
            raise source.fail(f"line {line} is neither a glassport header nor a frame record (seq, ts, dir c2s|s2c, "
                              "frame, raw)", line=line)
        if first.get("type") == _HEADER:
            version = first.get("glassport_version")
            if isinstance(version, str):
                info.producer = {"name": "glassport", "version": version}
            info.started = iso_time(source, first.get("started_at"), f"line {line}: started_at", line)
            transport = first.get("transport")
            info.transport = _TRANSPORTS.get(transport) if isinstance(transport, str) else None
            kept = {k: v for k, v in first.items() if k not in ("type", "started_at", "glassport_version")}
            if kept:
                info.extra["glassport"] = kept
        else:
            info.started = iso_time(source, first.get("ts"), f"line {line}: ts", line)
            info.notes.append("the log has no glassport header: transport unknown")
        break
    else:
        raise source.fail("empty file: no glassport records in it")
    info.label = "glassport"
    return Session.streaming(info, lambda: _frames(source))
