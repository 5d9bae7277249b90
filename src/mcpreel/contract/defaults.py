"""The MCP spec's defaults of a definition, so that a default spelled out is not a change.

A server that starts writing ``execution: {taskSupport: "forbidden"}`` or ``annotations: {destructiveHint:
true}`` promises what it promised before, when it left them out: the spec gives those values to an absent
member. Every comparison of definitions (``contract``, ``diff``) reads a definition through
:func:`effective_tool`, which drops the members that only restate a default, so the same offer compares
equal however it is spelled (issue 34: server-memory's upgrade added the forbidden task support to its 9
tools and was judged "dangerous" 9 times).

The defaults, as the spec's schema states them (``Tool.annotations``: ``ToolAnnotations``; ``Tool.execution``:
``ToolExecution``, 2025-11-25 and later):

- ``readOnlyHint`` false, ``destructiveHint`` true, ``idempotentHint`` false, ``openWorldHint`` true;
- ``execution.taskSupport`` ``"forbidden"``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ANNOTATION_DEFAULTS", "EXECUTION_DEFAULTS", "effective_tool"]

#: a tool annotation -> the value the spec gives it when absent
ANNOTATION_DEFAULTS: dict[str, bool] = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}
#: a member of ``Tool.execution`` -> the value the spec gives it when absent
EXECUTION_DEFAULTS: dict[str, str] = {"taskSupport": "forbidden"}


def _without_defaults(value: Any, defaults: dict[str, Any]) -> Any:
    """``value`` without the members equal to their default (same JSON type: ``1`` is not ``true``)."""
    if not isinstance(value, dict):
        return value
    return {k: v for k, v in value.items()
            if not (k in defaults and type(v) is type(defaults[k]) and v == defaults[k])}


def effective_tool(tool: Any) -> Any:
    """``tool`` as it compares: an annotation or ``execution`` member that only restates the spec's default is
    dropped, and an ``annotations`` or ``execution`` object left empty by that is dropped too (absent and empty
    say the same). Anything that is not a dict, and any other member, is returned as it is."""
    if not isinstance(tool, dict):
        return tool
    out = dict(tool)
    for key, defaults in (("annotations", ANNOTATION_DEFAULTS), ("execution", EXECUTION_DEFAULTS)):
        if key not in out:
            continue
        trimmed = _without_defaults(out[key], defaults)
        if trimmed == {}:
            del out[key]
        else:
            out[key] = trimmed
    return out
