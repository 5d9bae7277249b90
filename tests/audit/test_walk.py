"""``audit`` and ``contract`` read the session through the one walk (:mod:`mcpreel.operations`): answers
pair with their requests within a client session, and a task's result is its tool call's result."""

from __future__ import annotations

from typing import Any

from mcpreel.audit import audit_session, builtin_rules
from mcpreel.contract.snapshot import from_session
from mcpreel.model import Message, Session, SessionInfo

SECRET = "HOME=/root\nGITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyz"


def _http(sid: str | None, exchange: int) -> dict[str, Any]:
    ctx: dict[str, Any] = {"exchange": exchange}
    if sid is not None:
        ctx["headers"] = {"mcp-session-id": sid}
    return ctx


def _two_clients(first: tuple[str, dict[str, Any]], second: tuple[str, dict[str, Any]],
                 first_result: dict[str, Any], second_result: dict[str, Any]) -> Session:
    """Two HTTP client sessions that both use id 1; the second's answer comes first."""
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c"}}
    msgs = []
    for sid, ex in (("A", 1), ("B", 2)):
        msgs.append(Message("in", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}, ctx=_http(None, ex)))
        msgs.append(Message("out", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18"}},
                            ctx=_http(sid, ex)))
    msgs += [
        Message("in", {"jsonrpc": "2.0", "id": 1, "method": first[0], "params": first[1]}, ctx=_http("A", 3)),
        Message("in", {"jsonrpc": "2.0", "id": 1, "method": second[0], "params": second[1]}, ctx=_http("B", 4)),
        Message("out", {"jsonrpc": "2.0", "id": 1, "result": second_result}, ctx=_http("B", 4)),
        Message("out", {"jsonrpc": "2.0", "id": 1, "result": first_result}, ctx=_http("A", 3)),
    ]
    return Session(SessionInfo(transport="streamable-http"), msgs)


def test_contract_pairs_each_list_answer_with_its_own_sessions_request():
    tools = {"tools": [{"name": "search", "inputSchema": {"type": "object"}}]}
    prompts = {"prompts": [{"name": "greet"}]}
    c = from_session(_two_clients(("tools/list", {}), ("prompts/list", {}), tools, prompts))
    assert set(c.tools) == {"search"} and set(c.prompts) == {"greet"}


def test_audit_pairs_each_answer_with_its_own_sessions_request():
    # A lists tools, B calls one whose answer leaks a token: the leak is a tool result, not a tool list
    listed = {"tools": [{"name": "env", "description": "Read settings.", "inputSchema": {"type": "object"},
                         "annotations": {"readOnlyHint": True}}]}
    leak = {"content": [{"type": "text", "text": SECRET}]}
    report = audit_session(_two_clients(("tools/list", {}), ("tools/call", {"name": "env", "arguments": {}}),
                                        listed, leak), builtin_rules())
    assert report.tools_seen == 1 and report.calls_seen == 1
    assert any(f.path.startswith("/calls/env/result") for f in report.findings), report.findings


def test_audit_reads_a_tasks_result_as_its_tool_calls_result():
    task = {"taskId": "T1", "status": "working"}
    msgs = [
        Message("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "env", "arguments": {}, "task": {"ttl": 60000}}}),
        Message("out", {"jsonrpc": "2.0", "id": 1, "result": {"task": task}}),
        Message("in", {"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {"taskId": "T1"}}),
        Message("out", {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": SECRET}]}}),
    ]
    report = audit_session(Session(SessionInfo(), msgs), builtin_rules())
    assert any(f.path.startswith("/calls/env/result") for f in report.findings), report.findings
