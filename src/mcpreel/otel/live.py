"""``record --otlp-endpoint URL``: spans exported while the session is being recorded.

An addon of the recording pipeline (:mod:`mcpreel.record.pipeline`), for both transports. Its hooks run
on the forwarding path, so each only puts a reference on a bounded queue (a microsecond; when the queue is
full the item is not exported and counted, never waited for): ``recorded`` gets each record the recorder
built (the HTTP recorder's, stderr lines, a stdio recording whose other addons look at records), ``frames``
the stdio fast path's spliced lines, so exporting alone never makes the stdio recorder parse a line on the
pump. One background thread, started with the session (``started``), parses the frames, maps everything
with the same :class:`~mcpreel.otel.mapping.SpanMapper` as ``export otlp`` (a span leaves when its
response arrives) and sends batches through the SDK's OTLP/HTTP exporter: every :data:`BATCH` spans or
:data:`FLUSH_SECONDS` after the last send. A collector that is down or refuses costs one warning; the
recording and the forwarding never wait for it. At the end (``finished``) the thread gets
:data:`CLOSE_SECONDS` to send what is left (the session span last).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from mcpreel._infra import jsonio
from mcpreel.model import Kind, Message, Session, SessionInfo

__all__ = ["BATCH", "CLOSE_SECONDS", "EXPORT_TIMEOUT", "FLUSH_SECONDS", "LiveExport"]

BATCH = 512
FLUSH_SECONDS = 1.0
#: the end must come quickly: an MCP client that closed the server's stdin sends SIGTERM 2 s later (the
#: official SDK does), so what is left gets at most this long, each export attempt at most
#: :data:`EXPORT_TIMEOUT`, and a dead collector is given up on within the budget
CLOSE_SECONDS = 1.5
EXPORT_TIMEOUT = 1.0
QUEUE_READS = 20_000  # items (a record, or a read's frames) waiting for the exporter thread before new ones are dropped

_END = object()


class LiveExport:
    """An addon of the recording pipeline exporting spans in the background (see the module docstring).

    ``info``: the session header, when it is known already (else ``started`` brings it and starts the
    thread).
    """

    def __init__(self, endpoint: str | None, info: SessionInfo | None = None, *,
                 warn: Callable[[str], None] | None = None, timeout: float = EXPORT_TIMEOUT, exporter: Any = None):
        from mcpreel.otel.export import otlp_exporter

        self.info = info if info is not None else SessionInfo()
        self.warn = warn
        self.exporter = exporter if exporter is not None else otlp_exporter(endpoint, timeout=timeout)
        self.where = getattr(self.exporter, "_endpoint", endpoint)
        self.queue: queue.Queue[Any] = queue.Queue(QUEUE_READS)
        self.dropped_reads = 0
        self.sent = 0
        self.failed_batches = 0
        self._warned = False
        self._dead = False  # a collector that failed once is not asked again: it must cost nothing
        self._pending: list[Any] = []
        self._last_send = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="mcpreel-otlp", daemon=True)
        if info is not None:
            self._thread.start()

    # -- the recorder's side: never blocks --------------------------------------------------------
    def message(self, msg: Message) -> None:
        """A record the HTTP recorder already parsed (it is not changed after it is handed over)."""
        try:
            self.queue.put_nowait(msg)
        except queue.Full:
            self.dropped_reads += 1

    # -- as an addon of the recording pipeline (mcpreel.record.pipeline) ------------------------------
    def started(self, info: SessionInfo) -> None:
        """The session header as the reel has it (redacted, tagged): the thread starts with it."""
        self.info = info
        if self._thread.ident is None:
            self._thread.start()

    def recorded(self, rec: Message) -> None:
        """A record was written to the reel (already redacted when ``--redact`` is on)."""
        self.message(rec)

    def raw_recorded(self, rec: Message) -> None:
        """A raw ``bytes`` line was written (HTTP/2 over stdio, binary): the span gets its direction and size
        only (``mcpreel.raw_bytes``, lossy, as ``export otlp`` says it), so only the size is queued, never the
        bytes (a binary stream would otherwise wait here whole)."""
        extra = {**(rec.extra or {}), "size": len(rec.raw) if isinstance(rec.raw, bytes | bytearray) else 0}
        self.message(Message(rec.dir, b"", rec.t, kind=Kind.BYTES, seq=rec.seq, extra=extra))

    def frames(self, direction: str, frames: Sequence[bytes | str], t: int, first_seq: int) -> None:
        """The stdio fast path wrote these frames (a JSON line's bytes, an invalid line's text): parsed on
        the exporter's thread, not here."""
        try:
            self.queue.put_nowait((direction, frames, t, first_seq))
        except queue.Full:
            self.dropped_reads += 1

    def finished(self, exit_code: int | None, reason: str) -> None:
        """The recording ended: flush what is left and close the exporter."""
        self.close(exit_code, reason)

    def close(self, exit_code: int | None = None, reason: str | None = None) -> None:
        """Let the thread send what is left, for at most :data:`CLOSE_SECONDS`."""
        self.info.exit_code = exit_code
        if self._thread.ident is None:  # the session never started: nothing to send
            try:
                self.exporter.shutdown()
            except Exception:
                pass
            return
        deadline = time.monotonic() + CLOSE_SECONDS
        while True:
            try:
                self.queue.put(_END, timeout=0.1)
                break
            except queue.Full:
                if time.monotonic() > deadline:
                    break
        self._thread.join(max(0.0, deadline - time.monotonic()))
        if self._thread.is_alive():
            self._say(f"OTLP export to {self.where}: gave up on what was left after {CLOSE_SECONDS:g} s")
        elif self.dropped_reads:
            self._say(f"OTLP export to {self.where}: {self.dropped_reads} reads were not exported (the exporter fell behind)")

    # -- the exporter's thread ---------------------------------------------------------------------
    def _messages(self) -> Iterator[Message]:
        while True:
            try:
                item = self.queue.get(timeout=FLUSH_SECONDS / 2)
            except queue.Empty:
                self._flush(force=False)
                continue
            if item is _END:
                return
            if isinstance(item, Message):
                yield item
                self._flush(force=False)
                continue
            direction, frames, t, seq = item
            for frame in frames:
                value = None
                if isinstance(frame, bytes):
                    try:
                        value = jsonio.loads(frame)
                    except Exception:
                        value = None
                if type(value) is dict or type(value) is list:
                    yield Message(direction, value, t, seq=seq)
                else:
                    text = frame if isinstance(frame, str) else frame.decode("utf-8", "backslashreplace")
                    yield Message(direction, None, t, kind=Kind.INVALID, seq=seq, text=text)
                seq += 1
            self._flush(force=False)

    def _run(self) -> None:
        from mcpreel.otel.mapping import SpanMapper

        try:
            session = Session.streaming(self.info, self._messages)
            self.mapper = SpanMapper(session)
            for record in self.mapper.feed_all(session):
                self._pending.append(record)
                if len(self._pending) >= BATCH:
                    self._flush(force=True)
            self._flush(force=True)
        except Exception as exc:  # the exporter's thread must never take the recording down
            self._say(f"OTLP export to {self.where} stopped: {exc}")
        finally:
            try:
                self.exporter.shutdown()
            except Exception:
                pass

    def _flush(self, *, force: bool) -> None:
        if not self._pending or (not force and time.monotonic() - self._last_send < FLUSH_SECONDS):
            return
        from opentelemetry.sdk.trace.export import SpanExportResult

        from mcpreel.otel.export import readable_spans

        batch, self._pending = self._pending, []
        self._last_send = time.monotonic()
        if self._dead:
            self.failed_batches += 1
            return
        try:
            ok = self.exporter.export(readable_spans(batch, self.mapper.resource_attributes())) is SpanExportResult.SUCCESS
        except Exception:
            ok = False
        if ok:
            self.sent += len(batch)
        else:
            self.failed_batches += 1
            self._dead = True
            self._say(f"OTLP export to {self.where} failed; the recording goes on without it")

    def _say(self, text: str) -> None:
        if self.warn is not None and not self._warned:
            self._warned = True
            self.warn(text)
