"""JSONPath, the subset a rule needs to point at a member of a JSON-RPC message wherever it sits.

``$``, ``.name``, ``['name']``, ``[n]`` (negative from the end), ``[*]``, ``.*`` and ``..name``
(recursive descent): ``$.params.arguments.email``, ``$.result.content[*].text``, ``$..apiKey``.
:meth:`JsonPath.apply` rewrites copy on write: a value is copied only along the paths that changed, so
the caller can tell "nothing matched" by identity.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["JsonPath"]

_PATH_TOKEN = re.compile(
    r"""\.\.(?P<dname>[A-Za-z_$][\w$-]*|\*)"""
    r"""|\.(?P<name>[A-Za-z_$][\w$-]*|\*)"""
    r"""|\[\s*(?:(?P<index>-?\d+)|'(?P<sq>(?:[^'\\]|\\.)*)'|"(?P<dq>(?:[^"\\]|\\.)*)"|(?P<star>\*))\s*\]"""
)


class JsonPath:
    """``$``, ``.name``, ``['name']``, ``[n]``, ``[*]``, ``.*`` and ``..name`` (recursive descent).

    Enough to point at a member of a JSON-RPC message wherever it sits:
    ``$.params.arguments.email``, ``$.result.content[*].text``, ``$..apiKey``.
    """

    __slots__ = ("text", "steps")

    def __init__(self, text: str):
        self.text = text
        s = text.strip()
        if not s.startswith("$"):
            raise ValueError("a JSONPath starts with $")
        pos = 1
        steps: list[tuple[str, Any]] = []
        while pos < len(s):
            m = _PATH_TOKEN.match(s, pos)
            if m is None:
                raise ValueError(f"cannot read the path at {s[pos:]!r}")
            if m.group("dname") is not None:
                steps.append(("desc", None if m.group("dname") == "*" else m.group("dname")))
            elif m.group("name") is not None:
                steps.append(("wild", None) if m.group("name") == "*" else ("key", m.group("name")))
            elif m.group("index") is not None:
                steps.append(("index", int(m.group("index"))))
            elif m.group("star") is not None:
                steps.append(("wild", None))
            else:
                raw = m.group("sq") if m.group("sq") is not None else m.group("dq")
                steps.append(("key", re.sub(r"\\(.)", r"\1", raw)))
            pos = m.end()
        self.steps = tuple(steps)

    def apply(self, value: Any, fn: Any) -> tuple[Any, int]:
        """``value`` with ``fn(v) -> (new, changes)`` applied at every match; (copy, total changes)."""
        return _apply(value, self.steps, 0, fn)

    def __repr__(self) -> str:
        return f"JsonPath({self.text!r})"


def _apply(value: Any, steps: tuple[tuple[str, Any], ...], i: int, fn: Any) -> tuple[Any, int]:
    if i == len(steps):
        return fn(value)
    kind, arg = steps[i]
    if kind == "key":
        if isinstance(value, dict) and arg in value:
            new, n = _apply(value[arg], steps, i + 1, fn)
            if n:
                value = {**value, arg: new}
            return value, n
        return value, 0
    if kind == "index":
        if isinstance(value, list) and -len(value) <= arg < len(value):
            new, n = _apply(value[arg], steps, i + 1, fn)
            if n:
                value = list(value)
                value[arg] = new
            return value, n
        return value, 0
    if kind == "wild":
        return _each(value, lambda v: _apply(v, steps, i + 1, fn))
    # recursive descent: the rest of the path from here and from every node below
    total = 0
    if arg is None:
        value, n = _each(value, lambda v: _apply(v, steps, i + 1, fn))
    else:
        value, n = _apply(value, (("key", arg),) + steps[i + 1:], 0, fn)
    total += n
    value, n = _each(value, lambda v: _apply(v, steps, i, fn))
    return value, total + n


def _each(value: Any, fn: Any) -> tuple[Any, int]:
    total = 0
    if isinstance(value, dict):
        out = None
        for k, v in value.items():
            new, n = fn(v)
            if n:
                if out is None:
                    out = dict(value)
                out[k] = new
                total += n
        return (out if out is not None else value), total
    if isinstance(value, list):
        out_l = None
        for idx, v in enumerate(value):
            new, n = fn(v)
            if n:
                if out_l is None:
                    out_l = list(value)
                out_l[idx] = new
                total += n
        return (out_l if out_l is not None else value), total
    return value, 0

