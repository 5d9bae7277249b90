"""The recording proxies: sit where a client expects its server, forward every byte, record every line.

One entry point, :func:`record`, for every transport and every front end: a caller fills one
:class:`RecordOptions` (the transport's part: :class:`StdioServer` or :class:`HttpTarget`) and gets one
:class:`RecordResult`; :func:`~mcpreel.record.addons.default_addons` is the one place the options become
addons. Three layers below it, the same for both transports:

- **recorders** forward and turn what crossed the wire into records: stdio (:func:`~mcpreel.record.stdio_proxy.record_stdio`;
  :mod:`~mcpreel.record.stdio_proxy` pumps bytes, :mod:`~mcpreel.record.stdio_recorder` makes reel lines)
  and HTTP (:func:`mcpreel.record.http_session.record_http`; :mod:`~mcpreel.record.http_proxy` forwards,
  the sans-io :mod:`~mcpreel.record.http_recorder` makes records).
- **the pipeline** (:mod:`~mcpreel.record.pipeline`): every record of either recorder passes through one
  :class:`Pipeline` of addons on its way into the reel; the place for what cuts across recordings.
- **addons** (:mod:`~mcpreel.record.addons`): the header fields (``--tag``), :class:`Redaction`
  (``--redact``, one :class:`~mcpreel.redact.Redactor` that counts), the control server
  (:mod:`mcpreel.control.server`), the caller's own, live OTLP (:mod:`mcpreel.otel.live`),
  :class:`~mcpreel.record.session_file.SessionFileKeeper` (``--session-file``).
- **the intercept seam** (:mod:`~mcpreel.intercept`): the one place a message may be held, edited,
  dropped or injected *before* it is forwarded (``--intercept``, ``--rules``); without an interceptor
  what is forwarded never changes.

Beside them: :mod:`~mcpreel.record.naming` (a recording's default label and file name); starting the
server, forwarding signals and exit codes are :mod:`mcpreel.clients.process`, shared with every other
place mcpreel starts a server.
"""

from mcpreel.clients.process import ServerStartError, exit_status
from mcpreel.record.naming import default_label, default_out_path
from mcpreel.record.options import (
    ControlOptions,
    HttpTarget,
    RecordHooks,
    RecordOptions,
    RecordResult,
    StdioServer,
    parse_tags,
)
from mcpreel.record.pipeline import Pipeline, Redaction
from mcpreel.record.recording import record

__all__ = [
    "ControlOptions",
    "HttpTarget",
    "Pipeline",
    "RecordHooks",
    "RecordOptions",
    "RecordResult",
    "Redaction",
    "ServerStartError",
    "StdioServer",
    "default_label",
    "default_out_path",
    "exit_status",
    "parse_tags",
    "record",
]
