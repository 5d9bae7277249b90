"""The one place a recording's built-in addons are made from its options, for every transport.

:func:`default_addons` turns a :class:`~mcpreel.record.options.RecordOptions` into what the recorders
(:mod:`~mcpreel.record.stdio_proxy`, :mod:`~mcpreel.record.http_session`) run: the pipeline's addons in
order — the header fields (``--tag``), :class:`~mcpreel.record.pipeline.Redaction`, the control server,
the caller's own, live OTLP (:mod:`mcpreel.otel.live`), the session file
(:class:`~mcpreel.record.session_file.SessionFileKeeper`) — and the interceptor on the forwarding path
(``--rules`` first, then a person at the control channel, then the caller's own). A recorder never builds
one of these itself, so a new option is added here once and reaches both transports and every front end.

The addons learn the session header from the pipeline's ``started`` hook (the recorder makes the header
once it knows the transport's parts of it), so nothing here needs the header in advance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpreel.errors import McpreelError, UsageError
from mcpreel.model import SessionInfo
from mcpreel.record.naming import check_writable
from mcpreel.record.options import RecordHooks, RecordOptions
from mcpreel.record.pipeline import Redaction
from mcpreel.record.session_file import SessionFileKeeper

__all__ = ["Addons", "HeaderFields", "default_addons"]


class HeaderFields:
    """``--tag KEY=VALUE`` (``metadata.tags``) and the caller's metadata, put into the session header.

    The header is the reel's meta line and the qai file's ``metadata``: a ``started`` hook, first in the
    pipeline, so redaction (``--redact``) sees the tags as it sees every header member.
    """

    def __init__(self, tags: dict[str, str], metadata: dict[str, Any]):
        self.tags = tags
        self.metadata = metadata

    def started(self, info: SessionInfo) -> None:
        if self.metadata:
            info.metadata.update(self.metadata)
        if self.tags:
            old = info.metadata.get("tags")
            info.metadata["tags"] = {**(old if isinstance(old, dict) else {}), **self.tags}


@dataclass
class Addons:
    """What :func:`default_addons` built: the pipeline's addons in order, the interceptor, and handles on
    the ones whose outcome the result reports."""

    chain: tuple[object, ...]
    interceptor: Any = None
    redaction: Redaction | None = None
    keeper: SessionFileKeeper | None = None
    control: Any = None

    def start(self) -> None:
        """The recording runs now: the session file's periodic saves begin (after the server is started:
        forking a process that has threads is best avoided)."""
        if self.keeper is not None:
            self.keeper.start()

    def close(self) -> None:
        """Whatever happened: no socket, timer or thread is left behind (idempotent; a finished pipeline
        already closed them)."""
        if self.control is not None:
            self.control.close()
        if self.keeper is not None:
            self.keeper.stop()

    @property
    def redacted(self) -> int | None:
        return self.redaction.total if self.redaction is not None else None

    @property
    def session_file(self) -> Any:
        """The session file, when its last save succeeded."""
        return self.keeper.path if self.keeper is not None and self.keeper.saved else None


def _control(options: RecordOptions, hooks: RecordHooks) -> Any:
    """The started control server (None when it cannot start and nothing needs it: warned)."""
    control = options.control
    if control is None:
        return None
    from mcpreel.control.server import ControlServer

    server = ControlServer(transport=options.transport, reel=options.out, intercept=control.intercept,
                           timeout=control.intercept_timeout, note=hooks.note)
    try:
        server.start()
    except (McpreelError, OSError) as exc:
        why = str(exc) if isinstance(exc, McpreelError) else f"cannot open the control socket: {exc.strerror or exc}"
        if control.intercept is not None:  # holding with no way to decide would stall the client
            raise UsageError(f"{why} (--intercept needs the control channel)") from exc
        if hooks.warn is not None:
            hooks.warn(f"{why}; recording without a control channel")
        return None
    return server


def _check(options: RecordOptions) -> None:
    """What can be refused before anything starts, refused now, in one line."""
    if options.session_file is not None:
        from mcpreel.formats import get_writer

        get_writer("qai")  # a build without the qai writer fails here, before anything is created
        check_writable(options.session_file, "session file")  # said now, not when the session ends
    control = options.control
    if control is not None:
        if control.intercept_timeout is not None and control.intercept is None:
            raise UsageError("--intercept-timeout applies with --intercept")
        if control.intercept is not None:
            from mcpreel.control.filters import FilterError, parse

            try:
                parse(control.intercept)
            except FilterError as exc:
                raise UsageError(f"--intercept: {exc}") from exc
    if options.rules is not None:
        from mcpreel.rules.intercept import check_for_recording

        check_for_recording(options.rules, options.transport)
    if options.otlp_endpoint is not None:
        from mcpreel.otel.export import endpoint_url

        endpoint_url(options.otlp_endpoint)


def default_addons(options: RecordOptions, hooks: RecordHooks | None = None) -> Addons:
    """The built-in addons and the interceptor of the recording ``options`` describe (see the module docstring).

    ``hooks`` brings the caller's own addons and interceptor (after the built-in ones) and where warnings
    go. Raises a :class:`~mcpreel.errors.UsageError` for what cannot run (an unwritable session file, a
    rule a recording proxy cannot carry out, ``--intercept`` without a control socket), having left
    nothing running.
    """
    hooks = hooks if hooks is not None else RecordHooks()
    _check(options)
    header = HeaderFields(dict(options.tags), dict(options.metadata))
    redaction = None
    if options.redact:
        from mcpreel.redact import Redactor

        redaction = Redaction(Redactor())
    rules = None
    if options.rules is not None:
        from mcpreel.rules.intercept import RulesInterceptor

        rules = RulesInterceptor(options.rules)
    keeper = None
    if options.session_file is not None:
        keeper = SessionFileKeeper(options.session_file, None, save_every=options.save_every or None,
                                   warn=hooks.warn, start=False)
    live = None
    if options.otlp_endpoint is not None:
        from mcpreel.otel.live import LiveExport

        live = LiveExport(options.otlp_endpoint, warn=hooks.warn)  # its thread starts with the session
    control = _control(options, hooks)
    deciders = [d for d in (rules, control, hooks.interceptor) if d is not None]
    interceptor: Any = None
    if len(deciders) == 1:
        interceptor = deciders[0]
    elif deciders:
        from mcpreel.intercept import Interceptors

        interceptor = Interceptors(deciders)
    chain = tuple(a for a in (header, redaction, control, *hooks.addons, live, keeper) if a is not None)
    built = Addons(chain, interceptor, redaction, keeper, control)
    if control is not None and hooks.on_control is not None:
        try:
            hooks.on_control(control)
        except BaseException:
            built.close()
            raise
    return built
