"""What the pumps read -> reel lines (and the qai session file). Recording never touches forwarding.

The pumps hand over complete lines as they came off the wire; this module decides what each line is
and writes it:

- a JSON object or array (a message or a batch) is recorded as a message line whose ``raw`` is the
  line's own bytes, spliced in without re-serializing (:meth:`ReelWriter.write_frames`): the reel
  keeps what crossed the wire, and a small message costs about a microsecond;
- anything else (not JSON, not UTF-8, a bare scalar, a blank line) is an ``invalid`` line with its text;
- server stderr lines are ``stderr`` lines.

Only ``--redact`` and ``--session-file`` need a parsed copy; then a line is parsed faithfully
(:func:`mcpreel.jsonio.loads`). With ``--redact`` (a :class:`mcpreel.redact.Redactor`, or anything with
its ``value``/``text`` methods) a message the redactor changed is recorded as its redacted copy; one it
left alone keeps its wire bytes; stderr and invalid lines go through its text rules.
A failure to record (a full disk) is reported once and recording stops; forwarding goes on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from mcpreel import jsonio
from mcpreel.formats.reel import ReelWriter
from mcpreel.model import Kind, Message
from mcpreel.proxy.session_file import SessionFileKeeper

__all__ = ["RecordRedactor", "WireRecorder", "classify", "now_ms"]


class RecordRedactor(Protocol):
    """What the recorder asks of a redactor (:class:`mcpreel.redact.Redactor` is one): copies, never edits."""

    def value(self, value: Any) -> Any: ...

    def text(self, text: str) -> str: ...


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def _text(line: bytes) -> str:
    return line.decode("utf-8", "backslashreplace")


def classify(line: bytes) -> tuple[bytes | str, Any]:
    """One line (without its newline) -> ``(frame, parsed)``.

    ``frame`` is the line itself when it is a JSON object or array (``parsed`` is then the value),
    else the line as text for an ``invalid`` record (``parsed`` is None).
    """
    try:
        value = jsonio.loads(line)
    except Exception:  # orjson, the stdlib fallback, UTF-8, recursion: all mean "not a JSON frame"
        return _text(line), None
    if type(value) is dict or type(value) is list:
        return line, value
    return _text(line), None


class WireRecorder:
    """Records lines in the reel, in the order they reach it, each with its receive time and ``seq``."""

    def __init__(
        self,
        writer: ReelWriter,
        *,
        keeper: SessionFileKeeper | None = None,
        redactor: RecordRedactor | None = None,
        warn: Callable[[str], None] | None = None,
        tap: Any = None,
    ):
        self.writer = writer
        #: also gets every read's lines, stderr and the end (``record --otlp-endpoint``: mcpreel.otel.live)
        self.tap = tap
        self.keeper = keeper
        self.redactor = redactor
        self._warn = warn
        self._failed = False
        self._closed = False
        self._counts = {"in": [0, 0], "out": [0, 0]}  # direction -> [messages, invalid lines]
        self.stderr_lines = 0
        #: the session file's last save at :meth:`close` succeeded (False: there is none, or it failed)
        self.session_saved = False

    @property
    def messages(self) -> int:
        """Messages (and batches) recorded, both directions."""
        return self._counts["in"][0] + self._counts["out"][0]

    @property
    def invalid(self) -> int:
        """Lines recorded as ``invalid``, both directions."""
        return self._counts["in"][1] + self._counts["out"][1]

    @property
    def failed(self) -> bool:
        return self._failed

    def _fail(self, exc: BaseException) -> None:
        if not self._failed:
            self._failed = True
            if self._warn is not None:
                self._warn(f"{self.writer.path}: recording stopped: {exc} (forwarding goes on)")

    def lines(self, direction: str, lines: Sequence[bytes], t: int) -> None:
        """Record the complete lines one read brought in (``direction`` is ``in`` or ``out``).

        Never raises: whatever goes wrong in recording (a full disk, a redactor's bug) stops the
        recording with one warning, and the pump goes on forwarding.
        """
        if self.tap is not None and not self._closed:
            self.tap.lines(direction, lines, t)
        if self._failed or self._closed:
            return
        try:
            self._lines(direction, lines, t)
        except Exception as exc:
            self._fail(exc)

    def _lines(self, direction: str, lines: Sequence[bytes], t: int) -> None:
        keeper, redactor = self.keeper, self.redactor
        frames: list[bytes | str] = []
        parsed: list[Any] = []
        bad = 0
        if keeper is None and redactor is None:
            if jsonio.all_containers(lines):  # the hot path: one check per line, the bytes spliced as they are
                frames = lines  # type: ignore[assignment]
            else:
                for line in lines:
                    frame = classify(line)[0]
                    frames.append(frame)
                    bad += type(frame) is str
        else:
            for line in lines:
                frame, value = classify(line)
                if value is None:
                    bad += 1
                    if redactor is not None:
                        frame = redactor.text(frame)  # type: ignore[arg-type]
                elif redactor is not None:
                    redacted = redactor.value(value)
                    if redacted is not value:  # copy on write: the same object means nothing was secret
                        frame, value = jsonio.dumps(redacted), redacted
                frames.append(frame)
                parsed.append(value)
        first = self.writer.write_frames(direction, frames, t)
        counts = self._counts[direction]  # one pump thread per direction: no lock needed
        counts[0] += len(frames) - bad
        counts[1] += bad
        if keeper is not None:  # a qai file holds JSON-RPC messages only
            for i, value in enumerate(parsed):
                if value is not None:
                    keeper.add(Message(direction, value, t, seq=first + i))

    def stderr(self, lines: Sequence[bytes], t: int) -> None:
        """Record lines the server wrote on its stderr."""
        if self.tap is not None and not self._closed:
            self.tap.stderr(lines, t)
        if self._failed or self._closed:
            return
        try:
            for line in lines:
                text = _text(line[:-1] if line.endswith(b"\r") else line)
                if self.redactor is not None:
                    text = self.redactor.text(text)
                self.writer.write(Message(None, None, t, kind=Kind.STDERR, text=text))
        except Exception as exc:
            self._fail(exc)
            return
        self.stderr_lines += len(lines)

    def close(self, exit_code: int | None, reason: str | None) -> None:
        """Write the ``end`` line and save the session file one last time.

        What a pump still reads after this (a client writing to a server that already exited) is
        forwarded as ever, and not recorded: the session ended with its server.
        """
        self._closed = True  # from now on lines are let through silently
        try:
            self.writer.close(exit_code, reason)
        except Exception as exc:
            self._fail(exc)
        if self.tap is not None:
            self.tap.close(exit_code, reason)
        if self.keeper is not None:
            self.session_saved = self.keeper.close()
