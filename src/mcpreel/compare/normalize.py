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
  held in ``content[].text`` strings so it is compared as JSON, and deletes the paths the user ignores
  (:class:`IgnorePath`, ``$.result.content[0].text.timestamp``, with ``[*]`` and ``.*`` wildcards;
  read by the JSONPath parser of :mod:`mcpreel._infra.jsonpath`).
  The 2026-07-28 era's volatile result fields (``ttlMs``, ``cacheScope``, ``requestState``) are never a
  difference, and ``resultType: "complete"`` equals its absence (a handshake-era result has none), so
  an answer compares the same in either era.
"""

from __future__ import annotations

from typing import Any, NoReturn

from mcpreel._infra import jsonio
from mcpreel._infra.jsonpath import PathSyntaxError, parse
from mcpreel.eras import is_protocol_meta_key
from mcpreel.errors import UsageError

__all__ = [
    "VOLATILE_META",
    "VOLATILE_RESULT",
    "IgnorePath",
    "canonical_params",
    "comparable",
    "strip_volatile_meta",
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

_WILD = object()


class IgnorePath:
    """A path to leave out of a comparison: ``$.a.b[0]['c d'][*].e``; ``.*``/``[*]`` match any member.

    The leading ``$`` may be left out (``result.content[0]``); recursive descent and negative indexes
    are not for deleting and are refused like any path that cannot be read.
    """

    def __init__(self, text: str):
        self.text = text
        src = text.strip()
        if src.startswith("$"):
            src = src[1:]
        elif src and not src.startswith((".", "[")):
            src = "." + src
        try:
            steps = parse("$" + src)
        except PathSyntaxError as exc:
            self._unreadable(exc.rest)
        self.segments: list[Any] = []
        for kind, arg, at in steps:
            if kind == "desc" or (kind == "index" and arg < 0):
                self._unreadable(src[at - 1:])
            self.segments.append(_WILD if kind == "wild" else arg)
        if not self.segments:
            raise UsageError(f"--ignore-path {text!r}: the whole message cannot be ignored")

    def _unreadable(self, rest: str) -> NoReturn:
        raise UsageError(f"--ignore-path {self.text!r}: cannot read the path at {rest!r} "
                         "(write it like $.result.content[0].text.timestamp)")

    def __repr__(self) -> str:
        return f"IgnorePath({self.text!r})"

    def delete(self, doc: Any) -> None:
        """Remove every value this path names from ``doc`` (in place)."""
        _delete(doc, self.segments)


def _delete(node: Any, segs: list[Any]) -> None:
    head, rest = segs[0], segs[1:]
    if isinstance(node, dict):
        keys = list(node) if head is _WILD else ([head] if isinstance(head, str) and head in node else [])
        for key in keys:
            if rest:
                _delete(node[key], rest)
            else:
                del node[key]
    elif isinstance(node, list):
        if head is _WILD:
            idxs = list(range(len(node)))
        elif isinstance(head, int) and head < len(node):
            idxs = [head]
        else:
            idxs = []
        if rest:
            for i in idxs:
                _delete(node[i], rest)
        else:
            for i in reversed(idxs):
                del node[i]


def _clean(value: Any) -> Any:
    """A deep copy without ``_meta`` members, with JSON text content parsed."""
    if isinstance(value, dict):
        out = {k: _clean(v) for k, v in value.items() if k != "_meta"}
        text = out.get("text")
        if isinstance(text, str) and out.get("type") == "text":
            parsed = _json_text(text)
            if parsed is not None:
                out["text"] = parsed
        return out
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


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
    for path in ignore:
        path.delete(view)
    return view
