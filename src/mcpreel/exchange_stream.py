"""A session as request/response exchanges, in one streaming pass: what the report and the OTLP export read.

Both the HTML report (:mod:`mcpreel.report`) and the span mapping (:mod:`mcpreel.otel`) need the same
thing from a session: each JSON-RPC request paired with its response, notifications, and the records
that are not JSON-RPC at all, in the order they happened, without holding the whole session in memory.
:func:`walk` yields one :class:`Step` per JSON-RPC message (a batch gives one step per member) and per
other record; an :class:`Exchange` is handed out twice, when its request is seen and when it completes,
and the requests still pending at the end come last, as ``"unanswered"`` steps.

Correlation follows :mod:`mcpreel.inspect`: by (direction of the request, id), per source file of a
merged session; a dropped message never reached its peer and takes no part in it.

The MCP facts a reader of an exchange asks for (the target of a request, the era markers in ``_meta``,
the status of a response) are plain functions here, so both consumers name things the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mcpreel._infra.correlation import Correlator
from mcpreel.inspect import _first_text
from mcpreel.model import Kind, Message, Session

__all__ = [
    "META_CLIENT_INFO",
    "META_PROTOCOL_VERSION",
    "META_SERVER_INFO",
    "Exchange",
    "Step",
    "info_name",
    "mcp_session_id",
    "origin_of",
    "status_of",
    "target_of",
    "walk",
]

ORIGIN_KEY = "file"  # where merged records name the file they came from (mcpreel.merge)
META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

#: methods whose target is ``params.name`` / ``params.uri`` (the ``{target}`` of a span name)
_NAMED = frozenset({"tools/call", "prompts/get"})
_URI = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})


def target_of(method: str | None, params: Any) -> str | None:
    """The tool or prompt name, or the resource URI, a request is about (None when it has none)."""
    if not isinstance(params, dict) or method is None:
        return None
    if method in _NAMED:
        name = params.get("name")
        return name if isinstance(name, str) else None
    if method in _URI:
        uri = params.get("uri")
        return uri if isinstance(uri, str) else None
    return None


def status_of(response: dict[str, Any] | None) -> tuple[str, Any, str | None]:
    """(status, code, message) of a response: ``ok``, ``error`` (JSON-RPC), ``isError`` (a failed tool
    result), ``input_required`` (a 2026-07-28 multi-round-trip result) or ``unanswered`` (no response)."""
    if response is None:
        return "unanswered", None, None
    error = response.get("error")
    if error is not None:
        err = error if isinstance(error, dict) else {"message": error}
        message = err.get("message")
        return "error", err.get("code"), message if isinstance(message, str) else None
    result = response.get("result")
    if isinstance(result, dict):
        if result.get("isError") is True:
            return "isError", None, _first_text(result)
        if result.get("resultType") == "input_required":
            return "input_required", None, None
    return "ok", None, None


def info_name(info: Any) -> str | None:
    """``name version`` of a ``clientInfo``/``serverInfo`` object (None when it names nothing)."""
    if not isinstance(info, dict) or not isinstance(info.get("name"), str) or not info["name"]:
        return None
    version = info.get("version")
    return f"{info['name']} {version}" if isinstance(version, str) and version else info["name"]


@dataclass(slots=True, eq=False)
class Exchange:
    """One request and, once it came, its response. ``n`` numbers requests in the order they were sent."""

    n: int
    index: int  # record index of the request
    dir: str  # direction of the request: "in" = client -> server, "out" = server -> client
    method: str
    id: Any
    request: dict[str, Any]
    t: int | None
    origin: str | None = None
    dropped: bool = False
    response: dict[str, Any] | None = None
    response_index: int | None = None
    t_end: int | None = None
    cancelled: bool = False  # a notifications/cancelled named it
    target: str | None = None  # the tool or prompt name or resource URI (see :func:`target_of`)

    @property
    def params(self) -> Any:
        return self.request.get("params")

    @property
    def tool(self) -> str | None:
        """The tool of a ``tools/call`` (``unknown_tool`` when it names none, as ``inspect`` counts it)."""
        if self.method != "tools/call":
            return None
        return self.target or "unknown_tool"

    @property
    def meta(self) -> dict[str, Any]:
        params = self.params
        meta = params.get("_meta") if isinstance(params, dict) else None
        return meta if isinstance(meta, dict) else {}

    @property
    def latency_ms(self) -> int | None:
        if self.t is None or self.t_end is None or self.response is None:
            return None
        return max(0, self.t_end - self.t)

    def status(self) -> tuple[str, Any, str | None]:
        return status_of(self.response)


@dataclass(slots=True)
class Step:
    """One thing that happened. ``kind`` is one of:

    - ``request``: ``exchange`` was sent (its response not yet seen);
    - ``response``: ``exchange`` completed (``member`` is the response);
    - ``notification``: ``member`` is a notification (``related`` the exchange a progress or
      cancellation notification names, when it is still pending);
    - ``orphan``: ``member`` is a response no request waits for;
    - ``other``: a JSON-RPC member that is neither (no method, no result/error);
    - ``record``: a record that is not JSON-RPC (stderr, invalid frame, transport event, other line);
    - ``unanswered``: at the end, an ``exchange`` that never got its response.
    """

    kind: str
    index: int
    msg: Message | None
    member: dict[str, Any] | None = None
    exchange: Exchange | None = None
    related: Exchange | None = None


def mcp_session_id(msg: Message) -> str | None:
    """The ``Mcp-Session-Id`` header a record's HTTP context carries, or None."""
    headers = msg.ctx.get("headers") if msg.ctx else None
    if isinstance(headers, dict):
        for k, v in headers.items():
            if isinstance(k, str) and k.lower() == "mcp-session-id" and isinstance(v, str) and v:
                return v
    return None


