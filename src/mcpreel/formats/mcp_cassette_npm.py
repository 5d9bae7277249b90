"""mcp-cassette (npm, ``ivermin1123/mcp-cassette``) JSONL cassettes, versions 1 and 2 (read).

Line 1 is the header ``{type:"header", cassetteVersion:1|2, recorder, startedAt, transport:"stdio"|"http",
command?, url?, era?:"legacy"|"modern", sessioned?, redaction?}``; entries follow:

- ``{type:"frame", t, dir:"c2s"|"s2c", frame, origin?, http?:{status}}``: one JSON-RPC message;
- ``{type:"raw", t, dir, data}``: a line that was not JSON (kept as an invalid frame);
- ``{type:"chunks", t, dir:"s2c", id?, via?:"post"|"get", chunks:[{t, frame}], origin?}``: one SSE
  stream; each chunk becomes a message (``ctx.sse``; ``ctx.stream`` names the request it answers, or
  the standalone GET stream when ``id`` is absent).

``t`` is milliseconds since ``startedAt``, so times are ``startedAt + t``. A missing ``era`` means legacy.
The cassette's own members the model has no place for (``era``, ``sessioned``, ``redaction``, each
entry's ``origin``) are kept (``SessionInfo.extra["mcp_cassette"]``, ``Message.extra["mcp_cassette"]``).
As the format asks, entry types this reader does not know are skipped by MCP consumers: they are kept
as another producer's lines (``Kind.EVENT``, in mcp-replay's ``dir:"event"`` shape, so a reel keeps them),
and a future ``cassetteVersion`` is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.timeutil import iso_from_ms
from mcpreel.formats._foreign import iso_time, object_at, offset_time, producer_of, rest, text_record
from mcpreel.formats._source import Source, iter_json_lines, session_url
from mcpreel.model import Kind, Message, Session, SessionInfo

NAME = "mcp-cassette-npm"
VERSIONS = (1, 2)

_DIRS = {"c2s": "in", "s2c": "out"}
_TRANSPORTS = {"stdio": "stdio", "http": "streamable-http"}
_HEADER_KEYS = frozenset({"type", "cassetteVersion", "recorder", "startedAt", "transport", "command", "url"})
_FRAME_KEYS = frozenset({"type", "t", "dir", "frame", "http"})


def looks_like_header(obj: Any) -> bool:
    """An mcp-cassette (npm) header line: what sniffing and the reader check first."""
    return type(obj) is dict and obj.get("type") == "header" and "cassetteVersion" in obj


def _header(source: Source, obj: Any) -> SessionInfo:
    if not looks_like_header(obj):
        raise source.fail('line 1 must be the mcp-cassette header ({"type":"header","cassetteVersion":...})', line=1)
    version = obj.get("cassetteVersion")
    if version not in VERSIONS or type(version) is not int:
        raise source.fail(f"line 1: cassetteVersion {jsonio.dumps_str(version)[:20]} is not supported "
                          "(this reads versions 1 and 2)", line=1)
    info = SessionInfo(source_format=NAME, path=source.name, label="mcp-cassette")
    info.producer = producer_of(obj.get("recorder"), "mcp-cassette")
    info.started = iso_time(source, obj.get("startedAt"), "line 1: startedAt", 1)
    tr = obj.get("transport")
    if tr is not None and (not isinstance(tr, str) or tr not in _TRANSPORTS):
        raise source.fail(f'line 1: transport must be "stdio" or "http", found {jsonio.dumps_str(tr)[:30]}', line=1)
    info.transport = _TRANSPORTS.get(tr) if tr is not None else None
    cmd = obj.get("command")
    if isinstance(cmd, list):
        info.command = [c if isinstance(c, str) else jsonio.dumps_str(c) for c in cmd]
    url = obj.get("url")
    info.url = session_url(source, url, "the cassette URL")
    kept = rest(obj, _HEADER_KEYS) or {}
    kept["cassetteVersion"] = version
    info.extra["mcp_cassette"] = kept
    if info.started is None:
        info.notes.append("the header has no startedAt: messages have no times")
    return info


def _dir(source: Source, entry: dict[str, Any], line: int) -> str:
    d = entry.get("dir")
    if not isinstance(d, str) or d not in _DIRS:
        raise source.fail(f'line {line}: dir must be "c2s" or "s2c", found {jsonio.dumps_str(d)[:30]}', line=line)
    return _DIRS[d]


def _frame(source: Source, frame: Any, line: int) -> Any:
    if not isinstance(frame, (dict, list)):
        raise source.fail(f"line {line}: frame must be a JSON-RPC object or batch, found {jsonio.type_name(frame)}", line=line)
    return frame


def _entries(source: Source, info: SessionInfo) -> Iterator[Message]:
    start = info.started
    for line, obj in iter_json_lines(source):
        if line == 1:
            continue
        entry = object_at(source, obj, "entry on line", line)
        typ = entry.get("type")
        if typ == "header":
            raise source.fail(f"line {line}: a second header", line=line)
        if typ == "frame":
            d = _dir(source, entry, line)
            t = offset_time(source, start, entry.get("t"), f"line {line}: t", line)
            ctx = None
            http = entry.get("http")
            if type(http) is dict and type(http.get("status")) is int:
                ctx = {"status": http["status"]}
            extra = rest(entry, _FRAME_KEYS)
            yield Message(d, _frame(source, entry.get("frame"), line), t, ctx=ctx, source=line,
                          extra={"mcp_cassette": extra} if extra else None)
        elif typ == "raw":
            d = _dir(source, entry, line)
            t = offset_time(source, start, entry.get("t"), f"line {line}: t", line)
            data = entry.get("data")
            if not isinstance(data, str):
                raise source.fail(f"line {line}: raw data must be a string, found {jsonio.type_name(data)}", line=line)
            kept = rest(entry, frozenset({"type", "t", "dir", "data"}))
            yield text_record(d, data, t, line, extra={"mcp_cassette": kept} if kept else None)
        elif typ == "chunks":
            d = _dir(source, entry, line)
            chunks = entry.get("chunks")
            if not isinstance(chunks, list):
                raise source.fail(f"line {line}: chunks must be an array", line=line)
            stream: dict[str, Any] = {"via": entry.get("via", "post")}
            if "id" in entry:
                stream["id"] = entry["id"]
            kept = rest(entry, frozenset({"type", "t", "dir", "chunks", "id", "via"}))
            for i, chunk in enumerate(chunks):
                chunk = object_at(source, chunk, f"line {line}: chunk", i + 1)
                t = offset_time(source, start, chunk.get("t", entry.get("t")), f"line {line}: chunk {i + 1} t", line)
                ctx = {"sse": {"event": "message"}, "stream": stream}
                yield Message(d, _frame(source, chunk.get("frame"), line), t, ctx=ctx, source=line,
                              extra={"mcp_cassette": kept} if kept else None)
        else:
            # kept as an mcp-replay event line (``dir:"event"``, ``kind``, the entry whole in ``raw``), which a
            # reel writes and reads back as it is
            t = offset_time(source, start, entry.get("t"), f"line {line}: t", line) \
                if isinstance(entry.get("t"), (int, float)) and not isinstance(entry.get("t"), bool) else None
            event: dict[str, Any] = {"dir": "event", "kind": f"mcp-cassette.{typ if isinstance(typ, str) else 'unknown'}",
                                     "raw": entry}
            if t is not None:
                event = {"t": iso_from_ms(t), **event}
            yield Message("event", event, t, kind=Kind.EVENT, source=line)


def read(source: Source) -> Session:
    """Read an mcp-cassette (npm) JSONL cassette, v1 or v2 (the header line says which)."""
    first = None
    for _line, obj in iter_json_lines(source):
        first = obj
        break
    if first is None:
        raise source.fail("empty file: an mcp-cassette starts with its header line")
    info = _header(source, first)
    return Session.streaming(info, lambda: _entries(source, info))
