"""MCP-VCR YAML transcripts, schema v1 (read): ``MCP-VCR/mcp-vcr`` ``schemas/transcript-schema-v1.json``.

``meta{version: 1, recorded_at, session_id, server_command[], protocol_version?, client_hint?,
schema_version, incomplete?, incomplete_reason?}``, ``messages[{t, dir: c2s|s2c, payload}]``.

- ``t`` is milliseconds since the session started (monotonic); the only absolute time is
  ``recorded_at``, so times are ``recorded_at + t`` (the session's notes say so).
- The transport is not recorded (the recorder spawns ``server_command``; it is left unknown).
- ``meta`` is kept as the session's metadata, so nothing of it is lost.

YAML is parsed with PyYAML's safe loader (the C one when present), with one change: YAML 1.1's implicit
timestamps stay strings, as JSON would have them (an unquoted ``recorded_at`` would otherwise become a
Python ``datetime``). Values JSON has no word for (binary, sets, non-string keys) are refused. The document
is measured before it is built (:mod:`mcpreel._infra.yamlload`): nested aliases that would expand it past
the budget, or nesting deeper than a JSON reader accepts, are refused in one line.
"""

from __future__ import annotations

from typing import Any

import yaml

from mcpreel._infra import jsonio, yamlload
from mcpreel._infra.nesting import MAX_DEPTH
from mcpreel.formats._foreign import iso_time, object_at, offset_time
from mcpreel.formats._source import Source
from mcpreel.model import Message, Session, SessionInfo

NAME = "mcp-vcr"
VERSIONS = (1,)

_DIRS = {"c2s": "in", "s2c": "out"}
_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):
    """The safe loader without YAML 1.1's implicit timestamps (they stay strings)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _Base.yaml_implicit_resolvers.items()
}


def looks_like_transcript(doc: Any) -> bool:
    """An MCP-VCR transcript's shape (meta and messages), whether it was written as YAML or JSON."""
    return type(doc) is dict and type(doc.get("meta")) is dict and isinstance(doc.get("messages"), list) and (
        "schema_version" in doc["meta"] or "server_command" in doc["meta"] or "version" in doc["meta"])


def looks_like_yaml_transcript(head: bytes) -> bool:
    """A YAML document whose top level has ``meta:`` and ``messages:`` keys (what sniffing checks)."""
    lines = {ln.split(b":", 1)[0] for ln in head.splitlines() if ln[:1] not in (b" ", b"\t", b"#", b"-") and b":" in ln}
    return b"meta" in lines and (b"messages" in lines or len(head) >= 65536)


def _json_only(source: Source, value: Any, where: str) -> Any:
    """``value`` if it is made of JSON values only (the one-line error otherwise).

    Iterative, and each container once (an aliased one is shared: the loader's budget bounds the rest).
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen: set[int] = set()
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth >= MAX_DEPTH:
                raise source.fail(f"{where}: nested deeper than {MAX_DEPTH} levels")
            if id(item) in seen:
                continue
            seen.add(id(item))
            if isinstance(item, dict):
                for k, v in item.items():
                    if not isinstance(k, str):
                        raise source.fail(f"{where}: a key that is not a string ({jsonio.dumps_str(str(k)[:30])[:30]}) "
                                          "has no JSON form")
                    stack.append((v, depth + 1))
            else:
                stack.extend((v, depth + 1) for v in item)
        elif not (item is None or isinstance(item, (str, int, float, bool))):
            raise source.fail(f"{where}: a YAML {type(item).__name__} value has no JSON form")
    return value


def load(source: Source) -> Any:
    """Parse the transcript with the safe, size-bounded YAML loader (a hostile file cannot build objects or blow up
    memory)."""
    data = source.read_bytes()
    if not data.strip():
        raise source.fail("empty file: no transcript in it")
    try:
        return yamlload.load(data, _Loader)  # a safe loader (see _Loader), measured before it is built
    except yamlload.YamlLimitError as exc:
        raise source.fail(f"{f'line {exc.line}: ' if exc.line else ''}{exc}", line=exc.line) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 if mark is not None else None
        raise source.fail(f"invalid YAML{f' on line {line}' if line else ''}: {exc.problem or exc}", line=line) from None
    except (yaml.YAMLError, ValueError, UnicodeDecodeError) as exc:
        raise source.fail(f"invalid YAML: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    except RecursionError:
        raise source.fail("invalid YAML: nested too deeply") from None


def read(source: Source) -> Session:
    """Read an MCP-VCR transcript (schema version 1); members YAML has but JSON lacks are refused with their path."""
    doc = load(source)
    if not looks_like_transcript(doc):
        raise source.fail("an MCP-VCR transcript is a YAML mapping with meta: {version, ...} and messages: [...]")
    meta = _json_only(source, doc["meta"], "meta")
    version = meta.get("version", 1)
    if type(version) is not int or version not in VERSIONS:
        raise source.fail(f"meta.version {jsonio.dumps_str(version)[:20]} is not supported (this reads version 1)")
    info = SessionInfo(source_format=NAME, path=source.name, label="mcp-vcr", producer={"name": "mcp-vcr"})
    info.metadata = dict(meta)
    sid = meta.get("session_id")
    info.id = sid if isinstance(sid, str) else None
    cmd = meta.get("server_command")
    if isinstance(cmd, list):
        info.command = [c if isinstance(c, str) else jsonio.dumps_str(c) for c in cmd]
    info.started = iso_time(source, meta.get("recorded_at"), "meta.recorded_at", None)
    if info.started is not None:
        info.notes.append("times are meta.recorded_at + t (the transcript keeps offsets from the session's start)")
    else:
        info.notes.append("no meta.recorded_at: messages have no times")
    if meta.get("incomplete") is True:
        info.end_reason = str(meta.get("incomplete_reason") or "incomplete")
    extra = {k: v for k, v in doc.items() if k not in ("meta", "messages")}
    if extra:
        info.extra["mcp_vcr"] = _json_only(source, extra, "top level")
    out: list[Message] = []
    for i, item in enumerate(doc["messages"]):
        n = i + 1
        m = object_at(source, item, "message", n)
        direction = m.get("dir")
        d = _DIRS.get(direction) if isinstance(direction, str) else None
        if d is None:
            raise source.fail(f'message {n}: dir must be "c2s" or "s2c", found {jsonio.dumps_str(str(m.get("dir")))[:30]}', line=n)
        payload = m.get("payload")
        if not isinstance(payload, (dict, list)):
            raise source.fail(f"message {n}: payload must be a JSON-RPC object, found {jsonio.type_name(payload)}", line=n)
        _json_only(source, payload, f"message {n}")
        t = offset_time(source, info.started, _json_only(source, m.get("t"), f"message {n}: t"), f"message {n}: t", n)
        kept = {k: v for k, v in m.items() if k not in ("t", "dir", "payload")}
        out.append(Message(d, payload, t, source=n, extra={"mcp_vcr": _json_only(source, kept, f"message {n}")} if kept else None))
    return Session(info, out)
