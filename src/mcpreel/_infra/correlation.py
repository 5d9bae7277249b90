"""JSON-RPC id rules, and request/response correlation by (direction of the request, id).

Both sides of an MCP session send requests, each numbering its own ids, so a server's
``sampling/createMessage`` id 0 and the client's ``tools/call`` id 0 are different requests. A response
going ``out`` answers a request that went ``in`` and the reverse: the key is always the direction of the
*request* plus the id. The ``correlated_id`` some formats store (qai) ignores direction and is never
trusted; every reader and writer that needs correlation computes it here.

Two rules turn an id into a dict key, because two different questions are asked of ids:

- :func:`correlation_key` -- *reading or recording* a session: which response answers which request.
  Only a string or a number is a JSON-RPC id; null, booleans, objects and arrays correlate with nothing,
  so a malformed response is never paired with a request by accident (and counts as unanswered).
- :func:`verbatim_key` -- *replaying* or *serving* a session: find again exactly the id that was sent,
  whatever it was. The mock must answer the id a client used even when it is not a valid id, and replay
  must recognise the answer to the id it sent; so every value has a key, typed so that ``1``, ``"1"``,
  ``1.0`` and ``true`` stay apart (Python's ``1 == 1.0 == True`` would merge them).

Both keep ``1`` and ``"1"`` apart: the wire does.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Generic, TypeVar

from mcpreel._infra import jsonio

__all__ = ["Correlator", "correlation_key", "verbatim_key"]

T = TypeVar("T")


def correlation_key(value: Any) -> tuple[str, Any] | None:
    """A hashable key for a JSON-RPC id, or None when the value cannot correlate (null, bool, object)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, (int, float)):
        return ("n", value)
    return None


def verbatim_key(value: Any) -> tuple[str, Any]:
    """A hashable key for any value sent as an id: its Python type's name and the value (objects and arrays by their JSON text)."""
    t = type(value)
    if t is int:  # the common ids first: diff and replay key every message of a million-message session
        return ("int", value)
    if t is str:
        return ("str", value)
    if isinstance(value, (dict, list)):
        return (type(value).__name__, jsonio.dumps_str(value))
    return (type(value).__name__, value)


class _Queue(deque[Any]):
    """The requests waiting under one key when there are several (one waits alone, unwrapped)."""

    __slots__ = ()


def _full_key(scope: Any, direction: str, rid: Any) -> tuple[Any, ...] | None:
    """(scope, direction, kind, id): :func:`correlation_key` flattened into one tuple, built without
    calling it for the ids nearly every message has (an exact ``int`` or ``str``): the correlator keys
    every request and response of a million-message session."""
    t = type(rid)
    if t is int:
        return (scope, direction, "n", rid)
    if t is str:
        return (scope, direction, "s", rid)
    key = correlation_key(rid)
    return None if key is None else (scope, direction, *key)


class Correlator(Generic[T]):
    """Pending requests by (scope, direction of the request, id); each request carries a token.

    ``scope`` separates sessions that share one stream (a merged file: one scope per source file).
    Requests that reuse a pending key queue up and are answered first in, first out. A key with one
    request waiting holds its token as it is, a queue only once a second one comes (the common case
    costs no deque per request).
    """

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending: dict[tuple[Any, ...], Any] = {}

    def request(self, direction: str, rid: Any, token: T, scope: Any = None) -> bool:
        """Remember a request; False when its id cannot correlate (it will never be answered)."""
        full = _full_key(scope, direction, rid)
        if full is None:
            return False
        pending = self._pending
        held = pending.get(full, _NONE)
        if held is _NONE:
            pending[full] = token
        elif type(held) is _Queue:
            held.append(token)
        else:
            pending[full] = _Queue((held, token))
        return True

    def response(self, direction: str, rid: Any, scope: Any = None) -> T | None:
        """The token of the request a response going ``direction`` answers (and forget it), or None."""
        full = _full_key(scope, "in" if direction == "out" else "out", rid)
        if full is None:
            return None
        pending = self._pending
        held = pending.get(full, _NONE)
        if held is _NONE:
            return None
        if type(held) is not _Queue:
            del pending[full]
            return held
        token = held.popleft()
        if not held:
            del pending[full]
        return token

    def discard(self, direction: str, rid: Any, token: T, scope: Any = None) -> bool:
        """Forget one waiting request (answered some other way: an HTTP error with a null id); False if absent."""
        full = _full_key(scope, direction, rid)
        if full is None:
            return False
        pending = self._pending
        held = pending.get(full, _NONE)
        if held is _NONE:
            return False
        if type(held) is not _Queue:
            if held is not token:
                return False
            del pending[full]
            return True
        for i, waiting in enumerate(held):
            if waiting is token:
                del held[i]
                if not held:
                    del pending[full]
                return True
        return False

    def pending(self) -> list[T]:
        """Requests still waiting for an answer."""
        return [token for held in self._pending.values()
                for token in (held if type(held) is _Queue else (held,))]

    def __len__(self) -> int:
        return sum(len(held) if type(held) is _Queue else 1 for held in self._pending.values())


_NONE: Any = object()  # no request waits under a key (a token may be None)
