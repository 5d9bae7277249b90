"""How one replayed answer is judged against the recorded one: by meaning, in one view.

Every comparison of a replay goes through :func:`_view` (``comparable``, ``--ignore-path``, the rules of the
request's method and tool); :func:`_judge` gives a request its verdict (a refused probe refused again is the
same; the server's identity a note), :func:`_judge_digest` names a definition that changed under the
request (DigestChanged). Pure functions of the recorded and the live answer: no connection here.
"""

from __future__ import annotations

from typing import Any

from mcpreel._infra.nesting import cut_repr
from mcpreel.compare.jsondiff import Difference, diff
from mcpreel.compare.normalize import comparable
from mcpreel.compare.rules import CompareRule, suggest
from mcpreel.eras import (
    SERVER_INFO_KEY,
)
from mcpreel.operations.cassette import Turn
from mcpreel.operations.facts import (
    digest_refusal,
)
from mcpreel.replay.results import DEFINITION_CHANGED, ReplayOptions, RequestResult, _Refusal

#: requests that negotiate or probe rather than ask: refused then and now is the same, whatever the code
PROBES = frozenset({"server/discover", "initialize", "ping"})
#: the results that name the server (``serverInfo``): its name and version are information, never a difference
_IDENTIFIED = frozenset({"initialize", "server/discover"})


def _view(message: Any, options: ReplayOptions, method: str, tool: str | None) -> Any:
    """The one view a verdict compares: :func:`comparable` with ``--ignore-path``, then the rules for this
    request's method and tool (every comparison of a replay goes through here)."""
    view = comparable(message, options.ignore_paths)
    return options.rules.apply(view, method, tool) if options.rules is not None else view


def _refusal_of(answer: dict[str, Any] | None, error: str | None) -> str | None:
    """How an answer refused its request (``JSON-RPC error -32601``, ``HTTP 400``), or None when it did not."""
    if isinstance(answer, dict) and "error" in answer:
        code = answer["error"].get("code") if isinstance(answer["error"], dict) else None
        return f"JSON-RPC error {cut_repr(code, 80)}" if code is not None else "a JSON-RPC error"
    if answer is None and isinstance(error, _Refusal) and isinstance(error.status, int) and 400 <= error.status < 500:
        return f"HTTP {error.status}"
    return None


def _refused_then_and_now(ex: Turn, answer: dict[str, Any] | None, error: str | None) -> str | None:
    """The note of a plumbing refusal kept: a probe (``server/discover``, ...) refused in the recording and
    refused now, or any request the recording shows refused by the transport (an error tied to no id, what
    an HTTP 4xx carries) and refused now -- whatever either code. None otherwise."""
    recorded = ex.response
    if not isinstance(recorded, dict) or "error" not in recorded:
        return None
    if ex.method not in PROBES and recorded.get("id") is not None:
        return None
    then, now = _refusal_of(recorded, None), _refusal_of(answer, error)
    if then is None or now is None:
        return None
    return f"refused then and now ({then} -> {now}): a refused {ex.method or 'request'} is plumbing, not a difference"


def _server_info(message: Any) -> Any:
    """The identity a server gives in an ``initialize`` (``serverInfo``) or ``server/discover`` result (its
    ``_meta``, 2026-07-28), or None."""
    result = message.get("result") if isinstance(message, dict) else None
    if not isinstance(result, dict):
        return None
    meta = result.get("_meta")
    return result.get("serverInfo", meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else None)


def _identity_note(recorded: Any, live: Any) -> str | None:
    """A note when the server names itself otherwise now than in the recording (``recorded`` and ``live``
    are the answers as they came), else None."""
    was, now = _server_info(recorded), _server_info(live)
    if was == now:
        return None

    def named(info: Any) -> str:
        if not isinstance(info, dict):
            return "nothing"
        return " ".join(str(info[k]) for k in ("name", "version") if info.get(k) is not None) or "nothing"

    return f"the server names itself {named(now)} (recorded: {named(was)}); its identity is information, not a difference"


def _judge(result: RequestResult, ex: Turn, answer: dict[str, Any] | None, error: str | None,
           options: ReplayOptions) -> None:
    """A request's verdict: ``same``, ``changed``, ``error`` or ``unrecorded``, its differences, notes and
    suggested rules. Judged by meaning: lists by key (:mod:`mcpreel.compare.lists`), a refused probe as
    refused then and now whatever its code, the server's identity as a note."""
    result.response = answer
    refused = _refused_then_and_now(ex, answer, error) if ex.response is not None else None
    error = None if error is None else str(error)  # a plain string in the report, whatever carried it
    if ex.response is None:
        result.status = "unrecorded"
        result.error = error if answer is None else None
        return
    if refused is not None:
        result.status = "same"
        result.notes.append(refused)
        return
    if answer is None:
        result.status = "error"
        result.error = error or "no response"
        return
    recorded, live = _view(ex.response, options, ex.method, result.tool), _view(answer, options, ex.method, result.tool)
    if ex.method in _IDENTIFIED:
        note = _identity_note(ex.response, answer)
        if note is not None:
            result.notes.append(note)
        for view in (recorded, live):  # information, never a difference
            if isinstance(view, dict) and isinstance(view.get("result"), dict):
                view["result"].pop("serverInfo", None)
    result.diff = diff(recorded, live)
    if not result.diff and ("error" in ex.response) != ("error" in answer):
        # an error where a result was recorded (or the reverse) is a difference whatever is ignored
        was, now = ("error", "result") if "error" in ex.response else ("result", "error")
        result.diff = [Difference("$", "changed", recorded=f"a JSON-RPC {was}", new=f"a JSON-RPC {now}")]
    result.status = "changed" if result.diff else "same"
    seen: set[CompareRule] = set()
    for difference in result.diff:
        rule = suggest(difference, ex.method, result.tool)
        if rule is not None and rule not in seen:
            seen.add(rule)
            result.suggestions.append(rule)


def _judge_digest(result: RequestResult, ex: Turn, answer: dict[str, Any] | None, status: int | None) -> None:
    """A live DigestChanged refusal (HTTP 409) where the recording's server served the request: the
    server's definitions moved since the recording -- its own verdict, pointing at ``mcpreel contract``."""
    if result.status != "changed" or not digest_refusal(answer, status):
        return
    if digest_refusal(ex.response, ex.wire.response_status if ex.wire is not None else None):
        return  # refused then too: an ordinary comparison
    result.status = DEFINITION_CHANGED
    result.error = ("the server refused the request as made against changed definitions (DigestChanged"
                    + (f", HTTP {status}" if status else "") + "): its tools, prompts or resources changed since "
                    "the recording; `mcpreel contract` shows how")
