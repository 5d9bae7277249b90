"""JSON-RPC members and session records built by hand, shared by the operations tests (the walk, the tally):
one set of builders, so a session written in one test file reads the same in the other."""

from __future__ import annotations

from typing import Any

from mcpreel.model import Message

#: the sessions' start (epoch ms); ``c``/``s`` take a time relative to it
T0 = 1_700_000_000_000


def req(rid: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request (``params`` left out when ``None``)."""
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        out["params"] = params
    return out


def ok(rid: Any, result: dict[str, Any] | None = None) -> dict[str, Any]:
    """A result (``{}`` when none is given)."""
    return {"jsonrpc": "2.0", "id": rid, "result": result if result is not None else {}}


def err(rid: Any, code: int = -32000, message: str = "no") -> dict[str, Any]:
    """A JSON-RPC error answer."""
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def note(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A notification (``params`` left out when ``None``)."""
    out: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        out["params"] = params
    return out


def c(raw: Any, t: int = 0, **kw: Any) -> Message:
    """A client -> server record ``t`` ms into the session."""
    return Message("in", raw, t=T0 + t, **kw)


def s(raw: Any, t: int = 0, **kw: Any) -> Message:
    """A server -> client record."""
    return Message("out", raw, t=T0 + t, **kw)
