"""Writing files the way a recorder of secrets must.

- :func:`atomic_output` writes to a temporary file beside the target and renames it into place only
  when the writer finished, so bad input never leaves a half-written output behind.
- Every file we create is mode 0600: sessions and traces hold prompts, tokens and tool data.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = ["PRIVATE_MODE", "atomic_output", "open_private_append"]

PRIVATE_MODE = 0o600


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str], *, buffering: int = 1 << 20) -> Iterator[BinaryIO]:
    """Yield a binary file; on success it replaces ``path`` (mode 0600), on any error it vanishes."""
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=parent)
    try:
        os.fchmod(fd, PRIVATE_MODE)
        with os.fdopen(fd, "wb", buffering=buffering) as fh:
            yield fh
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def open_private_append(path: str | os.PathLike[str]) -> BinaryIO:
    """Open ``path`` for appending, creating it (and its folder) with mode 0600 if it is new.

    Unbuffered: the recorder writes each record with one ``write`` call so a crash of the recorder
    loses nothing already written.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_MODE)
    return os.fdopen(fd, "ab", buffering=0)
