"""Writing files the way a recorder of secrets must.

- :func:`atomic_output` writes to a temporary file beside the target and renames it into place only
  when the writer finished, so bad input never leaves a half-written output behind.
- Every file we create is mode 0600: sessions and traces hold prompts, tokens and tool data (on Windows,
  where modes mean nothing, as private as its folder, said once: :func:`mcpreel._infra.platform.make_private`).
- An output path that is a symbolic link is refused (:func:`refuse_symlink`, one line, exit 2), never
  written through: a link planted where a recording goes (``ln -s ~/.ssh/authorized_keys out.jsonl``)
  would otherwise get the session's bytes -- or lose its target to our 0600 copy. Refusing rather than
  replacing the link keeps the user's link and says what happened; only the last component is looked
  at (a folder reached through a link, ``/tmp`` on macOS, is fine).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from mcpreel._infra import platform
from mcpreel.errors import UsageError

__all__ = ["PRIVATE_MODE", "atomic_output", "open_private_append", "open_regular", "refuse_symlink"]

PRIVATE_MODE = platform.PRIVATE_MODE


#: errors of writing itself (as opposed to reading an input inside the ``with`` body)
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})


def _cannot_write(path: str | os.PathLike[str], exc: OSError) -> UsageError:
    return UsageError(f"{os.fspath(path)}: cannot write: {exc.strerror or exc}")


def refuse_symlink(path: str | os.PathLike[str]) -> None:
    """A :class:`UsageError` when ``path`` itself is a symbolic link (dangling or not); touches nothing."""
    if os.path.islink(path):
        raise UsageError(f"{os.fspath(path)}: refusing to write through a symbolic link "
                         f"(outputs are never written through links: name the real file, or remove the link)")


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str], *, buffering: int = 1 << 20) -> Iterator[BinaryIO]:
    """Yield a binary file; on success it replaces ``path`` (mode 0600), on any error it vanishes.

    An output that cannot be written (a missing or read-only folder, a path through a file, a full
    disk) raises :class:`~mcpreel.errors.UsageError` naming the path: one line, not a traceback; so
    does a ``path`` that is a symbolic link (:func:`refuse_symlink`), checked again before the rename.
    """
    target = Path(path)
    refuse_symlink(target)
    parent = target.parent if str(target.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:  # a file stands where a folder of the path should be
        raise UsageError(f"{os.fspath(path)}: cannot write: {exc.filename or parent} is not a folder") from exc
    except OSError as exc:
        raise _cannot_write(path, exc) from exc
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=parent)
    except OSError as exc:
        raise _cannot_write(path, exc) from exc
    try:
        platform.make_private(fd)
        with os.fdopen(fd, "wb", buffering=buffering) as fh:
            yield fh
        refuse_symlink(target)  # a link planted while the output was being written
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and (exc.errno in _WRITE_ERRNOS or exc.filename in (tmp, os.fspath(target))):
            raise _cannot_write(path, exc) from exc
        raise


def open_private_append(path: str | os.PathLike[str]) -> BinaryIO:
    """Open ``path`` for appending, creating it (and its folder) with mode 0600 if it is new.

    Unbuffered: the recorder writes each record with one ``write`` call so a crash of the recorder
    loses nothing already written. A symbolic link at ``path`` is refused (``O_NOFOLLOW``: even one
    planted after a check), as :class:`UsageError`.
    """
    target = Path(path)
    refuse_symlink(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND | platform.NOFOLLOW, PRIVATE_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            refuse_symlink(target)
        raise
    if not platform.has_file_modes():
        platform.make_private(fd)  # says once that modes mean nothing here
    return os.fdopen(fd, "ab", buffering=0)


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened to read, if it is a regular file: checked on the open file (``fstat``), so a FIFO or a
    device swapped in after the file was listed is refused, never waited on. Opened without blocking
    (``O_NONBLOCK``: opening a FIFO with no writer would wait for one); a regular file reads the same either
    way. Raises :class:`IsADirectoryError` for a folder, :class:`OSError` (``strerror`` says which) for
    anything else that is not a regular file."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", os.fspath(path))
        if not stat.S_ISREG(mode):
            kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
                    else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file")
            raise OSError(errno.EINVAL, f"not a regular file ({kind})", os.fspath(path))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
