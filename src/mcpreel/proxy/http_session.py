"""One HTTP recording run: the proxy, the reel it writes, the qai session file, the envelope at the end.

:func:`record_http` is the library call behind ``mcpreel record --transport streamable-http|sse`` and
``mcpreel proxy start``: it binds the listener first (a taken port fails before any file is created),
then records into a reel (append-only, flushed per record, mode 0600: a crash loses nothing already
recorded) until SIGINT/SIGTERM or ``stop``, closes the reel with its ``end`` line, saves the session file
one last time and writes the HTTP transcript envelope from the reel when asked.
"""

from __future__ import annotations

import contextlib
import signal as _signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpreel.errors import McpreelError, TransportError, UsageError
from mcpreel.fileio import atomic_output
from mcpreel.formats import get_writer, open_session
from mcpreel.formats.http_envelope import LABEL_OF_TRANSPORT
from mcpreel.formats.reel import ReelWriter
from mcpreel.model import Kind, Message, SessionInfo
from mcpreel.proxy.http import ProxyConfig, ProxyServer, RecordingProxy
from mcpreel.proxy.http_recorder import HttpRecorder, RecorderStats
from mcpreel.proxy.naming import check_writable, claim
from mcpreel.proxy.session_file import SessionFileKeeper

__all__ = ["HttpRecordResult", "record_http", "write_envelope"]

Warn = Callable[[str], None]


@dataclass
class HttpRecordResult:
    out: Path
    stats: RecorderStats
    unanswered: int
    reason: str
    session_file: Path | None = None
    envelope: Path | None = None
    exit_code: int = 0


class _Sink:
    """Where records go: redacted (``--redact``), into the reel, and into the session file keeper.

    A failure to write (a full disk) is said once and stops the recording; forwarding goes on.
    """

    def __init__(self, redactor: Callable[[Any], Any] | None, warn: Warn | None):
        self.writer: ReelWriter | None = None
        self.keeper: Any = None
        self.redactor = redactor
        self.warn = warn
        self.failed = False

    def __call__(self, msg: Message) -> None:
        if self.failed or self.writer is None:
            return
        if self.redactor is not None:
            redact = self.redactor
            if msg.kind == Kind.MESSAGE and msg.raw is not None:
                msg.raw = redact(msg.raw)
            if msg.text is not None:
                msg.text = redact(msg.text)
            ctx = msg.ctx
            if ctx:
                for key in ("path", "data", "body", "forwarded"):  # a query string, a 401 body, an error page
                    if ctx.get(key) is not None:
                        ctx[key] = redact(ctx[key])
        try:
            self.writer.write(msg)
        except Exception as exc:  # the recording must never take the proxy down
            self.failed = True
            if self.warn is not None:
                self.warn(f"{self.writer.path}: recording stopped: {exc} (forwarding goes on)")
            return
        if self.keeper is not None:
            self.keeper.add(msg)


def _drop_if_empty(path: str | Path) -> None:
    p = Path(path)
    with contextlib.suppress(OSError):
        if p.is_file() and p.stat().st_size == 0:
            p.unlink()


def write_envelope(reel: str | Path, out: str | Path, *, session_headers: dict[str, str] | None = None) -> Path:
    """Write seed 000's HTTP transcript envelope from a recorded reel (atomically, mode 0600).

    ``session_headers`` (the last ``MCP-Protocol-Version`` / ``Mcp-Session-Id``) become the envelope's
    top-level ``transport_context``.
    """
    session, _ = open_session(reel, "reel")
    if session_headers:
        session.info.headers = dict(session_headers)
    label = LABEL_OF_TRANSPORT.get(session.info.transport or "", "streamable-http")
    writer = get_writer(label)
    with atomic_output(out) as fh:
        writer(session, fh)
    return Path(out)


def record_http(
    config: ProxyConfig,
    out: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    label: str | None = None,
    session_file: str | Path | None = None,
    save_every: float | None = None,
    redactor: Callable[[Any], Any] | None = None,
    envelope: str | Path | None = None,
    ready: Callable[[str], object] | None = None,
    warn: Warn | None = None,
    handle_signals: bool = True,
    on_server: Callable[[ProxyServer], object] | None = None,
    otlp_endpoint: str | None = None,
) -> HttpRecordResult:
    """Record through the HTTP proxy until stopped; see the module docstring.

    ``on_server`` receives the :class:`ProxyServer` before it serves (to stop it from another thread).
    ``otlp_endpoint`` also exports spans live, off the forwarding path (:mod:`mcpreel.otel.live`).
    """
    if session_file is not None:
        get_writer("qai")  # a build without the qai writer fails here, before anything is bound or created
        check_writable(session_file, "session file")
    if envelope is not None:
        check_writable(envelope, "envelope")  # said now, not after the session
    sink = _Sink(redactor, warn)
    tap: Any = None  # record --otlp-endpoint: made once the session's header is known, below

    def emit(msg: Message) -> None:
        sink(msg)
        if tap is not None:
            tap.message(msg)

    recorder = HttpRecorder(emit, keep_secrets=config.keep_secrets)
    try:
        server = ProxyServer(RecordingProxy(config, recorder), host, port)  # binds now: errors before files
    except TransportError:
        _drop_if_empty(out)  # a default name claimed for this run (empty, 0600) is no recording
        raise
    keeper = None
    info = SessionInfo(
        label=label, transport=config.transport,
        url=redactor(config.target) if redactor is not None else config.target, command=[],
        metadata={"listen": redactor(server.url) if redactor is not None else server.url},
    )
    try:
        out_path = claim(out)  # the stdio recorder's rule: --out is replaced, never appended to
        sink.writer = ReelWriter(out_path, info)
    except OSError as exc:
        server.close()
        raise UsageError(f"{out}: cannot write the recording: {exc.strerror or exc}") from exc
    if session_file is not None:
        keeper = SessionFileKeeper(session_file, info, save_every=save_every if save_every else None, warn=warn)
        sink.keeper = keeper
    if otlp_endpoint is not None:
        from mcpreel.otel.live import LiveExport

        tap = LiveExport(otlp_endpoint, info, warn=warn)
    if on_server is not None:
        on_server(server)
    reason = "stopped"
    try:
        server.run(ready=ready, handle_signals=handle_signals)
        if server.signal is not None:
            reason = f"signal {_signal.Signals(server.signal).name}"
    except BaseException as exc:
        reason = f"error: {type(exc).__name__}: {exc}"
        raise
    finally:
        sink.writer.close(0, reason)
        if tap is not None:
            tap.close(0, reason)
        session_saved = keeper.close() if keeper is not None else False  # a failure was warned
    result = HttpRecordResult(out_path, recorder.stats, recorder.unanswered, reason,
                              session_file=Path(session_file) if session_saved else None)
    if envelope is not None:
        try:
            result.envelope = write_envelope(out_path, envelope, session_headers=recorder.session_headers)
        except (OSError, McpreelError) as exc:  # its place was taken while recording, a full disk
            why = str(exc) if isinstance(exc, McpreelError) else f"{envelope}: cannot write: {exc.strerror or exc}"
            to = LABEL_OF_TRANSPORT.get(config.transport, "streamable-http")
            raise UsageError(f"{why}; the recording is complete in {out_path} "
                             f"(mcpreel convert {out_path} {envelope} --to {to} writes it)") from exc
    return result
