"""What the HTML report shows, as data, gathered in one streaming pass over a session.

A report must stay usable for a session of a million messages, so this pass keeps *counts* of
everything and *detail* of a bounded part: the first ``timeline`` records of the sequence view, the
first ``detail`` calls, the ``detail`` slowest calls and every failed or unanswered call (up to
``max_errors``). Everything else is summarised: calls and latency per tool and per method, activity
over time in at most :data:`ACTIVITY_BUCKETS` buckets. Memory is bounded by those limits plus the
requests still waiting for their response.

The numbers are ``mcpreel inspect``'s: calls, failures, unanswered calls and latencies per tool and per
method are the one tally of a session (:class:`~mcpreel.operations.tally.SessionTally`, exact percentiles
here), the records and messages by kind its :class:`~mcpreel.operations.tally.RecordCounts`, the client and
server its :class:`~mcpreel.operations.tally.Identity`, the era and protocol those of the walk's client
sessions, and correlation is the walk's. ``inspect`` keeps a row per record, which is what it prints; the
report keeps its own bounded detail (the timeline, the call rows), hence its own pass over the walk.

Payloads are kept as pretty JSON *text* (``jsonio``), cut at ``payload_chars``: the page never parses
a message again, so big integers, NaN and lone surrogates show as they were recorded.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.nesting import cut_repr
from mcpreel.eras import LEGACY, MODERN, era_name
from mcpreel.inspection import Header, _text_of_transport
from mcpreel.model import Kind, Message, Session
from mcpreel.operations.facts import FAILED, info_name, mcp_session_id, origin_of, status_of
from mcpreel.operations.sessions import ClientSession
from mcpreel.operations.tally import Identity, LatencyStats, RecordCounts, SessionTally, ToolStats
from mcpreel.operations.walk import Exchange, Operation, Step, Walker
from mcpreel.toolcalls import auth_discovery

__all__ = ["ACTIVITY_BUCKETS", "ReportLimits", "ReportData", "collect"]

#: a message's JSON in the sequence view is cut here (the calls table keeps up to ``payload_chars``)
TIMELINE_CHARS = 4000
#: the activity chart's resolution: buckets double in width as the session grows past this many
ACTIVITY_BUCKETS = 96


@dataclass(frozen=True, slots=True)
class ReportLimits:
    """How much detail a report keeps (see the module docstring)."""

    timeline: int = 400  # records shown in the sequence view
    detail: int = 100  # first N calls and slowest N calls with their JSON
    max_errors: int = 2000  # failed / unanswered calls with their JSON
    payload_chars: int = 20_000  # a message's pretty JSON is cut here


@dataclass
class ReportData:
    """Everything the page shows. ``calls`` are plain dicts, ready for the page's JSON."""

    header: Header
    era: str | None = None
    protocol_version: str | None = None
    client: str | None = None
    server: str | None = None
    sessions: int = 1
    k2a: dict[str, Any] = field(default_factory=lambda: dict(auth_discovery.DEFAULT))
    counts: dict[str, int] = field(default_factory=dict)
    tools: dict[str, ToolStats] = field(default_factory=dict)
    tool_max: dict[str, int] = field(default_factory=dict)
    latency: dict[str, LatencyStats] = field(default_factory=dict)
    timeline: list[dict[str, Any]] = field(default_factory=list)
    timeline_omitted: int = 0  # records past the timeline limit
    calls: list[dict[str, Any]] = field(default_factory=list)
    calls_total: int = 0
    failures_total: int = 0  # failed or unanswered calls, all of them (``calls`` holds up to max_errors)
    activity: dict[str, Any] = field(default_factory=dict)
    limits: ReportLimits = field(default_factory=ReportLimits)
    redacted: bool = False


_COUNT_KEYS = ("records", "messages", "client_to_server", "server_to_client", "requests", "notifications",
               "responses", "batches", "stderr", "invalid", "transport", "events", "modified", "dropped",
               "errors", "is_errors", "unanswered", "orphans")


