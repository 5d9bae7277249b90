"""Faithful, fast JSON.

orjson is the fast path. It is not faithful everywhere, so this module falls back to the standard
library exactly where it is not:

- integers beyond 64 bits: orjson *silently* turns them into floats when reading and refuses them
  when writing. A cheap scan for a run of 19+ digits sends such input to the stdlib parser, which keeps
  them as ``int``; ``dumps`` falls back when orjson refuses.
- ``NaN``/``Infinity``: not JSON, but some peers send them. orjson refuses them; the stdlib reads them
  into :class:`JSONConstant` floats, which orjson refuses to write, so ``dumps`` writes them back as
  they came.
- lone surrogates (``"\\ud800"``): read by the stdlib, written back escaped.

``dumps`` always gives compact JSON with UTF-8 unescaped and member order kept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import orjson

__all__ = [
    "JSONConstant",
    "JSONDecodeError",
    "all_containers",
    "dumps",
    "dumps_canonical",
    "dumps_line",
    "dumps_str",
    "loads",
    "loads_strict",
    "might_lose_ints",
    "type_name",
]

JSONDecodeError = json.JSONDecodeError

# 19 digits reach past the signed 64-bit range; orjson turns such integers into floats. The scan maps
# every digit to "0" and looks for a run of 19: two C passes, several times faster than a regex.
_DIGITS_TO_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)
_RUN = b"0" * 19
_LONG_DIGITS_STR = re.compile(r"\d{19}")


class JSONConstant(float):
    """A NaN or an infinity that was read from input; written back as the same token."""

    __slots__ = ()


_CONSTANTS = {"NaN": JSONConstant("nan"), "Infinity": JSONConstant("inf"), "-Infinity": JSONConstant("-inf")}


def _parse_constant(name: str) -> float:
    return _CONSTANTS[name]


def _stdlib_loads(data: bytes | str, **kw: Any) -> Any:
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data).decode("utf-8")
    try:
        return json.loads(data, parse_constant=_parse_constant, **kw)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def might_lose_ints(data: bytes | str) -> bool:
    """True when ``data`` holds a digit run orjson could turn into a float (checked per block)."""
    if isinstance(data, str):
        return _LONG_DIGITS_STR.search(data) is not None
    return data.translate(_DIGITS_TO_ZERO).find(_RUN) >= 0


def loads(data: bytes | str) -> Any:
    """Parse one JSON document faithfully. Raises :class:`json.JSONDecodeError` (or ``ValueError``)."""
    if might_lose_ints(data):
        return _stdlib_loads(data)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        # NaN, Infinity, lone surrogates: the stdlib reads them; real syntax errors raise here again
        return _stdlib_loads(data)


def all_containers(items: Sequence[bytes]) -> bool:
    """True when every item is one JSON object or array: the check a recorder makes before it splices
    lines into its records as they are (:meth:`mcpreel.formats.reel.ReelWriter.write_frames`).

    orjson alone, once per item, the parsed values thrown away: the values' fidelity does not matter
    here, the speed does (half the cost of :func:`loads`). False also for what only the stdlib reads
    (NaN, lone surrogates): the caller then classifies item by item with :func:`loads`.
    """
    parse = orjson.loads
    try:
        for item in items:
            value = parse(item)
            if type(value) is not dict and type(value) is not list:
                return False
    except ValueError:  # orjson.JSONDecodeError: syntax, UTF-8, nesting depth
        return False
    return True


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate object member {key!r}")
        out[key] = value
    return out


def loads_strict(data: bytes | str) -> Any:
    """Like :func:`loads`, and also refuse duplicate object members (``--strict``)."""
    return _stdlib_loads(data, object_pairs_hook=_no_duplicates)


def _deep_ok(encode: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    """``encode``, tried again with room to recurse when a value nested as deep as the readers accept
    (:data:`~mcpreel._infra.nesting.MAX_DEPTH`: orjson writes only 254 levels, the stdlib recurses)
    meets the interpreter's recursion limit."""

    def encode_deep(obj: Any) -> bytes:
        try:
            return encode(obj)
        except RecursionError:
            from mcpreel._infra.nesting import recursion_room

            with recursion_room():
                return encode(obj)

    encode_deep.__doc__ = encode.__doc__
    return encode_deep


