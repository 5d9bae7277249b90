"""K2-A: the bounded authorization-discovery summary of an HTTP transcript.

Visibility only: it records that a 401 with a typed ``WWW-Authenticate`` challenge was seen, and
whether the challenge named ``resource_metadata`` and/or ``scope``. It changes no tool semantics.

Only records that came back in an HTTP body count (an envelope's ``response`` slot, or a recorded
server answer that did not ride an SSE stream); the session's own transport context never does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from mcpreel.model import Kind, Message

__all__ = ["DEFAULT", "summarize", "challenge_flags"]

DEFAULT = {
    "visible": False,
    "source_kind": "unknown",
    "resource_metadata_visible": False,
    "authorization_servers_visible": False,
    "scope_challenge_visible": False,
}

_STATUS_KEYS = ("status", "status_code", "http_status")
_RESOURCE = re.compile(r"(?:^|[ ,\t])resource_metadata=")
_SCOPE = re.compile(r"(?:^|[ ,\t])scope=")


def _own_status(obj: Any) -> int | None:
    if not isinstance(obj, dict):
        return None
    for key in _STATUS_KEYS:
        v = obj.get(key)
        if isinstance(v, bool):
            continue
        if isinstance(v, int):
            return v
        if isinstance(v, str) and v.strip().isdigit():
            return int(v.strip())
    return None


def _status(obj: Any, depth: int = 0) -> int | None:
    """The contract's order: the object's own keys, then its ``headers``, else a nested ``response``."""
    if not isinstance(obj, dict) or depth > 4:
        return None
    status = _own_status(obj)
    if status is None:
        status = _own_status(obj.get("headers"))
    if status is None:
        status = _status(obj.get("response"), depth + 1)
    return status


def _header(obj: Any, name: str, depth: int = 0) -> str | None:
    if not isinstance(obj, dict) or depth > 4:
        return None
    found = _header(obj.get("headers"), name, depth + 1)
    if found is not None:
        return found
    found = _header(obj.get("response"), name, depth + 1)
    if found is not None:
        return found
    for k, v in obj.items():
        if isinstance(k, str) and k.lower() == name and isinstance(v, str):
            return v
    return None


def challenge_flags(challenge: str) -> tuple[bool, bool]:
    """(resource_metadata named, scope named) in a WWW-Authenticate value."""
    low = challenge.lower()
    return _RESOURCE.search(low) is not None, _SCOPE.search(low) is not None


def _from_context(ctx: dict[str, Any]) -> tuple[bool, bool] | None:
    if _status(ctx) != 401:
        return None
    challenge = _header(ctx, "www-authenticate")
    if challenge is None:
        return None
    resource, scope = challenge_flags(challenge)
    if not (resource or scope):
        return None
    return resource, scope


def summarize(records: Iterable[Message]) -> dict[str, Any]:
    """The summary over a session's records (the default when nothing qualifies)."""
    out = dict(DEFAULT)
    for msg in records:
        ctx = msg.ctx
        if not ctx or msg.dir == "in" or msg.kind not in (Kind.MESSAGE, Kind.TRANSPORT):
            continue
        slot = ctx.get("slot")
        if slot == "request" or slot == "sse" or (slot is None and "sse" in ctx):
            continue
        flags = _from_context(ctx)
        if flags is None:
            continue
        out["visible"] = True
        out["source_kind"] = "www_authenticate"
        out["resource_metadata_visible"] = out["resource_metadata_visible"] or flags[0]
        out["scope_challenge_visible"] = out["scope_challenge_visible"] or flags[1]
    return out
