"""The tally of a session: what its operations add up to, counted once for ``inspect``, the report and the corpus.

Each of those verbs walks a session (:class:`~mcpreel.operations.walk.Walker`) for its own rows (``inspect``'s
rows, the report's call table, the corpus's ``operations`` rows), and each needs the same figures beside
them: operations per method, tasks and their polls, calls per tool with their failures, unanswered and
dropped calls, latency percentiles per method and per tool. They were counted three times, kept equal by a
slow test; :class:`SessionTally` counts them here, and the verbs read it (``tests/operations/test_tally.py``
checks they agree on sessions built in memory).

Where the verbs' outputs have always differed in a detail, the tally takes it as an option rather than
changing what a user sees:

- ``exact``: the report keeps every latency (it prints the max too, and its percentiles are exact on any
  session); ``inspect`` streams sessions of any length, so its latencies go into a :class:`LatencySketch`
  (exact up to :data:`EXACT_LATENCIES` distinct values, within :data:`SKETCH_ERROR` past that);
- ``dropped_unanswered``: a call the proxy dropped and nobody answered is ``unanswered`` in a tool's row of
  the report (the call got no answer), while ``inspect`` counts it as ``dropped`` only (it never reached the
  server, so its row says so instead). :attr:`SessionTally.unanswered` counts both; the option only decides
  the per-tool figure;
- ``latencies``: the corpus stores each operation's latency on its own row and no percentile, so its
  tallies (one per client session) keep none.

Beside the operations, two more figures were found three times and are found here once:

- :class:`RecordCounts`: the records by kind and the JSON-RPC messages by what they are (requests,
  notifications, responses, orphans), counted from the walk's steps of each record (``inspect``'s summary,
  the report's counts, a corpus session's row);
- :class:`Identity`: who spoke: the client's ``clientInfo`` and the server's ``serverInfo`` as (name,
  version), from either era's handshake or ``_meta`` (the report's header, a corpus session's row). The
  era and protocol of each client session are the splitter's (:class:`~mcpreel.operations.sessions.ClientSession`),
  which all three read.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass
from typing import Any

from mcpreel.model import Kind, Message
from mcpreel.operations.facts import META_CLIENT_INFO, META_SERVER_INFO
from mcpreel.operations.walk import REQUEST, TASK, Exchange, Operation, Step

__all__ = ["EXACT_LATENCIES", "IDENTITY_PROBES", "Identity", "LatencySketch", "LatencyStats", "OK", "SKETCH_ERROR",
           "RecordCounts", "SessionTally", "ToolStats", "percentile"]


@dataclass(slots=True)
class ToolStats:
    """One tool's calls and how they ended (the per-tool table of ``inspect`` and the report)."""

    calls: int = 0
    errors: int = 0  # JSON-RPC error responses
    is_errors: int = 0  # results with isError: true
    unanswered: int = 0
    dropped: int = 0
    p50_ms: int | None = None
    p95_ms: int | None = None


@dataclass(slots=True)
class LatencyStats:
    """One method's latencies: how many, nearest-rank p50 and p95, and the slowest."""

    count: int
    p50_ms: int
    p95_ms: int
    max_ms: int


def percentile(sorted_values: list[int] | array[int], p: float) -> int:
    """Nearest-rank percentile of an ascending list (the value a reader can find in the data)."""
    if not sorted_values:
        raise ValueError("no values")
    k = max(0, math.ceil(p / 100 * len(sorted_values)) - 1)
    return sorted_values[k]


#: how many distinct latency values (ms) a method keeps exactly before its percentiles are bucketed
EXACT_LATENCIES = 4096
#: the relative error of a bucketed percentile: buckets 1% wide (a value is shown as its bucket's low end)
SKETCH_ERROR = 0.01
_LOG_STEP = math.log1p(SKETCH_ERROR)


