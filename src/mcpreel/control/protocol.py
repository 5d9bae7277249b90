"""The wire of the control channel (the contract in the issue-14 notes): newline-delimited JSON objects.

Every object has a ``type``. The proxy sends ``hello`` first, then ``record`` (a reel line, backlog first,
then live), ``held`` / ``released`` (intercept), ``ok`` / ``error`` (answers to a command that carried a
``ref``) and ``end``. The viewer sends ``decide``, ``inject`` and ``intercept``. Directions on this wire are
spelled as qai and seed 003 spell them (``client_to_server`` / ``server_to_client``); the reel's ``in`` /
``out`` are converted at the edge (:func:`wire_direction`, :func:`reel_direction`).

Pure functions, no I/O: both ends (:mod:`mcpreel.control.server`, :mod:`mcpreel.control.client`) and the
tests use them. :func:`parse_command` is the one validation of what a viewer sends, so a bad command is one
clear ``error`` line back, never an exception in the proxy.
"""

from __future__ import annotations

from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.timeutil import iso_from_ms, now_ms

__all__ = [
    "MAX_LINE",
    "VERSION",
    "CommandError",
    "decode",
    "encode",
    "parse_command",
    "reel_direction",
    "validate_message",
    "wire_direction",
]

VERSION = 1
#: the longest line either side accepts (a big edited message fits; a runaway peer does not)
MAX_LINE = 64 << 20

WIRE_DIRECTIONS = {"in": "client_to_server", "out": "server_to_client"}
REEL_DIRECTIONS = {v: k for k, v in WIRE_DIRECTIONS.items()}
PROXY_TYPES = frozenset(("hello", "record", "held", "released", "ok", "error", "end"))
VIEWER_TYPES = frozenset(("decide", "inject", "intercept"))
DECIDE_ACTIONS = ("forward", "edit", "drop")


class CommandError(ValueError):
    """A viewer command that cannot be carried out; the message is what the ``error`` answer says."""


def wire_direction(direction: str) -> str:
    """``in`` / ``out`` -> ``client_to_server`` / ``server_to_client`` (already-wire names pass)."""
    return WIRE_DIRECTIONS.get(direction, direction)


def reel_direction(direction: Any) -> str:
    """``client_to_server`` / ``server_to_client`` (or ``in`` / ``out``) -> ``in`` / ``out``."""
    if direction in REEL_DIRECTIONS:
        return REEL_DIRECTIONS[direction]
    if direction in WIRE_DIRECTIONS:
        return str(direction)
    raise CommandError(f"direction must be client_to_server or server_to_client, got {direction!r}")


def encode(obj: dict[str, Any]) -> bytes:
    """One object -> one line (with its newline)."""
    return jsonio.dumps(obj) + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    """One line -> its object; :class:`CommandError` when it is not a JSON object with a string ``type``."""
    try:
        obj = jsonio.loads(line)
    except Exception as exc:
        raise CommandError(f"not JSON: {exc}") from exc
    if not isinstance(obj, dict):
        raise CommandError(f"a control line must be a JSON object, got {jsonio.type_name(obj)}")
    if not isinstance(obj.get("type"), str):
        raise CommandError("a control line must have a string \"type\"")
    return obj


_INF = float("inf")
#: how deep :func:`_not_json` looks (the readers' depth limit is of the same order)
_MAX_DEPTH = 1000


