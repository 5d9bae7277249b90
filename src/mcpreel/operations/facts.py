"""The MCP facts a reader of a session asks of one JSON-RPC message: plain functions, no state.

Every verb names things the same way because they all ask here: the target of a request (the tool,
prompt or resource), the status of an answer, the progress token, the task a message belongs to (both
Tasks forms: the 2025-11-25 utility and the 2026-07-28 extension), the ``subscriptions/listen`` stream a
notification is tagged with, the ``requestState`` of a multi-round-trip request, and the era markers in
``_meta``.
"""

from __future__ import annotations

from typing import Any

from mcpreel.model import SCOPE_KEY, Message

__all__ = [
    "LISTEN",
    "META_CLIENT_INFO",
    "META_PROTOCOL_VERSION",
    "META_RELATED_TASK",
    "META_SERVER_INFO",
    "META_SUBSCRIPTION_ID",
    "TASK_METHODS",
    "TERMINAL_TASK_STATUSES",
    "FAILED",
    "created_task",
    "is_era_probe_refusal",
    "first_text",
    "info_name",
    "mcp_session_id",
    "origin_of",
    "progress_token",
    "related_task",
    "request_state",
    "status_of",
    "subject",
    "subscription_of",
    "target_of",
    "task_id_param",
    "task_status_of",
]

ORIGIN_KEY = SCOPE_KEY  # where merged records name the file they came from (mcpreel.merge)
META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
#: the listen request's id, on every notification its stream carries (2026-07-28, SEP-2575)
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
#: the task a message is about (2025-11-25 Tasks: progress, status, server requests of a task)
META_RELATED_TASK = "io.modelcontextprotocol/related-task"

LISTEN = "subscriptions/listen"
#: requests about a task that already exists (both forms); ``tasks/list`` names no task
TASK_METHODS = frozenset({"tasks/get", "tasks/result", "tasks/cancel", "tasks/update"})
TERMINAL_TASK_STATUSES = frozenset({"completed", "failed", "cancelled"})

#: methods whose target is ``params.name`` / ``params.uri`` (the ``{target}`` of a span name)
_NAMED = frozenset({"tools/call", "prompts/get"})
_URI = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})


def _params(message: dict[str, Any]) -> dict[str, Any] | None:
    params = message.get("params")
    return params if type(params) is dict else None


def _meta(params: dict[str, Any] | None) -> dict[str, Any] | None:
    if params is None:
        return None
    meta = params.get("_meta")
    return meta if type(meta) is dict else None


def _id_value(value: Any) -> str | int | None:
    """A task or subscription id as a key: strings and integers only (what the specs allow)."""
    t = type(value)
    return value if t is str or t is int else None


def target_of(method: str | None, params: Any) -> str | None:
    """The tool or prompt name, or the resource URI, a request is about (None when it has none)."""
    if not isinstance(params, dict) or method is None:
        return None
    if method in _NAMED:
        name = params.get("name")
        return name if isinstance(name, str) else None
    if method in _URI:
        uri = params.get("uri")
        return uri if isinstance(uri, str) else None
    return None


def subject(message: dict[str, Any]) -> str | None:
    """What a request is about, for tables: the tool, prompt or resource it names (any method)."""
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    for key in ("name", "uri", "ref"):
        value = params.get(key)
        if isinstance(value, str):
            return value
    return None


def first_text(result: dict[str, Any]) -> str | None:
    """The first text block of a result's ``content`` (a failed tool's message)."""
    content = result.get("content")
    if isinstance(content, list):
        for item in content:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                return item["text"]
    return None


def status_of(response: dict[str, Any] | None) -> tuple[str, Any, str | None]:
    """(status, code, message) of a response: ``ok``, ``error`` (JSON-RPC), ``isError`` (a failed tool
    result), ``input_required`` (a 2026-07-28 multi-round-trip result), ``task`` (a task was created: the
    answer is a handle, not the result) or ``unanswered`` (no response)."""
    if response is None:
        return "unanswered", None, None
    error = response.get("error")
    if error is not None:
        err = error if isinstance(error, dict) else {"message": error}
        message = err.get("message")
        return "error", err.get("code"), message if isinstance(message, str) else None
    result = response.get("result")
    if isinstance(result, dict):
        if result.get("isError") is True:
            return "isError", None, first_text(result)
        result_type = result.get("resultType")
        if result_type == "input_required":
            return "input_required", None, None
        if created_task(response) is not None:
            return "task", None, None
    return "ok", None, None


