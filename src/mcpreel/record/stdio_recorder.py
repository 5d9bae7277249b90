"""What the pumps read -> reel lines, through the recording pipeline. Recording never touches forwarding.

The pumps hand over complete lines as they came off the wire; this module decides what each line is
and writes it:

- a JSON object or array (a message or a batch) is recorded as a message line whose ``raw`` is the
  line's own bytes, spliced in without re-serializing (:meth:`ReelWriter.write_frames`): the reel
  keeps what crossed the wire, and a small message costs about a microsecond;
- anything else (not JSON, not UTF-8, a bare scalar, a blank line) is an ``invalid`` line with its text
  (and its exact bytes as ``base64`` when they are not UTF-8);
- bytes that are not lines of JSON at all (:class:`~mcpreel.record.framing.Framer` says which: HTTP/2,
  binary, a line too long to hold) are ``bytes`` lines, every byte, in order (:meth:`WireRecorder.raw`);
  an HTTP/2 stream (the ``stdio-v2`` draft) is also decoded (:mod:`mcpreel.record.stdio_h2`) into the
  HTTP exchanges and JSON-RPC messages the HTTP recorder writes, through the pipeline like any record;
- server stderr lines are ``stderr`` lines.

Lines are parsed only when an addon of the :class:`~mcpreel.record.pipeline.Pipeline` looks at records
(``--redact``, ``--session-file``, the caller's own); then each line becomes a
:class:`~mcpreel.model.Message` (parsed faithfully, :func:`mcpreel._infra.jsonio.loads`) that goes
through the addons before it is written. A message whose ``raw`` the addons left as the same object keeps
its wire bytes; a changed one is recorded as its new copy; one an addon left out is not recorded.
A failure to record (a full disk, an addon's bug) is reported once and recording stops; forwarding goes on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from mcpreel._infra import jsonio
from mcpreel.drafts import H2_PROTOCOL, STDIO_V2_TRANSPORT
from mcpreel.formats.reel import NotText, ReelWriter
from mcpreel.model import Kind, Message
from mcpreel.record.pipeline import Pipeline, Redaction

if TYPE_CHECKING:
    from mcpreel.record.raw_redact import RawRedactor
    from mcpreel.record.stdio_h2 import H2Observer

__all__ = ["WireRecorder", "classify"]


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
        return _invalid_text(line), None
    if type(value) is dict or type(value) is list:
        return line, value
    return _invalid_text(line), None


def _invalid_text(line: bytes) -> str:
    """An invalid line's text; one that is not UTF-8 carries its bytes (:class:`NotText`)."""
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        return NotText.of(line)


