"""Signals that come before the recorder is ready are kept, not fatal: the early-signal latch.

``mcpreel record`` takes a few hundred milliseconds to import its stack, open the reel and start the
server. An IDE that stops a proxy it has just started sends SIGTERM (or SIGINT) in that time, and the
default action killed the process with no reel at all. :func:`install` (called by
:func:`install_for_cli` by the ``mcpreel`` command's entry point, :mod:`mcpreel.__main__`, when it starts as
``mcpreel record`` or ``mcpreel proxy``, before the CLI is imported; never on ``import mcpreel``: another
program's signals are its own) replaces the default action of the stop signals (SIGINT, SIGTERM, and SIGHUP
or SIGBREAK where the system has them: :data:`mcpreel._infra.platform.STOP_SIGNALS`) with a note; the
recorders then write the reel's ``meta`` line and look (:func:`take`): a signal that came before the
server started ends the reel at once (its ``end`` line says which signal), one that came later is handed
to the server like any other, once the real handlers are in place. A signal the user chose to ignore
(``nohup``) stays ignored. Only the main thread can install handlers; elsewhere this does nothing.

What no code can cover is the interpreter's own start, before the first line of mcpreel runs (measured:
~40-60 ms after exec on an idle machine; a signal then has its default action).
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from mcpreel._infra.platform import STOP_SIGNALS

__all__ = ["LATCHED", "LATCHING_COMMANDS", "install", "install_for_cli", "take"]

#: the commands that start a recorder
LATCHING_COMMANDS = frozenset({"record", "proxy"})

#: what is kept: the stop signals this system has (no SIGHUP on Windows)
LATCHED = STOP_SIGNALS
_pending: list[int] = []


def _note(signum: int, _frame: FrameType | None) -> None:
    _pending.append(signum)


def install() -> None:
    """Keep the stop signals (:data:`LATCHED`) for :func:`take` from now until other handlers replace these."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in LATCHED:
        if signal.getsignal(sig) != signal.SIG_IGN:
            signal.signal(sig, _note)


def install_for_cli(argv: Sequence[str] | None = None) -> None:
    """:func:`install` when the ``mcpreel`` command starts a recorder (``argv[1]`` is ``record``/``proxy``).

    Called only by the command's entry point (:func:`mcpreel.__main__.main`, which ``mcpreel`` and
    ``python -m mcpreel`` both run); ``argv`` is ``sys.argv``.
    """
    args = sys.argv if argv is None else argv
    if len(args) >= 2 and args[1] in LATCHING_COMMANDS:
        install()


def take() -> list[int]:
    """The signals kept since :func:`install` (or the last call), oldest first; forgets them."""
    taken = list(_pending)
    del _pending[: len(taken)]
    return taken