def origin_of(msg: Message | None) -> str | None:
    """The source file a record of a merged session came from (:mod:`mcpreel.merge`), or None."""
    if msg is not None and msg.extra:
        origin = msg.extra.get(ORIGIN_KEY)
        if isinstance(origin, str):
            return origin
    return None


class _Walker:
    def __init__(self) -> None:
        self.correlator: Correlator[Exchange] = Correlator()
        self.progress: dict[tuple[Any, Any], Exchange] = {}  # (origin, progressToken) -> pending exchange
        self.by_id: dict[tuple[Any, str, Any], Exchange] = {}  # (origin, dir, id) -> pending exchange
        self.n = 0

    def member(self, index: int, msg: Message, raw: dict[str, Any], d: str, origin: str | None) -> Step:
        method = raw.get("method")
        if method is not None:
            method = method if isinstance(method, str) else str(method)
            if "id" in raw:
                ex = Exchange(self.n, index, d, method, raw.get("id"), raw, msg.t, origin, dropped=msg.dropped,
                              target=target_of(method, raw.get("params")))
                self.n += 1
                if not msg.dropped and self.correlator.request(d, raw.get("id"), ex, scope=origin):
                    self.by_id[(origin, d, _hashable(raw.get("id")))] = ex
                    token = ex.meta.get("progressToken")
                    if isinstance(token, (str, int)) and not isinstance(token, bool):
                        self.progress[(origin, token)] = ex
                return Step("request", index, msg, raw, ex)
            return Step("notification", index, msg, raw, related=self._related(method, raw, d, origin))
        if "result" not in raw and "error" not in raw:
            return Step("other", index, msg, raw)
        answered = None if msg.dropped else self.correlator.response(d, raw.get("id"), scope=origin)
        if answered is None:
            return Step("orphan", index, msg, raw)
        answered.response = raw
        answered.response_index = index
        answered.t_end = msg.t
        self._forget(answered)
        return Step("response", index, msg, raw, answered)

    def _related(self, method: str, raw: dict[str, Any], d: str, origin: str | None) -> Exchange | None:
        params = raw.get("params")
        if not isinstance(params, dict):
            return None
        if method == "notifications/progress":
            token = params.get("progressToken")
            if isinstance(token, (str, int)) and not isinstance(token, bool):
                return self.progress.get((origin, token))
        elif method == "notifications/cancelled":
            # a cancellation names a request its sender sent: the one going the same way
            ex = self.by_id.get((origin, d, _hashable(params.get("requestId"))))
            if ex is not None:
                ex.cancelled = True
            return ex
        return None

    def _forget(self, ex: Exchange) -> None:
        key = (ex.origin, ex.dir, _hashable(ex.id))
        if self.by_id.get(key) is ex:
            del self.by_id[key]
        token = ex.meta.get("progressToken")
        if isinstance(token, (str, int)) and not isinstance(token, bool) and self.progress.get((ex.origin, token)) is ex:
            del self.progress[(ex.origin, token)]


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, type(None))) and not isinstance(value, bool) else repr(value)


def walk(session: Session) -> Iterator[Step]:
    """Every step of ``session`` in order, then its unanswered requests (see :class:`Step`)."""
    w = _Walker()
    for index, msg in enumerate(session):
        if msg.kind != Kind.MESSAGE:
            yield Step("record", index, msg)
            continue
        d = msg.dir if msg.dir in ("in", "out") else "in"
        origin = origin_of(msg)
        raw = msg.raw
        if isinstance(raw, dict):
            yield w.member(index, msg, raw, d, origin)
        elif isinstance(raw, list):
            members = [m for m in raw if isinstance(m, dict)]
            if not members:
                yield Step("record", index, msg)
            for m in members:
                yield w.member(index, msg, m, d, origin)
        else:
            yield Step("record", index, msg)
    for ex in sorted(w.correlator.pending(), key=lambda e: e.n):
        yield Step("unanswered", ex.index, None, ex.request, ex)
