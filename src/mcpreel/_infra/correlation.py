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
from collections.abc import Hashable
from typing import Any, Generic, TypeVar

from mcpreel._infra import jsonio

__all__ = ["Correlator", "correlation_key", "verbatim_key"]

T = TypeVar("T")


def correlation_key(value: Any) -> Hashable | None:
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


class Correlator(Generic[T]):
    """Pending requests by (scope, direction of the request, id); each request carries a token.

    ``scope`` separates sessions that share one stream (a merged file: one scope per source file).
    Requests that reuse a pending key queue up and are answered first in, first out.
    """

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending: dict[tuple[Any, str, Hashable], deque[T]] = {}

    def request(self, direction: str, rid: Any, token: T, scope: Any = None) -> bool:
        """Remember a request; False when its id cannot correlate (it will never be answered)."""
        key = correlation_key(rid)
        if key is None:
            return False
        full = (scope, direction, key)
        q = self._pending.get(full)
        if q is None:
            self._pending[full] = deque((token,))
        else:
            q.append(token)
        return True

    def response(self, direction: str, rid: Any, scope: Any = None) -> T | None:
        """The token of the request a response going ``direction`` answers (and forget it), or None."""
        key = correlation_key(rid)
        if key is None:
            return None
        full = (scope, "in" if direction == "out" else "out", key)
        q = self._pending.get(full)
        if not q:
            return None
        token = q.popleft()
        if not q:
            del self._pending[full]
        return token

    def pending(self) -> list[T]:
        """Requests still waiting for an answer."""
        return [token for q in self._pending.values() for token in q]

    def __len__(self) -> int:
        return sum(len(q) for q in self._pending.values())
