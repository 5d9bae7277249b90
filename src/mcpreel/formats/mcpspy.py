"""MCPSpy JSONL events (read): what its eBPF probes saw, one ``MCPEvent`` a line.

``{timestamp, transport_type: stdio|http|sse, stdio_transport{from_pid, from_comm, to_pid, to_comm} |
http_transport{pid, comm, host, is_request?}, type: request|response|notification, id, method, params,
result, error, request?, raw}`` (``alex-ilgayev/MCPSpy`` ``pkg/event/mcp.go``).

- The message is ``raw``, the original frame as a JSON *string* in wire key order; the lifted
  ``id``/``method``/``params``/``result``/``error`` members are Go maps (keys sorted, an error ``code``
  of 0 dropped), so they are only used when ``raw`` is absent. A ``raw`` that does not parse is kept as
  an invalid frame.
- Pairing is MCPSpy's own (a response embeds its ``request``); the model pairs by id again, so the
  embedded copy is not kept.
- Direction: ``is_request`` over HTTP (true only client -> server). Over stdio the client is the
  process that sends the first client request (or receives the first response to one): events from it
  go ``in``. When no event shows which process is the client, directions come from the methods, and
  the session's notes say so.
- Time: the absolute ``timestamp`` (nanoseconds, local offset), kept to the millisecond.
- The probe facts (pids, process names, host) are kept per record in ``extra["mcpspy"]``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpreel._infra import jsonio
from mcpreel.formats._foreign import iso_time, object_at, text_record
from mcpreel.formats._source import Source, iter_json_lines
from mcpreel.formats.jsonrpc import DirectionGuesser
from mcpreel.model import Message, Session, SessionInfo, is_server_method

NAME = "mcpspy"

_TRANSPORTS = {"stdio": "stdio", "http": "streamable-http", "sse": "sse"}
_TYPES = ("request", "response", "notification")
_LIFTED = ("id", "method", "params", "result")


def looks_like_mcpspy(obj: Any) -> bool:
    """The shape of an MCPEvent: ``transport_type`` and a message ``type`` (what sniffing checks)."""
    return type(obj) is dict and "transport_type" in obj and obj.get("type") in _TYPES


def _event(source: Source, obj: Any, line: int) -> dict[str, Any]:
    ev = object_at(source, obj, "event on line", line)
    if not looks_like_mcpspy(ev):
        raise source.fail(f"line {line} is not an MCPSpy event (needs transport_type and type "
                          "request|response|notification)", line=line)
    return ev


def _message(ev: dict[str, Any]) -> Any:
    """The frame: ``raw`` parsed, else rebuilt from the lifted members; a str when ``raw`` is not JSON."""
    raw = ev.get("raw")
    if isinstance(raw, str) and raw.strip():
        try:
            return jsonio.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return raw
    msg: dict[str, Any] = {"jsonrpc": "2.0"}
    for key in _LIFTED:
        if key in ev:
            msg[key] = ev[key]
    err = ev.get("error")
    if isinstance(err, dict) and err:
        msg["error"] = {"code": err.get("code", 0), **{k: v for k, v in err.items() if k != "code"}}
    return msg


def _probe(ev: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("transport_type", "stdio_transport", "http_transport"):
        if key in ev:
            out[key] = ev[key]
    return out


def _client_pid(source: Source) -> Any:
    """The pid of the client process over stdio, from the first event that shows it (None if none; a pid
    that is not a number or a text is none: comparing a value nested 1,000 levels deep with each event's
    recursed past the interpreter's limit, issue 40)."""
    pid = _first_pid(source)
    return pid if isinstance(pid, (int, float, str)) else None


def _first_pid(source: Source) -> Any:
    for _line, obj in iter_json_lines(source):
        if type(obj) is not dict:
            continue
        st = obj.get("stdio_transport")
        if type(st) is not dict:
            continue
        typ = obj.get("type")
        method = obj.get("method")
        if typ == "request" and isinstance(method, str):
            return st.get("to_pid") if is_server_method(method) else st.get("from_pid")
        if typ == "response":
            req = obj.get("request")
            rm = req.get("method") if type(req) is dict else None
            if isinstance(rm, str):
                return st.get("from_pid") if is_server_method(rm) else st.get("to_pid")
    return None


def _stream(source: Source, client: Any) -> Iterator[Message]:
    guess = DirectionGuesser()
    for line, obj in iter_json_lines(source):
        ev = _event(source, obj, line)
        t = iso_time(source, ev.get("timestamp"), f"line {line}: timestamp", line)
        raw = _message(ev)
        extra = {"mcpspy": _probe(ev)}
        st = ev.get("stdio_transport")
        ht = ev.get("http_transport")
        if type(ht) is dict:
            d = "in" if ht.get("is_request") is True else "out"
        elif type(st) is dict and client is not None and st.get("from_pid") is not None:
            d = "in" if st.get("from_pid") == client else "out"
        else:
            d = guess.direction(raw) if isinstance(raw, (dict, list)) else "out"
        if isinstance(raw, str):
            yield text_record(d, raw, t, line, extra=extra)
            continue
        if not isinstance(raw, (dict, list)):
            raise source.fail(f"line {line}: raw must hold a JSON-RPC object, found {jsonio.type_name(raw)}", line=line)
        yield Message(d, raw, t, source=line, extra=extra)


def read(source: Source) -> Session:
    """Read MCPSpy JSONL events of any transport as the messages they carried."""
    first = None
    for line, obj in iter_json_lines(source):
        first = _event(source, obj, line)
        break
    if first is None:
        raise source.fail("empty file: no MCPSpy events in it")
    info = SessionInfo(source_format=NAME, path=source.name, label="mcpspy", producer={"name": "mcpspy"})
    kind = first.get("transport_type")  # a text names one; anything else (a deep value: no str()) none
    info.transport = _TRANSPORTS.get(kind) if isinstance(kind, str) else None
    info.started = iso_time(source, first.get("timestamp"), "line 1: timestamp", 1)
    client = _client_pid(source) if info.transport == "stdio" else None
    if info.transport == "stdio" and client is None:
        info.notes.append("no event shows which process is the client: directions guessed from the methods")
    return Session.streaming(info, lambda: _stream(source, client))