class _Activity:
    """Messages and failures per time bucket; the bucket width doubles to keep at most N buckets."""

    def __init__(self, buckets: int = ACTIVITY_BUCKETS):
        self.size = buckets
        self.start: int | None = None
        self.width = 1  # ms
        self.c2s = [0] * buckets
        self.s2c = [0] * buckets
        self.fail = [0] * buckets

    def add(self, t: int | None, series: list[int] | None = None, d: str | None = None) -> None:
        if t is None:
            return
        if self.start is None:
            self.start = t
        offset = max(0, t - self.start)
        while offset // self.width >= self.size:
            self._widen()
        b = offset // self.width
        if series is not None:
            series[b] += 1
        elif d == "out":
            self.s2c[b] += 1
        else:
            self.c2s[b] += 1

    def fail_at(self, t: int | None) -> None:
        if t is not None and self.start is not None:
            self.add(t, self.fail)

    def _widen(self) -> None:
        self.width *= 2
        for series in (self.c2s, self.s2c, self.fail):
            merged = [series[i] + series[i + 1] for i in range(0, self.size, 2)]
            series[:] = merged + [0] * (self.size - len(merged))

    def to_dict(self) -> dict[str, Any]:
        if self.start is None:
            return {}
        used = max((i + 1 for i in range(self.size) if self.c2s[i] or self.s2c[i] or self.fail[i]), default=1)
        return {"start": self.start, "width_ms": self.width, "c2s": self.c2s[:used], "s2c": self.s2c[:used],
                "fail": self.fail[:used]}


