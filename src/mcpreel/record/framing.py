"""Cutting a byte stream into lines without holding it up (sans-io: bytes in, plans out).

:class:`Framer` is what a stdio pump uses: :class:`LineCutter` while the pipe carries newline-delimited
JSON, and raw bytes where it does not (an HTTP/2 ``stdio-v2`` stream, binary, a line longer than
:data:`LINE_LIMIT`, text that never ends its line), so the reel keeps every byte whatever the framing.

A recording proxy must record a line before the bytes that complete it go on (so a ``kill -9`` of
the proxy never loses what a peer already got), yet must not sit on a burst: :meth:`LineCutter.feed`
says, for one chunk read off a pipe, which complete lines to record and how far into the chunk the
bytes may go on once they are recorded, in slices of at most ``batch`` lines so the peer starts on
the first lines of a burst while the next are being recorded. Bytes of a line not yet complete go on
at once: no peer acts on a line before its newline.
"""

from __future__ import annotations

from typing import cast

from mcpreel.drafts import H2_PREFACE

__all__ = ["LINE_LIMIT", "Framer", "LineCutter", "cannot_hold", "framing_of"]

#: the longest line held to be recorded whole (a JSON message of 16 MiB); past it the line is kept as raw bytes
LINE_LIMIT = 16 << 20
#: the first byte of a line that may be JSON (an object or a batch), or whitespace before it
_JSON_START = frozenset(b"{[ \t\r")
#: an HTTP/2 SETTINGS frame's header, the first thing an HTTP/2 server sends: type 4, stream 0
_SETTINGS_TYPE = 4


class LineCutter:
    """Splits one direction's byte stream into lines (``\\n``-terminated, the newline not included)."""

    __slots__ = ("_pending", "batch")

    def __init__(self, batch: int = 64):
        self._pending: list[bytes] = []
        self.batch = batch

    @property
    def pending(self) -> int:
        """Bytes of a line begun but not finished."""
        return sum(map(len, self._pending))

    def feed(self, chunk: bytes) -> list[tuple[list[bytes], int]]:
        """Steps for one chunk: ``(lines to record, offset in chunk up to which bytes may then go on)``.

        After the last step the rest of the chunk (``chunk[last offset:]``, all of it when there are no
        steps) may go on at once: it is part of a line not yet complete.
        """
        nl = chunk.rfind(b"\n")
        if nl < 0:
            if chunk:
                self._pending.append(chunk)
            return []
        pending = self._pending
        if pending:
            pending.append(chunk[:nl])
            body = b"".join(pending)
            carried = len(body) - nl  # bytes of the first line that came (and went on) with earlier chunks
            self._pending = [chunk[nl + 1 :]] if nl + 1 < len(chunk) else []
        else:
            body = chunk[:nl]
            carried = 0
            if nl + 1 < len(chunk):
                pending.append(chunk[nl + 1 :])
        lines = body.split(b"\n")
        batch = self.batch
        if len(lines) <= batch:
            return [(lines, nl + 1)]
        steps = []
        end = -carried
        for i in range(0, len(lines), batch):
            part = lines[i : i + batch]
            end += sum(map(len, part)) + len(part)
            steps.append((part, end))
        return steps

    def finish(self) -> bytes | None:
        """At the end of the stream: the last line when it had no newline (it already went on)."""
        if not self._pending:
            return None
        rest = b"".join(self._pending)
        self._pending = []
        return rest


Step = tuple["list[bytes] | bytes", int]


def framing_of(direction: str, head: bytes) -> str | None:
    """What a pipe's first bytes say it carries: ``h2`` (the client's HTTP/2 connection preface on ``in``, an
    HTTP/2 server's first SETTINGS frame on ``out``), ``lines``, or None while too few bytes have come."""
    if direction == "in":
        if head.startswith(H2_PREFACE):
            return "h2"
        return None if H2_PREFACE.startswith(head) else "lines"
    if head[0] != 0:  # a frame's length starts with 0 (a SETTINGS frame is short); JSON never does
        return "lines"
    if len(head) < 9:
        return None
    return "h2" if head[3] == _SETTINGS_TYPE and head[5:9] == b"\0\0\0\0" else "lines"


