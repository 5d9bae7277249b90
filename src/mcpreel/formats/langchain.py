"""LangChain / LangSmith tool runs (read): each tool run becomes one ``tools/call`` request and its answer.

Two shapes:

- seed 001's preview: ``{"runs": [{"id", "name", "inputs": {"tool", "tool_input"}, "outputs": {"output"}}]}``;
- exported LangSmith runs (``{"runs": [...]}`` or a bare array): ``run_type``, ``name``, ``inputs``,
  ``outputs``, ``error``, ``start_time``, ``end_time``, nested ``child_runs``.

Mapping: the tool name is ``inputs.tool``, else the run's ``name``; the arguments are
``inputs.tool_input``, else the run's ``inputs`` (a lone ``input`` holding a JSON object is unwrapped);
the result is ``outputs.output`` (a serialized LangChain ``ToolMessage`` gives its ``content``), else
``outputs``. A run with ``error`` becomes a JSON-RPC error response (code -32603, the error text as
message). A run with neither outputs nor error was never answered. The JSON-RPC id is the run's id.
Runs that are not tool runs (``llm``, ``chain``, ...) are skipped and counted in the session's notes;
child runs are read depth first. When every run has a ``start_time``, messages are put in time order.
"""

from __future__ import annotations

from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.timeutil import ms_from_any
from mcpreel.formats._source import Source
from mcpreel.model import Message, Session, SessionInfo

NAME = "langchain"

#: the JSON-RPC error code of a failed run (the MCP SDKs' "internal error" for a failing tool)
ERROR_CODE = -32603


def _runs(source: Source, doc: Any) -> list[Any]:
    if isinstance(doc, dict):
        runs = doc.get("runs")
        if not isinstance(runs, list):
            raise source.fail('expected {"runs": [...]} or an array of LangSmith runs')
        return runs
    if isinstance(doc, list):
        return doc
    raise source.fail(f"expected LangChain runs, found {jsonio.type_name(doc)}")


def _flatten(runs: list[Any], source: Source, path: str = "run") -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for i, run in enumerate(runs):
        where = f"{path} {i + 1}"
        if not isinstance(run, dict):
            raise source.fail(f"{where} must be a JSON object, found {jsonio.type_name(run)}", line=i + 1 if path == "run" else None)
        out.append((where, run))
        children = run.get("child_runs")
        if isinstance(children, list) and children:
            out.extend(_flatten(children, source, f"{where} child"))
    return out


def _unwrap_output(value: Any) -> Any:
    # a serialized langchain_core ToolMessage: {"lc":1,"type":"constructor","id":[..., "ToolMessage"],"kwargs":{...}}
    if isinstance(value, dict) and value.get("type") == "constructor" and isinstance(value.get("kwargs"), dict):
        kwargs = value["kwargs"]
        if "content" in kwargs:
            return kwargs["content"]
    return value


def _arguments(inputs: dict[str, Any]) -> Any:
    if "tool_input" in inputs:
        return inputs["tool_input"]
    if set(inputs) == {"input"}:
        value = inputs["input"]
        if isinstance(value, dict):
            return value
        if isinstance(value, str) and value.lstrip().startswith("{"):
            try:
                parsed = jsonio.loads(value)
            except (ValueError, UnicodeDecodeError):
                return inputs
            if isinstance(parsed, dict):
                return parsed
    return inputs


def read(source: Source) -> Session:
    """Read LangChain / LangSmith runs as the tool calls they made (other runs are counted and skipped, and the notes
    say so)."""
    doc = source.document()
    runs = _flatten(_runs(source, doc), source)
    info = SessionInfo(source_format=NAME, path=source.name, label="langchain")
    skipped: dict[str, int] = {}
    pairs: list[tuple[int | None, int, Message, Message | None]] = []
    seen_ids: set[str] = set()
    for n, (where, run) in enumerate(runs, start=1):
        run_type = run.get("run_type")
        if run_type is not None and run_type != "tool":
            key = str(run_type)
            skipped[key] = skipped.get(key, 0) + 1
            continue
        inputs = run.get("inputs")
        if inputs is None:
            inputs = {}
        if not isinstance(inputs, dict):
            raise source.fail(f"{where}: inputs must be an object, found {jsonio.type_name(inputs)}", line=n)
        name = inputs.get("tool") if isinstance(inputs.get("tool"), str) else run.get("name")
        if not isinstance(name, str):
            raise source.fail(f"{where}: a tool run needs a name (inputs.tool or name)", line=n)
        rid = run.get("id")
        rid = rid if isinstance(rid, str) and rid else (str(rid) if isinstance(rid, int) and not isinstance(rid, bool) else f"run-{n}")
        if rid in seen_ids:
            rid = f"{rid}#{n}"
        seen_ids.add(rid)
        start = ms_from_any(run.get("start_time"))
        end = ms_from_any(run.get("end_time"))
        request = Message("in", {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                 "params": {"name": name, "arguments": _arguments(inputs)}}, start, source=n)
        response = None
        error = run.get("error")
        outputs = run.get("outputs")
        rt = end if end is not None else start
        if rt is not None and start is not None and rt < start:
            rt = start
        if error not in (None, ""):
            text = error if isinstance(error, str) else jsonio.dumps_str(error)
            response = Message("out", {"jsonrpc": "2.0", "id": rid, "error": {"code": ERROR_CODE, "message": text}}, rt, source=n)
        elif outputs is not None:
            result = outputs.get("output") if isinstance(outputs, dict) and "output" in outputs else outputs
            response = Message("out", {"jsonrpc": "2.0", "id": rid, "result": _unwrap_output(result)}, rt, source=n)
        pairs.append((start, n, request, response))
    if skipped:
        kinds = ", ".join(f"{v} {k}" for k, v in sorted(skipped.items()))
        info.notes.append(f"skipped runs that are not tool runs: {kinds}")
    if not pairs:
        info.notes.append("this file holds no tool runs, so no MCP messages")
    messages: list[Message] = []
    if pairs and all(p[0] is not None for p in pairs):
        timed = [(m.t, i, m) for i, p in enumerate(pairs) for m in (p[2], p[3]) if m is not None]
        timed.sort(key=lambda x: (x[0], x[1], x[2].dir != "in"))
        messages = [m for _, _, m in timed]
        info.started = messages[0].t
        info.ended = max(m.t for m in messages if m.t is not None)
    else:
        for _, _, req, resp in pairs:
            messages.append(req)
            if resp is not None:
                messages.append(resp)
    return Session(info, messages)
