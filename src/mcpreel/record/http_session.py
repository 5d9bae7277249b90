"""One HTTP recording run: the proxy, the reel it writes, the qai session file, the envelope at the end.

:func:`record_http` is the library call behind ``mcpreel record --transport streamable-http|sse`` and
``mcpreel proxy start``: it binds the listener first (a taken port fails before any file is created),
then records into a reel (append-only, flushed per record, mode 0600: a crash loses nothing already
recorded) until SIGINT/SIGTERM or ``stop``, closes the reel with its ``end`` line, saves the session file
one last time and writes the HTTP transcript envelope from the reel when asked. Every record goes through
the recording pipeline (:mod:`mcpreel.record.pipeline`): redaction, the caller's addons, the session file.
"""

from __future__ import annotations

import contextlib
import signal as _signal
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from mcpreel._infra.fileio import atomic_output
from mcpreel.errors import McpreelError, TransportError, UsageError
from mcpreel.formats import get_writer, open_session
from mcpreel.formats.http_envelope import LABEL_OF_TRANSPORT
from mcpreel.formats.reel import ReelWriter
from mcpreel.model import Message, SessionInfo
from mcpreel.record.http_proxy import ProxyConfig, ProxyServer, RecordingProxy
from mcpreel.record.http_recorder import HttpRecorder, RecorderStats
from mcpreel.record.intercept import Interceptor
from mcpreel.record.naming import check_writable, claim_reel
from mcpreel.record.pipeline import Pipeline, Redaction
from mcpreel.record.session_file import SessionFileKeeper
from mcpreel.redact import Redactor

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
    redacted: int | None = None  # values the redactor replaced (None: no redactor)


class _Sink:
    """Where the HTTP recorder's records go: through the pipeline's addons, into the reel.

    A failure to record (a full disk, an addon's bug) is said once and stops the recording; forwarding
    goes on.
    """

    def __init__(self, warn: Warn | None):
        self.writer: ReelWriter | None = None  # both set once the listener is bound and the reel opened
        self.pipeline = Pipeline()
        self.warn = warn
        self.failed = False

    def __call__(self, msg: Message) -> None:
        if self.failed or self.writer is None:
            return
        try:
            rec = self.pipeline.record(msg)
            if rec is None:
                return
            self.writer.write(rec)
            self.pipeline.recorded(rec)
        except Exception as exc:  # the recording must never take the proxy down
            self.failed = True
            if self.warn is not None:
                self.warn(f"{self.writer.path}: recording stopped: {exc} (forwarding goes on)")


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
    redactor: Redactor | None = None,
    addons: Iterable[object] = (),
    envelope: str | Path | None = None,
    ready: Callable[[str], object] | None = None,
    warn: Warn | None = None,
    handle_signals: bool = True,
    on_server: Callable[[ProxyServer], object] | None = None,
    otlp_endpoint: str | None = None,
    interceptor: Interceptor | None = None,
) -> HttpRecordResult:
    """Record through the HTTP proxy until stopped; see the module docstring.

    ``redactor`` changes what is recorded, never what is forwarded; the result says how many values it
    replaced. ``addons`` see every record, after the redaction (:mod:`mcpreel.record.pipeline`).
    ``on_server`` receives the :class:`ProxyServer` before it serves (to stop it from another thread).
    ``otlp_endpoint`` also exports spans live, from a background thread (:mod:`mcpreel.otel.live`, an addon).
    ``interceptor`` sees client -> server messages before they are forwarded (:mod:`mcpreel.record.intercept`);
    it is handed the proxy's injection port (``attach``) before the proxy serves.
    """
    if session_file is not None:
        get_writer("qai")  # a build without the qai writer fails here, before anything is bound or created
        check_writable(session_file, "session file")
    if envelope is not None:
        check_writable(envelope, "envelope")  # said now, not after the session
    redaction = Redaction(redactor) if redactor is not None else None
    sink = _Sink(warn)
    recorder = HttpRecorder(sink, keep_secrets=config.keep_secrets)
    try:
        proxy = RecordingProxy(config, recorder, interceptor=interceptor, warn=warn)
        server = ProxyServer(proxy, host, port)  # binds now: errors before files
    except TransportError:
        _drop_if_empty(out)  # a default name claimed for this run (empty, 0600) is no recording
        raise
    # the URLs as written: a key in the target's query is redacted unless keep_secrets (mcpreel.redact.urls)
    info = SessionInfo(label=label, transport=config.transport, url=config.shown_target, command=[],
                       metadata={"listen": server.shown_url})
    keeper = None
    if session_file is not None:
        keeper = SessionFileKeeper(session_file, info, save_every=save_every if save_every else None, warn=warn,
                                   start=False)
    live = None
    if otlp_endpoint is not None:
        from mcpreel.otel.live import LiveExport

        live = LiveExport(otlp_endpoint, info, warn=warn)
    sink.pipeline = Pipeline([a for a in (redaction, *addons, live, keeper) if a is not None])
    sink.pipeline.started(info)
    try:
        out_path, first_seq = claim_reel(out)  # an existing reel gets a new session, never replaced
        sink.writer = ReelWriter(out_path, info, first_seq=first_seq)
    except UsageError:
        server.close()
        raise
    except OSError as exc:
        server.close()
        raise UsageError(f"{out}: cannot write the recording: {exc.strerror or exc}") from exc
    if keeper is not None:
        keeper.start()
    attach = getattr(interceptor, "attach", None)
    if callable(attach):
        attach(proxy)
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
        sink.pipeline.finished(0, reason)  # the session file's last save (a failure was warned)
    result = HttpRecordResult(out_path, recorder.stats, recorder.unanswered, reason,
                              session_file=keeper.path if keeper is not None and keeper.saved else None,
                              redacted=redaction.total if redaction is not None else None)
    if envelope is not None:
        try:
            result.envelope = write_envelope(out_path, envelope, session_headers=recorder.session_headers)
        except (OSError, McpreelError) as exc:  # its place was taken while recording, a full disk
            why = str(exc) if isinstance(exc, McpreelError) else f"{envelope}: cannot write: {exc.strerror or exc}"
            to = LABEL_OF_TRANSPORT.get(config.transport, "streamable-http")
            raise UsageError(f"{why}; the recording is complete in {out_path} "
                             f"(mcpreel convert {out_path} {envelope} --to {to} writes it)") from exc
    return result
