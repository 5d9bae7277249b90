"""Harbor's Agent Trajectory Interchange Format (write): RFC 0001 ``docs/rfcs/0001-trajectory-format.md``.

One JSON document: ``schema_version``, ``session_id``, ``agent`` (``name``, ``version``, optional
``model_name``, ``tool_definitions`` since v1.5, ``extra``), ``steps`` (at least one; ``step_id`` 1, 2, …,
``source`` ``system``/``user``/``agent``, ``message`` required but may be empty, ``timestamp`` ISO 8601,
``tool_calls`` ``[{tool_call_id, function_name, arguments}]`` on agent steps only, ``observation``
``{results: [{source_call_id?, content?}]}`` whose ``source_call_id`` names a call of the same step,
``extra``), ``notes``, ``final_metrics``, ``extra``. mcpreel writes ``ATIF-v1.5`` (the first version with
``tool_definitions``) and nothing a v1.5 reader does not know.

From the one reading of a session (:mod:`mcpreel.formats._tool_ops`), **one step per operation**, in the
order they started:

- a client's ``tools/call``: an ``agent`` step with its one tool call (the arguments as an object) and an
  observation whose result names the call and carries the result as text
  (:func:`~mcpreel.formats._tool_ops.result_text`);
- any other client operation: an ``agent`` step whose message is ``method target`` and whose observation
  carries the answer (no ``source_call_id``: not a tool call); a server's own request: a ``system`` step;
- what ATIF has no member for goes to the step's ``extra["mcp"]``: the method, JSON-RPC id, client session,
  status and error code, latency, a task's id, polls and statuses, a multi-round-trip request's rounds,
  the notifications that belonged to the operation (a listen stream's changes), the server requests it
  caused, the control channel's marks, and the whole answer (``answer``), so no result is lost to the text.

The agent is the MCP client (its ``clientInfo``; ``mcp-client`` when the session never said), the tools
are the ones the server listed (OpenAI's function shape, as the RFC asks). Redacted by default: ``SHARED``
makes :func:`mcpreel.convert.write_session` apply the rules of ``mcpreel redact`` (the format is for sharing).
"""

from __future__ import annotations

from typing import Any, BinaryIO

from mcpreel._infra import jsonio
from mcpreel._infra.timeutil import iso_from_ms
from mcpreel._version import __version__
from mcpreel.formats._identity import session_document_id
from mcpreel.formats._tool_ops import OpRecord, SessionOps, read_operations, result_text
from mcpreel.model import Session
from mcpreel.operations.facts import META_CLIENT_INFO, META_SERVER_INFO

__all__ = ["KEEPS", "LOSSES", "SCHEMA_VERSION", "SHARED", "trajectory", "write"]

SCHEMA_VERSION = "ATIF-v1.5"
#: a format for publishing: :func:`mcpreel.convert.write_session` redacts what it is given
SHARED = True
KEEPS: frozenset[str] = frozenset({"time", "header", "direction"})
LOSSES = "transport context, stderr and messages outside operations (tool calls, results and operations are kept)"


def _client(ops: SessionOps) -> tuple[str, str]:
    """The MCP client's name and version, from the first ``initialize`` (or a 2026 request's ``_meta``)."""
    for record in ops.records:
        params = record.params if isinstance(record.params, dict) else {}
        info = params.get("clientInfo") if record.method == "initialize" else None
        if info is None:
            meta = params.get("_meta")
            info = meta.get(META_CLIENT_INFO) if isinstance(meta, dict) else None
        if isinstance(info, dict) and isinstance(info.get("name"), str) and info["name"]:
            version = info.get("version")
            return info["name"], version if isinstance(version, str) and version else "unknown"
    return "mcp-client", "unknown"


