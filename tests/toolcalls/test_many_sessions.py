"""`import` of a file of many client sessions (issue 24, finding 3): ids are one client session's own.

The trace contract refuses two ``tools/call`` requests with one id "in one transcript"; a transcript is one
client session (the one reading's split: a merged file's source, an HTTP session, a new ``initialize`` or
``server/discover``). A proxy that recorded many clients, or a client that starts its server per call, numbers
its ids again in each session, and that is no duplicate.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcpreel.errors import InputError
from mcpreel.toolcalls.importer import import_session
from tests.record.http.helpers import ThreadServer, proxy, sdk_server

T0 = "2026-01-01T00:00:00.{:03d}Z"


def _reel(path: Path, lines: list[dict[str, Any]], transport: str = "stdio") -> Path:
    head = {"v": 1, "type": "meta", "startedAt": T0.format(0), "transport": transport}
    path.write_text("\n".join(json.dumps(x) for x in [head, *lines]) + "\n")
    return path


def _line(n: int, d: str, raw: dict[str, Any], sid: str | None = None) -> dict[str, Any]:
    line: dict[str, Any] = {"t": T0.format(n), "dir": d, "raw": raw}
    if sid is not None:
        line["ctx"] = {"method": "POST", "path": "/mcp", "headers": {"mcp-session-id": sid}}
    return line


INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}
INIT_OK = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {},
                                                 "serverInfo": {"name": "s", "version": "1"}}}


def _call(i: int, name: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": {}}}


def _ok(i: int, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": text}]}}


def _trace(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_a_session_per_call_reel_imports_every_call(tmp_path):
    """langchain-mcp-adapters' way: a stdio server started per tool call, each session's call is id 1."""
    lines = []
    for k, name in enumerate(["add", "mul", "add"]):
        n = 10 * k
        lines += [_line(n, "in", INIT), _line(n + 1, "out", INIT_OK), _line(n + 2, "in", _call(1, name)),
                  _line(n + 3, "out", _ok(1, f"{name}-{k}"))]
    report, _, out = import_session(_reel(tmp_path / "per-call.jsonl", lines), tmp_path / "t.jsonl")
    assert (report.tool_calls, report.answered, report.unanswered, report.orphans) == (3, 3, 0, 0)
    results = [e for e in _trace(out) if e.get("type") == "tool_result" or "result" in json.dumps(e)]
    assert results, "the trace holds the three results"
    text = out.read_text()
    assert all(f"{n}-{k}" in text for k, n in enumerate(["add", "mul", "add"]))


def test_two_http_sessions_interleaved_with_the_same_ids(tmp_path):
    lines = [_line(0, "in", INIT), _line(1, "out", INIT_OK, "A"), _line(2, "in", INIT), _line(3, "out", INIT_OK, "B"),
             _line(4, "in", _call(1, "a"), "A"), _line(5, "in", _call(1, "b"), "B"),
             _line(6, "out", _ok(1, "from-b"), "B"), _line(7, "out", _ok(1, "from-a"), "A")]
    report, _, out = import_session(_reel(tmp_path / "two.jsonl", lines, "streamable-http"), tmp_path / "t.jsonl")
    assert (report.tool_calls, report.answered, report.orphans) == (2, 2, 0)
    events = out.read_text()
    # each answer went to its own session's call
    assert events.index("from-a") > events.index('"a"') and "from-b" in events


def test_a_duplicate_within_one_session_is_still_refused(tmp_path):
    lines = [_line(0, "in", INIT), _line(1, "out", INIT_OK), _line(2, "in", _call(1, "a")), _line(3, "out", _ok(1, "x")),
             _line(4, "in", _call(1, "b"))]
    with pytest.raises(InputError, match=r'duplicate tools/call request id "1" at source line 6'):
        import_session(_reel(tmp_path / "dup.jsonl", lines), tmp_path / "t.jsonl")


@pytest.mark.e2e
def test_two_real_sdk_clients_through_one_http_proxy_and_its_envelope(tmp_path):
    """Two SDK clients (the 2026-07-28 default and mode="legacy") through one `mcpreel record` proxy: the
    reel and the recorder's own --envelope both import, every call answered."""

    async def drive(url: str) -> None:
        for mode in ("auto", "legacy"):
            async with Client(url, mode=mode) as c:  # type: ignore[arg-type]
                await c.call_tool("echo", {"text": f"{mode}-1"})
                await c.call_tool("echo", {"text": f"{mode}-2"})

    with ThreadServer(sdk_server().streamable_http_app()) as srv:
        with proxy("streamable-http", srv.url("/mcp"), tmp_path, envelope=True) as run:
            asyncio.run(asyncio.wait_for(drive(run.url), 60))
    for path in (tmp_path / "s.jsonl", tmp_path / "s.envelope.json"):
        report, _, out = import_session(path, tmp_path / f"{path.name}.trace.jsonl")
        assert (report.tool_calls, report.answered, report.orphans) == (4, 4, 0), path
        text = out.read_text()
        assert all(f"{m}-{i}" in text for m in ("auto", "legacy") for i in (1, 2))
