"""A recording whose every string field is one text: hostile (``peers/hostile.py``) or its harmless twin.

Server and client names and versions, instructions, tool names and descriptions, schema properties,
arguments and their keys, results and their keys, error messages and data, request ids and methods,
notifications, stderr lines, invalid frames, transport paths and data, headers (per message and for the
session), URLs, argv, the session's label, id, end reason, producer and metadata.
"""

from __future__ import annotations

from collections.abc import Callable

from mcpreel.model import Kind, Message, Session, SessionInfo

Strings = Callable[[str], str]


def hostile_session(s: Strings, side: str = "a") -> Session:
    """A handshake-era stdio session whose every string is ``s(tag)``; side ``b`` differs from ``a`` in the
    server's version, a tool's description, one result, an added tool and an added call."""
    b = side == "b"
    msgs: list[Message] = []
    t = 1_000

    def add(direction: str | None, raw, *, kind: str = Kind.MESSAGE, text: str | None = None, ctx=None) -> None:
        nonlocal t
        t += 7
        msgs.append(Message(direction, raw, t=t, kind=kind, text=text, ctx=ctx))

    def call(i, name: str, arguments: dict, answer: dict | None) -> None:
        add("in", {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": arguments}},
            ctx={"headers": {"authorization": s("header-authorization"), s("header-name"): s("header-value")}})
        if answer is not None:
            add("out", {"jsonrpc": "2.0", "id": i, **answer})

    add("in", {"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": s("client"), "version": s("client-version")}}})
    add("out", {"jsonrpc": "2.0", "id": 0, "result": {
        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "instructions": s("instructions"),
        "serverInfo": {"name": s("server"), "version": s("server-version-b" if b else "server-version")}}})
    add("in", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    add(None, None, kind=Kind.STDERR, text=s("stderr"))
    tools = [{"name": s("tool"), "description": s("description-b" if b else "description"),
              "inputSchema": {"type": "object", "properties": {s("property"): {"type": "string",
                                                                               "description": s("property-description")}}}},
             {"name": s("tool-2"), "description": s("description-2"), "inputSchema": {"type": "object"}}]
    if b:
        tools.append({"name": s("tool-3"), "description": s("description-3"), "inputSchema": {"type": "object"}})
    add("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    add("out", {"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}})
    call(2, s("tool"), {s("argument-key"): s("argument")},
         {"result": {"content": [{"type": "text", "text": s("result-b" if b else "result")}], s("result-key"): s("x")}})
    call(3, s("tool-2"), {"q": s("argument-2")},
         {"result": {"content": [{"type": "text", "text": s("is-error")}], "isError": True}})
    call(4, s("tool"), {"url": "https://example.test/?q=" + s("url-argument")},
         {"error": {"code": -32000, "message": s("error"), "data": {"detail": s("error-data")}}})
    add("out", {"jsonrpc": "2.0", "id": s("server-request-id"), "method": "sampling/createMessage",
                "params": {"messages": [{"role": "user", "content": {"type": "text", "text": s("sampling")}}]}})
    add("in", {"jsonrpc": "2.0", "id": s("server-request-id"),
               "result": {"role": "assistant", "content": {"type": "text", "text": s("sampling-answer")}}})
    add("in", {"jsonrpc": "2.0", "id": s("request-id"), "method": s("method"), "params": {"p": s("method-param")}})
    add("out", {"jsonrpc": "2.0", "id": s("request-id"), "error": {"code": -32601, "message": s("method-error")}})
    add("out", {"jsonrpc": "2.0", "method": s("notification"), "params": {"n": s("notification-param")}})
    add("out", None, kind=Kind.TRANSPORT, ctx={"method": "POST", "path": s("http-path"), "status": 401,
                                             "headers": {"www-authenticate": s("www-authenticate")},
                                             "data": s("transport-data")})
    add(None, None, kind=Kind.INVALID, text=s("invalid-frame"))
    if b:
        call(5, s("tool-3"), {"a": s("argument-3")}, {"result": {"content": [{"type": "text", "text": s("result-3")}]}})
    call(6, s("tool"), {"late": s("unanswered")}, None)  # unanswered
    info = SessionInfo(id=s("session-id"), label=s("label"), transport="stdio", command=["server", s("argv")],
                       url="http://127.0.0.1:1/" + s("url"), end_reason=s("end-reason"),
                       producer={"name": s("producer"), "version": s("producer-version")},
                       headers={s("session-header"): s("session-header-value")},
                       metadata={s("metadata-key"): s("metadata")})
    return Session(info, msgs)
