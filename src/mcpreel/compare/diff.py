"""Two recordings compared: what the server offers and how it answered, side by side.

- **server**: the ``initialize`` answers (protocol version and capabilities are differences; a
  changed ``serverInfo`` is shown but is not one, since every release changes it);
- **tools**: the ``tools/list`` results (every page and every call folded into one set per side):
  tools added, removed, or changed (path-level: description, schemas, annotations);
- **calls**: requests aligned by method and what they name (the tool, prompt or resource), then by
  order: the n-th ``tools/call`` of ``echo`` in A against the n-th in B. A call only one side made is
  added or removed; a pair differs in its arguments, its result (compared like replay compares:
  ``_meta`` and ids left out, JSON text compared as JSON, ``ignore_paths`` removed) or its error
  status (``ok``, ``isError``, ``error <code>``, ``no response``);
- **latency**: a pair whose latency moved by at least ``latency_factor`` times and ``latency_min_ms``
  milliseconds. Timing is noisy, so a shift is reported but is a difference only with
  ``fail_on_latency``.

The work is done in one streaming pass by :class:`mcpreel.compare.stream.DiffStream` (flat memory,
bounded by ``window``); :func:`diff_sessions` collects its calls into a :class:`SessionDiff` for callers
that want them all at once (the HTML page, the library).
"""

from __future__ import annotations

from mcpreel.compare.changes import CallChange, DiffOptions, SessionDiff, ToolChange, error_status
from mcpreel.compare.stream import DiffStream
from mcpreel.model import Session

__all__ = ["CallChange", "DiffOptions", "SessionDiff", "ToolChange", "diff_sessions", "error_status"]


def diff_sessions(a: Session, b: Session, options: DiffOptions | None = None) -> SessionDiff:
    """Compare two sessions; every aligned call is kept in ``calls`` (see :class:`DiffStream` to stream)."""
    stream = DiffStream(a, b, options or DiffOptions())
    calls = list(stream)
    out: SessionDiff = stream.result
    out.calls = calls
    return out
