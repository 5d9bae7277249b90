"""The Hugging Face Hub's Session Traces Format (write): ``huggingface/hub-docs`` ``docs/hub/session-traces-format.md``.

STS ("Session Trace Simple Format") is JSONL: one ``session`` line (``type``, ``harness``, ``id`` required;
``name`` and any other metadata optional), then one ``message`` envelope a line, ``{"type": "message",
"message": {role, content, ...}}``, where ``role`` is ``user``/``assistant``/``system``/``tool`` and
``content`` is text (required, may be empty). An assistant message carries ``toolCalls`` (``[{id,
function: {name, arguments}}]``, ``arguments`` a JSON *string*); a ``tool`` message answers one with its
``toolCallId``; ``timestamp`` is epoch milliseconds. The Hub's trace viewer renders it.

What mcpreel writes, from the one reading of a session (:mod:`mcpreel.formats._tool_ops`):

- the header: ``harness: "mcpreel"`` (our own identifier), the session's id, its label as ``name``, and an
  ``mcpreel`` member (allowed: extra header metadata is ignored by the Hub) with the server, the transport,
  the source format and the counts of operations, tasks, polls, rounds and listen streams;
- each client ``tools/call`` operation: an assistant message whose one tool call has the call's arguments
  (as a JSON string) at the call's time, then a ``tool`` message with its ``toolCallId`` and the result as
  text at the answer's time (:func:`~mcpreel.formats._tool_ops.result_text`: ``[isError]`` or ``[error
  CODE]`` first when it failed). A task is one call whatever its polls; a multi-round-trip request one call
  whatever its rounds;
- every other operation (``initialize``, ``tools/list``, ``resources/read``, a listen stream, a server's
  request): a ``system`` message ``method target`` and its answer as JSON, so the viewer shows the whole
  session in order.

Loses: directions beyond the roles, the transport context, JSON-RPC ids, notifications (counted on the
operation's line only), stderr and everything that is not an operation. Redacted by default: ``SHARED``
makes :func:`mcpreel.convert.write_session` apply the rules of ``mcpreel redact`` (the format publishes sessions).
"""

from __future__ import annotations

from typing import Any, BinaryIO

from mcpreel._infra import jsonio
from mcpreel.formats._identity import session_document_id
from mcpreel.formats._tool_ops import OpRecord, SessionOps, read_operations, result_text
from mcpreel.model import Session

__all__ = ["HARNESS", "KEEPS", "LOSSES", "SHARED", "write"]

#: the ``harness`` identifier of a trace mcpreel wrote (the header's required member)
HARNESS = "mcpreel"
#: a format for publishing: :func:`mcpreel.convert.write_session` redacts what it is given
SHARED = True
KEEPS: frozenset[str] = frozenset({"time", "header", "direction"})
LOSSES = "JSON-RPC ids, notifications, transport context and stderr (tool calls and results are kept)"


def _summary(ops: SessionOps) -> dict[str, Any]:
    records = ops.records
    return {
        "operations": len(records),
        "tool_calls": sum(1 for r in records if r.is_tool_call),
        "failed": sum(1 for r in records if r.failed),
        "tasks": sum(1 for r in records if r.kind == "task"),
        "task_polls": sum(r.polls for r in records),
        "multi_round_trip": sum(1 for r in records if r.kind == "multi-round-trip"),
        "listen_streams": sum(1 for r in records if r.kind == "listen"),
    }


def header(session: Session, ops: SessionOps) -> dict[str, Any]:
    """The first line: the required ``type``/``harness``/``id``, a ``name``, and mcpreel's own metadata."""
    info = session.info
    line: dict[str, Any] = {"type": "session", "harness": HARNESS, "id": session_document_id(info)}
    if info.label:
        line["name"] = info.label
    meta: dict[str, Any] = {"summary": _summary(ops)}
    for key, value in (("transport", info.transport), ("source_format", info.source_format),
                       ("url", info.url), ("started", info.started), ("ended", info.ended)):
        if value is not None:
            meta[key] = value
    if info.command:
        meta["command"] = list(info.command)
    if ops.tools:
        meta["tools"] = sorted(ops.tools)
    line["mcpreel"] = meta
    return line


def call_id(record: OpRecord) -> str:
    """The tool call's id: unique in the file (JSON-RPC ids repeat across client sessions and over time)."""
    return f"call-{record.n + 1}"


def _message(message: dict[str, Any], t: int | None) -> bytes:
    if t is not None:
        message["timestamp"] = t
    return jsonio.dumps({"type": "message", "message": message}) + b"\n"


def lines(session: Session, ops: SessionOps) -> list[bytes]:
    """Every line of the trace, header first."""
    out = [jsonio.dumps(header(session, ops)) + b"\n"]
    for record in ops.records:
        if record.is_tool_call:
            cid = call_id(record)
            call = {"id": cid, "function": {"name": record.tool, "arguments": jsonio.dumps_str(record.arguments)}}
            out.append(_message({"role": "assistant", "content": "", "toolCalls": [call]}, record.t))
            out.append(_message({"role": "tool", "toolCallId": cid, "content": result_text(record)},
                                record.t_end if record.t_end is not None else record.t))
            continue
        what = f"{record.method} {record.target}" if record.target else record.method
        if record.dir == "out":
            what = f"server asked: {what}"
        out.append(_message({"role": "system", "content": f"{what}\n{result_text(record)}"}, record.t))
    return out


def losses(ops: SessionOps) -> list[str]:
    """What of this session's operations the trace cannot hold, in words (for ``convert``'s warning)."""
    notes = sum(len(r.notifications) for r in ops.records)
    others = sum(1 for r in ops.records if not r.is_tool_call)
    out = []
    if notes:
        out.append(f"{notes} notification{'s' if notes != 1 else ''} of operations (progress, task status, a listen "
                   "stream's changes)")
    if others:
        out.append(f"the structure of {others} operation{'s' if others != 1 else ''} that are not tool calls "
                   "(written as system messages)")
    return out


def write(session: Session, out: BinaryIO, **_: Any) -> list[str]:
    """Write ``session`` as an STS trace; returns what it could not hold (``SHARED``: ``convert`` redacts first)."""
    ops = read_operations(session)
    for line in lines(session, ops):
        out.write(line)
    return losses(ops)