def cannot_hold(pieces: list[bytes], limit: int = LINE_LIMIT) -> bool:
    """Whether a line begun (its ``pieces`` so far, no newline yet) is to be kept as raw bytes rather than
    held until its end: it cannot be JSON (its first byte is not ``{`` or ``[``), or it is past ``limit``."""
    first = pieces[0].lstrip(b" \t\r")
    if first and first[0] not in _JSON_START:
        return True
    return sum(map(len, pieces)) > limit


class Framer:
    """One direction of a stdio pipe: what to record (lines, or raw bytes) before how much of a chunk goes on.

    :meth:`feed` gives steps ``(what, end)``: ``what`` is a list of complete lines (recorded as messages or
    ``invalid`` lines) or ``bytes`` (recorded as raw bytes), and ``end`` how far into the chunk the bytes may
    go on once it is recorded; the rest of the chunk goes on after the last step, at once.

    The mode is decided by the first bytes (held at most :data:`~mcpreel.drafts.H2_PREFACE`'s length, and
    forwarded meanwhile): the client's HTTP/2 connection preface (``in``) or an HTTP/2 server's first
    SETTINGS frame (``out``) make the direction ``h2``, every chunk then raw; anything else ``lines``.
    In ``lines`` a line that cannot be JSON (it does not start with ``{`` or ``[``) or grows past
    ``limit`` while incomplete is flushed as raw bytes and the rest of it follows raw, newline included, so
    no such line is held in memory; complete short lines are recorded as lines, as ever.
    """

    __slots__ = ("_head", "_rawline", "cutter", "direction", "limit", "mode")

    def __init__(self, direction: str, batch: int = 64, limit: int = LINE_LIMIT, *, sniff: bool = True):
        self.direction = direction
        self.cutter = LineCutter(batch)
        self.limit = limit
        #: ``sniff`` (the first bytes decide), ``lines`` or ``h2``
        self.mode = "sniff" if sniff else "lines"
        self._head = b""
        self._rawline = False

    @property
    def h2(self) -> bool:
        """Whether this direction carries HTTP/2 (the ``stdio-v2`` draft)."""
        return self.mode == "h2"

    def _sniff(self, chunk: bytes) -> list[Step]:
        head = self._head + chunk
        decided = framing_of(self.direction, head)
        if decided is None:
            self._head = head  # still undecided: these bytes go on now, and are recorded once it is
            return []
        held, self._head = self._head, b""
        self.mode = decided
        if decided == "h2":
            return [(head, len(chunk))]
        if held:
            self.cutter._pending.append(held)
        return self._lines(chunk)

    def feed(self, chunk: bytes) -> list[Step]:
        """The steps for one chunk read off the pipe (see the class docstring)."""
        mode = self.mode
        if mode == "lines" and not self._rawline:
            return self._lines(chunk)
        if mode == "h2":
            return [(chunk, len(chunk))]
        if mode == "sniff":
            return self._sniff(chunk)
        nl = chunk.find(b"\n")  # the rest of a line kept raw: up to its newline
        if nl < 0:
            return [(chunk, len(chunk))]
        self._rawline = False
        end = nl + 1
        steps: list[Step] = [(chunk[:end], end)]
        if end < len(chunk):
            steps.extend((what, at + end) for what, at in self._lines(chunk[end:]))
        return steps

    def _lines(self, chunk: bytes) -> list[Step]:
        steps = cast("list[Step]", self.cutter.feed(chunk))  # a new list each call: extended in place
        pending = self.cutter._pending
        if pending:
            if cannot_hold(pending, self.limit):
                # the pieces as they were read (never joined: a 16 MiB line is not copied once more)
                self.cutter._pending = []
                steps.extend((piece, len(chunk)) for piece in pending)
                self._rawline = True
        return steps

    def finish(self) -> list[bytes] | bytes | None:
        """At the end of the stream: what was not recorded yet (a last line without its newline, or the
        first bytes that never decided the mode), already forwarded."""
        if self._head:
            head, self._head = self._head, b""
            return head
        if self._rawline:
            self._rawline = False
            return None
        rest = self.cutter.finish()
        return [rest] if rest is not None else None
