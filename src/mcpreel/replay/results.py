"""What a replay says: its options, each request's result and verdict, and the report of a run.

Apart from the wire loop (:mod:`mcpreel.replay.verify`) so that every reader of a replay's outcome -- the
renderers, the fleet, the pages, the noise sampler -- depends on these records alone, never on how a run
talks to a server.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcpreel.compare.jsondiff import Difference
from mcpreel.compare.normalize import IgnorePath
from mcpreel.compare.rules import CompareRule, CompareRules
from mcpreel.eras import (
    LATEST_LEGACY_PROTOCOL,
    LEGACY,
    MODERN,
)
from mcpreel.replay.noise import LearnedNoise, Noise, Sampling

if TYPE_CHECKING:
    from mcpreel.redact import Redactor

#: the protocol version our own handshake asks for (a recording without ``initialize``)
LATEST_PROTOCOL = LATEST_LEGACY_PROTOCOL
#: what ``--era`` accepts: the recording's own era, or one of the two
ERA_CHOICES = ("auto", LEGACY, MODERN)
#: the verdicts: ``flaky`` is an answer that differs only where the samples vary (:mod:`mcpreel.replay.noise`)
STATUSES = ("same", "changed", "flaky", "error", "unrecorded", "definition changed")
#: the verdict of a request the live server refused as made against stale definitions (DigestChanged,
#: HTTP 409: mcpreel.drafts) where the recording's server served it; a failure, as "changed" is
DEFINITION_CHANGED = "definition changed"
#: the requests of the handshake: answered even by a recording that caught nothing else
_HANDSHAKES = frozenset(("initialize", "server/discover"))


@dataclass
class ReplayOptions:
    ignore_paths: list[IgnorePath] = field(default_factory=list)
    #: the ignore and mask rules people wrote (``--compare-rules``) or learned, applied per method and tool
    rules: CompareRules | None = None
    original: bool = False
    timeout: float = 30.0  # seconds to wait for one response
    unrecorded_grace: float = 1.0  # how long requests the recording never saw answered may take
    match: str = "method-params"  # how server requests are matched against the recording
    era: str = "auto"  # the era to replay in: the recording's own ("auto"), "legacy" or "modern"
    #: ``none``: each client message goes as soon as what it waited for in the recording is answered (the
    #: order, not the clock); ``recorded``: also no earlier than its recorded time after the first one
    pace: str = "none"
    #: which client sessions of the file: the Nth only (1-based), and of a merged file one source only
    session_index: int | None = None
    source: str | None = None
    #: samples beyond the one run (``--repeat``, ``--baseline-*``, ``--learn-noise``): :mod:`mcpreel.replay.noise`
    sampling: Sampling | None = None
    #: a learned noise file (``--noise``): its entries for the recording's server join ``rules``
    noise: Noise | None = None
    #: what the report shows of the bodies (requests, answers, differences, errors) redacted, as every shared
    #: output is (CI logs, artifacts): a library caller gets what the CLI shows; False keeps them as they came
    redact: bool = True


@dataclass
class RequestResult:
    """One replayed request: what was recorded, what was sent, what came back, and the verdict."""

    index: int
    method: str
    tool: str | None
    status: str
    original_request: dict[str, Any]
    sent_message: dict[str, Any] | None = None
    response: dict[str, Any] | None = None
    recorded_response: dict[str, Any] | None = None
    error: str | None = None
    duration_ms: float | None = None
    recorded_duration_ms: int | None = None
    diff: list[Difference] = field(default_factory=list)
    source: int | None = None
    session: int | None = None  # which client session of the recording (1-based) it belongs to
    judged: bool = field(default=False, repr=False, compare=False)  # has its verdict (see ReplayReport.sink)
    #: a task or a listen stream judged as one operation: its kind and how it went (polls, task ids, ...)
    operation: dict[str, Any] | None = None
    #: what the verdict says besides the differences (refused then and now, the server's identity)
    notes: list[str] = field(default_factory=list)
    #: the rules that would absorb the differences that look volatile (a timestamp, an id, an address)
    suggestions: list[CompareRule] = field(default_factory=list)
    #: the paths that varied between the samples of a side (``{"path", "varied", "samples"}``): noise
    noise: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The request's result as ``--output`` writes it (both answers, so a reader need not open the recording)."""
        return {
            "index": self.index,
            "session": self.session,
            "method": self.method,
            "tool": self.tool,
            "status": self.status,
            "original_request": self.original_request,
            "sent_message": self.sent_message,
            "response": self.response,
            "error": self.error,
            "duration_ms": None if self.duration_ms is None else round(self.duration_ms, 3),
            "recorded_response": self.recorded_response,
            "recorded_duration_ms": self.recorded_duration_ms,
            "diff": [d.to_json() for d in self.diff],
            "source_line": self.source,
        } | ({"operation": self.operation} if self.operation is not None else {}) \
            | ({"notes": self.notes} if self.notes else {}) \
            | ({"suggested_rules": [r.to_entry() for r in self.suggestions]} if self.suggestions else {}) \
            | ({"noise": self.noise} if self.noise else {})


