"""Small factories for the replay tests: sessions from message lists, and an in-process mock peer."""

from __future__ import annotations

import asyncio
from typing import Any

from mcpreel.clients import memory_pair
from mcpreel.mock.engine import Mock, MockOptions
from mcpreel.mock.server import serve_transport
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.operations.cassette import build
from mcpreel.replay.results import ReplayOptions, ReplayReport
from mcpreel.replay.verify import replay


def req(id_: Any, method: str, params: Any = None) -> dict[str, Any]:
    m: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        m["params"] = params
    return m


def note(method: str, params: Any = None) -> dict[str, Any]:
    m: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        m["params"] = params
    return m


def res(id_: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def err(id_: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


def text(value: str, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": is_error}


def call(id_: Any, name: str, arguments: dict[str, Any], **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta:
        params["_meta"] = meta
    return req(id_, "tools/call", params)


INIT = req(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
INIT_OK = res(1, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}})


def session(*records: tuple[str, Any] | Message, path: str = "test.jsonl") -> Session:
    """``("in", msg)`` / ``("out", msg)`` pairs (or Messages), timed 10 ms apart, line numbers from 2."""
    out = []
    for i, rec in enumerate(records):
        if isinstance(rec, Message):
            rec.source = rec.source or i + 2
            out.append(rec)
        else:
            out.append(Message(rec[0], rec[1], 1_000_000 + 10 * i, source=i + 2))
    return Session(SessionInfo(path=path, transport="stdio"), out)


def handshake() -> list[tuple[str, Any]]:
    return [("in", INIT), ("out", INIT_OK), ("in", note("notifications/initialized"))]


async def replay_against_mock(recorded: Session, served: Session | None = None, *,
                              options: ReplayOptions | None = None,
                              mock_options: MockOptions | None = None) -> tuple[ReplayReport, Mock]:
    """Replay ``recorded`` against an in-process mock of ``served`` (default: the same session)."""
    mock = Mock(build(served or recorded), mock_options)
    client, server = memory_pair()
    task = asyncio.ensure_future(serve_transport(mock, server))
    try:
        report = await replay(recorded, client, options or ReplayOptions(timeout=2, unrecorded_grace=0.05),
                              target="memory")
    finally:
        task.cancel()
    return report, mock
