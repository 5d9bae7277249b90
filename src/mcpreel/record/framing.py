"""Cutting a byte stream into lines without holding it up (sans-io: bytes in, plans out).

A recording proxy must record a line before the bytes that complete it go on (so a ``kill -9`` of
the proxy never loses what a peer already got), yet must not sit on a burst: :meth:`LineCutter.feed`
says, for one chunk read off a pipe, which complete lines to record and how far into the chunk the
bytes may go on once they are recorded, in slices of at most ``batch`` lines so the peer starts on
the first lines of a burst while the next are being recorded. Bytes of a line not yet complete go on
at once: no peer acts on a line before its newline.
"""

from __future__ import annotations

__all__ = ["LineCutter"]


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