@dataclass
class ServerRequestResult:
    """A request the server sent during the replay and how it was answered."""

    method: str
    request: dict[str, Any]
    answered_from: str | None  # the recorded server request whose answer was used
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The server request as ``--output`` writes it, with what answered it (or why nothing did)."""
        return {"method": self.method, "request": self.request, "answered_from": self.answered_from,
                "error": self.error}


@dataclass
class ReplayReport:
    """What a replay found. ``results`` holds every request's result, unless a ``sink`` takes them.

    With a ``sink`` (the CLI's), each result is handed to it as soon as it and every result before it
    are judged, in request order, and is not kept: a long session's results never sit in memory
    together. The counts (:meth:`count`) are kept either way.
    """

    session: str | None
    target: str
    transport: str
    results: list[RequestResult] = field(default_factory=list)
    server_requests: list[ServerRequestResult] = field(default_factory=list)
    notifications_sent: int = 0
    notifications_received: int = 0
    skipped_dropped: int = 0
    handshake: str | None = None
    ended: str | None = None
    notes: list[str] = field(default_factory=list)
    era: str | None = None  # the era the replay spoke
    recorded_era: str | None = None
    sessions: list[dict[str, Any]] = field(default_factory=list)  # one entry per client session replayed
    sink: Callable[[RequestResult], None] | None = field(default=None, repr=False, compare=False)
    first_index: int = 1  # the number of this report's first result (a later session of a file goes on)
    session_index: int | None = None  # stamped on each result, when the file holds several sessions
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    total: int = 0  # results added, kept or handed out
    #: results judged against a recorded answer, beyond the handshake (streamed results: counted as they come)
    compared_count: int = 0
    #: the samples a sampled replay took per side (``{"target": K, "baseline": B}``), None for one run
    samples: dict[str, int] | None = None
    #: what a sampled replay learned of the server's noise (``--learn-noise``)
    learned: LearnedNoise | None = None
    _held: dict[int, RequestResult] = field(default_factory=dict, repr=False, compare=False)
    _next: int = 1

    def add(self, result: RequestResult) -> None:
        """A request is sent: its result (judged later by :meth:`judged`) gets the next number."""
        self.total += 1
        result.index = self.first_index + self.total - 1
        if self.session_index is not None:
            result.session = self.session_index
        if self.sink is None:
            self.results.append(result)
        else:
            self._held[result.index] = result

    def judged(self, result: RequestResult) -> None:
        """A result has its verdict: count it, and hand out every result judged in order so far."""
        self.counts[result.status] = self.counts.get(result.status, 0) + 1
        if result.status != "unrecorded" and result.method not in _HANDSHAKES:
            self.compared_count += 1
        if self.sink is None:
            return
        result.judged = True
        if self._next < self.first_index:
            self._next = self.first_index
        while (head := self._held.get(self._next)) is not None and head.judged:
            del self._held[self._next]
            self._next += 1
            self.sink(head)

    def flush(self) -> None:
        """Hand out what is left (requests never judged: the run stopped), in order."""
        if self.sink is None:
            return
        for index in sorted(self._held):
            result = self._held.pop(index)
            if not result.judged:
                self.counts[result.status] = self.counts.get(result.status, 0) + 1
            self.sink(result)

    def recount(self, was: str, now: str) -> None:
        """A streamed result's verdict changed after it was counted (a sampled replay settles it over every
        sample): move it from ``was`` to ``now`` in the counts."""
        if was != now:
            self.counts[was] = self.counts.get(was, 0) - 1
            self.counts[now] = self.counts.get(now, 0) + 1

    @property
    def compared(self) -> int:
        """How many requests were judged against a recorded answer, the handshake left aside."""
        if self.sink is None:
            return sum(1 for r in self.results if r.status != "unrecorded" and r.method not in _HANDSHAKES)
        return self.compared_count

    @property
    def nothing_answered(self) -> bool:
        """Whether the recording answered none of the requests beyond the handshake: nothing was judged, and
        a green replay would say nothing (exit 2)."""
        return self.requests > 0 and self.compared == 0 and self.count("unrecorded") > 0

    def count(self, status: str) -> int:
        """How many requests ended with ``status`` (counted as they came when the results were streamed)."""
        if self.sink is None:
            return sum(1 for r in self.results if r.status == status)
        return self.counts.get(status, 0)

    @property
    def requests(self) -> int:
        """How many requests were replayed."""
        return len(self.results) if self.sink is None else self.total

    @property
    def unmatched_server_requests(self) -> list[ServerRequestResult]:
        """The server's requests nothing in the recording answered (a difference too: the server asked something new)."""
        return [s for s in self.server_requests if s.answered_from is None]

    @property
    def ok(self) -> bool:
        """Whether the server answered as recorded: no changed or failed request, no unanswered server request."""
        return (not (self.count("changed") or self.count("error") or self.count(DEFINITION_CHANGED))
                and not self.unmatched_server_requests)

    @property
    def exit_code(self) -> int:
        """0 when :attr:`ok`, 1 on a change (``flaky`` is not one: :meth:`exit_for`), 2 when nothing ran
        or the recording holds no answer to judge by (a replay that could not start raises instead)."""
        return self.exit_for()

    def exit_for(self, *, fail_on_flaky: bool = False) -> int:
        """The exit code, ``flaky`` requests failing too when ``fail_on_flaky`` (``--fail-on flaky``)."""
        if self.requests == 0 or self.nothing_answered:
            return 2
        if not self.ok or (fail_on_flaky and self.count("flaky")):
            return 1
        return 0

    def summary(self) -> str:
        """One line: how many requests were replayed and how each ended."""
        parts = [f"{self.count(s)} {s}" for s in STATUSES if self.count(s) or s in ("same", "changed")]
        n = self.requests
        line = f"{n} request{'s' if n != 1 else ''} replayed: " + ", ".join(parts)
        if self.server_requests:
            refused = len(self.unmatched_server_requests)
            answered = len(self.server_requests) - refused
            line += f"; {answered} server request{'s' if answered != 1 else ''} answered"
            if refused:
                line += f", {refused} not in the recording (refused)"
        if self.skipped_dropped:
            line += f"; {self.skipped_dropped} dropped messages skipped"
        if self.samples is not None:
            k, b = self.samples.get("target", 1), self.samples.get("baseline", 0)
            line += f"; judged over {k} run{'s' if k != 1 else ''} against the target" + (
                f" and {b} against the baseline" if b else "") + " (flaky: varies between runs, not a change)"
        if self.requests == 0:
            line += "; nothing was replayed: the recording holds no client request"
        elif self.nothing_answered:
            line += ("; nothing was judged: the recording holds no answer to any request beyond the handshake "
                     "(record again, letting the client wait for the answers)")
        return line

    def to_json(self) -> dict[str, Any]:
        """The whole report as ``--output`` writes it."""
        return {
            "session": self.session,
            "target": self.target,
            "transport": self.transport,
            "ok": self.ok,
            "summary": {s: self.count(s) for s in STATUSES} | {
                "requests": self.requests,
                "notifications_sent": self.notifications_sent,
                "server_requests": len(self.server_requests),
                "server_requests_unmatched": len(self.unmatched_server_requests),
                "dropped_skipped": self.skipped_dropped,
            } | ({"samples": self.samples} if self.samples is not None else {}),
            "handshake": self.handshake,
            "era": self.era,
            "recorded_era": self.recorded_era,
            "sessions": self.sessions,
            "ended": self.ended,
            "notes": self.notes,
            "results": [r.to_json() for r in self.results],
            "server_requests": [s.to_json() for s in self.server_requests],
        }


class _Refusal(str):
    """Why a request got no JSON-RPC answer: the HTTP transport refused it (``status``, a 4xx); a reason
    like any other, that also tells the verdict it was a refusal."""

    status: Any

    def __new__(cls, text: str, status: Any) -> _Refusal:
        obj = super().__new__(cls, text)
        obj.status = status
        return obj


def redact_result(result: RequestResult, redactor: Redactor) -> RequestResult:
    """``result`` with what it shows of the bodies redacted, in place (its verdict is already made, on the
    bodies as they came): the one redaction of a replay's results, for the library and the CLI alike."""
    result.diff = [redactor.difference(d) for d in result.diff]
    result.original_request = redactor.value(result.original_request)
    if result.sent_message is not None:
        result.sent_message = redactor.value(result.sent_message)
    if result.response is not None:
        result.response = redactor.value(result.response)
    if result.recorded_response is not None:
        result.recorded_response = redactor.value(result.recorded_response)
    if result.error:
        result.error = redactor.text(result.error)
    return result
