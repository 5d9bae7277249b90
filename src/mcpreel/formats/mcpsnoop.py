"""mcpsnoop session envelopes (read): ``kerlenton/mcpsnoop`` ``internal/proxy/frame.go`` ``Envelope``.

One JSON object a line: ``{session_id, server_label, seq, ts, direction: c2s|s2c|stderr|meta,
transport: stdio|http, raw?, text?, mcp_method?, mcp_name?, mcp_protocol_version?, mcp_param_headers?,
batch?, conn_id?, truncated?, redacted?, status?, auth_challenge?}``.

- ``meta`` (the first envelope): its ``raw`` is ``{command[], cwd?}``, the session's command.
- ``c2s``/``s2c`` with ``raw``: a JSON-RPC frame. Without ``raw``, ``text`` is a stdout line that was not
  JSON (an invalid frame). ``stderr``: a server stderr line.
- HTTP facts go to ``ctx``: the request headers mcpsnoop kept (``Mcp-Method``, ``Mcp-Name``,
  ``MCP-Protocol-Version``, each ``Mcp-Param-*``; a redacted one stays redacted), the answer's
  ``status`` and ``WWW-Authenticate`` challenge, and ``conn_id`` (mcpsnoop pairs by connection and id).
- ``seq`` is the record's ``seq``; ``batch``/``truncated``/``redacted`` are kept in ``extra["mcpsnoop"]``.
- Time: ``ts`` (RFC 3339, nanoseconds), to the millisecond.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.credentials import MARKER
from mcpreel.formats._foreign import iso_time, object_at, text_record
from mcpreel.formats._source import Source, iter_json_lines
from mcpreel.model import Message, Session, SessionInfo

NAME = "mcpsnoop"

_DIRECTIONS = ("c2s", "s2c", "stderr", "meta")
_DIRS = {"c2s": "in", "s2c": "out"}
_TRANSPORTS = {"stdio": "stdio", "http": "streamable-http"}
_HEADERS = (("mcp_method", "Mcp-Method"), ("mcp_name", "Mcp-Name"), ("mcp_protocol_version", "MCP-Protocol-Version"))
_FLAGS = ("batch", "truncated", "redacted")


def looks_like_envelope(obj: Any) -> bool:
    """An mcpsnoop envelope's shape (session_id, a direction, and seq or ts)."""
    return type(obj) is dict and obj.get("direction") in _DIRECTIONS and "session_id" in obj and (
        "seq" in obj or "ts" in obj)


def _ctx(env: dict[str, Any]) -> dict[str, Any] | None:
    ctx: dict[str, Any] = {}
    headers: dict[str, Any] = {}
    for key, name in _HEADERS:
        value = env.get(key)
        if isinstance(value, str) and value:
            headers[name] = value
    params = env.get("mcp_param_headers")
    if isinstance(params, list):
        for p in params:
            if type(p) is dict and isinstance(p.get("name"), str):
                headers[p["name"]] = MARKER if p.get("redacted") is True else p.get("value")
    challenge = env.get("auth_challenge")
    if isinstance(challenge, str) and challenge:
        headers["WWW-Authenticate"] = challenge
    if headers:
        ctx["headers"] = headers
    status = env.get("status")
    if type(status) is int and status:
        ctx["status"] = status
    conn = env.get("conn_id")
    if isinstance(conn, str) and conn:
        ctx["conn_id"] = conn
    return ctx or None


def _stream(source: Source) -> Iterator[Message]:
    for line, obj in iter_json_lines(source):
        env = object_at(source, obj, "envelope on line", line)
        if not looks_like_envelope(env):
            raise source.fail(f"line {line} is not an mcpsnoop envelope (needs session_id and direction "
                              "c2s|s2c|stderr|meta)", line=line)
        direction = env["direction"]
        if direction == "meta":
            continue
        t = iso_time(source, env.get("ts"), f"line {line}: ts", line)
        seq = env.get("seq") if type(env.get("seq")) is int else None
        flags = {k: env[k] for k in _FLAGS if env.get(k)}
        extra = {"mcpsnoop": flags} if flags else None
        if direction == "stderr":
            yield text_record(None, env.get("text", ""), t, line, stderr=True, extra=extra, seq=seq)
            continue
        d = _DIRS[direction]
        ctx = _ctx(env)
        raw = env.get("raw")
        if raw is None:
            yield text_record(d, env.get("text", ""), t, line, extra=extra, seq=seq, ctx=ctx)
            continue
        if not isinstance(raw, (dict, list)):
            raise source.fail(f"line {line}: raw must be a JSON-RPC object or batch, found {jsonio.type_name(raw)}", line=line)
        yield Message(d, raw, t, seq=seq, ctx=ctx, source=line, extra=extra)


def read(source: Source) -> Session:
    """Read mcpsnoop session envelopes; flags the format keeps (batch, truncated, redacted) go to the message's extra."""
    first = None
    for line, obj in iter_json_lines(source):
        first = object_at(source, obj, "envelope on line", line)
        if not looks_like_envelope(first):
            raise source.fail(f"line {line} is not an mcpsnoop envelope (needs session_id and direction "
                              "c2s|s2c|stderr|meta)", line=line)
        break
    if first is None:
        raise source.fail("empty file: no mcpsnoop envelopes in it")
    info = SessionInfo(source_format=NAME, path=source.name, producer={"name": "mcpsnoop"})
    sid = first.get("session_id")
    info.id = sid if isinstance(sid, str) else None
    label = first.get("server_label")
    info.label = label if isinstance(label, str) and label else "mcpsnoop"
    tr = first.get("transport")
    info.transport = _TRANSPORTS.get(tr) if isinstance(tr, str) else None
    info.started = iso_time(source, first.get("ts"), "line 1: ts", 1)
    if first.get("direction") == "meta" and type(first.get("raw")) is dict:
        meta = first["raw"]
        cmd = meta.get("command")
        if isinstance(cmd, list):
            info.command = [c if isinstance(c, str) else jsonio.dumps_str(c) for c in cmd]
        kept = {k: v for k, v in meta.items() if k != "command"}
        if kept:
            info.extra["mcpsnoop"] = kept
    return Session.streaming(info, lambda: _stream(source))
