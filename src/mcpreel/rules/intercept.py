"""Rules on a recording proxy (``mcpreel record --rules``): the rules engine as an interceptor.

The recorders' intercept seam (:mod:`mcpreel.intercept`) is where a person at a viewer decides; a
:class:`RulesInterceptor` decides there instead, at once, and what it did is recorded as a person's decision
would be, with ``decided_by: "rules:NAME"``: a rewrite is an ``edit`` (``modified`` + ``original``), ``error``
and ``drop`` a drop whose request is answered with the JSON-RPC error (``dropped``; the answer
``injected``), ``close`` ends the connection, ``delay`` holds the message that long and then forwards it.

What the seam cannot do, the rules file is refused for up front (:func:`check_for_recording`): a recorder
answers every dropped request (no ``timeout``) and writes JSON-RPC only (no ``malformed``); over HTTP it
holds client -> server messages only, so a rule for server -> client messages alone would never act; and
over legacy HTTP+SSE the proxy answers a dropped request in the POST's body, which a legacy client never
reads (its answers come on the GET stream), and cannot close that stream, so ``drop``, ``error`` and
``close`` would leave the client waiting there: refused too.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

from mcpreel._infra.correlation import verbatim_key
from mcpreel.errors import UsageError
from mcpreel.intercept import FORWARD, Decision, Pending
from mcpreel.rules.engine import RuleSet, message_kind

__all__ = ["RulesInterceptor", "check_for_recording"]

#: the seam's directions (``in`` = client -> server) in the rules' words
_DIRECTION = {"in": "client_to_server", "out": "server_to_client"}
_KEEP = 4096  # client requests remembered for matching their answers by method or tool


def check_for_recording(rules: RuleSet, transport: str) -> None:
    """Refuse (one line naming the file and the rule) what a recording proxy cannot carry out."""
    source = rules.source
    for rule in rules.rules:
        kind = rule.action.kind
        if kind in ("timeout", "malformed"):
            raise UsageError(f"{source}: {rule.label}: {kind} is for serve (a recording proxy answers every "
                             "dropped request and sends JSON-RPC only)")
        if transport == "sse" and kind in ("drop", "error", "close"):
            raise UsageError(f"{source}: {rule.label}: {kind} is not carried out by a legacy HTTP+SSE recording "
                             "proxy (its answer would not reach the client's stream); use stdio or "
                             "streamable-http, or serve")
        if transport != "stdio" and rule.match.directions == ("server_to_client",):
            raise UsageError(f"{source}: {rule.label}: over HTTP a recording proxy holds client_to_server "
                             "messages only; this rule would never act")


class RulesInterceptor:
    """An :class:`~mcpreel.intercept.Interceptor` deciding by rules (see the module docstring).

    Thread-safe: the stdio recorder decides on two pump threads, the HTTP proxy on worker threads.
    """

    def __init__(self, rules: RuleSet):
        self.rules = rules
        self._lock = threading.Lock()
        self._asked: OrderedDict[Any, Any] = OrderedDict()

    def wants(self, direction: str, message: Any) -> bool:
        """Whether a rule could act on this message (only those are held; the rest pass without waiting)."""
        d = _DIRECTION.get(direction, direction)
        with self._lock:
            if d == "client_to_server" and isinstance(message, dict) and message_kind(message) == "request":
                self._asked[verbatim_key(message.get("id"))] = message
                if len(self._asked) > _KEEP:
                    self._asked.popitem(last=False)
            return self.rules.could_act(message, d, self._request_for(d, message, pop=False))

    def _request_for(self, direction: str, message: Any, *, pop: bool) -> Any:
        if direction != "server_to_client" or not isinstance(message, dict) or message_kind(message) != "response":
            return None
        key = verbatim_key(message.get("id"))
        return self._asked.pop(key, None) if pop else self._asked.get(key)

    def decide(self, item: Pending) -> Decision:
        """The rules' decision on a held message, carried out as a person's would be (delays sleep here)."""
        d = _DIRECTION.get(item.direction, item.direction)
        with self._lock:
            verdict = self.rules.decide(item.message, d, self._request_for(d, item.message, pop=True))
        if verdict is None:
            return FORWARD
        if verdict.delay:
            time.sleep(verdict.delay)
        by = verdict.decided_by
        if verdict.action == "forward":
            if verdict.modified:
                return Decision("edit", message=verdict.message, by=by)
            return Decision("forward", by=by)
        if verdict.action in ("drop", "error"):
            error = verdict.answer["error"] if verdict.answer is not None else None
            return Decision("drop", error=error, by=by)
        return Decision("close", by=by)