class LatencySketch:
    """Latency values (ms, >= 0) in bounded memory: a count per value, exact while there are at most
    :data:`EXACT_LATENCIES` distinct values; past that, values of 100 ms and more are counted in buckets
    1% wide, so a percentile is at most 1% below the exact one (the nearest rank of a bucket is its low
    end) and memory stays a few thousand counters whatever the session's length. ``max`` stays exact.
    """

    __slots__ = ("counts", "n", "max", "exact")

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.n = 0
        self.max = 0
        self.exact = True

    @staticmethod
    def _bucket(value: int) -> int:
        if value < 100:
            return value
        low = math.ceil(math.exp(math.floor(math.log(value) / _LOG_STEP) * _LOG_STEP))
        return min(low, value)

    def add(self, value: int) -> None:
        """Count one latency: exactly while few distinct values were seen, then into the sketch's buckets (flat
        memory)."""
        self.n += 1
        if value > self.max:
            self.max = value
        counts = self.counts
        if self.exact and value in counts:
            counts[value] += 1  # a value seen before (most are): nothing more to check
            return
        if not self.exact:
            value = self._bucket(value)
        counts[value] = counts.get(value, 0) + 1
        if self.exact and len(counts) > EXACT_LATENCIES:
            self.exact = False
            merged: dict[int, int] = {}
            for v, c in counts.items():
                b = self._bucket(v)
                merged[b] = merged.get(b, 0) + c
            self.counts = merged

    def percentile(self, p: float) -> int:
        """Nearest-rank percentile (exact while :attr:`exact`)."""
        if not self.n:
            raise ValueError("no values")
        k = max(0, math.ceil(p / 100 * self.n) - 1)
        seen = 0
        for value in sorted(self.counts):
            seen += self.counts[value]
            if seen > k:
                return value
        return self.max  # not reached: the counts add up to n


#: the outcome :meth:`SessionTally.add` gives an operation it counted on its fast path (answered, no error)
OK: tuple[str, Any, str | None] = ("ok", None, None)


class SessionTally:
    """What a session's operations add up to (see the module's docstring); fed each operation once, as the
    walk hands it out (an ``operation`` step), then :meth:`finish` ed.

    The figures: :attr:`operations`, :attr:`methods` (operations per method of their opening request),
    :attr:`tasks` and :attr:`polls`, :attr:`errors` (JSON-RPC errors), :attr:`is_errors` (``isError``
    results), :attr:`unanswered` (unanswered or cancelled, dropped ones included), :attr:`dropped`,
    :attr:`tools` (per tool, with p50/p95 after :meth:`finish`) and :attr:`latency` (per method, after
    :meth:`finish`); :attr:`tool_max` the slowest call per tool.
    """

    __slots__ = ("exact", "dropped_unanswered", "latencies", "operations", "methods", "tasks", "polls", "errors", "is_errors",
                 "unanswered", "dropped", "tools", "latency", "tool_max", "_latencies", "_tool_latencies")

    def __init__(self, *, exact: bool = False, dropped_unanswered: bool = False, latencies: bool = True) -> None:
        self.exact = exact
        self.dropped_unanswered = dropped_unanswered
        self.latencies = latencies
        self.operations = 0
        self.methods: dict[str, int] = {}
        self.tasks = 0
        self.polls = 0
        self.errors = 0
        self.is_errors = 0
        self.unanswered = 0
        self.dropped = 0
        self.tools: dict[str, ToolStats] = {}
        self.latency: dict[str, LatencyStats] = {}
        self.tool_max: dict[str, int] = {}
        self._latencies: dict[str, Any] = {}
        self._tool_latencies: dict[str, Any] = {}

    def add(self, op: Operation) -> tuple[str, Any, str | None]:
        """Count one operation and return its outcome (:meth:`Operation.status`), which the verb's own row
        of it shows. A plain answered request with no error (most of a session) is counted without the
        general accounting's properties, and its outcome is :data:`OK`."""
        self.operations += 1
        opening = op.exchanges[0]
        method = opening.method
        methods = self.methods
        methods[method] = methods.get(method, 0) + 1
        if op.kind == REQUEST and len(op.exchanges) == 1 and not op.children and not opening.dropped:
            response = opening.response
            if response is not None and "error" not in response:
                result = response.get("result")
                if type(result) is not dict or result.get("isError") is not True:
                    tool = opening.target or "unknown_tool" if method == "tools/call" else None
                    t0, t1 = opening.t, opening.t_end
                    if tool is not None:
                        stats = self.tools.get(tool)
                        if stats is None:
                            stats = self.tools[tool] = ToolStats()
                        stats.calls += 1
                    if t0 is not None and t1 is not None:
                        self._latency(method, tool, t1 - t0 if t1 > t0 else 0)
                    if type(result) is dict and ("resultType" in result or "task" in result):
                        return op.status()  # e.g. an input_required answer with no state to join: say so
                    return OK
        return self._general(op, method, opening.tool)

    def _general(self, op: Operation, method: str, tool: str | None) -> tuple[str, Any, str | None]:
        if op.kind == TASK:
            self.tasks += 1
            self.polls += op.polls
        outcome = op.status()
        status = outcome[0]
        dropped = op.exchanges[0].dropped
        if dropped:
            self.dropped += 1
        stats = None
        if tool is not None:
            stats = self.tools.get(tool)
            if stats is None:
                stats = self.tools[tool] = ToolStats()
            stats.calls += 1
            if dropped:
                stats.dropped += 1
        latency = op.latency_ms
        if latency is not None:
            self._latency(method, tool, latency)
        if status == "error":
            self.errors += 1
            if stats is not None:
                stats.errors += 1
        elif status == "isError":
            self.is_errors += 1
            if stats is not None:
                stats.is_errors += 1
        elif status in ("unanswered", "cancelled"):
            self.unanswered += 1
            if stats is not None and (self.dropped_unanswered or not dropped):
                stats.unanswered += 1
        return outcome

    def _latency(self, method: str, tool: str | None, latency: int) -> None:
        if not self.latencies:
            return
        if self.exact:
            self._latencies.setdefault(method, array("q")).append(latency)
            if tool is not None:
                self._tool_latencies.setdefault(tool, array("q")).append(latency)
            return
        sketch = self._latencies.get(method)
        if sketch is None:
            sketch = self._latencies[method] = LatencySketch()
        sketch.add(latency)
        if tool is not None:
            sketch = self._tool_latencies.get(tool)
            if sketch is None:
                sketch = self._tool_latencies[tool] = LatencySketch()
            sketch.add(latency)

    @property
    def exact_latency(self) -> bool:
        """Whether every percentile is exact (always, with ``exact``; a sketch past its exact range: not)."""
        if self.exact:
            return True
        return all(k.exact for k in (*self._latencies.values(), *self._tool_latencies.values()))

    @property
    def failed(self) -> int:
        """Operations that ended in an error of any kind (a JSON-RPC error or an ``isError`` result)."""
        return self.errors + self.is_errors

    @property
    def tool_calls(self) -> int:
        """Operations that call a tool (``tools/call``), whichever tool."""
        return sum(stats.calls for stats in self.tools.values())

    def finish(self) -> SessionTally:
        """Work out the percentiles (per method into :attr:`latency`, per tool onto :attr:`tools`) and sort
        the per-tool table by name; returns the tally."""
        for method, values in sorted(self._latencies.items()):
            self.latency[method] = self._stats(values)
        for tool, values in self._tool_latencies.items():
            stats = self.tools.get(tool)
            if stats is None:
                stats = self.tools[tool] = ToolStats()
            figures = self._stats(values)
            stats.p50_ms = figures.p50_ms
            stats.p95_ms = figures.p95_ms
            self.tool_max[tool] = figures.max_ms
        self.tools = dict(sorted(self.tools.items()))
        return self

    def _stats(self, values: Any) -> LatencyStats:
        if self.exact:
            ordered = sorted(values)
            return LatencyStats(len(ordered), percentile(ordered, 50), percentile(ordered, 95), ordered[-1])
        return LatencyStats(values.n, values.percentile(50), values.percentile(95), values.max)



