"""One reading of a session: client sessions, exchanges and operations, computed once for every verb.

An **operation** is what a client (or a server) set out to do, with every message that belongs to it: a
plain request and its answer; a multi-round-trip request (2026-07-28: ``input_required`` answers and the
retries that carry their ``requestState``); a task (the call that created it, its polls, status
notifications, result and cancel: the 2025-11-25 utility and the 2026-07-28 extension); a
``subscriptions/listen`` stream (its acknowledgement, the notifications it carried, its end); a server's
request that no client operation caused. The server's requests an operation caused (sampling,
elicitation, roots) are nested under it, and the control channel's marks (edited, dropped, injected, the
proxy's answer to a dropped request) stay on its exchanges.

- :mod:`~mcpreel.operations.sessions`: where one client session ends and the next begins (a merged file's
  sources, HTTP sessions, each new ``initialize`` / ``server/discover``), and the era each one speaks;
- :mod:`~mcpreel.operations.facts`: what one message says (target, status, task id, subscription id, ...);
- :mod:`~mcpreel.operations.walk`: the streaming reading (:class:`Walker`, :func:`walk`, :func:`operations`),
  which ``inspect``, ``import``, ``diff``, the report, the OTLP mapping, the TUI, ``audit`` and ``contract`` read,
  and whose pairing (one rule for a reused pending id: see :class:`Walker`) every writer that pairs a request
  with its answer (HAR, qai, Inspector, mcp-recorder) and the mock's on-disk index take;
- :mod:`~mcpreel.operations.tally`: what a session's operations add up to (calls, failures, unanswered,
  per tool, latency percentiles), counted once for ``inspect``, the report and the corpus;
- :mod:`~mcpreel.operations.cassette`: the same reading kept as turns to play (``replay`` and ``serve``).
"""

from mcpreel.operations.facts import status_of, subject, target_of
from mcpreel.operations.walk import Exchange, Operation, Step, Walker, operations, walk

__all__ = ["Exchange", "Operation", "Step", "Walker", "operations", "status_of", "subject", "target_of", "walk"]
