"""What "the same" means when a recording meets a live peer.

Two uses, one module:

- **matching** a request against a recording (the mock server, and the replayer answering server
  requests): :func:`canonical_params` drops the ``_meta`` members that change on every run
  (``progressToken``, ``traceparent``, ``tracestate``, ``baggage``) and the 2026-07-28 era's per-request
  protocol plumbing (``io.modelcontextprotocol/*``: protocol version, client info and capabilities, log
  level), and serializes with sorted members, so equal params give equal bytes whatever their member
  order, and a request matches whichever era the client speaks.
- **comparing** a response with the recorded one (the replayer): :func:`comparable` keeps only
  ``result`` or ``error`` (never the ``id``), removes every ``_meta`` member at any depth, parses JSON
  held in ``content[].text`` strings and in a resource's ``contents[].text`` so it is compared as JSON,
  and deletes the paths the user ignores (:class:`IgnorePath`, ``$.result.content[0].text.timestamp``,
  with ``[*]`` and ``.*`` wildcards, ``$..name`` descent and ``[name=add]`` list items; read by the
  JSONPath parser of :mod:`mcpreel._infra.jsonpath`). :func:`delete_at` and :func:`mask_at` are the
  two edits a path makes to a view, shared with the rules people write (:mod:`.rules`).
  The 2026-07-28 era's volatile result fields (``ttlMs``, ``cacheScope``, ``requestState``) are never a
  difference, and ``resultType: "complete"`` equals its absence (a handshake-era result has none), so
  an answer compares the same in either era.
"""

from __future__ import annotations

import re
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.jsonpath import PathSyntaxError, Step, parse
from mcpreel.contract.defaults import effective_tool
from mcpreel.drafts import OUTPUTS_FIELD
from mcpreel.eras import is_protocol_meta_key
from mcpreel.errors import UsageError
from mcpreel.operations.facts import output_key

__all__ = [
    "MASK",
    "VOLATILE_META",
    "VOLATILE_RESULT",
    "IgnorePath",
    "canonical_params",
    "comparable",
    "delete_at",
    "mask_at",
    "strip_volatile_meta",
    "view_steps",
]

#: ``_meta`` members a client changes from run to run; never part of a match
VOLATILE_META = frozenset({"progressToken", "traceparent", "tracestate", "baggage"})
#: result members of the 2026-07-28 era that change from run to run (cache hints, opaque server state)
VOLATILE_RESULT = frozenset({"ttlMs", "cacheScope", "requestState"})


def strip_volatile_meta(params: Any) -> Any:
    """``params`` without the volatile ``_meta`` members (and without ``_meta`` once it is empty)."""
    if not isinstance(params, dict):
        return params
    meta = params.get("_meta")
    if meta is None:
        return params
    out = {k: v for k, v in params.items() if k != "_meta"}
    if isinstance(meta, dict):
        kept = {k: v for k, v in meta.items() if k not in VOLATILE_META and not is_protocol_meta_key(k)}
        if kept:
            out["_meta"] = kept
    else:
        out["_meta"] = meta
    return out


def canonical_params(params: Any, *, strict: bool = False) -> bytes:
    """The bytes a request's params are matched on (missing params and ``{}`` are the same)."""
    if params is None:
        params = {}
    if not strict:
        params = strip_volatile_meta(params)
    return jsonio.dumps_canonical(params)


# -- comparing responses --------------------------------------------------------------------------

#: what a mask puts in place of the part of a string it matches, on both sides
MASK = "<masked>"


def view_steps(text: str) -> tuple[Step, ...]:
    """The steps of a path into a compared view (the leading ``$`` may be left out:
    ``result.content[0]``); raises :class:`PathSyntaxError` for a path that cannot be read (``rest``: where
    reading stopped) or that names the whole view (``rest`` empty)."""
    src = text.strip()
    if src.startswith("$"):
        src = src[1:]
    elif src and not src.startswith((".", "[")):
        src = "." + src
    steps = parse("$" + src)
    if not steps:
        raise PathSyntaxError("the whole message cannot be ignored", "")
    return steps


class IgnorePath:
    """A path to leave out of a comparison: ``$.a.b[0]['c d'][*].e``, ``$..timestamp``,
    ``$.result.tools[name=add].description``; ``.*``/``[*]`` match any member or item, ``..name`` a
    member at any depth, ``[name=value]`` the items of a list named so (see :mod:`mcpreel.compare.lists`).

    The leading ``$`` may be left out (``result.content[0]``); a path that cannot be read is a
    :class:`~mcpreel.errors.UsageError` naming it.
    """

    def __init__(self, text: str):
        self.text = text
        try:
            self.steps = view_steps(text)
        except PathSyntaxError as exc:
            if not exc.rest:  # the whole view (see view_steps)
                raise UsageError(f"--ignore-path {text!r}: {exc}") from None
            raise UsageError(f"--ignore-path {text!r}: cannot read the path at {exc.rest!r} "
                             "(write it like $.result.content[0].text.timestamp)") from None

    def __repr__(self) -> str:
        return f"IgnorePath({self.text!r})"

    def delete(self, doc: Any) -> None:
        """Remove every value this path names from ``doc`` (in place)."""
        delete_at(doc, self.steps)