@_deep_ok
def _stdlib_dumps(obj: Any) -> bytes:
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # a lone surrogate cannot be UTF-8: keep it as an escape, as it came in
        return json.dumps(obj, ensure_ascii=True, separators=(",", ":"), allow_nan=True).encode("ascii")


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes, UTF-8 unescaped, member order kept."""
    try:
        return orjson.dumps(obj)
    except TypeError:
        return _stdlib_dumps(obj)


def dumps_line(obj: Any) -> bytes:
    """:func:`dumps` and a newline, made in one buffer (``dumps(obj) + b"\\n"`` copies a big line again)."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        return _stdlib_dumps(obj) + b"\n"


@_deep_ok
def dumps_canonical(obj: Any) -> bytes:
    """Compact JSON with object members sorted: equal values give equal bytes (match keys, hashes)."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        try:
            text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=True, sort_keys=True)
            return text.encode("utf-8", "surrogatepass")
        except TypeError:
            # members that are not all strings cannot be sorted; keep their order
            return _stdlib_dumps(obj)


#: levels an indented document is indented to; a member nested deeper is written compact on its line.
#: Indentation costs each line two spaces a level: a value nested 1,000 levels deep is a megabyte of spaces
#: indented whole (a 1 MB session of such values became 437 MB of qai in two minutes), and nobody reads it.
INDENT_LEVELS = 32
#: in an indented document, a line this deep or deeper means a member past INDENT_LEVELS (JSON text holds no
#: raw newline inside a string: every newline is structure)
_TOO_DEEP = b"\n" + b" " * (2 * INDENT_LEVELS + 2)


def indented_too_deep(block: bytes, depth: int = 0) -> bool:
    """Whether ``block`` (indented JSON, standing ``depth`` spaces deep) indents a member past
    :data:`INDENT_LEVELS` levels (it is then made again by :func:`dumps_indented`, deep members compact)."""
    return (b"\n" + b" " * (2 * INDENT_LEVELS + 2 + depth)) in block if depth else _TOO_DEEP in block


def dumps_indented(obj: Any) -> bytes:
    """Like :func:`dumps`, indented by two spaces (documents people read: qai sessions, HAR), up to
    :data:`INDENT_LEVELS` levels: a member nested deeper is written compact (linear in the value, where
    indenting it whole grows with the square of its depth)."""
    try:
        block = orjson.dumps(obj, option=orjson.OPT_INDENT_2)
    except TypeError:  # deeper than orjson writes, an integer past 64 bits, a lone surrogate, NaN
        return _indented(obj, _stdlib_dumps)
    return _indented(obj, dumps) if _TOO_DEEP in block else block


def _indented(obj: Any, leaf: Callable[[Any], bytes]) -> bytes:
    """``obj`` indented by two spaces to :data:`INDENT_LEVELS` levels, each scalar (and each container at that
    level) encoded by ``leaf``: the bytes of ``orjson``'s ``OPT_INDENT_2`` where that reaches. Iterative."""
    out: list[bytes] = []
    stack: list[Any] = [(obj, 0)]
    while stack:
        item = stack.pop()
        if type(item) is bytes:
            out.append(item)
            continue
        value, level = item
        if not isinstance(value, (dict, list)) or not value or level >= INDENT_LEVELS:
            out.append(leaf(value))
            continue
        pad = b"\n" + b"  " * (level + 1)
        if isinstance(value, dict):
            stack.append(b"\n" + b"  " * level + b"}")
            pairs = list(value.items())
            for i in range(len(pairs) - 1, -1, -1):
                key, member = pairs[i]
                stack.append((member, level + 1))
                stack.append((b"," if i else b"{") + pad + leaf(key if isinstance(key, str) else str(key)) + b": ")
        else:
            stack.append(b"\n" + b"  " * level + b"]")
            for i in range(len(value) - 1, -1, -1):
                stack.append((value[i], level + 1))
                stack.append((b"," if i else b"[") + pad)
    return b"".join(out)


def dumps_str(obj: Any) -> str:
    """:func:`dumps` as ``str``."""
    return dumps(obj).decode("utf-8", "surrogatepass")


def type_name(value: Any) -> str:
    """What a parsed JSON value is, in JSON's words, for error messages: ``found an array``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def error_reason(exc: BaseException) -> str:
    """A short reason for a JSON error, without the position noise orjson adds."""
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} (column {exc.colno})"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 ({exc.reason} at byte {exc.start})"
    return str(exc)
