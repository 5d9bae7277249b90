"""What the index stores of a session's text passes the redactor first: resource URIs and error quotes.

The index is shared (``--db team.duckdb``, ``show``, the Parquet export that leaves the machine), and two of
its columns quote the recorded data itself: ``operations.target`` holds a ``resources/read`` URI as the
client sent it (``https://host/doc?api_key=…``, ``postgres://user:pass@db/…``), ``files.error`` the reader's
one line, which may quote the file's content (a line that does not parse). Both pass the same rules as
``mcpreel redact`` (:class:`~mcpreel.redact.Redactor`'s value patterns) and the URL rule (secret query
parameters, :mod:`mcpreel.redact.urls`) before they are stored.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from mcpreel.redact.urls import redact_urls_in

if TYPE_CHECKING:
    from mcpreel.redact import Redactor

__all__ = ["ERROR_MAX", "stored_error", "stored_target"]

#: the characters of a file's error kept in the index (the reader's one line; a quote of the file is cut)
ERROR_MAX = 1000

#: a target holding none of these holds no URI secret and no value pattern (a tool's plain name)
_MAYBE_SECRET = frozenset("?@=:")


@functools.cache
def _redactor() -> Redactor:
    from mcpreel.redact import Redactor

    return Redactor()  # thread-safe; its counts are not read


def stored_target(target: str) -> str:
    """An operation's target (a tool's name, a resource URI, a prompt's name) as the index keeps it:
    secret query parameters and ``user:pass@`` replaced by the marker; most targets come back as they came."""
    if _MAYBE_SECRET.isdisjoint(target):
        return target
    return _redactor().text(redact_urls_in(target))


def stored_error(error: str) -> str:
    """A file's one-line error as the index keeps it: redacted (it may quote the file), at most
    :data:`ERROR_MAX` characters."""
    line = _redactor().text(redact_urls_in(error))
    return line if len(line) <= ERROR_MAX else line[:ERROR_MAX - 1] + "…"