class _Collector:
    def __init__(self, session: Session, limits: ReportLimits, redactor: Any):
        self.session = session
        self.limits = limits
        self.redactor = redactor
        info = redactor.info(session.info) if redactor is not None else session.info  # command argv, URL, headers
        self.data = ReportData(Header.of(info), limits=limits, redacted=redactor is not None)
        #: the records and messages by kind, and who spoke: counted as ``inspect`` and the corpus count them
        self.counts = RecordCounts()
        self.identity = Identity()
        #: the figures shared with ``inspect`` and the corpus. The report keeps every latency (its percentiles
        #: are exact on any session, and it shows each tool's slowest call), and a dropped call nobody
        #: answered is ``unanswered`` in its tool's row (it got no answer): see :mod:`mcpreel.operations.tally`
        self.tally = SessionTally(exact=True, dropped_unanswered=True)
        self.activity = _Activity()
        self.kept: dict[int, dict[str, Any]] = {}  # operation n -> call row (first N and failures)
        self.slowest: list[tuple[int, int, dict[str, Any]]] = []  # min-heap of (latency, -n, call row)
        self.origins: set[str] = set()
        self.session_ids: set[str] = set()
        self.last_index = -1
        self.discover_failed = False  # a server/discover was refused (the era line says so)
        self.t0: int | None = session.info.started
        self.client_sessions: list[ClientSession] = []

    # -- the pass ---------------------------------------------------------------------------------
    def feed(self, step: Step) -> None:
        kind = step.kind
        msg = step.msg
        if msg is not None and step.index != self.last_index:
            self._record(step.index, msg)
        if kind == "request":
            self._request(step, step.exchange)  # type: ignore[arg-type]
        elif kind == "response":
            self._response(step, step.exchange)  # type: ignore[arg-type]
        elif kind == "notification":
            self._line(step, step.member.get("method"), related=step.related)  # type: ignore[union-attr]
        elif kind == "orphan":
            status, code, text = status_of(step.member)
            self._line(step, "(response)", status="orphan" if status == "ok" else status, code=code, text=text)
        elif kind == "other":
            self._line(step, "(not JSON-RPC)")
        elif kind == "record":
            self._other_record(step)
        elif kind == "operation":
            self._operation(step.operation)  # type: ignore[arg-type]

    def _record(self, index: int, msg: Message) -> None:
        self.last_index = index
        if self.t0 is None and msg.t is not None:
            self.t0 = msg.t
        origin = origin_of(msg)
        if origin is not None:
            self.origins.add(origin)
        if msg.ctx:
            self._ctx(msg)
        if msg.kind != Kind.MESSAGE:
            return
        self.activity.add(msg.t, d=msg.dir)

    def _ctx(self, msg: Message) -> None:
        sid = mcp_session_id(msg)
        if sid is not None:
            self.session_ids.add(sid)
        if msg.dir != "in" and msg.kind in (Kind.MESSAGE, Kind.TRANSPORT):
            flags = auth_discovery.summarize((msg,))
            if flags["visible"]:
                k = self.data.k2a
                k["visible"] = True
                k["source_kind"] = flags["source_kind"]
                for key in ("resource_metadata_visible", "scope_challenge_visible"):
                    k[key] = k[key] or flags[key]

    def _other_record(self, step: Step) -> None:
        msg = step.msg
        assert msg is not None
        kind = msg.kind
        if kind == Kind.STDERR:
            self._line(step, "stderr", text=msg.text)
        elif kind == Kind.INVALID:
            self._line(step, "invalid", text=msg.text, status="invalid")
        elif kind == Kind.TRANSPORT:
            self._line(step, "transport", text=_text_of_transport(msg.ctx or {}))
        elif kind == Kind.EVENT:
            raw = msg.raw
            label = "event"
            if isinstance(raw, dict):
                for key in ("kind", "type", "dir"):
                    if isinstance(raw.get(key), str):
                        label = raw[key]
                        break
            self._line(step, label, payload=raw)
        else:  # a message record that is not JSON-RPC
            self._line(step, "(not JSON-RPC)", payload=msg.raw)

    def _request(self, step: Step, ex: Exchange) -> None:
        self.identity.request(ex)
        self._line(step, ex.method, ex=ex)

    def _response(self, step: Step, ex: Exchange) -> None:
        self.identity.response(ex.method, ex.response)
        if ex.method == "server/discover" and ex.response is not None and "error" in ex.response:
            self.discover_failed = True
        status, code, text = ex.status()
        self._line(step, "(response)", ex=ex, status=status, code=code, text=text)

    def _operation(self, op: Operation) -> None:
        """An operation, once, when complete (or still open at the end): the call the tables count. Its
        figures go to the tally (shared with ``inspect`` and the corpus); the call rows are the report's own."""
        outcome = self.tally.add(op)
        status = outcome[0]
        failed = status in FAILED or status in ("unanswered", "cancelled")
        latency = op.latency_ms
        if status in FAILED:
            final = op.final
            self.activity.fail_at(final.t_end if final is not None else op.t)
        call = self._complete(op, failed, outcome)
        if latency is not None:
            self._maybe_slowest(op, latency, call)

    # -- calls with their JSON ----------------------------------------------------------------------
    def _call(self, op: Operation, outcome: tuple[str, Any, str | None]) -> dict[str, Any]:
        """A call row: the operation's opening request and the answer that carries its outcome."""
        ex = op.opening
        final = op.final
        status, code, text = outcome
        call = {
            "n": op.n, "row": ex.index, "dir": ex.dir, "method": ex.method, "target": self._said(ex.target),
            "id": _id_text(ex.id),
            "t": self._offset(ex.t), "origin": ex.origin, "dropped": ex.dropped, "request": self._pretty(ex.request),
            "response": self._pretty(final.response) if final is not None and final.response is not None else None,
            "response_row": final.response_index if final is not None else None,
            "latency": op.latency_ms, "status": status, "code": code, "message": self._said(text), "cancelled": ex.cancelled,
            "session": op.session, "kind": op.kind, "tags": [],
        }
        if op.children:
            # the server's requests this call caused (sampling, elicitation, roots): part of it, not calls
            # drawn under the call, each with its JSON (cut shorter than a call's: the page stays small)
            call["children"] = [{"method": ch.method, "dir": ch.dir, "id": _id_text(ch.id), "row": ch.index,
                                 "status": ch.status()[0], "latency": ch.latency_ms,
                                 "request": self._pretty(ch.request, TIMELINE_CHARS),
                                 "response": (self._pretty(ch.response, TIMELINE_CHARS)
                                              if ch.response is not None else None),
                                 "response_row": ch.response_index} for ch in op.children]
        if op.kind != "request":
            call["rounds"] = op.rounds
            if op.kind == "task":
                call["polls"] = op.polls
                call["task"] = _id_text(op.task_id)
        return call

    def _complete(self, op: Operation, failed: bool, outcome: tuple[str, Any, str | None]) -> dict[str, Any] | None:
        """Keep the call if it is one of the first N or a failure (under the cap)."""
        keep_first = self.tally.operations <= self.limits.detail
        if failed:
            self.data.failures_total += 1
        keep_failed = failed and self.data.failures_total <= self.limits.max_errors
        if not (keep_first or keep_failed):
            return None
        call = self._call(op, outcome)
        if keep_failed:
            call["tags"].append("failed")
        if keep_first:
            call["tags"].append("first")
        self.kept[op.n] = call
        return call

    def _maybe_slowest(self, op: Operation, latency: int, call: dict[str, Any] | None) -> None:
        """Keep the N slowest calls in a min-heap; a call's JSON is made only when it gets in."""
        if self.limits.detail <= 0:
            return
        key = (latency, -op.n)
        if len(self.slowest) >= self.limits.detail and key <= self.slowest[0][:2]:
            return
        if call is None:
            call = self._call(op, op.status())
        if len(self.slowest) < self.limits.detail:
            heapq.heappush(self.slowest, (key[0], key[1], call))
        else:
            heapq.heapreplace(self.slowest, (key[0], key[1], call))

    def _said(self, text: str | None) -> str | None:
        """A text the page shows (stderr, an error's message, a resource URI), redacted when the page is."""
        return self.redactor.text(text) if text and self.redactor is not None else text

    def _pretty(self, value: Any, limit: int | None = None) -> str:
        if isinstance(value, (bytes, bytearray)):  # a raw chunk of the pipe (a reel's bytes line): shown as text
            text = self._said(bytes(value).decode("utf-8", "backslashreplace")) or ""
        else:
            if self.redactor is not None:
                value = self.redactor.value(value)
            text = jsonio.dumps_indented(value).decode("utf-8", "replace")
        limit = min(limit or self.limits.payload_chars, self.limits.payload_chars)
        if len(text) > limit:
            text = text[:limit] + f"\n… cut: {len(text) - limit:,} more characters of {len(text):,}"
        return text

    # -- the sequence view ----------------------------------------------------------------------------
    def _line(self, step: Step, label: Any, *, ex: Exchange | None = None, status: str | None = None, code: Any = None,
              text: str | None = None, payload: Any = None, related: Exchange | None = None) -> None:
        if step.index >= self.limits.timeline:
            return
        msg = step.msg
        d = msg.dir if msg is not None and msg.dir in ("in", "out") else None
        if d is None and msg is not None and msg.kind == Kind.MESSAGE:
            d = "in"  # as the correlation reads a message with no direction
        entry: dict[str, Any] = {"i": step.index, "t": self._offset(msg.t if msg else None), "dir": d,
                                 "label": label if isinstance(label, str) else cut_repr(label)}
        if ex is not None:
            entry["id"] = _id_text(ex.id)
            entry["n"] = ex.n
            target = ex.target
            if target is not None:
                entry["target"] = target
            if step.kind == "response":
                entry["method"] = ex.method
                entry["latency"] = ex.latency_ms
                entry["req"] = ex.index
        if related is not None:
            entry["rel"] = related.index
        if status is not None and status != "ok":
            entry["status"] = status
        if code is not None:
            entry["code"] = code if isinstance(code, (int, str)) else cut_repr(code)
        text = self._said(text)
        if text:
            entry["text"] = text if len(text) <= 500 else text[:500] + "…"
        member = step.member if step.member is not None else payload
        if member is not None:
            entry["json"] = self._pretty(member, TIMELINE_CHARS)
        if msg is not None and msg.dropped:
            entry["dropped"] = True
        if msg is not None and msg.modified:
            entry["modified"] = True
        self.data.timeline.append(entry)

    def _identity(self) -> None:
        """Who spoke (the :class:`~mcpreel.operations.tally.Identity`) and in which era: the eras of the
        walk's client sessions, and the protocol of the first that names one."""
        data = self.data
        data.client = info_name(self.identity.client)
        data.server = info_name(self.identity.server)
        eras = {cs.era for cs in self.client_sessions}
        if LEGACY in eras and MODERN in eras:
            data.era = f"both: {era_name(LEGACY)} and {era_name(MODERN)} sessions"
        elif LEGACY in eras:
            data.era = era_name(LEGACY)
            if self.discover_failed:
                data.era += ", after a failed server/discover"
        elif MODERN in eras:
            data.era = era_name(MODERN)
        data.protocol_version = next((cs.protocol for cs in self.client_sessions if cs.protocol), None)

    def _offset(self, t: int | None) -> int | None:
        if t is None or self.t0 is None:
            return None
        return t - self.t0

    # -- the end ------------------------------------------------------------------------------------
    def finish(self) -> ReportData:
        data = self.data
        counts = self.counts
        tally = self.tally.finish()
        c = {key: getattr(counts, key) for key in _COUNT_KEYS[:-4]}
        c["errors"] = counts.orphan_errors + tally.errors  # an error answer, whoever it answers (as inspect lists it)
        c["is_errors"] = tally.is_errors
        c["unanswered"] = tally.unanswered
        c["orphans"] = counts.orphans
        data.counts = c
        data.header.messages = counts.messages
        data.calls_total = tally.operations
        data.timeline_omitted = max(0, counts.records - self.limits.timeline)
        self._identity()
        data.sessions = max(1, len(self.client_sessions))
        data.latency = tally.latency
        data.tools = tally.tools
        data.tool_max = tally.tool_max
        calls = dict(self.kept)
        for _, _, call in self.slowest:
            if call["n"] in calls:
                calls[call["n"]]["tags"].append("slowest")
            else:
                call["tags"].append("slowest")
                calls[call["n"]] = call
        data.calls = [calls[n] for n in sorted(calls)]
        for call in data.calls:
            call["tags"] = sorted(set(call["tags"]))
        data.activity = self.activity.to_dict()
        if data.activity and self.t0 is not None:
            data.activity["start"] -= self.t0
        return data


def _id_text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else jsonio.dumps_str(value)


def collect(session: Session, limits: ReportLimits | None = None, *, redact: bool = True) -> ReportData:
    """Read ``session`` once and return what its report shows.

    A report is made to be shared (a CI artifact): by default (``redact=True``) every kept message, every
    text shown (stderr, invalid frames, error messages) and the header (the server's argv, its URL) go
    through the default :class:`~mcpreel.redact.Redactor` (the rules of ``mcpreel redact``) before they go
    into the page; ``redact=False`` (``--no-redact``) shows them as recorded.
    """
    redactor = None
    if redact:
        from mcpreel.redact import Redactor

        redactor = Redactor()
    collector = _Collector(session, limits or ReportLimits(), redactor)
    walker = Walker()
    feed = collector.feed
    count = collector.counts.add
    for index, msg in enumerate(session):
        steps = walker.feed(index, msg)
        count(msg, steps)
        for step in steps:
            feed(step)
    for step in walker.finish():
        feed(step)
    collector.client_sessions = walker.client_sessions()
    return collector.finish()