def _server(ops: SessionOps) -> dict[str, Any] | None:
    """The server's ``serverInfo``: the ``initialize`` result's, else a 2026-07-28 result's ``_meta`` one."""
    for record in ops.records:
        result = record.response.get("result") if isinstance(record.response, dict) else None
        if not isinstance(result, dict):
            continue
        if record.method == "initialize" and isinstance(result.get("serverInfo"), dict):
            return result["serverInfo"]
        meta = result.get("_meta")
        if isinstance(meta, dict) and isinstance(meta.get(META_SERVER_INFO), dict):
            return meta[META_SERVER_INFO]
    return None


def tool_definition(tool: dict[str, Any]) -> dict[str, Any]:
    """An MCP tool definition in OpenAI's function-calling shape (what ATIF's ``tool_definitions`` holds)."""
    function: dict[str, Any] = {"name": tool["name"]}
    if isinstance(tool.get("description"), str):
        function["description"] = tool["description"]
    schema = tool.get("inputSchema")
    function["parameters"] = schema if isinstance(schema, dict) else {"type": "object"}
    return {"type": "function", "function": function}


def _step(step_id: int, record: OpRecord) -> dict[str, Any]:
    step: dict[str, Any] = {"step_id": step_id}
    if record.t is not None:
        step["timestamp"] = iso_from_ms(record.t)
    mcp = record.facts()
    if record.t_end is not None:
        mcp["answered_at"] = iso_from_ms(record.t_end)
    if record.response is not None:
        mcp["answer"] = record.response
    text = result_text(record)
    if record.is_tool_call:
        cid = f"call-{record.n + 1}"
        step.update(source="agent", message="",
                    tool_calls=[{"tool_call_id": cid, "function_name": record.tool, "arguments": record.arguments}],
                    observation={"results": [{"source_call_id": cid, "content": text}]})
    else:
        what = f"{record.method} {record.target}" if record.target else record.method
        if record.method != "tools/call":
            mcp["params"] = record.params
        step.update(source="system" if record.dir == "out" else "agent", message=what,
                    observation={"results": [{"content": text}]})
    step["extra"] = {"mcp": mcp}
    return step


def trajectory(session: Session, ops: SessionOps) -> dict[str, Any]:
    """The whole document (a dict), from a session and its operations."""
    info = session.info
    name, version = _client(ops)
    agent: dict[str, Any] = {"name": name, "version": version}
    if ops.tools:
        agent["tool_definitions"] = [tool_definition(ops.tools[key]) for key in sorted(ops.tools)]
    server = _server(ops)
    agent["extra"] = {"role": "MCP client", **({"server": server} if server else {})}
    steps = [_step(i, record) for i, record in enumerate(ops.records, start=1)]
    if not steps:
        steps = [{"step_id": 1, "source": "system", "message": "the session holds no MCP operation"}]
    meta: dict[str, Any] = {"recorded_by": "mcpreel", "mcpreel_version": __version__}
    for key, value in (("label", info.label), ("transport", info.transport), ("source_format", info.source_format),
                       ("url", info.url)):
        if value is not None:
            meta[key] = value
    if info.started is not None:
        meta["started"] = iso_from_ms(info.started)
    if info.ended is not None:
        meta["ended"] = iso_from_ms(info.ended)
    if info.command:
        meta["command"] = list(info.command)
    return {
        "schema_version": SCHEMA_VERSION,
        "session_id": session_document_id(info),
        "agent": agent,
        "steps": steps,
        "notes": "Written by mcpreel from a recorded MCP session: one step per MCP operation (a tool call with its "
                 "result; a task with its polls and a multi-round-trip request with its rounds are one step); the "
                 "MCP facts of each step are in its extra.mcp.",
        "final_metrics": {"total_steps": len(steps)},
        "extra": {"mcpreel": meta},
    }


def write(session: Session, out: BinaryIO, **_: Any) -> list[str]:
    """Write ``session`` as one ATIF trajectory (``SHARED``: ``convert`` redacts it first); nothing more is lost."""
    ops = read_operations(session)
    out.write(jsonio.dumps_indented(trajectory(session, ops)) + b"\n")
    return []
