"""Deciding what happens to one message under a list of rules, free of any I/O.

:meth:`RuleSet.decide` takes a JSON-RPC message, its direction and (for a response) the request it
answers, and returns None (no rule acts: pass it on as it is) or a :class:`Verdict` saying what to do.
The I/O layers carry it out: the mock (:mod:`mcpreel.mock.server`) on what it answers, the recording
proxies through the control seam on what they relay. Rules are tried in file order; the first that
matches and is not spent acts (``after`` lets its first matches pass to the rules below it, ``times``
spends it). Counting is per :class:`RuleSet`, so one file loaded once is one set of counters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.jsonpath import JsonPath
from mcpreel.rules.load import UNSET, Rule

__all__ = ["DEFAULT_DROP_ERROR", "RuleSet", "Verdict", "merge_patch", "message_kind"]

#: the rules' directions as the reel (and so the filter tokens' matching) names them
_REEL_DIR = {"client_to_server": "in", "server_to_client": "out"}

#: what the sender of a request dropped by ``drop: true`` is answered, so it does not hang
DEFAULT_DROP_ERROR = {"code": -32001, "message": "dropped by a rule"}


@dataclass(frozen=True)
class Verdict:
    """What a rule decided for one message.

    ``action``: ``forward`` (pass ``message`` on, after ``delay`` seconds; ``modified`` when a rewrite or
    an error answer changed it), ``drop`` (pass nothing on; ``answer``, when set, goes back to the sender
    of the dropped request), ``error`` (pass nothing on; ``answer`` goes back to the sender),
    ``malformed`` (send ``raw`` instead, a line that is not JSON), ``close`` (end the connection).
    """

    rule: Rule
    action: str
    message: Any
    original: Any
    delay: float = 0.0
    answer: dict[str, Any] | None = None
    raw: bytes | None = None

    @property
    def decided_by(self) -> str:
        """How the recording names who decided: the rule, as a person's decision names the person."""
        return f"rules:{self.rule.name}"

    @property
    def modified(self) -> bool:
        """Whether a forwarded message was rewritten (recorded as an edit, with the original kept)."""
        return self.action == "forward" and self.message is not self.original


def message_kind(message: Any) -> str:
    """request, notification or response (anything else: response, as a reply is what it would be)."""
    if isinstance(message, dict) and isinstance(message.get("method"), str):
        return "request" if "id" in message else "notification"
    return "response"


class RuleSet:
    """A file's rules with their counters (see the module docstring)."""

    def __init__(self, rules: Sequence[Rule], source: str = "rules"):
        self.rules = list(rules)
        self.source = source  # the file, for messages that name it

    def __bool__(self) -> bool:
        return bool(self.rules)

    def could_act(self, message: Any, direction: str, request: Any = None) -> bool:
        """Whether some rule matches ``message`` (counting nothing): a recorder's quick ``wants``."""
        if not isinstance(message, dict):
            return False
        kind = message_kind(message)
        return any(_matches(rule, message, direction, kind, request) for rule in self.rules)

    def decide(self, message: Any, direction: str, request: Any = None) -> Verdict | None:
        """What to do with ``message`` going ``direction`` (``client_to_server``/``server_to_client``);
        ``request`` is the request a response answers, for rules that match by method or tool."""
        if not isinstance(message, dict):
            return None  # batches and junk pass untouched: rules speak of one message
        kind = message_kind(message)
        for rule in self.rules:
            if not _matches(rule, message, direction, kind, request):
                continue
            rule.matched += 1
            if rule.matched <= rule.after or (rule.times is not None and rule.matched - rule.after > rule.times):
                continue
            return _verdict(rule, message, kind)
        return None


def _matches(rule: Rule, message: dict[str, Any], direction: str, kind: str, request: Any) -> bool:
    m = rule.match
    if m.directions and direction not in m.directions:
        return False
    if m.kinds and kind not in m.kinds:
        return False
    if m.ids and ("id" not in message or str(message["id"]) not in {str(i) for i in m.ids}):
        return False
    if m.wants_request():
        about = message if kind != "response" else request
        if not isinstance(about, dict):
            return False
        method = about.get("method")
        if m.methods and method not in m.methods:
            return False
        if m.tools:
            params = about.get("params")
            tool = params.get("name") if method == "tools/call" and isinstance(params, dict) else None
            if tool not in m.tools:
                return False
    if m.filter is not None and not m.filter.matches(message, _REEL_DIR[direction]):
        return False
    if m.path is not None:
        hits = [0]

        def seen(value: Any) -> tuple[Any, int]:
            if m.equals is UNSET or value == m.equals:
                hits[0] += 1
            return value, 0

        m.path.apply(message, seen)
        if not hits[0]:
            return False
    return True


def _verdict(rule: Rule, message: dict[str, Any], kind: str) -> Verdict:
    a = rule.action
    if a.kind == "delay":
        return Verdict(rule, "forward", message, message, a.delay)
    if a.kind == "rewrite":
        new: Any = message
        if a.merge is not UNSET:
            new = merge_patch(new, a.merge)
        for path, value in a.sets:
            new = _set(new, path, value)
        return Verdict(rule, "forward", new, message, a.delay)
    if a.kind in ("drop", "timeout"):
        answer = None
        if a.kind == "drop" and kind == "request":
            answer = _error_answer(message, a.error or {**DEFAULT_DROP_ERROR,
                                                        "message": f"dropped by rule {rule.name}"})
        return Verdict(rule, "drop", None, message, a.delay, answer=answer)
    if a.kind == "error":
        assert a.error is not None
        if kind == "response":  # the answer itself becomes the error
            return Verdict(rule, "forward", _error_answer(message, a.error), message, a.delay)
        answer = _error_answer(message, a.error) if kind == "request" else None
        return Verdict(rule, "error" if answer is not None else "drop", None, message, a.delay, answer=answer)
    if a.kind == "malformed":
        if a.text is not None:
            raw = a.text.encode()
        else:
            whole = jsonio.dumps(message)
            raw = whole[: max(1, len(whole) // 2)]
        return Verdict(rule, "malformed", None, message, a.delay, raw=raw)
    return Verdict(rule, "close", None, message, a.delay)


def _error_answer(message: dict[str, Any], error: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": message.get("id"), "error": dict(error)}


def merge_patch(target: Any, patch: Any) -> Any:
    """``target`` with the JSON merge patch ``patch`` applied (RFC 7396), as a new value."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _set(value: Any, path: JsonPath, new: Any) -> Any:
    """``value`` with ``new`` at every match of ``path``; a last ``.name`` step that matches nothing is
    added to the objects its parent path points at (setting a member the message lacks)."""
    out, n = path.apply(value, lambda _: (new, 1))
    if n or not path.steps or path.steps[-1].kind != "key":
        return out
    last = path.steps[-1]
    parent = JsonPath(path.text.strip()[: last.at]) if last.at > 1 else None

    def add(obj: Any) -> tuple[Any, int]:
        return ({**obj, last.arg: new}, 1) if isinstance(obj, dict) else (obj, 0)

    if parent is None:
        return add(value)[0]
    return parent.apply(value, add)[0]
