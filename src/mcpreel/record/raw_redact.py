"""Redaction of the raw ``bytes`` copy a stdio recording keeps (never of what is forwarded).

The stdio recorder keeps every byte that was not a line of JSON (``bytes`` lines); before this module
those bytes were written as they came, so a ``stdio-v2`` (HTTP/2 over stdio) reel held the client's
``Authorization`` and ``DPoP`` headers in its HPACK-coded header blocks although the decoded records had
them redacted. :class:`RawRedactor` rewrites the raw copy the way the decoded records are redacted, and
keeps it decodable:

- **HTTP/2 header blocks** (HEADERS/PUSH_PROMISE + CONTINUATION): each block is HPACK-decoded (one decoder
  per direction, in step with the peer's encoder); a credential header (:func:`~mcpreel.redact.is_secret_header`,
  the HTTP recorder's rule) becomes :data:`~mcpreel.redact.MARKER`, a secret query parameter in ``:path``
  is redacted (:func:`~mcpreel.redact.urls.redact_url`), and with ``--redact`` every value also passes the
  text redactor. From the first block that changes on, every block of that direction is re-encoded with
  literal never-indexed representations (static-table names only), so no dynamic-table state is needed to
  decode what follows; the re-encoded block is re-framed (a HEADERS or PUSH_PROMISE frame, CONTINUATIONs at
  16 KiB, the smallest frame size a peer accepts), with the frame's priority fields kept and its padding
  dropped. Blocks before the first change are kept byte-exact.
- **DATA payloads** (``--redact`` only, as the JSON lines): each frame's payload passes the text redactor
  (UTF-8 with ``surrogateescape``, so bytes that are not UTF-8 go back as they were) and the frame is
  re-framed when it changed. A secret cut in two by a frame boundary is not seen in the raw copy (the
  decoded body, whole, is redacted in its message line).
- **Other raw bytes** (binary, a text line too long to hold, bytes with no newline) pass the text
  redactor with ``--redact``, chunk by chunk, in the same ``surrogateescape`` way: the ASCII text in a
  binary chunk is redacted, its other bytes are kept.

A direction that turns out not to be HTTP/2 falls back to the text rule. Whole frames are written (a frame
is held until its last byte came, 16 MiB at most); what is left of a frame when the pipe ends is written
as it came, except a header-block fragment, of which only the 9-byte frame header is kept.
Every piece says whether it was changed, and the reel marks those ``bytes`` lines ``"redacted": true``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import hpack
from hyperframe.frame import ContinuationFrame, DataFrame, Frame, HeadersFrame, PushPromiseFrame, SettingsFrame

from mcpreel.drafts import H2_PREFACE, H2_PROTOCOL
from mcpreel.redact import MARKER, is_secret_header
from mcpreel.redact.urls import redact_url

if TYPE_CHECKING:
    from mcpreel.redact import Redactor

__all__ = ["RawRedactor", "redact_raw_lines"]

_FRAME_HEADER = 9
#: the largest frame payload every HTTP/2 peer accepts (SETTINGS_MAX_FRAME_SIZE's initial value)
_MIN_MAX_FRAME = 16384
_BLOCK_TYPES = (HeadersFrame, PushPromiseFrame, ContinuationFrame)

Piece = tuple[bytes, bool]


class _Side:
    """One direction's HTTP/2 state: its frame buffer, its HPACK decoder, the header block being gathered."""

    __slots__ = ("block", "broken", "buf", "decoder", "preface_left", "rewriting")

    def __init__(self, direction: str):
        self.buf = bytearray()
        self.preface_left = len(H2_PREFACE) if direction == "in" else 0
        self.decoder = hpack.Decoder()
        self.decoder.max_header_list_size = 1 << 20
        #: the frames of a header block not ended yet, each with its bytes as they came
        self.block: list[tuple[Frame, bytes]] = []
        self.rewriting = False
        self.broken = False


