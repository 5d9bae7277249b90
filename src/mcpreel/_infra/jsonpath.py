"""JSONPath, the one parser: the subset that points at a member of a JSON value wherever it sits.

``$``, ``.name``, ``['name']``/``["name"]`` (escapes as in RFC 9535: ``\\n``, ``\\uXXXX``, ``\\'``; any other
``\\x`` is ``x``), ``[n]`` (negative from the end), ``[*]``, ``.*``, ``..name``/``..*`` (recursive
descent) and ``[name=add]`` / ``[uri="file:///a b"]`` (the items of an array whose member ``name`` or ``uri``
is that string: how replay names an item of a list compared by key): ``$.params.arguments.email``,
``$.result.content[*].text``, ``$..apiKey``, ``$.result.tools[name=add].description``.

:func:`parse` turns a path into :class:`Step` values; two users read them: :class:`JsonPath` (the
redaction rules) rewrites the matches copy on write, so the caller can tell "nothing matched" by
identity; :mod:`mcpreel.compare.normalize` (``--ignore-path`` and the compare rules) deletes or masks
them in a compared view.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from mcpreel._infra import jsonio

__all__ = ["JsonPath", "PathSyntaxError", "Step", "parse"]

_TOKEN = re.compile(
    r"""\.\.(?P<dname>[A-Za-z_$][\w$-]*|\*)"""
    r"""|\.(?P<name>[A-Za-z_$][\w$-]*|\*)"""
    r"""|\[\s*(?:(?P<index>-?\d+)|'(?P<sq>(?:[^'\\]|\\.)*)'|"(?P<dq>(?:[^"\\]|\\.)*)"|(?P<star>\*))\s*\]"""
    r"""|\[\s*(?P<kname>[A-Za-z_$][\w$-]*)\s*=\s*(?:'(?P<ksq>(?:[^'\\]|\\.)*)'|"(?P<kdq>(?:[^"\\]|\\.)*)"|"""
    r"""(?P<kbare>[^\]'"\s](?:[^\]]*[^\]\s])?))\s*\]"""
)
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|.)", re.DOTALL)
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class Step(NamedTuple):
    """One step of a path: ``kind`` is ``key`` (``arg`` the name), ``index`` (``arg`` an int), ``wild``
    (any member or item), ``desc`` (``arg`` a name, or None for ``..*``) or ``keyed`` (``arg`` a
    ``(member, value)`` pair: the array items whose ``member`` is the string ``value``); ``at`` is where
    it starts in the path's text, for error messages."""

    kind: str
    arg: Any
    at: int


class PathSyntaxError(ValueError):
    """A path that cannot be read; ``rest`` is the text from where reading stopped."""

    def __init__(self, message: str, rest: str):
        super().__init__(message)
        self.rest = rest


def _unescape(raw: str) -> str:
    def one(m: re.Match[str]) -> str:
        c = m.group(1)
        if len(c) == 5:
            return chr(int(c[1:], 16))
        return _ESCAPES.get(c, c)

    return _ESCAPE.sub(one, raw) if "\\" in raw else raw


def parse(text: str) -> tuple[Step, ...]:
    """The steps of ``text`` (surrounding blanks ignored), which starts with ``$``."""
    s = text.strip()
    if not s.startswith("$"):
        raise PathSyntaxError("a JSONPath starts with $", s)
    pos = 1
    steps: list[Step] = []
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if m is None:
            raise PathSyntaxError(f"cannot read the path at {s[pos:]!r}", s[pos:])
        if m.group("dname") is not None:
            steps.append(Step("desc", None if m.group("dname") == "*" else m.group("dname"), pos))
        elif m.group("name") is not None:
            name = m.group("name")
            steps.append(Step("wild", None, pos) if name == "*" else Step("key", name, pos))
        elif m.group("index") is not None:
            steps.append(Step("index", int(m.group("index")), pos))
        elif m.group("star") is not None:
            steps.append(Step("wild", None, pos))
        elif m.group("kname") is not None:
            bare = m.group("kbare")
            value = bare if bare is not None else _unescape(m.group("ksq") if m.group("ksq") is not None
                                                            else m.group("kdq"))
            steps.append(Step("keyed", (m.group("kname"), value), pos))
        else:
            raw = m.group("sq") if m.group("sq") is not None else m.group("dq")
            steps.append(Step("key", _unescape(raw), pos))
        pos = m.end()
    return tuple(steps)


class JsonPath:
    """A parsed path that rewrites what it matches (see the module docstring)."""

    __slots__ = ("text", "steps", "_deep")

    def __init__(self, text: str):
        self.text = text
        self.steps = parse(text)
        # a recursive descent follows the value down, up to the readers' 1024 levels (three frames a level);
        # a path of many steps recurses once a step: both are walked with room to recurse
        self._deep = len(self.steps) > 100 or any(step.kind == "desc" for step in self.steps)

    def apply(self, value: Any, fn: Any, *, into_text: bool = False) -> tuple[Any, int]:
        """``value`` with ``fn(v) -> (new, changes)`` applied at every match; (copy, total changes).

        ``into_text``: a string met where the path goes on (``$.result.content[0].text.sent_to``) or
        walked by recursive descent (``$..sent_to``) that holds a JSON object or array is parsed, the path
        goes on inside it, and a changed document is encoded back into the string: tools carry their
        JSON results as text, and a path that stopped at the string would match nothing, silently.
        """
        if not self._deep:
            return _apply(value, self.steps, 0, fn, into_text)
        from mcpreel._infra.nesting import recursion_room

        with recursion_room(per_level=4):
            return _apply(value, self.steps, 0, fn, into_text)

    def __repr__(self) -> str:
        return f"JsonPath({self.text!r})"


def _json_in_text(value: str) -> Any:
    if value.lstrip()[:1] not in ("{", "["):
        return None
    try:
        inner = jsonio.loads(value)
    except (ValueError, UnicodeDecodeError):
        return None
    return inner if isinstance(inner, (dict, list)) else None


def _apply(value: Any, steps: tuple[Step, ...], i: int, fn: Any, text: bool = False) -> tuple[Any, int]:
    if i == len(steps):
        return fn(value)
    if text and isinstance(value, str):
        inner = _json_in_text(value)
        if inner is None:
            return value, 0
        new_inner, n = _apply(inner, steps, i, fn, text)
        return (jsonio.dumps_str(new_inner), n) if n else (value, 0)
    kind, arg, at = steps[i]
    if kind == "key":
        if isinstance(value, dict) and arg in value:
            new, n = _apply(value[arg], steps, i + 1, fn, text)
            if n:
                value = {**value, arg: new}
            return value, n
        return value, 0
    if kind == "index":
        if isinstance(value, list) and -len(value) <= arg < len(value):
            new, n = _apply(value[arg], steps, i + 1, fn, text)
            if n:
                value = list(value)
                value[arg] = new
            return value, n
        return value, 0
    if kind == "wild":
        return _each(value, lambda v: _apply(v, steps, i + 1, fn, text))
    if kind == "keyed":
        if not isinstance(value, list):
            return value, 0
        member, want = arg
        return _each(value, lambda v: _apply(v, steps, i + 1, fn, text)
                     if isinstance(v, dict) and v.get(member) == want else (v, 0))
    # recursive descent: the rest of the path from here and from every node below
    total = 0
    if arg is None:
        value, n = _each(value, lambda v: _apply(v, steps, i + 1, fn, text))
    else:
        value, n = _apply(value, (Step("key", arg, at),) + steps[i + 1:], 0, fn, text)
    total += n
    value, n = _each(value, lambda v: _apply(v, steps, i, fn, text))
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

