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
import dataclasses
import signal as _signal
from collections.abc import Callable
from pathlib import Path

from mcpreel._infra.fileio import atomic_output, refuse_symlink
from mcpreel.errors import McpreelError, TransportError, UsageError
from mcpreel.formats import get_writer, open_session
from mcpreel.formats.http_envelope import LABEL_OF_TRANSPORT
from mcpreel.formats.reel import ReelWriter
from mcpreel.model import Message, SessionInfo
from mcpreel.record.addons import default_addons
from mcpreel.record.http_proxy import ProxyServer, RecordingProxy
from mcpreel.record.http_recorder import HttpRecorder
from mcpreel.record.naming import check_writable, claim_reel
from mcpreel.record.options import HttpTarget, RecordHooks, RecordOptions, RecordResult
from mcpreel.record.pipeline import Pipeline

__all__ = ["record_http", "write_envelope"]

Warn = Callable[[str], None]


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


def record_http(options: RecordOptions, hooks: RecordHooks | None = None) -> RecordResult:
    """Record through the HTTP proxy of ``options.server`` (an :class:`HttpTarget`) until stopped; see the
    module docstring. Use :func:`mcpreel.record.record`, which takes every transport.

    What is kept or done beside the reel (redaction, tags, the session file, live OTLP, the control server,
    rules) is :func:`~mcpreel.record.addons.default_addons`'s business; the interceptor it makes sees
    client -> server messages before they are forwarded and is handed the proxy's injection port
    (``attach``) before the proxy serves. The control server's description names the listening URL.
    """
    hooks = hooks if hooks is not None else RecordHooks()
    target = options.server
    if not isinstance(target, HttpTarget):
        raise TypeError("record_http records an HttpTarget")
    config, out = target.config, options.out
    warnings: list[str] = []

    def warn(text: str) -> None:
        warnings.append(text)
        if hooks.warn is not None:
            hooks.warn(text)

    refuse_symlink(out)  # before the listener is bound (claim says it again, for a link planted meanwhile)
    if target.envelope is not None:
        check_writable(target.envelope, "envelope")  # said now, not after the session
    sink = _Sink(warn)
    recorder = HttpRecorder(sink, keep_secrets=config.keep_secrets)
    try:
        proxy = RecordingProxy(config, recorder, warn=warn)
        server = ProxyServer(proxy, target.host, target.port)  # binds now: errors before files
    except TransportError:
        _drop_if_empty(out)  # a default name claimed for this run (empty, 0600) is no recording
        raise
    try:
        addons = default_addons(options, dataclasses.replace(hooks, warn=warn))
    except BaseException:
        server.close()
        _drop_if_empty(out)
        raise
    proxy.interceptor = addons.interceptor
    # the URLs as written: a key in the target's query is redacted unless keep_secrets (mcpreel.redact.urls)
    info = SessionInfo(label=options.label, transport=config.transport, url=config.shown_target, command=[],
                       metadata={"listen": server.shown_url})
    sink.pipeline = Pipeline(addons.chain)
    try:
        sink.pipeline.started(info)
        out_path, first_seq = claim_reel(out)  # an existing reel gets a new session, never replaced
        sink.writer = ReelWriter(out_path, info, first_seq=first_seq)
    except BaseException as exc:
        server.close()
        addons.close()
        if isinstance(exc, OSError):
            raise UsageError(f"{out}: cannot write the recording: {exc.strerror or exc}") from exc
        raise
    addons.start()
    attach = getattr(addons.interceptor, "attach", None)
    if callable(attach):
        attach(proxy)
    if hooks.on_server is not None:
        hooks.on_server(server)
    control = addons.control

    def ready(url: str) -> None:
        if control is not None:  # a viewer finds the listening URL in the control server's description
            control.listen = url
            control.write_info()
        if hooks.ready is not None:
            hooks.ready(url)

    reason = "stopped"
    try:
        server.run(ready=ready, handle_signals=hooks.handle_signals)
        if server.signal is not None:
            reason = f"signal {_signal.Signals(server.signal).name}"
    except BaseException as exc:
        reason = f"error: {type(exc).__name__}: {exc}"
        raise
    finally:
        sink.writer.close(0, reason)
        sink.pipeline.finished(0, reason)  # the session file's last save (a failure was warned)
        addons.close()
    stats = recorder.stats
    result = RecordResult(0, reason, out_path, session_file=addons.session_file, messages=stats.messages,
                          invalid=stats.invalid, redacted=addons.redacted, warnings=warnings, client_ended=True,
                          stats=stats, unanswered=recorder.unanswered)
    envelope = target.envelope
    if envelope is not None:
        try:
            result.envelope = write_envelope(out_path, envelope, session_headers=recorder.session_headers)
        except (OSError, McpreelError) as exc:  # its place was taken while recording, a full disk
            why = str(exc) if isinstance(exc, McpreelError) else f"{envelope}: cannot write: {exc.strerror or exc}"
            to = LABEL_OF_TRANSPORT.get(config.transport, "streamable-http")
            raise UsageError(f"{why}; the recording is complete in {out_path} "
                             f"(mcpreel convert {out_path} {envelope} --to {to} writes it)") from exc
    return result