_MESSAGE = Kind.MESSAGE
_STDERR = Kind.STDERR
_INVALID = Kind.INVALID
_TRANSPORT = Kind.TRANSPORT
_EVENT = Kind.EVENT
_BYTES = Kind.BYTES


class RecordCounts:
    """The records of a session (or of one client session) by kind, and its JSON-RPC messages by what the
    walk read them as: fed each record with its steps (:meth:`add`), once.

    ``messages`` counts the JSON-RPC objects (a batch's members one by one), ``client_to_server`` and
    ``server_to_client`` the same messages by direction; ``requests``, ``notifications`` and ``responses``
    (answers, orphans included) the messages by what they are; ``orphans`` the answers no request waits
    for that reached their peer (a dropped one never did), ``orphan_errors`` the JSON-RPC error answers among
    all of them (dropped or not: an error was said). A record's other kinds (``stderr``, ``invalid``,
    ``transport``, ``events``, ``byte_chunks`` with their ``raw_bytes``) are counted as records; ``batches``,
    ``modified`` and ``dropped`` count message records.
    """

    __slots__ = ("records", "messages", "client_to_server", "server_to_client", "requests", "notifications",
                 "responses", "orphans", "orphan_errors", "batches", "stderr", "invalid", "transport", "events",
                 "byte_chunks", "raw_bytes", "modified", "dropped")

    def __init__(self) -> None:
        self.records = self.messages = self.client_to_server = self.server_to_client = 0
        self.requests = self.notifications = self.responses = self.orphans = self.orphan_errors = 0
        self.batches = self.stderr = self.invalid = self.transport = self.events = 0
        self.byte_chunks = self.raw_bytes = self.modified = self.dropped = 0

    def add(self, msg: Message, steps: list[Step]) -> None:
        """Count one record and its steps (what :meth:`Walker.feed <mcpreel.operations.walk.Walker.feed>`
        returned for it)."""
        self.records += 1
        kind = msg.kind
        if kind == _MESSAGE:
            self._message(msg, steps)
        elif kind == _TRANSPORT:
            self.transport += 1
        elif kind == _STDERR:
            self.stderr += 1
        elif kind == _INVALID:
            self.invalid += 1
        elif kind == _EVENT:
            self.events += 1
        elif kind == _BYTES:
            self.byte_chunks += 1
            self.raw_bytes += len(msg.raw) if isinstance(msg.raw, bytes) else 0
        else:  # another kind: read as a message (the model's kinds are all named above)
            self._message(msg, steps)

    def _message(self, msg: Message, steps: list[Step]) -> None:
        if type(msg.raw) is list:
            self.batches += 1
        if msg.modified:
            self.modified += 1
        dropped = msg.dropped
        if dropped:
            self.dropped += 1
        messages = 0
        for step in steps:  # a lone message's step, then the operations it completed (if any)
            kind = step.kind
            if kind == "request":
                self.requests += 1
            elif kind == "response":
                self.responses += 1
            elif kind == "notification":
                self.notifications += 1
            elif kind == "orphan":
                self.responses += 1
                if not dropped:
                    self.orphans += 1
                member = step.member
                if member is not None and member.get("error") is not None:
                    self.orphan_errors += 1
            elif kind != "other":
                continue  # a record, or an operation it completed: not a message
            messages += 1
        self.messages += messages
        if msg.dir == "out":
            self.server_to_client += messages
        else:
            self.client_to_server += messages