class RawRedactor:
    """Rewrites a stdio recording's raw bytes so they carry no secret (see the module docstring).

    ``redactor`` is the recording's text redactor (``--redact``; None: header credentials only).
    Not thread-safe per direction; the recorder feeds each direction from its own pump thread.
    """

    def __init__(self, redactor: Redactor | None = None):
        """``redactor``: also redact DATA payloads, header values and raw text with it."""
        self.redactor = redactor
        self._sides = {"in": _Side("in"), "out": _Side("out")}

    # -- text ---------------------------------------------------------------------------------------
    def _text(self, data: bytes) -> Piece:
        if self.redactor is None or not data:
            return data, False
        text = data.decode("utf-8", "surrogateescape")
        new = self.redactor.text(text)
        if new == text:
            return data, False
        return new.encode("utf-8", "surrogateescape"), True

    def text(self, data: bytes) -> list[Piece]:
        """Raw bytes that are not HTTP/2: the text rule only."""
        return [self._text(data)]

    # -- HTTP/2 -------------------------------------------------------------------------------------
    def h2(self, direction: str, data: bytes) -> list[Piece]:
        """Bytes of an HTTP/2 direction: the pieces to record (whole frames), each with whether it changed."""
        side = self._sides[direction]
        if side.broken:
            return self.text(data)
        out: list[Piece] = []
        if side.preface_left:
            take = data[: side.preface_left]
            side.preface_left -= len(take)
            out.append((take, False))
            data = data[len(take):]
        side.buf += data
        buf = side.buf
        pos = 0
        try:
            while len(buf) - pos >= _FRAME_HEADER:
                frame, length = Frame.parse_frame_header(memoryview(buf)[pos : pos + _FRAME_HEADER])
                end = pos + _FRAME_HEADER + length
                if len(buf) < end:
                    break
                raw = bytes(buf[pos:end])
                frame.parse_body(memoryview(raw)[_FRAME_HEADER:])
                pos = end
                out.extend(self._frame(direction, side, frame, raw))
        except Exception:  # not HTTP/2 after all: the text rule from here on (the observer says why)
            side.broken = True
            rest = bytes(buf[pos:])
            del buf[:]
            held = b"".join(raw for _, raw in side.block)
            side.block = []
            out.extend(self.text(held + rest))
            return out
        del buf[:pos]
        return out

    def _frame(self, direction: str, side: _Side, frame: Frame, raw: bytes) -> list[Piece]:
        if isinstance(frame, _BLOCK_TYPES):
            side.block.append((frame, raw))
            if "END_HEADERS" not in frame.flags:
                return []
            return self._block(side)
        if isinstance(frame, DataFrame) and self.redactor is not None:
            payload = bytes(frame.data)
            new, changed = self._text(payload)
            if not changed:
                return [(raw, False)]
            frame.data = new
            return [(frame.serialize(), True)]
        if isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
            size = frame.settings.get(SettingsFrame.HEADER_TABLE_SIZE)
            if size is not None:  # the limit on the other direction's encoder, hence on its decoder here
                self._sides["out" if direction == "in" else "in"].decoder.max_allowed_table_size = size
        return [(raw, False)]

    def _headers(self, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        out = []
        for k, v in headers:
            name = k.decode("latin-1")
            value = v.decode("latin-1")
            if is_secret_header(name):
                value = MARKER
            elif name == ":path":
                value = redact_url(value)
            if self.redactor is not None and value != MARKER:
                value = self.redactor.text(value)
            out.append((k, value.encode("latin-1", "replace")))
        return out

    def _block(self, side: _Side) -> list[Piece]:
        frames, side.block = side.block, []
        block = b"".join(bytes(f.data) for f, _ in frames)  # type: ignore[attr-defined]
        headers = [(bytes(k), bytes(v)) for k, v in side.decoder.decode(block, raw=True)]
        redacted = self._headers(headers)
        if redacted == headers and not side.rewriting:
            return [(b"".join(raw for _, raw in frames), False)]
        side.rewriting = True  # later blocks may lean on table entries this one no longer adds
        encoder = hpack.Encoder()
        new_block = encoder.encode([hpack.NeverIndexedHeaderTuple(k, v) for k, v in redacted], huffman=True)
        first = frames[0][0]
        head: HeadersFrame | PushPromiseFrame
        if isinstance(first, PushPromiseFrame):
            head = PushPromiseFrame(first.stream_id, promised_stream_id=first.promised_stream_id)
        else:
            head = HeadersFrame(first.stream_id)
            if isinstance(first, HeadersFrame) and "PRIORITY" in first.flags:
                head.flags.add("PRIORITY")
                head.depends_on, head.stream_weight = first.depends_on, first.stream_weight
                head.exclusive = first.exclusive
            if "END_STREAM" in first.flags:
                head.flags.add("END_STREAM")
        parts = [new_block[i : i + _MIN_MAX_FRAME] for i in range(0, len(new_block), _MIN_MAX_FRAME)] or [b""]
        head.data = parts[0]
        out: list[HeadersFrame | PushPromiseFrame | ContinuationFrame] = [head]
        out.extend(ContinuationFrame(first.stream_id, data=part) for part in parts[1:])
        out[-1].flags.add("END_HEADERS")
        return [(b"".join(f.serialize() for f in out), True)]

    def finish(self, direction: str) -> list[Piece]:
        """The pipe ended: what is left of a frame (a header-block fragment keeps only its frame headers)."""
        side = self._sides[direction]
        out: list[Piece] = []
        if side.block:
            out.append((b"".join(raw[:_FRAME_HEADER] for _, raw in side.block), True))
            side.block = []
        if side.buf:
            rest = bytes(side.buf)
            del side.buf[:]
            if len(rest) >= _FRAME_HEADER and rest[3] in (1, 5, 9):  # HEADERS, PUSH_PROMISE, CONTINUATION
                out.append((rest[:_FRAME_HEADER], True))
            else:
                out.extend(self.text(rest))
        return [p for p in out if p[0]]


def redact_raw_lines(session: Any, redactor: Redactor | None) -> tuple[Any, dict[str, int]]:
    """``session`` with its raw ``bytes`` lines rewritten by a :class:`RawRedactor` (what ``mcpreel redact``
    does to a reel recorded with ``--keep-secrets``, or by an older mcpreel, whose raw copy kept its secrets),
    and a dict the rewrite counts into as the session is read (``pieces``: bytes lines written redacted).

    A direction is HTTP/2 when the session says so (a transport record with ``framing: h2``, or the client's
    first bytes are the connection preface): its frames are rewritten whole (a frame cut across lines comes
    out in the line its last byte came in); anything else passes the text rule. Each piece keeps its line's
    time and direction; a changed one is marked ``redacted``. Lazy: a streaming session stays streaming."""
    from dataclasses import replace

    from mcpreel.model import Kind, Message, Session

    counts = {"pieces": 0}

    def lines() -> Iterator[Any]:
        counts["pieces"] = 0  # a writer may read the session twice: the counts are one pass's
        rr = RawRedactor(redactor)
        h2 = False
        last: dict[str, Any] = {}
        for msg in session:
            if msg.kind == Kind.TRANSPORT and (msg.ctx or {}).get("framing") == H2_PROTOCOL:
                h2 = True
            if msg.kind != Kind.BYTES or not isinstance(msg.raw, bytes | bytearray):
                yield msg
                continue
            direction = msg.dir if msg.dir in ("in", "out") else "out"
            data = bytes(msg.raw)
            if direction not in last and direction == "in" and data.startswith(H2_PREFACE[: len(data)]):
                h2 = True
            last[direction] = msg
            pieces = rr.h2(direction, data) if h2 else rr.text(data)
            yield from _pieces(msg, pieces)
        for direction, msg in last.items():
            yield from _pieces(msg, rr.finish(direction) if h2 else [])

    def _pieces(msg: Message, pieces: list[Piece]) -> Iterator[Message]:
        for piece, changed in pieces:
            if not piece:
                continue
            extra = dict(msg.extra or {})
            if changed:
                extra["redacted"] = True
                counts["pieces"] += 1
            yield replace(msg, raw=piece, extra=extra or None)

    if session.is_streaming:
        return Session.streaming(session.info, lines), counts
    return Session(session.info, list(lines())), counts