#: the statuses that count as a failed operation in every verb (a JSON-RPC error, a failed tool result)
FAILED = frozenset({"error", "isError"})
def is_era_probe_refusal(method: str, response: dict[str, Any] | None) -> bool:
    """A ``server/discover`` answered with an error: the probe a 2026 client sends first and falls back from
    (to ``initialize``), whatever the refusal says (``-32601`` over stdio; the TypeScript SDK's HTTP 400
    ``-32000 Server not initialized``, ``id: null``). A client falls back on any of them, so it is how the
    eras meet, not a failure: no verb counts it as an error or paints it red."""
    if method != "server/discover" or response is None:
        return False
    return response.get("error") is not None


def info_name(info: Any) -> str | None:
    """``name version`` of a ``clientInfo``/``serverInfo`` object (None when it names nothing)."""
    if not isinstance(info, dict) or not isinstance(info.get("name"), str) or not info["name"]:
        return None
    version = info.get("version")
    return f"{info['name']} {version}" if isinstance(version, str) and version else info["name"]


def progress_token(message: dict[str, Any]) -> Any:
    """The ``params._meta.progressToken`` of a request, or None."""
    meta = _meta(_params(message))
    return meta.get("progressToken") if meta is not None else None


def request_state(message: dict[str, Any]) -> str | None:
    """The ``requestState`` a multi-round-trip retry carries in its params (2026-07-28), or None."""
    params = _params(message)
    state = params.get("requestState") if params is not None else None
    return state if isinstance(state, str) else None


def created_task(response: dict[str, Any]) -> str | int | None:
    """The task id a response creates, or None: a 2025-11-25 ``CreateTaskResult`` (``result.task.taskId``)
    or a 2026-07-28 extension result (``resultType: "task"``, the task in ``result.task`` or flat)."""
    result = response.get("result")
    if type(result) is not dict:
        return None
    task = result.get("task")
    if type(task) is dict and "taskId" in task and "content" not in result:
        return _id_value(task.get("taskId"))
    if result.get("resultType") == "task":
        return _id_value(result.get("taskId"))
    return None


def task_id_param(message: dict[str, Any]) -> str | int | None:
    """The ``params.taskId`` of a ``tasks/*`` request or a ``notifications/tasks/status``."""
    params = _params(message)
    return _id_value(params.get("taskId")) if params is not None else None


def related_task(message: dict[str, Any]) -> str | int | None:
    """The task a message names in ``_meta["io.modelcontextprotocol/related-task"]``, or None."""
    meta = _meta(_params(message))
    if meta is None:
        return None
    related = meta.get(META_RELATED_TASK)
    return _id_value(related.get("taskId")) if type(related) is dict else None


def task_status_of(payload: dict[str, Any]) -> str | None:
    """The task status a ``tasks/get`` answer, a ``CreateTaskResult`` or a status notification reports."""
    body = payload.get("result") if "result" in payload else payload.get("params")
    if type(body) is not dict:
        return None
    task = body.get("task")
    status = (task if type(task) is dict else body).get("status")
    return status if isinstance(status, str) else None


def subscription_of(message: dict[str, Any]) -> str | int | None:
    """The listen stream a notification belongs to: ``_meta["io.modelcontextprotocol/subscriptionId"]``."""
    meta = _meta(_params(message))
    return _id_value(meta.get(META_SUBSCRIPTION_ID)) if meta is not None else None


def mcp_session_id(msg: Message) -> str | None:
    """The ``Mcp-Session-Id`` header a record's HTTP context carries, or None."""
    headers = msg.ctx.get("headers") if msg.ctx else None
    if isinstance(headers, dict):
        for k, v in headers.items():
            if isinstance(k, str) and k.lower() == "mcp-session-id" and isinstance(v, str) and v:
                return v
    return None


def origin_of(msg: Message | None) -> str | None:
    """The source file a record of a merged session came from (:mod:`mcpreel.merge`), or None."""
    if msg is not None and msg.extra:
        origin = msg.extra.get(ORIGIN_KEY)
        if isinstance(origin, str):
            return origin
    return None