#: the client requests (server answers) of a session looked at for a ``clientInfo`` (``serverInfo`` in
#: ``_meta``) while none was found: a client says who it is in its first requests or never
IDENTITY_PROBES = 8
_HELLO = frozenset(("initialize", "server/discover"))


class Identity:
    """Who spoke in a session (or one client session): the ``clientInfo`` and ``serverInfo`` objects it
    carried, each the first found with a name.

    The client's: an ``initialize``'s ``clientInfo``, or a 2026-07-28 request's
    ``_meta["io.modelcontextprotocol/clientInfo"]``, among the first :data:`IDENTITY_PROBES` client
    requests. The server's: the ``serverInfo`` of an ``initialize`` or ``server/discover`` answer (any of
    them), or an answer's ``_meta["io.modelcontextprotocol/serverInfo"]`` among the first
    :data:`IDENTITY_PROBES` answers. A verb shows them as it words them (the report ``name version``, the
    corpus a name and a version column).
    """

    __slots__ = ("client", "server", "probes", "answers")

    def __init__(self) -> None:
        self.client: dict[str, Any] | None = None
        self.server: dict[str, Any] | None = None
        self.probes = 0
        self.answers = 0

    def request(self, ex: Exchange | None) -> None:
        """Look at a request for the client's ``clientInfo`` (cheap to call once it is known)."""
        if self.client is not None or ex is None or ex.dir != "in" or self.probes >= IDENTITY_PROBES:
            return
        self.probes += 1
        if ex.method == "initialize":
            params = ex.params
            info = params.get("clientInfo") if isinstance(params, dict) else None
        else:
            info = ex.meta.get(META_CLIENT_INFO)
        if _named(info):
            self.client = info

    def response(self, method: str, member: dict[str, Any] | None) -> None:
        """Look at the answer to a ``method`` request for the server's ``serverInfo``."""
        if self.server is not None:
            return
        answers = self.answers
        self.answers = answers + 1
        hello = method in _HELLO
        if not hello and answers >= IDENTITY_PROBES:
            return
        result = member.get("result") if isinstance(member, dict) else None
        if not isinstance(result, dict):
            return
        info = result.get("serverInfo") if hello else None
        if not _named(info):
            meta = result.get("_meta")
            info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
        if _named(info):
            self.server = info


def _named(info: Any) -> bool:
    """Whether ``info`` is a ``clientInfo``/``serverInfo`` object that names someone."""
    return isinstance(info, dict) and isinstance(info.get("name"), str) and bool(info["name"])
