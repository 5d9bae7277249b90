"""A session as OpenTelemetry spans, with the GenAI MCP semantic conventions, as plain data.

One pass over the session (:func:`mcpreel.operations.walk`); a span is handed out as soon as its
request is answered, so a long session streams out in batches and only pending requests are held.

- **A span per request**, named ``{mcp.method.name} {target}`` (target = the tool or prompt name, or
  the resource URI, when there is one), kind CLIENT for client→server requests and SERVER for
  server→client ones (sampling, elicitation, roots), start and end at the recorded request and
  response times. Attributes: ``mcp.method.name``, ``mcp.session.id``, ``mcp.protocol.version``,
  ``jsonrpc.request.id``, ``jsonrpc.protocol.version``, ``gen_ai.tool.name`` and
  ``gen_ai.operation.name=execute_tool`` for tool calls, ``gen_ai.prompt.name``, ``mcp.resource.uri``,
  ``network.transport`` (``pipe`` for stdio, ``tcp`` for HTTP), ``network.protocol.name``,
  ``server.address``/``server.port``, ``rpc.response.status_code`` and ``error.type`` (the JSON-RPC
  code, or ``tool_error`` for an ``isError`` result) with an ERROR status.
- **Content is opt-in** (``include_content``): ``gen_ai.tool.call.arguments`` and
  ``gen_ai.tool.call.result`` as JSON text, after the default redaction rules.
- **A session span is the root**, one per client session (:mod:`mcpreel.operations`: an HTTP session, a
  conversation of its own, a source file of a merged session), each with its own ``mcp.session.id``, kind INTERNAL, named
  ``mcp session {server}``; ``traceparent``/``tracestate`` in a request's ``params._meta`` make that
  request a child of the caller's span (its trace), with a link back to the session span; over HTTP the
  request's ``traceparent``/``tracestate`` headers are preferred (authoritative there, as the
  transport-native trace context draft says: ``mcpreel.trace_context=http``, a differing ``_meta`` one
  a link).
- **Notifications are span events**: on the operation they belong to while it is open (progress,
  cancellation, a task's status, a listen stream's acknowledgement and changes, a message said during a
  request), every other one on the session span (at most :data:`MAX_ROOT_EVENTS`; the rest counted).
- **An operation is one span** (:mod:`mcpreel.operations`): a task's span runs from the call that created
  it to its result, its ``tasks/get`` polls and ``tasks/result`` are events on it (``mcp.task.id``,
  ``mcp.task.status``, ``mcpreel.task.polls``); a ``subscriptions/listen`` span runs until the stream
  ended (``mcpreel.ended_by``).
- **The control channel's marks**: a request dropped in a viewer still has its span (``mcpreel.dropped``,
  answered by the proxy: ``mcpreel.answer.injected``); an edit is ``mcpreel.edited`` /
  ``mcpreel.answer.edited``, an injected request ``mcpreel.injected``.
- A ``server/discover`` a handshake-era server refused (``-32601``) is the 2026 client's probe before it
  falls back to ``initialize``: ``mcpreel.era_fallback``, never an ERROR.
- **2026-07-28**, where the conventions are silent, in the same style: ``server/discover`` is a span
  like any other method; ``mcp.result.type`` is the result's ``resultType``; a retry that carries an
  ``input_required`` round's ``requestState`` links to that round's span and has ``mcp.request.round``.

- **The next release's drafts** (:mod:`mcpreel.drafts`): a task's own ``progress``/``progressTotal`` reads as
  ``mcp.progress``/``mcp.progress.total`` like a progress notification's (progress folded into tasks); SEP-2998
  partial-result chunks are events on their call's span (``mcp.partial_result.seq``/``.final``); a SEP-3279
  result names its variants (``mcp.tool.result.outputs``, ``audience/format``); raw ``bytes`` lines are
  ``mcpreel.raw_bytes`` events with their size only (``mcpreel.raw.lossy``: the bytes stay in the reel).

Attributes of mcpreel's own (``mcpreel.*``) say what the conventions have no word for: a request never
answered, counts on the session span.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcpreel._infra import jsonio
from mcpreel._version import __version__
from mcpreel.drafts import PARTIAL_RESULT_NOTIFICATION, TASK_STATUS_NOTIFICATION, TRACEPARENT_HEADER, TRACESTATE_HEADER
from mcpreel.model import Kind, Session
from mcpreel.operations.facts import (
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    info_name,
    mcp_session_id,
    origin_of,
    output_key,
    progress_of,
    tool_result,
)
from mcpreel.operations.walk import Exchange, walk

__all__ = ["MAX_ROOT_EVENTS", "SpanEvent", "SpanLink", "SpanMapper", "SpanRecord", "parse_traceparent", "spans",
           "trace_carrier"]

#: events kept on a session span; a session of a million log notifications must not make one huge span
MAX_ROOT_EVENTS = 1000
#: spans an HTTP client session keeps back while its session id is not known yet (then they go without)
_WAIT_FOR_ID = 64

_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")

#: the latest time an OTLP span can hold (fixed64 nanoseconds)
_MAX_NS = 2**64 - 1


def trace_carrier(ctx: Any, meta: dict[str, Any]) -> dict[str, Any]:
    """Where a request's trace context is read: its HTTP ``traceparent``/``tracestate`` headers when it
    came over HTTP with a valid one (the transport-native trace context draft makes them authoritative over
    ``_meta`` on HTTP: :mod:`mcpreel.drafts`), else ``meta`` itself (``params._meta``)."""
    headers = ctx.get("headers") if isinstance(ctx, dict) else None
    if not isinstance(headers, dict):
        return meta
    low = {str(k).lower(): v for k, v in headers.items() if str(k).lower() in (TRACEPARENT_HEADER, TRACESTATE_HEADER)}
    if parse_traceparent(low.get(TRACEPARENT_HEADER)) is None:
        return meta
    return {"traceparent": low[TRACEPARENT_HEADER], "tracestate": low.get(TRACESTATE_HEADER)}


def parse_traceparent(value: Any) -> tuple[int, int, int] | None:
    """``(trace_id, span_id, flags)`` of a W3C ``traceparent`` value, or None when it is not a valid one."""
    if not isinstance(value, str):
        return None
    m = _TRACEPARENT.match(value.strip().lower())
    if m is None or m.group(1) == "ff":
        return None
    trace_id, span_id = int(m.group(2), 16), int(m.group(3), 16)
    if trace_id == 0 or span_id == 0:
        return None
    return trace_id, span_id, int(m.group(4), 16)


@dataclass(slots=True)
class SpanEvent:
    name: str
    time_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class SpanLink:
    trace_id: int
    span_id: int
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class SpanRecord:
    """One finished span, independent of any SDK (:mod:`mcpreel.otel.export` turns it into one)."""

    name: str
    kind: str  # "client" | "server" | "internal"
    trace_id: int
    span_id: int
    parent_id: int | None
    start_ns: int
    end_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[SpanEvent] = field(default_factory=list)
    links: list[SpanLink] = field(default_factory=list)
    error: str | None = None  # the status description of an ERROR status; None = unset
    parent_remote: bool = False
    trace_state: str | None = None
    trace_flags: int = 1


@dataclass(slots=True)
class _Root:
    span: SpanRecord
    session_id: str | None = None  # this client session's Mcp-Session-Id
    client_name: str | None = None
    index: int = 1
    #: spans closed before an HTTP session named its id (a discover probe, the initialize): they wait for it
    waiting: list[SpanRecord] = field(default_factory=list)
    gave_up: bool = False  # no id came in time (a stateless 2026 session has none): nothing waits any more
    first_ms: int | None = None
    last_ms: int | None = None
    dropped_events: int = 0
    protocol_version: str | None = None  # each session of a merged file has its own
    counts: dict[str, int] = field(default_factory=lambda: {"requests": 0, "notifications": 0, "errors": 0,
                                                            "stderr": 0, "unanswered": 0, "orphans": 0})


def _network(transport: str | None, url: str | None) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    if transport == "stdio":
        attrs["network.transport"] = "pipe"
    elif transport in ("sse", "streamable-http", "http-sse", "http") or url:
        attrs["network.transport"] = "tcp"
        attrs["network.protocol.name"] = "http"
    if url:
        try:
            parts = urlsplit(url)
            if parts.hostname:
                attrs["server.address"] = parts.hostname
                port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
                if port:
                    attrs["server.port"] = port
        except ValueError:
            pass
    return attrs


def _json_text(value: Any, redactor: Any) -> str:
    if redactor is not None:
        value = redactor.value(value)
    return jsonio.dumps_str(value)


def _attr(value: Any) -> Any:
    """A value OTLP attributes can carry (str, bool, int, float); anything else as JSON text."""
    if isinstance(value, (str, bool, float)) or (isinstance(value, int) and -(2**63) <= value < 2**63):
        return value
    return jsonio.dumps_str(value)


class SpanMapper:
    """Feed it a session's steps; it hands out finished spans. ``ids`` makes span and trace ids
    (``random.getrandbits`` by default; tests pass a seeded generator)."""

    def __init__(self, session: Session, *, include_content: bool = False,
                 ids: Callable[[int], int] | None = None, now_ms: Callable[[], int] | None = None):
        self.info = session.info
        self.bits = ids or random.SystemRandom().getrandbits
        self.redactor = None
        if include_content:
            from mcpreel.redact import Redactor

            self.redactor = Redactor()
        self.include_content = include_content
        self.now_ms = now_ms
        self.roots: dict[int, _Root] = {}  # client session -> its root
        self.spans: dict[int, SpanRecord] = {}  # exchange n -> its open span
        self.rounds: dict[str, tuple[int, int, int]] = {}  # requestState -> (trace, span, round)
        self.last_ms: int | None = self.info.started
        self.server_name: str | None = None
        self.server_version: str | None = None
        self.base_attrs = _network(self.info.transport, self.info.url)
        self.http = self.base_attrs.get("network.transport") == "tcp"

    # -- ids and times -----------------------------------------------------------------------------
    def _id(self, bits: int) -> int:
        while True:
            value = self.bits(bits)
            if value:
                return value

    def _ns(self, t: int | None) -> int:
        if t is None:
            t = self.last_ms
        if t is None:
            t = self.now_ms() if self.now_ms else _wall_ms()
            self.last_ms = t
        # OTLP times are unsigned 64-bit nanoseconds: a damaged time before 1970 or past 2554 is put at the
        # nearest end (issue 40: a traceback from the protobuf encoder, found by the fuzz's otlp family)
        return min(max(int(t) * 1_000_000, 0), _MAX_NS)

    def _root(self, session: int, origin: str | None) -> _Root:
        root = self.roots.get(session)
        if root is None:
            span = SpanRecord("mcp session", "internal", self._id(128), self._id(64), None, 0, 0)
            root = self.roots[session] = _Root(span, index=session)
            if origin is not None:
                span.attributes["mcpreel.session.file"] = origin
        return root

    def _session_id_of(self, root: _Root) -> str | None:
        """The session id its spans carry: the HTTP session's; else the recording's id, numbered after the
        first client session (``ID/2``: one id per client session, whatever the transport)."""
        if root.session_id:
            return root.session_id
        if root.index == 1:
            return self.info.id or None
        return f"{self.info.id or 'session'}/{root.index}"

    def _out(self, root: _Root, span: SpanRecord) -> list[SpanRecord]:
        """Hand a closed span out, once its session's id is known (HTTP: the answer that names it)."""
        root.waiting.append(span)
        if root.session_id is None and self.http and not root.gave_up:
            if len(root.waiting) < _WAIT_FOR_ID:
                return []
            root.gave_up = True
        return self._release(root)

    def _release(self, root: _Root) -> list[SpanRecord]:
        out, root.waiting = root.waiting, []
        for span in out:
            self._session_attr(span, root)
        return out

    def _seen(self, root: _Root, t: int | None) -> None:
        if t is None:
            return
        self.last_ms = t
        if root.first_ms is None or t < root.first_ms:
            root.first_ms = t
        if root.last_ms is None or t > root.last_ms:
            root.last_ms = t

    # -- the pass ----------------------------------------------------------------------------------
    def feed_all(self, session: Session) -> Iterator[SpanRecord]:
        """The spans of a whole session, in one pass (what ``export otlp`` sends)."""
        for step in walk(session):
            yield from self.feed(step)
        yield from self.finish()

    def feed(self, step: Any) -> list[SpanRecord]:
        """The spans one step of the walk completes (most steps complete none; an answer completes its request's)."""
        kind = step.kind
        msg = step.msg
        root = self._root(step.session, origin_of(msg) if msg is not None else None)
        released: list[SpanRecord] = []
        if msg is not None:
            self._seen(root, msg.t)
            if root.session_id is None and msg.ctx:
                root.session_id = mcp_session_id(msg)
                if root.session_id is not None and root.waiting:
                    released = self._release(root)
        out = self._step(step, kind, msg, root)
        return released + out if released else out

    def _step(self, step: Any, kind: str, msg: Any, root: _Root) -> list[SpanRecord]:
        if kind == "record":
            if msg.kind == Kind.STDERR:
                root.counts["stderr"] += 1
            elif msg.kind == Kind.BYTES:
                self._raw_bytes(msg, root)
            return []
        if kind == "request":
            ex = step.exchange
            root.counts["requests"] += 1
            op = step.operation
            if op is not None and op.kind == "task" and ex.role != "call" and op.opening.n in self.spans:
                return []  # a poll, the result or a cancel of a task: an event on the task's span
            parent = None
            if op is not None and ex is not op.opening:
                parent = self.spans.get(op.opening.n)  # a retry round, or a server request the call caused
            self.spans[ex.n] = self._open(ex, root, parent)
            return []
        if kind == "response":
            ex = step.exchange
            self._learn(ex, root)
            op = step.operation
            if op is not None and op.kind == "task":
                return self._task_answer(ex, op, root)
            if op is not None and op.kind == "multi-round-trip" and ex is op.opening and not op.complete:
                span = self.spans.get(ex.n)  # the operation's span stays open for the rounds to come
                if span is not None:
                    self._close(span, ex, root)
                return []
            span = self.spans.pop(ex.n, None)
            if span is None:
                return []
            self._close(span, ex, root)
            return self._out(root, span)
        if kind == "notification":
            root.counts["notifications"] += 1
            self._event(step, root)
            return []
        if kind in ("orphan", "other"):
            if kind == "orphan":
                root.counts["orphans"] += 1
            return []
        if kind == "operation":
            op = step.operation
            if op is not None and op.kind in ("task", "listen", "multi-round-trip"):
                span = self.spans.pop(op.opening.n, None)
                if span is not None:
                    return self._out(root, self._end_operation(span, op, root))
            if op is not None and msg is None:
                return self._still_open(op, root)
            return []
        if kind in ("unanswered", "ended"):
            ex = step.exchange
            op = step.operation
            if op is not None and op.kind == "task" and ex.role != "call":
                return []
            if kind == "unanswered":
                root.counts["unanswered"] += 1
            span = self.spans.pop(ex.n, None)
            if span is None:
                return []
            span.end_ns = max(span.start_ns, self._ns(root.last_ms))
            self._session_attr(span, root)
            if kind == "ended":
                span.attributes["mcpreel.ended_by"] = "cancel"
                return self._out(root, span)
            self._never_answered(span, ex)
            return self._out(root, span)
        return []

    def _never_answered(self, span: SpanRecord, ex: Exchange) -> None:
        span.attributes["mcpreel.unanswered"] = True
        if ex.cancelled:
            span.attributes["error.type"] = "cancelled"

    def _still_open(self, op: Any, root: _Root) -> list[SpanRecord]:
        """An operation the walk hands out open at the end: the spans of its requests no ``unanswered``
        step closed are closed here, unanswered, as the walk reads them. That is a request the proxy
        dropped and nobody answered (it never waited for the server's answer, so it is not among the
        walk's pending requests) or one whose id cannot correlate: its span is kept, marked."""
        out: list[SpanRecord] = []
        for ex in (*op.exchanges, *op.children):
            span = self.spans.pop(ex.n, None)
            if span is None:
                continue
            root.counts["unanswered"] += 1
            span.end_ns = max(span.start_ns, self._ns(root.last_ms))
            self._session_attr(span, root)
            self._never_answered(span, ex)
            out.extend(self._out(root, span))
        return out

    def _task_answer(self, ex: Exchange, op: Any, root: _Root) -> list[SpanRecord]:
        """An answer within a task: the creating call's keeps the span open; the others are events."""
        span = self.spans.get(op.opening.n)
        if span is None:
            return []
        if ex.role == "call":
            span.attributes["mcp.task.id"] = _attr(op.task_id)
            return []
        attrs: dict[str, Any] = {"mcp.method.name": ex.method, "mcp.task.id": _attr(op.task_id)}
        status = op.task_status
        if status is not None:
            attrs["mcp.task.status"] = status
        if ex.response is not None:
            _progress_attrs(attrs, ex.response)  # a task's own progress (the tasks-are-progress draft)
        span.events.append(SpanEvent(ex.method, self._ns(ex.t_end), attrs))
        return []

    def _end_operation(self, span: SpanRecord, op: Any, root: _Root) -> SpanRecord:
        """Close the span of a task or a listen stream when its operation is complete (or at the end)."""
        final = op.final
        end = final.t_end if final is not None else (op.t_end if op.t_end is not None else root.last_ms)
        span.end_ns = max(span.start_ns, self._ns(end))
        self._session_attr(span, root)
        if op.ended_by:
            span.attributes["mcpreel.ended_by"] = op.ended_by
        if op.kind == "task":
            span.attributes["mcpreel.task.polls"] = op.polls
            if op.task_status is not None:
                span.attributes["mcp.task.status"] = op.task_status
            status, code, message = op.status()
            if status == "error":
                span.attributes["error.type"] = str(code) if code is not None else "task_failed"
                span.error = message or "task failed"
                root.counts["errors"] += 1
            elif status == "isError":
                span.attributes["error.type"] = "tool_error"
                span.error = message or "tool_error"
                root.counts["errors"] += 1
            elif not op.complete:
                span.attributes["mcpreel.unanswered"] = True
            if self.include_content and final is not None and isinstance((final.response or {}).get("result"), dict):
                span.attributes["gen_ai.tool.call.result"] = _json_text(final.response["result"], self.redactor)
        elif op.kind == "listen" and final is not None:
            self._close(span, final, root)
        elif op.kind == "multi-round-trip":
            span.attributes["mcp.request.rounds"] = op.rounds
            span.error = None
            for key in ("error.type", "rpc.response.status_code", "mcp.result.type"):
                span.attributes.pop(key, None)
            if final is not None and final is not op.opening:
                self._close(span, final, root, count=False)  # the outcome is the last round's (counted there)
                span.attributes["mcp.request.rounds"] = op.rounds
            elif final is None:
                span.attributes["mcpreel.unanswered"] = True
        return span

    def _raw_bytes(self, msg: Any, root: _Root) -> None:
        """Raw bytes a stdio pipe carried (a ``bytes`` line: HTTP/2 frames, binary): an event on the session span
        with their direction and size, and ``mcpreel.raw_bytes`` on the session. Lossy, and said so
        (``mcpreel.raw.lossy``): the bytes themselves are not in the span (the reel keeps them; what they
        decoded to is in the spans already)."""
        data = msg.raw if isinstance(msg.raw, bytes | bytearray) else b""
        # the live exporter queues the size alone (``extra["size"]``), never the bytes
        size = len(data) or int((msg.extra or {}).get("size") or 0)
        root.counts["raw_bytes"] = root.counts.get("raw_bytes", 0) + size
        attrs: dict[str, Any] = {"mcpreel.direction": "server_to_client" if msg.dir == "out" else "client_to_server",
                                 "mcpreel.raw.size": size, "mcpreel.raw.lossy": True}
        if msg.extra and msg.extra.get("redacted") is True:
            attrs["mcpreel.raw.redacted"] = True
        if len(root.span.events) < MAX_ROOT_EVENTS:
            root.span.events.append(SpanEvent("mcpreel.raw_bytes", self._ns(msg.t), attrs))
        else:
            root.dropped_events += 1

    def _session_attr(self, span: SpanRecord, root: _Root) -> None:
        session_id = self._session_id_of(root)
        if session_id:
            span.attributes["mcp.session.id"] = session_id

    def finish(self) -> list[SpanRecord]:
        """The session spans, last: their end is the session's last record."""
        out = []
        for root in self.roots.values():
            out.extend(self._release(root))
        for session, root in self.roots.items():
            span = root.span
            if len(self.roots) > 1:
                span.attributes["mcpreel.session.index"] = session
            start = root.first_ms if root.first_ms is not None else self.info.started
            end = root.last_ms if root.last_ms is not None else self.info.ended
            span.start_ns = self._ns(start)
            span.end_ns = max(span.start_ns, self._ns(end if end is not None else start))
            if self.info.ended is not None and len(self.roots) == 1:
                span.end_ns = max(span.end_ns, self._ns(self.info.ended))
            if self.server_name:
                span.name = f"mcp session {self.server_name}"
            attrs = span.attributes
            attrs.update(self.base_attrs)
            session_id = self._session_id_of(root)
            if session_id:
                attrs["mcp.session.id"] = session_id
            if root.protocol_version:
                attrs["mcp.protocol.version"] = root.protocol_version
            if root.client_name:
                attrs["mcpreel.client"] = root.client_name
            if self.info.label:
                attrs["mcpreel.session.label"] = self._shown().text(self.info.label)
            if self.info.command:
                attrs["mcpreel.server.command"] = " ".join(self._shown().command(list(self.info.command)))
            if self.info.exit_code is not None:
                attrs["mcpreel.server.exit_code"] = self.info.exit_code
            for key, value in root.counts.items():
                attrs[f"mcpreel.{key}"] = value
            if root.dropped_events:
                attrs["mcpreel.events_not_kept"] = root.dropped_events
            if root.counts["errors"]:
                span.error = f"{root.counts['errors']} failed requests"
            out.append(span)
        return out

    def _shown(self) -> Any:
        """The redaction every span attribute taken from the session header goes through (argv ``--token X``,
        URL secrets in a label): spans go to a collector others read, content or not."""
        if self.redactor is None:
            from mcpreel.redact import Redactor

            self.redactor = Redactor()
        return self.redactor

    def resource_attributes(self) -> dict[str, Any]:
        """Who the spans are about (``service.*`` = the MCP server) and who made them (the recorder)."""
        name = self.server_name or self.info.label or (self.info.command[0] if self.info.command else None)
        if not name and self.info.url:
            name = urlsplit(self.info.url).hostname
        attrs: dict[str, Any] = {"service.name": name or "mcp-server", "mcpreel.version": __version__}
        if self.server_version:
            attrs["service.version"] = self.server_version
        producer = self.info.producer
        if isinstance(producer, dict):
            if isinstance(producer.get("name"), str):
                attrs["mcpreel.recorder.name"] = producer["name"]
            if isinstance(producer.get("version"), str):
                attrs["mcpreel.recorder.version"] = producer["version"]
        if self.info.source_format:
            attrs["mcpreel.source.format"] = self.info.source_format
        return attrs

    # -- spans ---------------------------------------------------------------------------------------
    def _open(self, ex: Exchange, root: _Root, parent_span: SpanRecord | None = None) -> SpanRecord:
        target = ex.target
        name = f"{ex.method} {target}" if target else ex.method
        meta = ex.meta
        attrs: dict[str, Any] = dict(self.base_attrs)
        attrs["mcp.method.name"] = ex.method
        attrs["jsonrpc.protocol.version"] = "2.0"
        if ex.id is not None:
            attrs["jsonrpc.request.id"] = ex.id if isinstance(ex.id, str) else jsonio.dumps_str(ex.id)
        version = meta.get(META_PROTOCOL_VERSION)
        if isinstance(version, str):
            attrs["mcp.protocol.version"] = version
            root.protocol_version = root.protocol_version or version
        elif root.protocol_version:
            attrs["mcp.protocol.version"] = root.protocol_version
        if ex.dir == "in" and root.client_name is None:
            info = meta.get(META_CLIENT_INFO)
            if ex.method == "initialize" and isinstance(ex.params, dict):
                info = ex.params.get("clientInfo")
            root.client_name = info_name(info)
        for mark, on in (("mcpreel.dropped", ex.dropped), ("mcpreel.edited", ex.edited),
                         ("mcpreel.injected", ex.injected)):
            if on:
                attrs[mark] = True
        params = ex.params if isinstance(ex.params, dict) else {}
        if ex.method == "tools/call":
            attrs["gen_ai.operation.name"] = "execute_tool"
            attrs["gen_ai.tool.name"] = ex.tool
            if self.include_content and "arguments" in params:
                attrs["gen_ai.tool.call.arguments"] = _json_text(params["arguments"], self.redactor)
        elif ex.method == "prompts/get" and target:
            attrs["gen_ai.prompt.name"] = target
        elif ex.method.startswith("resources/") and target:
            attrs["mcp.resource.uri"] = target
        if ex.origin is not None:
            attrs["mcpreel.session.file"] = ex.origin
        above = parent_span if parent_span is not None else root.span
        span = SpanRecord(name, "client" if ex.dir == "in" else "server", above.trace_id, self._id(64),
                          above.span_id, self._ns(ex.t), 0, attrs)
        carrier = trace_carrier(ex.ctx, meta)
        parent = parse_traceparent(carrier.get("traceparent"))
        if carrier is not meta:
            attrs["mcpreel.trace_context"] = "http"  # the HTTP headers, authoritative on HTTP (drafts)
            other = parse_traceparent(meta.get("traceparent"))
            if other is not None and other[:2] != (parent or (0, 0))[:2]:
                span.links.append(SpanLink(other[0], other[1], {"mcpreel.link": "meta_traceparent"}))
        if parent is not None and parent_span is not None:
            # a retry round or a nested request stays under its operation's span; the caller's context a link
            span.links.append(SpanLink(parent[0], parent[1], {"mcpreel.link": "traceparent"}))
        elif parent is not None:
            span.trace_id, span.parent_id, span.trace_flags = parent[0], parent[1], parent[2] & 1
            span.parent_remote = True
            state = carrier.get("tracestate")
            if isinstance(state, str) and state.strip():
                span.trace_state = state.strip()
            span.links.append(SpanLink(root.span.trace_id, root.span.span_id, {"mcpreel.link": "session"}))
        state = params.get("requestState")
        if isinstance(state, str) and state in self.rounds:
            trace_id, span_id, n = self.rounds.pop(state)
            attrs["mcp.request.round"] = n + 1
            span.links.append(SpanLink(trace_id, span_id, {"mcpreel.link": "previous_round"}))
        return span

    def _close(self, span: SpanRecord, ex: Exchange, root: _Root, count: bool = True) -> None:
        span.end_ns = max(span.start_ns, self._ns(ex.t_end))
        self._session_attr(span, root)
        status, code, message = ex.status()
        response = ex.response or {}
        result = response.get("result")
        if ex.response_injected:
            span.attributes["mcpreel.answer.injected"] = True
        if ex.response_edited:
            span.attributes["mcpreel.answer.edited"] = True
        if status == "fallback":
            span.attributes["mcpreel.era_fallback"] = True
            span.attributes["rpc.response.status_code"] = str(code)
        elif status == "error":
            span.attributes["rpc.response.status_code"] = str(code)
            span.attributes["error.type"] = str(code)
            span.error = message or f"JSON-RPC error {code}"
            root.counts["errors"] += count
        elif status == "isError":
            span.attributes["error.type"] = "tool_error"
            span.error = message or "tool_error"
            root.counts["errors"] += count
        if isinstance(result, dict):
            if ex.method == "initialize" and isinstance(result.get("protocolVersion"), str):
                span.attributes["mcp.protocol.version"] = result["protocolVersion"]  # what was agreed
            result_type = result.get("resultType")
            if isinstance(result_type, str):
                span.attributes["mcp.result.type"] = result_type
            state = result.get("requestState")
            if result_type == "input_required" and isinstance(state, str):
                n = span.attributes.get("mcp.request.round", 1)
                self.rounds[state] = (span.trace_id, span.span_id, n)
                requests = result.get("inputRequests")
                if isinstance(requests, dict):
                    methods = [r.get("method") for r in requests.values() if isinstance(r, dict)]
                    span.attributes["mcp.input_required.methods"] = [m for m in methods if isinstance(m, str)]
            if ex.method == "tools/call":
                outputs = tool_result(response).outputs  # SEP-3279: which variants came (no content in it)
                if outputs:
                    span.attributes["mcp.tool.result.outputs"] = [f"{a}/{f}" for a, f in map(output_key, outputs)]
            if self.include_content and ex.method == "tools/call":
                span.attributes["gen_ai.tool.call.result"] = _json_text(result, self.redactor)

    def _event(self, step: Any, root: _Root) -> None:
        raw = step.member
        method = raw.get("method")
        attrs: dict[str, Any] = {"mcp.method.name": method,
                                 "mcpreel.direction": "server_to_client" if step.msg.dir == "out" else "client_to_server"}
        params = raw.get("params")
        if isinstance(params, dict):
            if method in ("notifications/progress", TASK_STATUS_NOTIFICATION):
                _progress_attrs(attrs, raw)  # one reading of both carriers (the tasks-are-progress draft)
            elif method == PARTIAL_RESULT_NOTIFICATION:  # SEP-2998: a chunk, an event on its call's span
                for key, name in (("seq", "mcp.partial_result.seq"), ("final", "mcp.partial_result.final")):
                    if params.get(key) is not None:
                        attrs[name] = _attr(params[key])
            elif method == "notifications/cancelled":
                if params.get("requestId") is not None:
                    attrs["jsonrpc.request.id"] = _attr(params.get("requestId"))
                if isinstance(params.get("reason"), str) and self.include_content:
                    attrs["mcpreel.reason"] = params["reason"]
            elif method == "notifications/message" and isinstance(params.get("level"), str):
                attrs["mcp.log.level"] = params["level"]
            if self.include_content:
                attrs["mcpreel.params"] = _json_text(params, self.redactor)
        event = SpanEvent(method, self._ns(step.msg.t), attrs)
        related = step.related
        op = step.operation
        span = None
        if op is not None and op.kind in ("task", "listen"):
            span = self.spans.get(op.opening.n)
        if span is None and related is not None and method in ("notifications/progress", "notifications/cancelled",
                                                               PARTIAL_RESULT_NOTIFICATION):
            span = self.spans.get(related.n)  # the request it names (any other message: the session's)
        if span is not None:
            span.events.append(event)
        elif len(root.span.events) < MAX_ROOT_EVENTS:
            root.span.events.append(event)
        else:
            root.dropped_events += 1

    def _learn(self, ex: Exchange, root: _Root) -> None:
        result = (ex.response or {}).get("result")
        if not isinstance(result, dict):
            return
        if ex.method == "initialize":
            if isinstance(result.get("protocolVersion"), str):
                root.protocol_version = result["protocolVersion"]
            info = result.get("serverInfo")
            if isinstance(info, dict):
                self.server_name = self.server_name or _str(info.get("name"))
                self.server_version = self.server_version or _str(info.get("version"))
        meta = result.get("_meta")
        if isinstance(meta, dict) and self.server_name is None:
            info = meta.get(META_SERVER_INFO)
            if isinstance(info, dict):
                self.server_name = _str(info.get("name"))
                self.server_version = _str(info.get("version"))



def _progress_attrs(attrs: dict[str, Any], message: dict[str, Any]) -> None:
    """The ``mcp.progress*`` attributes of a progress report, whichever carrier brought it."""
    p = progress_of(message)
    if p is None:
        return
    attrs["mcp.progress"] = p.progress
    if p.total is not None:
        attrs["mcp.progress.total"] = p.total
    if p.message is not None:
        attrs["mcp.progress.message"] = p.message


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _wall_ms() -> int:
    import time

    return int(time.time() * 1000)


def spans(session: Session, *, include_content: bool = False, ids: Callable[[int], int] | None = None) -> list[SpanRecord]:
    """Every span of ``session`` (a list: for tests and small sessions; exporters stream via :class:`SpanMapper`)."""
    mapper = SpanMapper(session, include_content=include_content, ids=ids)
    return list(mapper.feed_all(session))