def delete_at(doc: Any, steps: tuple[Step, ...]) -> None:
    """Remove every value ``steps`` names from ``doc`` (in place; list items by position, from the end)."""
    _visit(doc, steps, 0, _delete)


def mask_at(doc: Any, steps: tuple[Step, ...], pattern: re.Pattern[str], placeholder: str = MASK) -> None:
    """Replace what ``pattern`` matches in every string at (or below) what ``steps`` names with
    ``placeholder`` (in place)."""
    def act(node: Any, keys: list[Any]) -> None:
        for key in keys:
            node[key] = _masked(node[key], pattern, placeholder)
    _visit(doc, steps, 0, act)


def _masked(value: Any, pattern: re.Pattern[str], placeholder: str) -> Any:
    if isinstance(value, str):
        return pattern.sub(placeholder, value)
    if isinstance(value, dict):
        return {k: _masked(v, pattern, placeholder) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v, pattern, placeholder) for v in value]
    return value


def _delete(node: Any, keys: list[Any]) -> None:
    for key in sorted(keys, reverse=True) if isinstance(node, list) else keys:
        del node[key]


def _visit(node: Any, steps: tuple[Step, ...], i: int, act: Any) -> None:
    """``act(container, keys)`` at what step ``i`` on names below ``node``."""
    kind, arg, at = steps[i]
    if kind == "desc":
        here = (Step("wild", None, at) if arg is None else Step("key", arg, at),) + steps[i + 1:]
        _visit(node, here, 0, act)
        children = list(node.values()) if isinstance(node, dict) else node if isinstance(node, list) else []
        for child in children:
            _visit(child, steps, i, act)
        return
    keys = _matching(node, kind, arg)
    if not keys:
        return
    if i == len(steps) - 1:
        act(node, keys)
        return
    for key in keys:
        _visit(node[key], steps, i + 1, act)


def _matching(node: Any, kind: str, arg: Any) -> list[Any]:
    if isinstance(node, dict):
        if kind == "wild":
            return list(node)
        return [arg] if kind == "key" and arg in node else []
    if isinstance(node, list):
        if kind == "wild":
            return list(range(len(node)))
        if kind == "index" and -len(node) <= arg < len(node):
            return [arg % len(node)]
        if kind == "keyed":
            member, want = arg
            return [i for i, item in enumerate(node) if isinstance(item, dict) and item.get(member) == want]
    return []


def _clean(value: Any) -> Any:
    """A deep copy without ``_meta`` members, with JSON text content parsed. Iterative: a value nested to
    the readers' limit (1,024 levels) is copied without recursing (issue 40: ``diff`` on such a value)."""
    if not isinstance(value, (dict, list)):
        return value
    root: list[Any] = [None]
    todo: list[tuple[Any, Any, Any]] = [(value, root, 0)]  # (a container to copy, where its copy goes, key)
    while todo:
        source, into, key = todo.pop()
        out: Any
        if isinstance(source, dict):
            out = {}
            for k, v in source.items():
                if k == "_meta":
                    continue
                out[k] = v
                if isinstance(v, (dict, list)):
                    todo.append((v, out, k))
            text = out.get("text")
            if isinstance(text, str) and (out.get("type") == "text" or isinstance(out.get("uri"), str)):
                parsed = _json_text(text)
                if parsed is not None:
                    out["text"] = parsed
        else:
            out = list(source)
            todo.extend((v, out, i) for i, v in enumerate(source) if isinstance(v, (dict, list)))
        into[key] = out
    return root[0]


def _json_text(text: str) -> Any:
    s = text.strip()
    if not s or s[0] not in "{[":
        return None
    try:
        parsed = jsonio.loads(s)
    except (ValueError, UnicodeDecodeError):
        return None
    return _clean(parsed) if isinstance(parsed, (dict, list)) else None


def comparable(message: Any, ignore: list[IgnorePath] | tuple[IgnorePath, ...] = ()) -> Any:
    """The part of a response that a comparison looks at: ``{"result": ...}`` or ``{"error": ...}``."""
    if not isinstance(message, dict):
        return _clean(message)
    view: dict[str, Any] = {}
    for key in ("result", "error"):
        if key in message:
            view[key] = _clean(message[key])
    result = view.get("result")
    if isinstance(result, dict):
        for key in VOLATILE_RESULT:
            result.pop(key, None)
        if result.get("resultType") == "complete":
            del result["resultType"]
        tools = result.get("tools")
        if isinstance(tools, list):  # a default spelled out (taskSupport "forbidden") is no change
            result["tools"] = [effective_tool(t) for t in tools]
        outputs = result.get(OUTPUTS_FIELD)
        if isinstance(outputs, list):  # SEP-3279's result variants: their order means nothing
            result[OUTPUTS_FIELD] = sorted(outputs, key=output_key)
    for path in ignore:
        path.delete(view)
    return view
