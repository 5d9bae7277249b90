"""How deep a value may be nested: the readers' limit, and the room a recursive walk needs to reach it.

:data:`MAX_DEPTH` is what the JSON readers accept (orjson refuses a document nested deeper than 1024
levels), so it is the depth every walk over a read value must handle. Walks written here are iterative;
the C walks of the standard library (``pickle``, the ``json`` encoder) recurse and count against the
interpreter's recursion limit (1000 by default, less the frames already on the stack), and so do the
few recursive Python walks that follow a value down (a JSONPath's recursive descent); :func:`recursion_room`
lifts that limit for the length of such a call, far enough for a value at the readers' limit (the C
stack holds that easily: those walks use little of it per level, and Python calls none since 3.11).
"""

from __future__ import annotations

import itertools
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["MAX_DEPTH", "cut_repr", "recursion_room"]

#: the deepest nesting a reader accepts (orjson's limit); every walk over a read value reaches it
MAX_DEPTH = 1024
#: the interpreter's limit when this module was imported: the frames already on a stack are fewer
_BASE = sys.getrecursionlimit()
_lock = threading.Lock()
_raised = 0  # how many callers are inside recursion_room (the limit is put back when the last leaves)
_before = 0


@contextmanager
def recursion_room(per_level: int = 2) -> Iterator[None]:
    """Run the block with room for a walk that takes up to ``per_level`` frames per level of a value at
    :data:`MAX_DEPTH` levels (pickle and the json encoder take one or two), then put the interpreter's
    limit back once every thread inside has left. Cheap: no frame is counted, the limit is only raised."""
    global _raised, _before
    needed = _BASE + per_level * MAX_DEPTH + 200
    with _lock:
        if _raised == 0:
            _before = sys.getrecursionlimit()
        _raised += 1
        if sys.getrecursionlimit() < needed:
            sys.setrecursionlimit(needed)
    try:
        yield
    finally:
        with _lock:
            _raised -= 1
            if _raised == 0:
                sys.setrecursionlimit(_before)


class _Said(str):
    """A piece of punctuation already written out (not a value to show with ``repr``)."""


def cut_repr(value: Any, limit: int = 400) -> str:
    """``str(value)`` for a value read from a session (dicts, lists, scalars), walked iteratively and cut at
    ``limit`` characters (then ending in ``…``): the same text as ``str`` when it is short, and neither a
    :class:`RecursionError` at the readers' depth nor a megabyte of text for a huge value shown in a line."""
    if not isinstance(value, (dict, list, tuple)):
        text = value if isinstance(value, str) else repr(value)
        return text if len(text) <= limit else text[: limit - 1] + "…"
    out: list[str] = []
    size = 0
    stack: list[Any] = [value]
    while stack and size <= limit:
        item = stack.pop()
        if isinstance(item, _Said):
            piece = str(item)
        elif isinstance(item, dict):
            piece = "{"
            stack.append(_Said("}"))
            pairs = list(itertools.islice(item.items(), limit))  # each shows at least a character
            if len(item) > limit:
                stack.append(_Said(" " * (limit + 1)))  # more than fits: the text is cut
            for i, (k, v) in enumerate(reversed(pairs)):
                stack.append(v)
                stack.append(_Said(repr(k)[: limit + 1] + ": "))
                if i < len(pairs) - 1:
                    stack.append(_Said(", "))
        elif isinstance(item, (list, tuple)):
            piece = "[" if isinstance(item, list) else "("
            stack.append(_Said("]" if isinstance(item, list) else (",)" if len(item) == 1 else ")")))
            values = item[:limit]
            if len(item) > limit:
                stack.append(_Said(" " * (limit + 1)))
            for i, v in enumerate(reversed(values)):
                stack.append(v)
                if i < len(values) - 1:
                    stack.append(_Said(", "))
        else:
            piece = repr(item)[: limit + 1]
        out.append(piece)
        size += len(piece)
    text = "".join(out)
    return text if len(text) <= limit and not stack else text[: limit - 1] + "…"
