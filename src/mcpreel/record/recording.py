"""The one entry point of a recording: :func:`record` runs the recorder of the options' transport.

Every front end (``mcpreel record`` and ``proxy start``, the cassette flows and the pytest plugin behind
them, the demo) fills a :class:`~mcpreel.record.options.RecordOptions` and calls this; the transports
differ only in their recorder (:func:`~mcpreel.record.stdio_proxy.record_stdio`,
:func:`~mcpreel.record.http_session.record_http`), which both take their addons from
:func:`~mcpreel.record.addons.default_addons`.
"""

from __future__ import annotations

from mcpreel.record.options import RecordHooks, RecordOptions, RecordResult, StdioServer

__all__ = ["record"]


def record(options: RecordOptions, hooks: RecordHooks | None = None) -> RecordResult:
    """Record the session ``options`` describe until it ends: a stdio server exits, or the HTTP proxy is
    stopped (SIGINT/SIGTERM, or ``hooks.on_server``'s server stopped from another thread)."""
    if isinstance(options.server, StdioServer):
        from mcpreel.record.stdio_proxy import record_stdio

        return record_stdio(options, hooks)
    from mcpreel.record.http_session import record_http  # the HTTP stack is loaded only for HTTP

    return record_http(options, hooks)
