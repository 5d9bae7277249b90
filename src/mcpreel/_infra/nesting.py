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

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["MAX_DEPTH", "recursion_room"]

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