class WireRecorder:
    """Records lines in the reel, in the order they reach it, each with its receive time and ``seq``."""

    def __init__(
        self,
        writer: ReelWriter,
        *,
        pipeline: Pipeline | None = None,
        warn: Callable[[str], None] | None = None,
        keep_secrets: bool = False,
    ):
        self.writer = writer
        self.pipeline = pipeline if pipeline is not None else Pipeline()
        #: the raw copy's redaction (None: ``keep_secrets``, the raw bytes are written exactly as they came)
        self.keep_secrets = keep_secrets
        self._raw_redactor: RawRedactor | None = None  # made at the first raw bytes (it loads hpack)
        self._warn = warn
        self._failed = False
        self._closed = False
        self._counts = {"in": [0, 0], "out": [0, 0]}  # direction -> [messages, invalid lines]
        self.stderr_lines = 0
        #: raw bytes recorded as ``bytes`` lines, by direction
        self.raw_bytes = {"in": 0, "out": 0}
        #: the HTTP/2 decoder, once a direction turned out to carry HTTP/2 (``stdio-v2``)
        self.h2: H2Observer | None = None
        self._h2_lock = threading.Lock()

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
        if self._failed or self._closed:
            return
        try:
            self._lines(direction, lines, t)
        except Exception as exc:
            self._fail(exc)

    def _lines(self, direction: str, lines: Sequence[bytes], t: int) -> None:
        if not self.pipeline.sees_records:
            if jsonio.all_containers(lines):  # the hot path: one check per line, the bytes spliced as they are
                frames: Sequence[bytes | str] = lines
                bad = 0
            else:
                frames = [classify(line)[0] for line in lines]
                bad = sum(isinstance(frame, str) for frame in frames)
            first = self.writer.write_frames(direction, frames, t)
            self._count(direction, len(frames), bad)
            if self.pipeline.sees_frames:
                self.pipeline.frames(direction, frames, t, first)
            return
        pipeline = self.pipeline
        kept: list[Message] = []
        out: list[bytes | str] = []
        bad = 0
        for line in lines:
            frame, value = classify(line)
            if isinstance(frame, str):
                rec = pipeline.record(Message(direction, None, t, kind=Kind.INVALID, text=frame))
            else:
                rec = pipeline.record(Message(direction, value, t))
            if rec is None:
                continue
            if rec.kind == Kind.INVALID:
                bad += 1
                out.append(rec.text or "")
            elif rec.raw is value and isinstance(frame, bytes):  # the addons changed nothing: the wire bytes
                out.append(frame)
            else:
                out.append(jsonio.dumps(rec.raw))
            kept.append(rec)
        if not out:
            return
        first = self.writer.write_frames(direction, out, t)
        self._count(direction, len(out), bad)
        for i, rec in enumerate(kept):
            rec.seq = first + i
            pipeline.recorded(rec)

    def tail(self, direction: str, data: bytes, t: int) -> None:
        """The last bytes of a pipe, with no newline after them (they already went on): a message when they are
        a JSON object or array, else raw bytes (an ``invalid`` line would stand for a newline that never came)."""
        if type(classify(data)[0]) is bytes:
            self.lines(direction, [data], t)
        else:
            self.raw(direction, data, t)

    def raw(self, direction: str, data: bytes, t: int, *, h2: bool = False) -> None:
        """Record bytes that are not lines of JSON as ``bytes`` lines; ``h2``: they are HTTP/2 (``stdio-v2``),
        decoded into HTTP exchanges as well. Never raises (as :meth:`lines`).

        The raw bytes do not go through the pipeline (the decoded records do): unless ``keep_secrets`` they are
        rewritten by :class:`~mcpreel.record.raw_redact.RawRedactor` (credential headers in HTTP/2 header
        blocks; with ``--redact`` DATA payloads and text too), each changed piece marked ``redacted``.
        """
        if self._failed or self._closed or not data:
            return
        try:
            rr = self._raw_redactor
            if rr is None and not self.keep_secrets:
                rr = self._raw_redactor = self._make_raw_redactor()
            if rr is None:
                self._raw_recorded(direction, data, t, self.writer.write_bytes(direction, data, t), False)
            else:
                for piece, changed in rr.h2(direction, data) if h2 else rr.text(data):
                    first = self.writer.write_bytes(direction, piece, t, redacted=changed)
                    self._raw_recorded(direction, piece, t, first, changed)
            self.raw_bytes[direction] += len(data)
            if h2:
                self._observer(direction, t).feed(direction, data)
        except Exception as exc:
            self._fail(exc)

    def _raw_recorded(self, direction: str, data: bytes, t: int, first: int, redacted: bool) -> None:
        """Raw bytes just written as ``bytes`` lines from ``first`` on: to the addons that show them (the live
        viewer), one record per line, as the reel has them."""
        if not self.pipeline.sees_raw:
            return
        from mcpreel.formats.reel import BYTES_PIECE

        for i, start in enumerate(range(0, len(data), BYTES_PIECE)):
            self.pipeline.raw_recorded(Message(direction, data[start : start + BYTES_PIECE], t, kind=Kind.BYTES,
                                               seq=first + i, extra={"redacted": True} if redacted else None))

    def _make_raw_redactor(self) -> RawRedactor:
        from mcpreel.record.raw_redact import RawRedactor

        with self._h2_lock:  # one for both directions (a SETTINGS frame on one bounds the other's decoder)
            if self._raw_redactor is None:
                redactor = next((a.redactor for a in self.pipeline.addons if isinstance(a, Redaction)), None)
                self._raw_redactor = RawRedactor(redactor)
            return self._raw_redactor

    def _observer(self, direction: str, t: int) -> H2Observer:
        with self._h2_lock:
            if self.h2 is None:
                # imported when a pipe first carries HTTP/2: a JSON-lines session never loads the decoder
                from mcpreel.record.http_recorder import HttpRecorder
                from mcpreel.record.stdio_h2 import H2Observer

                http = HttpRecorder(self._decoded, keep_secrets=self.keep_secrets)
                self.h2 = H2Observer(http, self._decoded)
                self._decoded(Message(direction, None, t, kind=Kind.TRANSPORT,
                                      ctx={"framing": H2_PROTOCOL, "transport": STDIO_V2_TRANSPORT}))
            return self.h2

    def _decoded(self, rec: Message) -> None:
        """A record the HTTP/2 decoder made: through the pipeline into the reel (its errors end recording)."""
        kept = self.pipeline.record(rec)
        if kept is None:
            return
        self.writer.write(kept)
        if kept.kind == Kind.MESSAGE:
            self._counts[kept.dir or "in"][0] += 1
        self.pipeline.recorded(kept)

    def message(self, rec: Message) -> Message | None:
        """Record one message the proxy built itself (an intercept's decision, an injected message) through
        the pipeline; returns it with its ``seq`` (None when an addon left it out or recording stopped).

        Unlike :meth:`lines` this may be called from any thread (an injection comes from the control
        server's); the reel writer serializes the writes.
        """
        if self._failed or self._closed:
            return None
        try:
            kept = self.pipeline.record(rec)
            if kept is None:
                return None
            self.writer.write(kept)
            self._count(kept.dir or "in", 1, 0)
            self.pipeline.recorded(kept)
            return kept
        except Exception as exc:
            self._fail(exc)
            return None

    def _count(self, direction: str, frames: int, bad: int) -> None:
        counts = self._counts[direction]  # one pump thread per direction: no lock needed
        counts[0] += frames - bad
        counts[1] += bad

    def stderr(self, lines: Sequence[bytes], t: int) -> None:
        """Record lines the server wrote on its stderr."""
        if self._failed or self._closed:
            return
        try:
            pipeline, write = self.pipeline, self.writer.write
            for line in lines:
                text = _text(line[:-1] if line.endswith(b"\r") else line)
                rec = pipeline.record(Message(None, None, t, kind=Kind.STDERR, text=text))
                if rec is None:
                    continue
                write(rec)
                pipeline.recorded(rec)
        except Exception as exc:
            self._fail(exc)
            return
        self.stderr_lines += len(lines)

    def close(self, exit_code: int | None, reason: str) -> None:
        """Write the ``end`` line and tell the addons the session ended (the session file's last save).

        What a pump still reads after this (a client writing to a server that already exited) is
        forwarded as ever, and not recorded: the session ended with its server.
        """
        if self.h2 is not None and not self._failed:
            try:
                self.h2.close()
            except Exception as exc:
                self._fail(exc)
        if self._raw_redactor is not None and not self._failed and not self._closed:
            try:  # what is left of an HTTP/2 frame the pipe ended in
                for direction in ("in", "out"):
                    for piece, changed in self._raw_redactor.finish(direction):
                        self.writer.write_bytes(direction, piece, redacted=changed)
            except Exception as exc:
                self._fail(exc)
        self._closed = True  # from now on lines are let through silently
        try:
            self.writer.close(exit_code, reason)
        except Exception as exc:
            self._fail(exc)
        self.pipeline.finished(exit_code, reason)
