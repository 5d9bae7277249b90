"""mcpreel: record, import, inspect, convert, replay and check MCP sessions.

The library is organised in layers around one session model (:mod:`mcpreel.model`):

- ``record/``     the recorders (stdio, HTTP) behind one entry point; ``clients/`` and ``serving/`` the
                  transports, apart from the formats
- ``formats/``    readers and writers, each speaking only to the model (readers -> model -> writers)
- ``operations/`` the one reading of a session into operations (pairs, splits, tallies) every verb,
                  writer and the mock take
- ``compare/``, ``replay/``, ``mock/``, ``check/``, ``contract/``, ``audit/``: the verbs' engines
- ``corpus/``     the index of every session (DuckDB); ``report/``, ``render/``, ``tui/`` what people see
- ``cli/``        the thin command line; the library itself never prints

The docs' architecture page (``docs/explanation/architecture.md``) names every folder and its question.

The public API is re-exported here, so a program needs one import and the names it may rely on are
listed in one place (``__all__``); everything else is reachable through its module but may move.

Sessions: :class:`Session` (a header, :class:`SessionInfo`, and a re-iterable stream of
:class:`Message`), :class:`Direction`. Recording: :func:`record` (:class:`RecordOptions` naming a
:class:`StdioServer` or an :class:`HttpTarget`; it returns a :class:`RecordResult`). Files: :func:`open_session` reads any known format (sniffed),
:func:`convert` writes another, :func:`merge` several into one, :func:`redact_file` takes the secrets
out. Comparing and serving: :func:`diff_files` (:class:`DiffOptions`), :func:`replay_file`
(:class:`ReplayTarget`, :class:`ReplayOptions`), :func:`serve_file` (:class:`MockOptions`: a recording as a server),
:func:`run_check` (:class:`CheckOptions`), :func:`audit_session`. Tests: :class:`MemoryTransport` and
:func:`memory_pair` (a client and a server in one process).

Errors: every error mcpreel raises on purpose is a :class:`McpreelError` -- :class:`UsageError`,
:class:`InputError` (:class:`FormatError`), :class:`TransportError`, :class:`ProblemsReported` (exit 2),
:class:`ServerExited` (a recording proxy exits as its server did) and :class:`DifferenceFound` (a comparison found differences: exit 1); see :mod:`mcpreel.errors`.

Importing this package costs nothing more than its version: every name loads its module on first use,
so ``python -m mcpreel`` reaches its entry point (and the early-signal latch, ``mcpreel.__main__``) before
anything slow, and the in-memory transport does not bring asyncio to every command.
"""

from __future__ import annotations

from mcpreel._infra.lazy import lazy_exports
from mcpreel._version import __version__

TYPE_CHECKING = False  # not typing's: this package's import stays as light as the latch needs
if TYPE_CHECKING:  # what __getattr__ hands out, for type checkers (nothing is imported at run time)
    from mcpreel.audit import audit_session
    from mcpreel.check import CheckOptions, run_check
    from mcpreel.clients.memory import MemoryTransport, memory_pair
    from mcpreel.compare import DiffOptions, diff_files
    from mcpreel.convert import convert
    from mcpreel.errors import (
        DifferenceFound,
        FormatError,
        InputError,
        McpreelError,
        ProblemsReported,
        ServerExited,
        TransportError,
        UsageError,
    )
    from mcpreel.formats import open_session
    from mcpreel.merge import merge
    from mcpreel.mock import MockOptions, serve_file
    from mcpreel.model import Direction, Message, Session, SessionInfo
    from mcpreel.record import HttpTarget, RecordOptions, RecordResult, StdioServer, record
    from mcpreel.redact.files import redact_file
    from mcpreel.replay import ReplayOptions, ReplayTarget, replay_file

__all__ = [
    "CheckOptions",
    "DiffOptions",
    "DifferenceFound",
    "Direction",
    "FormatError",
    "HttpTarget",
    "InputError",
    "McpreelError",
    "MemoryTransport",
    "Message",
    "MockOptions",
    "ProblemsReported",
    "RecordOptions",
    "RecordResult",
    "ReplayOptions",
    "ReplayTarget",
    "ServerExited",
    "Session",
    "SessionInfo",
    "StdioServer",
    "TransportError",
    "UsageError",
    "__version__",
    "audit_session",
    "convert",
    "diff_files",
    "memory_pair",
    "merge",
    "open_session",
    "record",
    "redact_file",
    "replay_file",
    "run_check",
    "serve_file",
]


#: each public name and the module it lives in, loaded on first use: importing this package costs nothing
#: more, so ``python -m mcpreel`` reaches its entry point (and the early-signal latch, ``mcpreel.__main__``)
#: before anything slow, and the in-memory transport does not bring asyncio to every command
_HOMES = {
    "Direction": "mcpreel.model",
    "Message": "mcpreel.model",
    "Session": "mcpreel.model",
    "SessionInfo": "mcpreel.model",
    "DifferenceFound": "mcpreel.errors",
    "FormatError": "mcpreel.errors",
    "InputError": "mcpreel.errors",
    "McpreelError": "mcpreel.errors",
    "ProblemsReported": "mcpreel.errors",
    "ServerExited": "mcpreel.errors",
    "TransportError": "mcpreel.errors",
    "UsageError": "mcpreel.errors",
    "MemoryTransport": "mcpreel.clients.memory",
    "memory_pair": "mcpreel.clients.memory",
    "open_session": "mcpreel.formats",
    "convert": "mcpreel.convert",
    "merge": "mcpreel.merge",
    "redact_file": "mcpreel.redact.files",
    "diff_files": "mcpreel.compare",
    "DiffOptions": "mcpreel.compare",
    "replay_file": "mcpreel.replay",
    "ReplayOptions": "mcpreel.replay",
    "ReplayTarget": "mcpreel.replay",
    "serve_file": "mcpreel.mock",
    "MockOptions": "mcpreel.mock",
    "run_check": "mcpreel.check",
    "CheckOptions": "mcpreel.check",
    "audit_session": "mcpreel.audit",
    "record": "mcpreel.record",
    "RecordOptions": "mcpreel.record",
    "RecordResult": "mcpreel.record",
    "StdioServer": "mcpreel.record",
    "HttpTarget": "mcpreel.record",
}


__getattr__, __dir__ = lazy_exports(globals(), _HOMES, __all__)
