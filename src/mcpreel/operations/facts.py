"""The MCP facts a reader of a session asks of one JSON-RPC message: plain functions, no state.

Every verb names things the same way because they all ask here: the target of a request (the tool,
prompt or resource), the status of an answer, the progress token, the task a message belongs to (both
Tasks forms: the 2025-11-25 utility and the 2026-07-28 extension), the ``subscriptions/listen`` stream a
notification is tagged with, the ``requestState`` of a multi-round-trip request, and the era markers in
``_meta``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpreel import drafts
from mcpreel._infra.nesting import cut_repr
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
    "definition_digests",
    "digest_refusal",
    "expected_digest",
    "is_era_probe_refusal",
    "first_text",
    "output_key",
    "partial_chunks",
    "partial_result_token",
    "ToolResult",
    "tool_result",
    "info_name",
    "listen_lifecycle",
    "mcp_session_id",
    "origin_of",
    "Progress",
    "progress_of",
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
    """The first text block of a tool result's content (a failed tool's message), whatever its shape
    (:func:`tool_result`)."""
    return tool_result({"result": result}).text


def status_of(response: dict[str, Any] | None) -> tuple[str, Any, str | None]:
    """(status, code, message) of a response: ``ok``, ``error`` (JSON-RPC), ``isError`` (a failed tool
    result), ``input_required`` (a 2026-07-28 multi-round-trip result), ``task`` (a task was created: the
    answer is a handle, not the result) or ``unanswered`` (no response)."""
    if response is None:
        return "unanswered", None, None
    error = response.get("error")
    if error is not None:
        err = error if isinstance(error, dict) else {"message": error}
        message, code = err.get("message"), err.get("code")
        if isinstance(code, (dict, list)):  # a value where a number belongs: shown short (it may be 1,000 levels deep)
            code = cut_repr(code, 80)
        return "error", code, message if isinstance(message, str) else None
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


def _number(value: Any) -> int | float | None:
    return value if type(value) in (int, float) else None


@dataclass(frozen=True)
class Progress:
    """One progress report, whichever carrier brought it: a ``notifications/progress`` (``via="notification"``)
    or, where the drafts fold progress into tasks (:data:`mcpreel.drafts.TASK_PROGRESS_FIELD`), a task's own
    ``progress``/``progressTotal`` (``via="task"``). Readers need not care which: the drafts remove the first."""

    progress: int | float
    total: int | float | None = None
    message: str | None = None
    via: str = "notification"


def progress_of(message: dict[str, Any]) -> Progress | None:
    """The progress a message reports: a ``notifications/progress``'s ``progress``/``total``/``message``, or the
    ``progress``/``progressTotal``/``statusMessage`` of the task a ``notifications/tasks/status``, a
    ``tasks/get`` answer or a CreateTaskResult carries (the tasks-are-progress draft); None when it reports
    none (a task with no ``progress``: only its status)."""
    if message.get("method") == "notifications/progress":
        params = _params(message)
        value = _number(params.get("progress")) if params is not None else None
        if params is None or value is None:
            return None
        text = params.get("message")
        return Progress(value, _number(params.get("total")), text if isinstance(text, str) else None)
    body = message.get("result") if "result" in message else message.get("params")
    if type(body) is not dict:
        return None
    task = body.get("task")
    source = task if type(task) is dict else body
    value = _number(source.get(drafts.TASK_PROGRESS_FIELD))
    if value is None:
        return None
    text = source.get(drafts.TASK_STATUS_MESSAGE_FIELD)
    return Progress(value, _number(source.get(drafts.TASK_PROGRESS_TOTAL_FIELD)),
                    text if isinstance(text, str) else None, "task")


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


# -- definition digests (the drafts' names: mcpreel.drafts) ---------------------------------------------


def definition_digests(response: dict[str, Any] | None, method: str | None = None) -> dict[str, str]:
    """The digests a list answer advertises, ``{name or uri: digest}`` (each primitive's ``_meta`` digest,
    the per-primitive draft), plus ``{"*": digest}`` for the collection digest (the definition-digests
    draft); empty when the server sent none. ``response`` is a JSON-RPC answer or a bare list result (what a
    ``GET ?mcp_list=`` returns)."""
    result = response.get("result", response) if isinstance(response, dict) else None
    if not isinstance(result, dict):
        return {}
    out: dict[str, str] = {}
    members = ([drafts.LISTED_PRIMITIVES[method]] if method in drafts.LISTED_PRIMITIVES
               else list(drafts.LISTED_PRIMITIVES.values()))
    for member in members:
        entries = result.get(member)
        for entry in entries if isinstance(entries, list) else ():
            meta = entry.get("_meta") if isinstance(entry, dict) else None
            digest = meta.get(drafts.DIGEST_META) if isinstance(meta, dict) else None
            key = entry.get("name") or entry.get("uri") or entry.get("uriTemplate") if isinstance(entry, dict) else None
            if isinstance(digest, str) and isinstance(key, str):
                out[key] = digest
    collection = result.get(drafts.DIGEST_RESULT_FIELD)
    if isinstance(collection, str):
        out["*"] = collection
    return out


def expected_digest(message: dict[str, Any]) -> str | dict[str, Any] | None:
    """The digest a request was made against: the per-primitive ``expectedDigest`` (a string), else the
    definition-digests draft's ``knownDigests`` map (``{method: digest}``); None for an ordinary request."""
    meta = _meta(_params(message))
    if not meta:
        return None
    value = meta.get(drafts.EXPECTED_DIGEST_META)
    if isinstance(value, str):
        return value
    known = meta.get(drafts.KNOWN_DIGESTS_META)
    return known if isinstance(known, dict) else None


