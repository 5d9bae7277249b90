"""Signals that come before the recorder is ready are kept, not fatal: the early-signal latch.

``mcpreel record`` takes a few hundred milliseconds to import its stack, open the reel and start the
server. An IDE that stops a proxy it has just started sends SIGTERM (or SIGINT) in that time, and the
default action killed the process with no reel at all. :func:`install` (called by
:func:`install_for_cli` when ``mcpreel`` itself starts as ``mcpreel record`` or ``mcpreel proxy``: the
first thing the package does, before even the CLI is imported) replaces the default action of SIGINT, SIGTERM and SIGHUP with a note; the
recorders then write the reel's ``meta`` line and look (:func:`take`): a signal that came before the
server started ends the reel at once (its ``end`` line says which signal), one that came later is handed
to the server like any other, once the real handlers are in place. A signal the user chose to ignore
(``nohup``) stays ignored. Only the main thread can install handlers; elsewhere this does nothing.

What no code can cover is the interpreter's own start, before the first line of mcpreel runs (measured:
~40-60 ms after exec on an idle machine; a signal then has its default action).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

__all__ = ["LATCHED", "LATCHING_COMMANDS", "install", "install_for_cli", "take"]

#: the commands that start a recorder
LATCHING_COMMANDS = frozenset({"record", "proxy"})

LATCHED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_pending: list[int] = []


def _note(signum: int, _frame: FrameType | None) -> None:
    _pending.append(signum)


def install() -> None:
    """Keep SIGINT/SIGTERM/SIGHUP for :func:`take` from now until other handlers replace these."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in LATCHED:
        if signal.getsignal(sig) != signal.SIG_IGN:
            signal.signal(sig, _note)


def install_for_cli(argv: Sequence[str] | None = None) -> None:
    """:func:`install` when this process is the ``mcpreel`` command starting a recorder, else nothing.

    ``argv`` is ``sys.argv``: ``python -m mcpreel record ...`` has ``-m`` in front while the package is
    imported, the installed script its own path; any other program importing mcpreel is left alone.
    """
    args = sys.argv if argv is None else argv
    if len(args) < 2 or args[1] not in LATCHING_COMMANDS:
        return
    if args[0] == "-m" or os.path.basename(args[0]).removesuffix(".exe") in ("mcpreel", "__main__.py"):
        install()


def take() -> list[int]:
    """The signals kept since :func:`install` (or the last call), oldest first; forgets them."""
    taken = list(_pending)
    del _pending[: len(taken)]
    return taken
