"""Path-level JSON difference: what changed, where, from what to what.

Paths are written the way ``--ignore-path`` reads them (``$.result.content[0].text.count``), so a
difference a user sees can be pasted back to ignore it. Objects are compared member by member, arrays
item by item -- except a list result (``$.result.tools``, ``resources``, ...), compared as a set keyed
by name or URI (:mod:`.lists`: ``$.result.tools[name=add].description``, order no difference); ``true``
is never equal to ``1`` (Python's ``True == 1`` is not JSON's), while ``1`` and ``1.0`` are the same
number.

A changed string too long for a line is shown as a window around its first differing character
(:func:`window`), on both sides, so the line shows where they differ, not only how they begin.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mcpreel._infra import jsonio
from mcpreel.compare.lists import collection_key, item_path

__all__ = ["CONTEXT", "Difference", "diff", "format_path", "short", "window"]

#: characters of context shown either side of the first difference of two long strings
CONTEXT = 30

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")
_MISSING = object()


@dataclass(frozen=True, slots=True)
class Difference:
    """One difference. ``kind`` is ``changed``, ``added`` (only in the new) or ``removed`` (only recorded)."""

    path: str
    kind: str
    recorded: Any = None
    new: Any = None

    def to_json(self) -> dict[str, Any]:
        """The difference as data (JSON reports); the side a kind lacks is left out rather than null."""
        out: dict[str, Any] = {"path": self.path, "kind": self.kind}
        if self.kind != "added":
            out["recorded"] = self.recorded
        if self.kind != "removed":
            out["new"] = self.new
        return out

    def describe(self, width: int = 80) -> str:
        """One line for a person, values cut to ``width`` so a huge result does not flood the terminal."""
        if self.kind == "added":
            return f"{self.path}: added {short(self.new, width)}"
        if self.kind == "removed":
            return f"{self.path}: removed (was {short(self.recorded, width)})"
        a, b = self.recorded, self.new
        if isinstance(a, str) and isinstance(b, str) and max(len(jsonio.dumps_str(a)), len(jsonio.dumps_str(b))) > width:
            at = _first_difference(a, b)
            return f"{self.path}: {window(a, at)} -> {window(b, at)} (first difference at character {at + 1})"
        return f"{self.path}: {short(a, width)} -> {short(b, width)}"


def _first_difference(a: str, b: str) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def window(text: str, at: int, context: int = CONTEXT) -> str:
    """``text`` around character ``at`` (``context`` characters either side) as a JSON string, with an
    ellipsis on each side where it is cut: ``…"ed at 12:00:01Z by"…``."""
    start, end = max(0, at - context), min(len(text), at + context)
    return ("…" if start else "") + jsonio.dumps_str(text[start:end]) + ("…" if end < len(text) else "")


def short(value: Any, width: int = 80) -> str:
    """A value as compact JSON, cut to ``width`` characters."""
    text = jsonio.dumps_str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def format_path(parent: str, key: str | int) -> str:
    """A JSONPath a person can paste back into ``--ignore-path``: dotted names where they are identifiers, quoted
    otherwise."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if _IDENT.match(key):
        return f"{parent}.{key}"
    return f"{parent}[{jsonio.dumps_str(key)}]"


def _same_scalar(a: Any, b: Any) -> bool:
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (a != a and b != b)  # NaN equals NaN here: it was recorded and came back
    return type(a) is type(b) and a == b


def diff(recorded: Any, new: Any, path: str = "$", limit: int = 1000) -> list[Difference]:
    """Every difference between two JSON values (at most ``limit``), in document order."""
    out: list[Difference] = []
    _walk(recorded, new, path, out, limit)
    return out


def _walk(a: Any, b: Any, path: str, out: list[Difference], limit: int) -> None:
    if len(out) >= limit:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key, av in a.items():
            bv = b.get(key, _MISSING)
            sub = format_path(path, key)
            if bv is _MISSING:
                out.append(Difference(sub, "removed", recorded=av))
            else:
                _walk(av, bv, sub, out, limit)
            if len(out) >= limit:
                return
        for key, bv in b.items():
            if key not in a:
                out.append(Difference(format_path(path, key), "added", new=bv))
                if len(out) >= limit:
                    return
        return
    if isinstance(a, list) and isinstance(b, list):
        key = collection_key(path, a, b)
        if key is not None:
            _walk_keyed(a, b, path, key, out, limit)
            return
        for i in range(max(len(a), len(b))):
            sub = format_path(path, i)
            if i >= len(b):
                out.append(Difference(sub, "removed", recorded=a[i]))
            elif i >= len(a):
                out.append(Difference(sub, "added", new=b[i]))
            else:
                _walk(a[i], b[i], sub, out, limit)
            if len(out) >= limit:
                return
        return
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)) or not _same_scalar(a, b):
        out.append(Difference(path, "changed", recorded=a, new=b))


def _walk_keyed(a: list[Any], b: list[Any], path: str, key: str, out: list[Difference], limit: int) -> None:
    """Two list results as sets keyed by ``key``: removed and changed items in recorded order, then the added."""
    theirs = {item[key]: item for item in b}
    for item in a:
        sub = item_path(path, key, item[key])
        other = theirs.get(item[key], _MISSING)
        if other is _MISSING:
            out.append(Difference(sub, "removed", recorded=item))
        else:
            _walk(item, other, sub, out, limit)
        if len(out) >= limit:
            return
    mine = {item[key] for item in a}
    for item in b:
        if item[key] not in mine:
            out.append(Difference(item_path(path, key, item[key]), "added", new=item))
            if len(out) >= limit:
                return