def digest_refusal(response: dict[str, Any] | None, status: int | None = None) -> bool:
    """Whether an answer is a DigestChanged refusal: a JSON-RPC error with a code the drafts give it
    (:data:`mcpreel.drafts.DIGEST_CHANGED_CODES`), or naming ``staleDigests`` in its data, or any JSON-RPC
    error that came as HTTP 409 (the per-primitive draft's mapping, its numeric code still unallocated)."""
    error = response.get("error") if isinstance(response, dict) else None
    if not isinstance(error, dict):
        return False
    if error.get("code") in drafts.DIGEST_CHANGED_CODES or status == drafts.DIGEST_CHANGED_HTTP_STATUS:
        return True
    data = error.get("data")
    return isinstance(data, dict) and isinstance(data.get(drafts.STALE_DIGESTS_FIELD), list)


# -- the result of a tool call, whatever the version (the drafts' names: mcpreel.drafts) -----------------


def output_key(output: Any) -> tuple[str, str]:
    """An output's ``(audience, format)`` (SEP-3279): what it is for, the order ``outputs`` is read in."""
    if not isinstance(output, dict):
        return ("", "")
    return (str(output.get("audience", "")), str(output.get("format", "")))


@dataclass(frozen=True)
class ToolResult:
    """The result of a tool call, read the same way by every verb whatever its version: the 2026-07-28
    shape (``content`` and ``structuredContent``) or SEP-3279's result variants (``outputs``, one per
    audience and format). ``shape`` is ``content``, ``outputs``, ``error`` (a JSON-RPC error), ``task``
    (a task's handle, not a result yet) or ``none`` (no answer)."""

    shape: str
    result: dict[str, Any] | None = None
    error: Any = None

    @property
    def is_error(self) -> bool:
        """A JSON-RPC error, or a failed tool (``isError``)."""
        return self.shape == "error" or (self.result is not None and self.result.get("isError") is True)

    @property
    def outputs(self) -> list[dict[str, Any]]:
        """The result variants, ordered by audience and format (their wire order means nothing); [] for
        the older shape."""
        outputs = self.result.get(drafts.OUTPUTS_FIELD) if self.result is not None else None
        if not isinstance(outputs, list):
            return []
        return sorted((o for o in outputs if isinstance(o, dict)), key=output_key)

    def output(self, audience: str, format: str) -> dict[str, Any] | None:
        """The output for ``audience`` in ``format`` (None when the result has none)."""
        return next((o for o in self.outputs if output_key(o) == (audience, format)), None)

    @property
    def content(self) -> list[Any] | None:
        """The content blocks meant for the assistant: ``content`` (2026-07-28), else the
        ``assistant/content`` output, else the first content output of any audience."""
        if self.result is None:
            return None
        if self.shape == "content":
            content = self.result.get("content")
            return content if isinstance(content, list) else None
        chosen = self.output(*drafts.FALLBACK_OUTPUT) or next(
            (o for o in self.outputs if o.get("format") == "content"), None)
        content = chosen.get("content") if chosen is not None else None
        return content if isinstance(content, list) else None

    @property
    def structured(self) -> Any:
        """The structured payload: ``structuredContent`` (2026-07-28), else the ``assistant/structured``
        output's, else the ``programmatic/structured`` one's (None when there is none)."""
        if self.result is None:
            return None
        if self.shape == "content":
            return self.result.get("structuredContent")
        for audience in ("assistant", "programmatic", "user"):
            chosen = self.output(audience, "structured")
            if chosen is not None:
                return chosen.get("structuredContent")
        return None

    @property
    def text(self) -> str | None:
        """The first text block of :attr:`content` (a failed tool's message, the last text of a session)."""
        for item in self.content or ():
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                return item["text"]
        return None


