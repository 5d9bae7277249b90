"""How deep a value may be nested: the readers' limit, and the room a recursive walk needs to reach it.

:data:`MAX_DEPTH` is what the JSON readers accept (orjson refuses a document nested deeper than 1024
levels), so it is the depth every walk over a read value must handle. Walks written here are iterative;
the C walks of the standard library (``pickle``, the ``json`` encoder) recurse and count against the
interpreter's recursion limit (1000 by default, less the frames already on the stack), so
:func:`recursion_room` lifts that limit for the length of such a call, far enough for a value at the
readers' limit (the C stack holds that easily: those walks use little of it per level).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["MAX_DEPTH", "recursion_room"]

#: the deepest nesting a reader accepts (orjson's limit); every walk over a read value reaches it
MAX_DEPTH = 1024
#: recursion a C walk may take per level of nesting (pickle and json count one or two frames a level)
_PER_LEVEL = 2
_lock = threading.Lock()
_raised = 0  # how many callers are inside recursion_room (the limit is put back when the last leaves)
_before = 0


@contextmanager
def recursion_room() -> Iterator[None]:
    """Run the block with room for a C walk over a value at :data:`MAX_DEPTH` levels, then put the
    interpreter's limit back (once every thread inside has left)."""
    global _raised, _before
    needed = _stack_depth() + _PER_LEVEL * MAX_DEPTH + 200
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


def _stack_depth() -> int:
    """Python frames on this thread's stack (what the recursion limit already counts)."""
    n, frame = 0, sys._getframe()
    while frame is not None:
        n += 1
        frame = frame.f_back  # type: ignore[assignment]
    return n
