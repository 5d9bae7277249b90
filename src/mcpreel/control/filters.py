"""Filter tokens, as people know them from other MCP tools: ``method:tools/call tool:search dir:c2s``.

One grammar for ``record --intercept FILTER``, the matching of ``--rules`` and the viewer's ``/`` filter:
``parse(text)`` -> :class:`Filter`, and ``Filter.matches(record_or_message, direction)``. Tokens are
separated by spaces; different keys must all match (AND), the same key given twice matches either (OR):

- ``method:NAME`` — the JSON-RPC method (a response matches the method of the request it answers only when
  the caller says so: a bare message has no method);
- ``tool:NAME`` — ``params.name`` of a ``tools/call``;
- ``dir:c2s`` / ``dir:s2c`` — client -> server / server -> client: mcpreel's one direction vocabulary
  (lists say C→S / S→C). Also accepted: ``client_to_server`` / ``server_to_client`` (qai's words) and
  ``out`` / ``in`` as mcpsnoop says them (``out`` is the request going *out* to the server). The reel's
  own ``dir`` values are the other way round (the reel's ``in`` is what comes *into* the server), which
  is why the tokens do not lead with in/out; this module converts;
- ``status:error`` / ``status:ok`` — a response with ``error`` (or a tools/call result with
  ``isError: true``) / any other response;
- ``id:7`` — the JSON-RPC id (compared as text: ``id:7`` matches 7 and "7");
- ``kind:request|response|notification``;
- ``text:WORDS`` and bare words — a substring of the message's JSON (case-insensitive).

``parse("")`` is the filter that matches everything. :data:`DEFAULT_INTERCEPT` is the default of
``--intercept``: every request from the client.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcpreel._infra import jsonio

__all__ = ["DEFAULT_INTERCEPT", "DIRECTIONS", "KEYS", "Filter", "FilterError", "parse"]

KEYS = ("method", "tool", "dir", "status", "id", "text", "kind")
DEFAULT_INTERCEPT = "dir:c2s kind:request"

#: the filter's dir values -> the reel's direction: c2s/s2c first (the words shown), then the aliases
#: (mcpsnoop's ``out``/``in``, which are the reel's ``in``/``out``; qai's long words)
DIRECTIONS = {"c2s": "in", "s2c": "out", "client_to_server": "in", "server_to_client": "out", "out": "in", "in": "out"}
_DIRS = DIRECTIONS
_KINDS = ("request", "response", "notification")
_STATUSES = ("error", "ok")


class FilterError(ValueError):
    """A filter string with an unknown key or value; the message names the token."""


@dataclass(frozen=True)
class Filter:
    """Parsed filter tokens: key -> the values any of which may match (see the module docstring)."""

    text: str = ""
    terms: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())

    @property
    def empty(self) -> bool:
        return not self.terms

    def matches(self, item: Any, direction: str | None = None) -> bool:
        """Whether ``item`` matches: a reel record (a :class:`~mcpreel.model.Message`, or a reel line as a
        dict with ``dir``/``raw``), or a bare JSON-RPC message with its reel ``direction`` (``in``/``out``).
        Records that carry no message (stderr, invalid, transport) match only the text and dir tokens.
        """
        message, direction = _unpack(item, direction)
        for key, values in self.terms:
            if not any(_CHECKS[key](message, direction, value) for value in values):
                return False
        return True

    def __str__(self) -> str:
        return self.text

    @staticmethod
    def term_matches(key: str, value: str, item: Any, direction: str | None = None) -> bool:
        """Whether one token ``key:value`` matches ``item`` (as :meth:`matches` reads it): for a caller that
        matches some keys against more than one message (the viewer: an operation's request and answer)."""
        message, direction = _unpack(item, direction)
        return _CHECKS[key](message, direction, value)


def _unpack(item: Any, direction: str | None) -> tuple[Any, str | None]:
    from mcpreel.model import Kind, Message

    if isinstance(item, Message):
        if item.kind != Kind.MESSAGE:
            return ({"_text": item.text} if item.text is not None else None), item.dir
        return item.raw, item.dir
    if isinstance(item, dict) and "raw" in item and ("dir" in item or "t" in item) and "jsonrpc" not in item:
        return item["raw"], item.get("dir")
    if isinstance(item, dict) and item.get("type") in ("stderr", "invalid"):
        return {"_text": item.get("text")}, item.get("dir")
    return item, direction


def _members(message: Any) -> list[dict[str, Any]]:
    if isinstance(message, dict):
        return [message]
    if isinstance(message, list):
        return [m for m in message if isinstance(m, dict)]
    return []


def _kind(m: dict[str, Any]) -> str | None:
    if "method" in m:
        return "request" if "id" in m else "notification"
    if "result" in m or "error" in m:
        return "response"
    return None


def _method(message: Any, direction: str | None, value: str) -> bool:
    return any(m.get("method") == value for m in _members(message))


def _tool(message: Any, direction: str | None, value: str) -> bool:
    for m in _members(message):
        params = m.get("params")
        if m.get("method") == "tools/call" and isinstance(params, dict) and params.get("name") == value:
            return True
    return False


def _dir(message: Any, direction: str | None, value: str) -> bool:
    return direction == value


def _status(message: Any, direction: str | None, value: str) -> bool:
    for m in _members(message):
        if _kind(m) != "response":
            continue
        result = m.get("result")
        failed = "error" in m or (isinstance(result, dict) and result.get("isError") is True)
        if failed == (value == "error"):
            return True
    return False


def _id(message: Any, direction: str | None, value: str) -> bool:
    for m in _members(message):
        if "id" in m and m["id"] is not None and not isinstance(m["id"], (dict, list)):
            if str(m["id"]) == value:
                return True
    return False


def _text(message: Any, direction: str | None, value: str) -> bool:
    if message is None:
        return False
    if isinstance(message, dict) and set(message) == {"_text"}:
        haystack = str(message["_text"] or "")
    else:
        haystack = jsonio.dumps(message).decode("utf-8", "replace")
    return value.lower() in haystack.lower()


def _kind_check(message: Any, direction: str | None, value: str) -> bool:
    return any(_kind(m) == value for m in _members(message))


_CHECKS: dict[str, Callable[[Any, str | None, str], bool]] = {
    "method": _method, "tool": _tool, "dir": _dir, "status": _status, "id": _id, "text": _text, "kind": _kind_check,
}


def parse(text: str | None) -> Filter:
    """Filter tokens -> :class:`Filter`; :class:`FilterError` names a token that is not understood."""
    if text is None:
        return Filter()
    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        raise FilterError(f"filter {text!r}: {exc}") from exc
    terms: dict[str, list[str]] = {}
    for token in tokens:
        key, sep, value = token.partition(":")
        if not sep or key not in KEYS:
            if sep and key.isidentifier() and key not in KEYS and not value.startswith("/"):
                raise FilterError(f"filter token {token!r}: unknown key {key!r} (known: {', '.join(KEYS)})")
            key, value = "text", token
        if not value:
            raise FilterError(f"filter token {token!r} has no value")
        if key == "dir":
            if value not in _DIRS:
                raise FilterError(f"filter token {token!r}: dir is c2s (client -> server) or s2c (server -> client)")
            value = _DIRS[value]
        elif key == "kind" and value not in _KINDS:
            raise FilterError(f"filter token {token!r}: kind is one of {', '.join(_KINDS)}")
        elif key == "status" and value not in _STATUSES:
            raise FilterError(f"filter token {token!r}: status is error or ok")
        terms.setdefault(key, []).append(value)
    return Filter(text.strip(), tuple((k, tuple(v)) for k, v in terms.items()))