def tool_result(response: dict[str, Any] | None) -> ToolResult:
    """The one reading of a ``tools/call`` answer (a JSON-RPC response): see :class:`ToolResult`."""
    if not isinstance(response, dict):
        return ToolResult("none")
    if response.get("error") is not None:
        return ToolResult("error", error=response.get("error"))
    result = response.get("result")
    if not isinstance(result, dict):
        return ToolResult("none")
    if created_task(response) is not None:
        return ToolResult("task", result)
    if isinstance(result.get(drafts.OUTPUTS_FIELD), list):
        return ToolResult("outputs", result)
    return ToolResult("content", result)


def partial_result_token(message: dict[str, Any]) -> Any:
    """The ``partialResultToken`` a ``tools/call`` opted in to partial results with (in its ``_meta``), or
    the one a ``notifications/tools/partial_result`` chunk names (in its params); None otherwise."""
    params = _params(message)
    if params is None:
        return None
    if message.get("method") == drafts.PARTIAL_RESULT_NOTIFICATION:
        return params.get(drafts.PARTIAL_RESULT_TOKEN)
    meta = _meta(params)
    return meta.get(drafts.PARTIAL_RESULT_TOKEN) if meta is not None else None


def partial_chunks(messages: Any, token: Any = None) -> list[dict[str, Any]]:
    """The partial-result chunks among ``messages`` (an operation's notes, or the notifications a call set
    off), of ``token`` when given, in ``seq`` order (arrival order where ``seq`` is missing)."""
    chunks = [m for m in messages if isinstance(m, dict) and m.get("method") == drafts.PARTIAL_RESULT_NOTIFICATION
              and (token is None or partial_result_token(m) == token)]

    def seq(pair: tuple[int, dict[str, Any]]) -> tuple[int, int]:
        value = (_params(pair[1]) or {}).get("seq")
        return (value if isinstance(value, int) else pair[0], pair[0])

    return [m for _, m in sorted(enumerate(chunks), key=seq)]


# -- a listen stream's lifecycle (the subscription lifecycle draft: mcpreel.drafts) -----------------------


def _iso_ms(value: Any) -> int | None:
    """An RFC 3339 time as epoch milliseconds (None when it is not one)."""
    if not isinstance(value, str):
        return None
    from datetime import datetime

    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def listen_lifecycle(notes: Any) -> dict[str, Any] | None:
    """What a listen stream's notes (``(record time or index, message)`` pairs, or bare messages, in order)
    say of its lifecycle: the acknowledged ``streamId``, ``expiresAt``, ``lifecycle``, the lifecycle events
    by type (unknown types too, as they came), ``missed`` (notifications lost: data loss) and whether it
    was ``paused`` (a reminder whose ``authorizedUntil`` had passed when it was sent). None when the stream
    carried none of it (a 2026-07-28 stream)."""
    out: dict[str, Any] = {}
    events: dict[str, int] = {}
    paused = False
    for item in notes:
        t, message = item if isinstance(item, tuple) else (None, item)
        if not isinstance(message, dict):
            continue
        method = message.get("method")
        params = _params(message) or {}
        if method == drafts.ACKNOWLEDGED_NOTIFICATION:
            for key in (drafts.STREAM_ID_FIELD, drafts.EXPIRES_AT_FIELD, "lifecycle", drafts.LAST_UPDATED_AT_FIELD):
                if key in params:
                    out[key] = params[key]
        elif method == drafts.LIFECYCLE_NOTIFICATION:
            kind = params.get("type")
            kind = kind if isinstance(kind, str) else "?"
            events[kind] = events.get(kind, 0) + 1
            until = _iso_ms(params.get(drafts.AUTHORIZED_UNTIL_FIELD))
            if kind == drafts.REMINDER_EVENT and until is not None and isinstance(t, int) and t > until:
                paused = True
    if not out and not events:
        return None
    if events:
        out["events"] = events
    if events.get(drafts.MISSED_EVENT):
        out["data_loss"] = True
    if paused:
        out["paused"] = True
    return out
