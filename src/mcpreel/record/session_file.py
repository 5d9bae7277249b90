"""The qai session file a proxy keeps beside its reel (``--session-file``, seed 003): a pipeline addon.

A qai session is one JSON document, so it cannot be appended to: it is rewritten whole, atomically
(temp file + rename, mode 0600), every ``save_every`` seconds while something new arrived, and once
more at the end with ``ended_at`` set. Between two saves the reel is the crash-safe record.
The writer comes from the formats table (``get_writer("qai")``), like every other writer.
As an addon of the recording pipeline (:mod:`mcpreel.record.pipeline`) it collects every record once it
is written (with its ``seq``), takes the session header from ``started`` and saves the final file when
the session is finished.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable
from pathlib import Path

from mcpreel._infra.fileio import atomic_output
from mcpreel.formats import get_writer
from mcpreel.model import Message, Session, SessionInfo

__all__ = ["SessionFileKeeper"]


class SessionFileKeeper:
    """Collects the recorded messages and saves them as a qai session file now and then, and at the end.

    Thread-safe: the pumps call :meth:`recorded` from their threads; saving happens on a timer thread.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        info: SessionInfo | None = None,
        *,
        save_every: float | None = 10.0,
        warn: Callable[[str], None] | None = None,
        format: str = "qai",
        start: bool = True,
    ):
        self.path = Path(path)
        #: the session header (given, or learnt from the pipeline's ``started`` hook)
        self.info = info if info is not None else SessionInfo()
        self._write = get_writer(format)  # an unknown format fails here, before the server starts
        self._warn = warn
        self._messages: list[Message] = []
        self._lock = threading.Lock()
        self._save_lock = threading.Lock()
        self._dirty = True
        self._stop = threading.Event()
        self.saves = 0
        self._every_seconds = save_every
        self._timer: threading.Thread | None = None
        #: the last save, at :meth:`finished`, succeeded (False also before the session finished)
        self.saved = False
        if start:
            self.start()

    def start(self) -> None:
        """Start the periodic saves (the stdio proxy starts them only once the server is started:
        forking a process that has threads is best avoided)."""
        if self._timer is None and self._every_seconds is not None and self._every_seconds > 0:
            self._timer = threading.Thread(target=self._every, args=(self._every_seconds,), name="session-file",
                                           daemon=True)
            self._timer.start()

    def started(self, info: SessionInfo) -> None:
        """The pipeline hook: the session header, as the reel has it (redacted, tagged), is the file's too."""
        self.info = info

    def recorded(self, msg: Message) -> None:
        """The pipeline hook: ``msg`` was written to the reel (the qai writer keeps the messages among them)."""
        with self._lock:
            self._messages.append(msg)
            self._dirty = True

    def snapshot(self) -> Session:
        """The session so far, in ``seq`` order (two pumps add concurrently, so arrival order may differ)."""
        with self._lock:
            messages = list(self._messages)
            self._dirty = False
        messages.sort(key=lambda m: m.seq if m.seq is not None else -1)
        return Session(dataclasses.replace(self.info), messages)

    def save(self) -> bool:
        """Write the file now; False (and a warning) when it could not be written."""
        with self._save_lock:
            session = self.snapshot()
            try:
                with atomic_output(self.path) as fh:
                    self._write(session, fh)
            except Exception as exc:  # a full disk must not stop the recording: say so and go on
                with self._lock:
                    self._dirty = True
                if self._warn is not None:
                    self._warn(f"{self.path}: session file not saved: {exc}")
                return False
            self.saves += 1
            return True

    def _every(self, seconds: float) -> None:
        while not self._stop.wait(seconds):
            if self._dirty:
                self.save()

    def stop(self) -> None:
        """Stop the timer without saving (the recording never started)."""
        self._stop.set()

    def finished(self, exit_code: int | None, reason: str) -> None:
        """The pipeline hook: stop the timer and save the final file (with the end the reel put in ``info``)."""
        self._stop.set()
        if self._timer is not None:
            self._timer.join(5)
        self.saved = self.save()
