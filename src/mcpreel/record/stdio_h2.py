"""HTTP/2 over stdio (the Transports WG's ``stdio-v2`` draft), decoded from the bytes a stdio proxy forwards.

A ``stdio-v2`` client writes the HTTP/2 connection preface and frames on the server's stdin, the server
answers with frames on its stdout (:mod:`mcpreel.drafts` names the draft and its version). The proxy
forwards and keeps those bytes as they are (``bytes`` lines); this observer reads the same bytes and
tells the HTTP recorder (:class:`~mcpreel.record.http_recorder.HttpRecorder`, the one the HTTP proxy
uses) what crossed: each request with its headers and body, each response's status, headers and body or
SSE events, each ``RST_STREAM``, so a ``stdio-v2`` session reads as the same HTTP exchanges and JSON-RPC
messages an HTTP recording holds.

It is a passive observer, so it uses the h2 project's frame and header-compression layers (``hyperframe``
and ``hpack``, which the ``h2`` package is built on and installs) rather than an ``h2`` connection: a
connection object enforces an endpoint's state machine and flow control, which an observer that never
sends a ``WINDOW_UPDATE`` and sees each direction on its own thread would trip over (a response on a
stream its own side never opened). Here each direction has its own frame buffer and its own HPACK
decoder (HPACK's dynamic table is per direction), a peer's ``SETTINGS_HEADER_TABLE_SIZE`` bounds the
other direction's decoder, and streams are matched by id. A frame is held until it is whole (16 MiB at
most, HTTP/2's largest), a body until :data:`MAX_BODY`; what goes past that is kept only as the raw
bytes. Bytes that are not HTTP/2 after all stop the decoding of that direction with one note; the raw
bytes stay complete whatever happens here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import hpack
from hyperframe.frame import (
    ContinuationFrame,
    DataFrame,
    Frame,
    GoAwayFrame,
    HeadersFrame,
    PushPromiseFrame,
    RstStreamFrame,
    SettingsFrame,
)

from mcpreel._infra.sse import SSEParser
from mcpreel._infra.timeutil import now_ms
from mcpreel.drafts import H2_PREFACE, H2_PROTOCOL, STDIO_V2_TRANSPORT
from mcpreel.model import Kind, Message
from mcpreel.record.http_recorder import HttpExchange, HttpRecorder, body_decoder, header

__all__ = ["MAX_BODY", "H2Observer", "is_h2_session"]

#: the largest body decoded into messages (a bigger one is kept as raw bytes only, with a note)
MAX_BODY = 16 << 20
_FRAME_HEADER = 9
#: HTTP/2 error codes by number (RFC 9113 section 7), for the record of a reset
_ERRORS = {0: "NO_ERROR", 1: "PROTOCOL_ERROR", 2: "INTERNAL_ERROR", 3: "FLOW_CONTROL_ERROR",
           4: "SETTINGS_TIMEOUT", 5: "STREAM_CLOSED", 6: "FRAME_SIZE_ERROR", 7: "REFUSED_STREAM", 8: "CANCEL",
           9: "COMPRESSION_ERROR", 10: "CONNECT_ERROR", 11: "ENHANCE_YOUR_CALM", 12: "INADEQUATE_SECURITY",
           13: "HTTP_1_1_REQUIRED"}


@dataclass(slots=True)
class _Stream:
    """One HTTP/2 stream: one exchange."""

    id: int
    ex: HttpExchange | None = None
    request_headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    request_body: bytearray = field(default_factory=bytearray)
    request_done: bool = False
    responded: bool = False
    sse: SSEParser | None = None
    response_body: bytearray = field(default_factory=bytearray)
    too_big: bool = False
    done: bool = False


def _pseudo(headers: list[tuple[bytes, bytes]], name: bytes) -> str | None:
    for k, v in headers:
        if k == name:
            return v.decode("latin-1")
    return None


def _text_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers]


class H2Observer:
    """Decodes both directions of one ``stdio-v2`` connection into HTTP recorder events (thread-safe)."""

    def __init__(self, http: HttpRecorder, emit: Callable[[Message], object]):
        """``http`` gets the exchanges; ``emit`` the observer's own notes (a direction that is not HTTP/2)."""
        self._http = http
        self._emit = emit
        self._lock = threading.Lock()
        self._buf = {"in": bytearray(), "out": bytearray()}
        self._preface_left = len(H2_PREFACE)
        self._decoders = {"in": hpack.Decoder(), "out": hpack.Decoder()}
        for decoder in self._decoders.values():
            decoder.max_header_list_size = 1 << 20
        #: (direction, stream) -> (header block fragments, END_STREAM on the HEADERS frame, push promise)
        self._blocks: dict[tuple[str, int], tuple[list[bytes], bool, bool]] = {}
        self._streams: dict[int, _Stream] = {}
        #: why a direction's decoding stopped (its bytes are kept all the same)
        self.broken: dict[str, str] = {}
        self.frames = {"in": 0, "out": 0}

    # -- input --------------------------------------------------------------------------------------
    def feed(self, direction: str, data: bytes) -> None:
        """The bytes one read brought in ``direction`` (``in``: client -> server)."""
        with self._lock:
            if direction in self.broken:
                return
            try:
                self._feed(direction, data)
            except Exception as exc:  # not HTTP/2 after all, or a peer's bad frame: say so once, stop decoding
                self._buf[direction] = bytearray()
                self.broken[direction] = f"{type(exc).__name__}: {exc}"
                self._emit(Message(direction, None, now_ms(), kind=Kind.TRANSPORT,
                                   ctx={"framing": H2_PROTOCOL, "transport": STDIO_V2_TRANSPORT,
                                        "undecoded": f"HTTP/2 decoding stopped ({self.broken[direction]}); "
                                                     "the bytes are kept raw"}))

    def _feed(self, direction: str, data: bytes) -> None:
        buf = self._buf[direction]
        if direction == "in" and self._preface_left:
            take = data[: self._preface_left]
            at = len(H2_PREFACE) - self._preface_left
            if H2_PREFACE[at : at + len(take)] != take:
                raise ValueError("the client's bytes do not start with the HTTP/2 connection preface")
            self._preface_left -= len(take)
            data = data[len(take):]
        buf += data
        view = memoryview(buf)
        pos = 0
        try:
            while len(buf) - pos >= _FRAME_HEADER:
                frame, length = Frame.parse_frame_header(view[pos : pos + _FRAME_HEADER])
                if len(buf) - pos - _FRAME_HEADER < length:
                    break
                frame.parse_body(view[pos + _FRAME_HEADER : pos + _FRAME_HEADER + length])
                pos += _FRAME_HEADER + length
                self.frames[direction] += 1
                self._frame(direction, frame)
        finally:
            view.release()
            if pos:
                del buf[:pos]

    # -- frames -------------------------------------------------------------------------------------
    def _frame(self, d: str, frame: Frame) -> None:
        sid = frame.stream_id
        if isinstance(frame, HeadersFrame):
            self._fragment(d, sid, frame.data, "END_HEADERS" in frame.flags,
                           end_stream="END_STREAM" in frame.flags, push=False, first=True)
        elif isinstance(frame, PushPromiseFrame):
            self._fragment(d, sid, frame.data, "END_HEADERS" in frame.flags, end_stream=False, push=True, first=True)
        elif isinstance(frame, ContinuationFrame):
            self._fragment(d, sid, frame.data, "END_HEADERS" in frame.flags, end_stream=False, push=False,
                           first=False)
        elif isinstance(frame, DataFrame):
            self._data(d, sid, bytes(frame.data), "END_STREAM" in frame.flags)
        elif isinstance(frame, RstStreamFrame):
            self._reset(d, sid, frame.error_code)
        elif isinstance(frame, SettingsFrame):
            size = frame.settings.get(SettingsFrame.HEADER_TABLE_SIZE)
            if size is not None and "ACK" not in frame.flags:
                # the receiver's limit on the other direction's encoder, hence on its decoder here
                self._decoders["out" if d == "in" else "in"].max_allowed_table_size = size
        elif isinstance(frame, GoAwayFrame):
            self._goaway(d, frame)

    def _fragment(self, d: str, sid: int, data: bytes, end_headers: bool, *, end_stream: bool, push: bool,
                  first: bool) -> None:
        key = (d, sid)
        if first:
            self._blocks[key] = ([bytes(data)], end_stream, push)
        elif key in self._blocks:
            self._blocks[key][0].append(bytes(data))
        else:
            raise ValueError(f"CONTINUATION on stream {sid} without a header block")
        if not end_headers:
            return
        parts, end, is_push = self._blocks.pop(key)
        headers = [(bytes(k), bytes(v)) for k, v in self._decoders[d].decode(b"".join(parts), raw=True)]
        if is_push:
            return  # decoded to keep the table in step; a pushed response is not part of MCP's wire
        if d == "in":
            self._request_headers(sid, headers, end)
        else:
            self._response_headers(sid, headers, end)

    def _stream(self, sid: int) -> _Stream:
        st = self._streams.get(sid)
        if st is None:
            st = self._streams[sid] = _Stream(sid)
        return st

    def _request_headers(self, sid: int, headers: list[tuple[bytes, bytes]], end: bool) -> None:
        st = self._stream(sid)
        if st.ex is not None:  # trailers
            st.request_headers.extend(headers)
        else:
            st.request_headers = headers
            st.ex = self._http.open(_pseudo(headers, b":method") or "?", _pseudo(headers, b":path") or "")
        if end:
            self._request_done(st)

    def _request_done(self, st: _Stream) -> None:
        st.request_done = True
        assert st.ex is not None
        hdrs = st.request_headers
        if st.too_big:
            self._http.request_body(st.ex, hdrs, None)
            self._http.unrecordable(st.ex, f"request body over {MAX_BODY} bytes: kept as raw bytes only")
            return
        coding = header(dict(_text_headers(hdrs)), "content-encoding")
        body = bytes(st.request_body) or None
        st.request_body = bytearray()
        self._http.request_body(st.ex, hdrs, body, decode=body_decoder(coding))

    def _response_headers(self, sid: int, headers: list[tuple[bytes, bytes]], end: bool) -> None:
        st = self._stream(sid)
        if st.ex is None:  # a stream the client never opened (the drafts leave server-initiated ones open)
            st.ex = self._http.open("?", "")
            st.request_done = True
        status_text = _pseudo(headers, b":status") or "0"
        status = int(status_text) if status_text.isdigit() else 0
        if st.responded:  # trailers
            if end:
                self._response_done(st)
            return
        if 100 <= status < 200:
            return  # an interim response: the final one follows
        st.responded = True
        ctype = header(dict(_text_headers(headers)), "content-type") or ""
        sse = "text/event-stream" in ctype.lower()
        self._http.response_head(st.ex, status, headers, sse=sse)
        if sse:
            st.sse = SSEParser()
        if end:
            self._response_done(st)

    def _data(self, d: str, sid: int, data: bytes, end: bool) -> None:
        st = self._streams.get(sid)
        if st is None or st.ex is None:
            raise ValueError(f"DATA on stream {sid} before its headers")
        if d == "in":
            if not st.too_big:
                if len(st.request_body) + len(data) > MAX_BODY:
                    st.too_big, st.request_body = True, bytearray()
                else:
                    st.request_body += data
            if end:
                self._request_done(st)
            return
        if st.sse is not None:
            for ev in st.sse.feed(data):
                self._http.sse_event(st.ex, ev)
        elif not st.too_big:
            if len(st.response_body) + len(data) > MAX_BODY:
                st.too_big, st.response_body = True, bytearray()
            else:
                st.response_body += data
        if end:
            self._response_done(st)

    def _response_done(self, st: _Stream) -> None:
        if st.done:
            return
        st.done = True
        self._streams.pop(st.id, None)
        assert st.ex is not None
        if st.sse is not None:
            self._http.stream_end(st.ex)
            return
        hdrs = st.ex.response_headers or {}
        if st.too_big:
            self._http.response_body(st.ex, b"", undecodable=f"body over {MAX_BODY} bytes: kept as raw bytes only")
            return
        body = bytes(st.response_body)
        st.response_body = bytearray()
        self._http.response_body(st.ex, body, decode=body_decoder(header(hdrs, "content-encoding")))

    def _reset(self, d: str, sid: int, code: int) -> None:
        st = self._streams.pop(sid, None)
        if st is None or st.ex is None or st.done:
            return
        st.done = True
        name = _ERRORS.get(code, str(code))
        self._http.closed(st.ex, "client" if d == "in" else "upstream", f"RST_STREAM {name}")

    def _goaway(self, d: str, frame: GoAwayFrame) -> None:
        ctx: dict[str, Any] = {"framing": H2_PROTOCOL, "goaway": _ERRORS.get(frame.error_code, str(frame.error_code)),
                               "last_stream": frame.last_stream_id}
        if frame.additional_data:
            ctx["debug"] = bytes(frame.additional_data).decode("utf-8", "backslashreplace")
        self._emit(Message(d, None, now_ms(), kind=Kind.TRANSPORT, ctx=ctx))

    def close(self) -> None:
        """The pipes ended: every stream still open is recorded as closed with the connection."""
        with self._lock:
            for st in list(self._streams.values()):
                if st.ex is not None and not st.done:
                    st.done = True
                    self._http.closed(st.ex, "upstream", "the connection ended with the stream open")
            self._streams.clear()

    @property
    def open_streams(self) -> int:
        """Streams begun and not ended."""
        return len(self._streams)


def is_h2_session(records: Any) -> bool:
    """Whether a recording's records hold a ``stdio-v2`` (HTTP/2 over stdio) connection: its framing record."""
    for rec in records:
        if rec.kind == Kind.TRANSPORT and (rec.ctx or {}).get("framing") == H2_PROTOCOL:
            return True
    return False