def _not_json(value: Any) -> str | None:
    """Where ``value`` holds what JSON cannot say (``NaN``, ``Infinity``), or is nested past :data:`_MAX_DEPTH`;
    None when it is plain JSON. Iterative: a deep value cannot exhaust the stack."""
    stack: list[tuple[Any, str, int]] = [(value, "$", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, float):
            if item != item:
                return f"{path} is NaN, which is not JSON"
            if item in (_INF, -_INF):
                return f"{path} is {'-' if item < 0 else ''}Infinity, which is not JSON"
        elif isinstance(item, dict):
            if depth >= _MAX_DEPTH:
                return f"{path} is nested deeper than {_MAX_DEPTH} levels"
            stack.extend((v, f"{path}.{k}", depth + 1) for k, v in item.items())
        elif isinstance(item, list):
            if depth >= _MAX_DEPTH:
                return f"{path} is nested deeper than {_MAX_DEPTH} levels"
            stack.extend((v, f"{path}[{i}]", depth + 1) for i, v in enumerate(item))
    return None


def _valid_id(value: Any, request: bool) -> bool:
    """MCP's request id: a string or an integer; a response's may also be null (an unparsed request's)."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return True
    return value is None and not request


def _validate_one(msg: Any, where: str) -> str | None:
    if not isinstance(msg, dict):
        return f"{where} must be a JSON object"
    if msg.get("jsonrpc") != "2.0":
        return f"{where}: \"jsonrpc\" must be \"2.0\""
    if "id" in msg and not _valid_id(msg["id"], "method" in msg):
        allowed = "a string or an integer" if "method" in msg else "a string, an integer or null"
        return f"{where}: \"id\" must be {allowed}, got {_shown(msg['id'])}"
    if "method" in msg:
        if not isinstance(msg["method"], str) or not msg["method"]:
            return f"{where}: \"method\" must be a non-empty string"
        if "params" in msg and not isinstance(msg["params"], (dict, list)):
            return f"{where}: \"params\" must be an object or an array"
        if "result" in msg or "error" in msg:
            return f"{where}: a request or notification has no \"result\" or \"error\""
        return None
    if "result" in msg and "error" in msg:
        return f"{where}: a response has \"result\" or \"error\", not both"
    if "result" not in msg and "error" not in msg:
        return f"{where}: neither a request (\"method\") nor a response (\"result\"/\"error\")"
    if "id" not in msg:
        return f"{where}: a response needs its \"id\""
    if "error" in msg:
        err = msg["error"]
        if not isinstance(err, dict):
            return f"{where}: \"error\" must be an object"
        code = err.get("code")
        if not isinstance(code, int) or isinstance(code, bool):
            return f"{where}: \"error.code\" must be an integer"
        if not isinstance(err.get("message"), str):
            return f"{where}: \"error.message\" must be a string"
    return None


def _shown(value: Any) -> str:
    text = jsonio.dumps(value).decode("utf-8", "replace")
    return text if len(text) <= 40 else text[:37] + "..."


def validate_message(msg: Any) -> str | None:
    """Why ``msg`` is not a valid JSON-RPC 2.0 message (or batch), or None when it is.

    The check an edited or injected message passes before it goes anywhere: JSON throughout (no ``NaN`` or
    ``Infinity`` anywhere: a peer's parser may refuse the whole line, or read it as null); a request's
    ``id`` a string or an integer (MCP's ``RequestId``), a response's also null; a request/notification has
    a ``method`` string and object/array ``params``; a response has its ``id`` and exactly one of ``result``
    / ``error`` (an error with an integer ``code`` and a string ``message``).
    """
    why = _not_json(msg)
    if why:
        return why
    if isinstance(msg, list):
        if not msg:
            return "an empty batch"
        for i, member in enumerate(msg):
            why = _validate_one(member, f"batch member {i}")
            if why:
                return why
        return None
    return _validate_one(msg, "the message")


def _error_object(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise CommandError("\"error\" must be a JSON-RPC error object")
    code = value.get("code", -32001)
    if not isinstance(code, int) or isinstance(code, bool):
        raise CommandError("\"error.code\" must be an integer")
    message = value.get("message", "dropped by the viewer")
    if not isinstance(message, str):
        raise CommandError("\"error.message\" must be a string")
    out = {"code": code, "message": message}
    why = _not_json(value.get("data"))
    if why:
        raise CommandError(f"\"error.data\": {why}")
    if "data" in value:
        out["data"] = value["data"]
    return out


def parse_command(obj: dict[str, Any]) -> dict[str, Any]:
    """A viewer's object -> the command, checked and normalized; :class:`CommandError` says what is wrong.

    ``decide``: ``hold`` (string), ``action`` (forward|edit|drop), ``message`` for edit (validated JSON-RPC),
    optional ``error`` for drop. ``inject``: ``direction`` (normalized to ``in``/``out``) and a valid
    ``message``. ``intercept``: ``filter`` (a filter string, parsed here, or null for off).
    """
    typ = obj.get("type")
    if typ not in VIEWER_TYPES:
        raise CommandError(f"unknown command type {typ!r} (known: {', '.join(sorted(VIEWER_TYPES))})")
    out: dict[str, Any] = {"type": typ}
    if "ref" in obj:
        out["ref"] = obj["ref"]
    if typ == "decide":
        hold = obj.get("hold")
        if not isinstance(hold, str):
            raise CommandError("decide needs \"hold\", the id of a held message")
        action = obj.get("action")
        if action not in DECIDE_ACTIONS:
            raise CommandError(f"decide: \"action\" must be one of {', '.join(DECIDE_ACTIONS)}, got {action!r}")
        out["hold"] = hold
        out["action"] = action
        if action == "edit":
            if "message" not in obj:
                raise CommandError("decide edit needs the edited \"message\"")
            why = validate_message(obj["message"])
            if why:
                raise CommandError(f"the edited message is not valid JSON-RPC: {why}")
            out["message"] = obj["message"]
        elif action == "drop":
            out["error"] = _error_object(obj.get("error"))
        return out
    if typ == "inject":
        out["direction"] = reel_direction(obj.get("direction"))
        if "message" not in obj:
            raise CommandError("inject needs a \"message\"")
        why = validate_message(obj["message"])
        if why:
            raise CommandError(f"the injected message is not valid JSON-RPC: {why}")
        out["message"] = obj["message"]
        return out
    # intercept
    text = obj.get("filter")
    if text is not None and not isinstance(text, str):
        raise CommandError("intercept: \"filter\" must be a filter string or null")
    if text is not None:
        from mcpreel.control.filters import FilterError, parse

        try:
            parse(text)
        except FilterError as exc:
            raise CommandError(str(exc)) from exc
    out["filter"] = text
    return out


# -- the proxy's messages ----------------------------------------------------------------------------


def hello(proxy: dict[str, Any]) -> dict[str, Any]:
    """The first line a viewer gets: the protocol version and what the proxy is."""
    return {"type": "hello", "version": VERSION, "proxy": proxy}


def record(line: dict[str, Any]) -> dict[str, Any]:
    """One recorded line, as viewers receive it."""
    return {"type": "record", "record": line}


def held(hold: str, direction: str, message: Any, since_ms: int | None = None, timeout: float | None = None,
         session: str | None = None) -> dict[str, Any]:
    """A message the proxy holds for a decision (with when it was held and how long it waits)."""
    obj: dict[str, Any] = {"type": "held", "hold": hold, "direction": wire_direction(direction), "message": message,
                           "since": iso_from_ms(since_ms if since_ms is not None else now_ms()), "timeout": timeout}
    if session is not None:
        obj["session"] = session
    return obj


def released(hold: str, action: str, by: str) -> dict[str, Any]:
    """A held message was released: how, and by whom (so every viewer can drop it from its list)."""
    return {"type": "released", "hold": hold, "action": action, "by": by}


def ok(ref: Any) -> dict[str, Any]:
    """The proxy's answer that a viewer's command (``ref``) was carried out."""
    return {"type": "ok", "ref": ref}


def error(ref: Any, message: str) -> dict[str, Any]:
    """The proxy's answer that a viewer's command (``ref``) could not be carried out, and why."""
    return {"type": "error", "ref": ref, "message": message}


def end(exit_code: int | None, reason: str) -> dict[str, Any]:
    """The recording ended (how the server exited and why): the last line a viewer gets."""
    return {"type": "end", "exit_code": exit_code, "reason": reason}
