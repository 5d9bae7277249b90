"""A session as the operations an evaluation format can hold: the shared half of the STS and ATIF writers.

The Hub's Session Traces Format and Harbor's ATIF both describe an agent's turns: a call with its
arguments, then what came back. Both writers read a session through the one walk
(:func:`mcpreel.operations.operations`), so a task's polls, a multi-round-trip request's rounds and a listen
stream's notifications belong to the one operation they are part of, and each format says the same thing
about them. This module turns every operation into a :class:`OpRecord` (in the order the operations
started), renders a result as the text both formats carry, and collects the tool definitions the session
listed (``tools/list``), which both formats can hold.

Both formats are for publishing: their modules say ``SHARED = True`` and :func:`mcpreel.convert.write_session`
redacts the session with the default rules of ``mcpreel redact`` before they see it (formats sit below
redaction; the verb that writes decides).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpreel._infra import jsonio
from mcpreel.model import Session
from mcpreel.operations import Operation, operations
from mcpreel.operations.facts import tool_result

__all__ = ["OpRecord", "SessionOps", "read_operations", "result_text"]


@dataclass
class OpRecord:
    """One operation as an evaluation format sees it: who asked what, and what came back."""

    n: int
    session: int
    kind: str  # request, multi-round-trip, task, listen, server-request
    method: str
    target: str | None
    dir: str  # "in": the client asked; "out": the server asked
    jsonrpc_id: Any
    params: Any
    t: int | None
    t_end: int | None
    status: str  # ok, error, isError, unanswered, ended, cancelled, ...
    code: Any = None
    message: str | None = None
    response: dict[str, Any] | None = None  # the answer that carries the outcome (a task's result)
    rounds: int = 1
    polls: int = 0
    task_id: Any = None
    task_statuses: list[str] = field(default_factory=list)
    notifications: list[str] = field(default_factory=list)  # methods of the notifications that belong to it
    server_requests: list[str] = field(default_factory=list)  # methods the server asked during it
    marks: list[str] = field(default_factory=list)

    @property
    def is_tool_call(self) -> bool:
        """A client's ``tools/call``: what both formats call a tool call."""
        return self.method == "tools/call" and self.dir == "in"

    @property
    def tool(self) -> str:
        """The tool's name (``unknown_tool`` when the call names none, as ``inspect`` counts it)."""
        return self.target or "unknown_tool"

    @property
    def arguments(self) -> dict[str, Any]:
        """A tool call's arguments (an empty object when it has none; a non-object under ``value``)."""
        params = self.params if isinstance(self.params, dict) else {}
        args = params.get("arguments")
        if args is None:
            return {}
        return args if isinstance(args, dict) else {"value": args}

    @property
    def failed(self) -> bool:
        """A JSON-RPC error or a failed tool result."""
        return self.status in ("error", "isError")

    def facts(self) -> dict[str, Any]:
        """What neither format has a member for: the MCP side of the operation (kept in an ``extra``)."""
        out: dict[str, Any] = {"method": self.method, "kind": self.kind, "status": self.status,
                               "client_session": self.session}
        if self.jsonrpc_id is not None:
            out["jsonrpc_id"] = self.jsonrpc_id
        if self.target is not None:
            out["target"] = self.target
        if self.dir == "out":
            out["initiator"] = "server"
        if self.code is not None:
            out["error_code"] = self.code
        if self.t is not None and self.t_end is not None:
            out["latency_ms"] = max(0, self.t_end - self.t)
        if self.rounds > 1:
            out["rounds"] = self.rounds
        if self.kind == "task":
            out["task_id"] = self.task_id
            out["polls"] = self.polls
            out["task_statuses"] = list(self.task_statuses)
        if self.notifications:
            out["notifications"] = list(self.notifications)
        if self.server_requests:
            out["server_requests"] = list(self.server_requests)
        if self.marks:
            out["marks"] = list(self.marks)
        return out


@dataclass
class SessionOps:
    """Every operation of a session in the order they started, and the tools it listed."""

    records: list[OpRecord]
    tools: dict[str, dict[str, Any]]  # name -> the definition the server last listed


def _record(op: Operation) -> OpRecord:
    status, code, message = op.status()
    final = op.final
    response = final.response if final is not None else None
    if op.kind == "task" and final is not None and final.role == "poll" and isinstance(response, dict):
        inner = response.get("result")
        if isinstance(inner, dict) and isinstance(inner.get("result"), dict):
            response = {"result": inner["result"]}  # the 2026-07-28 extension: the outcome rides in tasks/get
        elif isinstance(inner, dict) and inner.get("error") is not None:
            response = {"error": inner["error"]}
    opening = op.opening
    return OpRecord(
        n=op.n, session=op.session, kind=op.kind, method=op.method, target=op.target, dir=op.dir,
        jsonrpc_id=opening.id, params=opening.params, t=op.t, t_end=op.t_end, status=status, code=code,
        message=message, response=response, rounds=op.rounds, polls=op.polls, task_id=op.task_id,
        task_statuses=list(op.task_statuses),
        notifications=[str(raw.get("method")) for _, raw in op.notes if isinstance(raw, dict)],
        server_requests=[child.method for child in op.children], marks=op.marks)


def _listed(response: dict[str, Any] | None, tools: dict[str, dict[str, Any]]) -> None:
    result = response.get("result") if isinstance(response, dict) else None
    listed = result.get("tools") if isinstance(result, dict) else None
    if isinstance(listed, list):
        for tool in listed:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                tools[tool["name"]] = tool


def read_operations(session: Session) -> SessionOps:
    """Every operation of ``session`` (one walk), sorted by when it started, with the listed tools."""
    records: list[OpRecord] = []
    tools: dict[str, dict[str, Any]] = {}
    for op in operations(session):
        record = _record(op)
        records.append(record)
        if op.method == "tools/list":
            _listed(record.response, tools)
    records.sort(key=lambda r: r.n)
    return SessionOps(records, tools)


def _block_text(block: Any) -> str:
    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
        return block["text"]
    return jsonio.dumps_str(block)  # an image, audio, a resource: kept whole, as JSON


def result_text(record: OpRecord) -> str:
    """The outcome of an operation as the text both formats carry.

    A tool result: its text blocks joined by newlines (any other block as JSON; the structured content
    when there is no content), ``[isError]`` first when the tool failed. A JSON-RPC error:
    ``[error CODE] message`` and its ``data`` as JSON. Any other answer: its ``result`` as JSON. No
    answer: what became of the request (``[unanswered]``, ``[ended]``, ``[cancelled]``).
    """
    response = record.response
    if not isinstance(response, dict):
        return f"[{record.status}]"
    if response.get("error") is not None:
        error = response["error"] if isinstance(response["error"], dict) else {"message": response["error"]}
        text = f"[error {jsonio.dumps_str(error.get('code'))}] {error.get('message', '')}"
        if "data" in error:
            text += "\n" + jsonio.dumps_str(error["data"])
        return text
    if record.method != "tools/call":
        return jsonio.dumps_str(response.get("result"))
    outcome = tool_result(response)
    if outcome.result is None:
        return jsonio.dumps_str(response.get("result"))
    content = outcome.content
    if content:
        text = "\n".join(_block_text(block) for block in content)
    elif outcome.structured is not None:
        text = jsonio.dumps_str(outcome.structured)
    else:
        text = "" if isinstance(outcome.result.get("content"), list) else jsonio.dumps_str(outcome.result)
    return f"[isError] {text}" if outcome.is_error else text
