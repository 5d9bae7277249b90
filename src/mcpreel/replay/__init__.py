"""Replay: re-send a recording's client side to a live server and judge every answer.

:mod:`.verify` does the work on top of :mod:`mcpreel.exchanges` (a session paired into exchanges) and
:mod:`mcpreel.compare.normalize` (what "the same" means); the server is reached through a client
transport (:mod:`mcpreel.clients`). :func:`replay_file` is the library's entry point (the CLI calls
nothing else): it reads the session file, runs, and returns a report; it never prints.
The other direction, a recording answering a live client, is :mod:`mcpreel.mock`; comparing two
recordings is :mod:`mcpreel.compare`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from mcpreel.clients import open_target
from mcpreel.compare.normalize import IgnorePath
from mcpreel.formats import open_session
from mcpreel.replay.verify import ReplayOptions, ReplayReport, replay

__all__ = ["IgnorePath", "ReplayOptions", "ReplayReport", "replay", "replay_file"]


def replay_file(
    path: str | Path,
    *,
    command: str | Sequence[str] | None = None,
    url: str | None = None,
    transport: str = "auto",
    headers: dict[str, str] | None = None,
    format: str = "auto",
    options: ReplayOptions | None = None,
    on_event: Callable[[str], None] | None = None,
) -> ReplayReport:
    """Replay the session in ``path`` against a server command or URL; return the report."""
    session, _ = open_session(path, format)
    session.materialize()
    target = open_target(command, url, transport=transport, headers=headers)
    shown = url if url is not None else (command if isinstance(command, str) else " ".join(command or []))
    return asyncio.run(replay(session, target, options, target=shown, on_event=on_event))
