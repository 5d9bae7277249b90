"""A cassette run's report: what happened, one JSON object a line, appended as it happens.

The serving process (``mcpreel serve --record-mode … --report FILE``) writes it; whoever started that
process (the pytest plugin, a CI script) reads it, even while the process still runs, to learn where
an HTTP server listens and which requests missed. One ``write`` per line on an unbuffered file (mode
0600), so what was said survives the process being killed. Several runs may append to one file (a test
that starts its stdio server twice).

Events (``event`` member; every line also has ``t``, epoch ms):

- ``plan``: ``mode``, ``action`` (``record`` or ``replay``), ``cassette``
- ``ready``: ``url`` (HTTP) or ``transport: "stdio"``
- ``miss``: ``method``, ``code``, ``message`` (the closest recorded request and how it differs), and as
  data ``params`` (the request's), ``closest`` (``label``, ``params``) and ``differences`` (one line a path)
- ``forward``: ``message`` (a miss answered by the real server, or its session opened again after HTTP 404
  or its stdio process started again after a crash, and the one retry)
- ``saved``: ``cassette``, ``messages``; ``not-saved``: ``reason``, ``clean`` (False: the recording
  broke off; True: it ended well but held nothing worth keeping)
- ``done``: ``requests``, ``answered``, ``missed``, ``forwarded`` (a replay's totals)
- ``error``: ``message`` (the run could not go on: a corrupt cassette, a server that would not start)
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.fileio import open_private_append
from mcpreel._infra.timeutil import now_ms

__all__ = ["RunReport", "read_report"]


class RunReport:
    """The writing end (a no-op without a path)."""

    def __init__(self, path: str | os.PathLike[str] | None):
        self.path = Path(path) if path is not None else None
        self._fh = open_private_append(self.path) if self.path is not None else None

    def write(self, event: str, **fields: Any) -> None:
        """Append one event as a JSON line; a report that cannot be written never takes the server down."""
        if self._fh is None:
            return
        line = jsonio.dumps({"event": event, "t": now_ms(), **fields}) + b"\n"
        with contextlib.suppress(OSError):  # a report must never take the server down
            self._fh.write(line)

    def close(self) -> None:
        """Close the report file (safe to call twice)."""
        if self._fh is not None:
            with contextlib.suppress(OSError):
                self._fh.close()
            self._fh = None


def read_report(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The events written so far; a last line still being written is left for the next read."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return []
    events = []
    for line in data.split(b"\n")[:-1]:
        if not line.strip():
            continue
        try:
            event = jsonio.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events
