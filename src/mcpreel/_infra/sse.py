"""Server-Sent Events, sans-io: an incremental parser and an encoder.

Shared by the HTTP recording proxy (which forwards the bytes untouched and parses a copy), the replay
client, the mock server and ``mcpreel check``. The parser follows the WHATWG event-stream rules:
lines end in CRLF, LF or CR; ``data`` lines join with ``\\n``; a blank line dispatches; comment lines
(``:``) are reported too, since a recorder keeps keep-alives as transport events.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["SSEEvent", "SSEParser", "encode_event"]


@dataclass(slots=True)
class SSEEvent:
    event: str = "message"
    data: str = ""
    id: str | None = None
    retry: int | None = None
    comment: str | None = None  # set (and nothing else) for a comment line, e.g. a keep-alive ping
    raw: bytes = b""  # the exact bytes of this event, blank line included


class SSEParser:
    """Feed bytes as they arrive; get complete events back."""

    def __init__(self) -> None:
        self._buf = b""
        self._raw = bytearray()
        self._event: str | None = None
        self._data: list[str] = []
        self._id: str | None = None
        self._retry: int | None = None
        self._has_field = False
        self.last_event_id: str | None = None

    def feed(self, chunk: bytes) -> Iterator[SSEEvent]:
        self._buf += chunk
        while True:
            idx_n = self._buf.find(b"\n")
            idx_r = self._buf.find(b"\r")
            if idx_n < 0 and idx_r < 0:
                return
            if idx_r >= 0 and (idx_n < 0 or idx_r < idx_n):
                if idx_r == len(self._buf) - 1:
                    return  # a CR at the end may be half of a CRLF: wait for more
                end = idx_r + 2 if self._buf[idx_r + 1 : idx_r + 2] == b"\n" else idx_r + 1
                line = self._buf[:idx_r]
            else:
                end = idx_n + 1
                line = self._buf[:idx_n]
            self._raw += self._buf[:end]
            self._buf = self._buf[end:]
            ev = self._line(line.decode("utf-8", "replace"))
            if ev is not None:
                yield ev

    def _line(self, line: str) -> SSEEvent | None:
        if line == "":
            if not self._has_field:
                self._raw.clear()
                return None
            ev = SSEEvent(event=self._event or "message", data="\n".join(self._data), id=self._id,
                          retry=self._retry, raw=bytes(self._raw))
            if self._id is not None:
                self.last_event_id = self._id
            self._event, self._data, self._id, self._retry, self._has_field = None, [], None, None, False
            self._raw.clear()
            return ev
        if line.startswith(":"):
            if self._has_field:
                return None
            raw = bytes(self._raw)
            self._raw.clear()
            return SSEEvent(event="", comment=line[1:].lstrip(" "), raw=raw)
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        self._has_field = True
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry":
            if value.isdigit():
                self._retry = int(value)
        return None


def encode_event(data: str, event: str | None = "message", id: str | None = None, retry: int | None = None) -> bytes:
    """One event in the framing seed 002 asks for: ``event: message`` / ``data: ...`` / blank line."""
    parts = []
    if event:
        parts.append(f"event: {event}")
    if id is not None:
        parts.append(f"id: {id}")
    if retry is not None:
        parts.append(f"retry: {retry}")
    for line in data.split("\n"):
        parts.append(f"data: {line}")
    # a lone surrogate (JSON text may carry one, UTF-8 cannot) is written escaped, never fatal
    return ("\n".join(parts) + "\n\n").encode("utf-8", "backslashreplace")
