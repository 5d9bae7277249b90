"""A session seen as exchanges: who asked what, what came back, and what the server said meanwhile.

Both directions of replay start here. :func:`build` walks a session once, in recorded order, and
pairs requests with responses by *(direction of the request, id)* (both peers send requests with their
own ids). Every server message that is not a response is placed where it was said:

- before the response of the request it belongs to (``Exchange.before``): progress notifications go
  to the request whose ``progressToken`` they carry; other messages to the request of the same HTTP
  exchange when the recording knows it, else to the request still waiting that came last;
- after a client message when no request was waiting (``ClientItem.after``): the ``list_changed``
  notifications a server sends after ``notifications/initialized``, for example.

Dropped messages (an intercept drop) are left out; an edited request plays its edited payload unless
``original=True``. The client's answers to server requests become :attr:`Cassette.server_exchanges`,
which the replayer uses to answer a server that asks the same again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpreel._infra.correlation import verbatim_key
from mcpreel.model import Kind, Message, Session

__all__ = ["Builder", "Cassette", "ClientItem", "Exchange", "build", "progress_token", "subject"]


def subject(message: dict[str, Any]) -> str | None:
    """What a request is about, for tables: the tool, prompt or resource it names."""
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    for key in ("name", "uri", "ref"):
        value = params.get(key)
        if isinstance(value, str):
            return value
    return None


@dataclass(eq=False)
class Exchange:
    """One request, its response (None if the recording has none) and what the peer said in between."""

    request: dict[str, Any]  # the payload to send / match (edited unless original)
    recorded_request: dict[str, Any]  # the payload as the recording has it
    position: int  # 0-based among the requests of its direction
    source: int | None = None  # line/entry in the file
    t_request: int | None = None
    response: dict[str, Any] | None = None
    t_response: int | None = None
    before: list[dict[str, Any]] = field(default_factory=list)  # server messages before the response
    after: list[dict[str, Any]] = field(default_factory=list)  # server messages after it, none waiting
    answered_before_item: int | None = None  # the client item the response came before (replay pacing)
    ctx: dict[str, Any] | None = None
    unit: str = "line"  # what ``source`` counts in its file: a line, a qai message, an entry

    @property
    def method(self) -> str:
        m = self.request.get("method")
        return m if isinstance(m, str) else ""

    @property
    def subject(self) -> str | None:
        return subject(self.request)

    @property
    def latency_ms(self) -> int | None:
        if self.t_request is None or self.t_response is None:
            return None
        return max(0, self.t_response - self.t_request)

    def label(self) -> str:
        where = f" ({self.unit} {self.source})" if self.source is not None else ""
        name = f" {self.subject}" if self.subject else ""
        return f"request #{self.position + 1}{where} {self.method}{name}"


@dataclass(eq=False)
class ClientItem:
    """One message the client sent: a request (with its exchange) or a notification."""

    message: dict[str, Any]
    exchange: Exchange | None = None
    after: list[dict[str, Any]] = field(default_factory=list)  # server messages it set off (notifications)
    source: int | None = None

    @property
    def method(self) -> str:
        m = self.message.get("method")
        return m if isinstance(m, str) else ""


@dataclass
class Cassette:
    """The exchanges of one session."""

    items: list[ClientItem] = field(default_factory=list)  # the client side, in recorded order
    exchanges: list[Exchange] = field(default_factory=list)  # client requests, in recorded order
    server_exchanges: list[Exchange] = field(default_factory=list)  # server requests + client answers
    prologue: list[dict[str, Any]] = field(default_factory=list)  # server messages before any client one
    skipped_dropped: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def has_initialize(self) -> bool:
        return any(ex.method == "initialize" for ex in self.exchanges)

    def methods(self) -> list[str]:
        seen: dict[str, None] = {}
        for ex in self.exchanges:
            seen.setdefault(ex.method, None)
        return list(seen)


def progress_token(message: dict[str, Any]) -> Any:
    """The ``params._meta.progressToken`` of a request, or None."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get("progressToken") if isinstance(meta, dict) else None


#: what a record's ``source`` counts, per format (line-based formats count lines)
_SOURCE_UNITS = {"reel": "line", "jsonrpc": "line", "qai": "message"}


def build(session: Session, *, original: bool = False) -> Cassette:
    """Pair a session's messages into a :class:`Cassette` (one pass, recorded order)."""
    builder = Builder(session.info.source_format, original=original)
    for rec in session:
        builder.feed(rec)
    return builder.cas


class Builder:
    """:func:`build` record by record. ``keep=False`` is the lean mode of a long replay: the client
    items and exchanges are handed out (:attr:`items`, :attr:`answered`) instead of kept in the
    cassette, and the server's notifications are not placed (the replayer never reads them); the
    server exchanges are kept either way (they are few, and the replayer answers from them)."""

    def __init__(self, source_format: str | None, *, original: bool = False, keep: bool = True) -> None:
        self.cas = Cassette()
        self.original = original
        self.keep = keep
        self.unit = _SOURCE_UNITS.get(source_format or "reel", "entry")
        self.pending_client: dict[tuple[str, Any], Exchange] = {}  # insertion order = request order
        self.pending_server: dict[tuple[str, Any], Exchange] = {}
        self.last_item: ClientItem | None = None
        self.n_items = 0
        self.n_exchanges = 0
        #: lean mode: what this record gave, in order ("item", ClientItem) / ("answered", Exchange)
        self.out: list[tuple[str, Any]] = []

    def feed(self, rec: Message) -> None:
        if rec.kind != Kind.MESSAGE:
            return
        cas = self.cas
        if rec.dropped:
            cas.skipped_dropped += 1
            return
        for member in rec.members():
            payload = member
            if self.original and rec.modified and isinstance(rec.original, dict) and member is rec.raw:
                payload = rec.original
            direction = rec.dir
            is_request = "method" in payload and "id" in payload
            is_note = "method" in payload and "id" not in payload
            is_response = not is_request and not is_note and ("result" in payload or "error" in payload)
            if direction == "in":
                if is_request or is_note:
                    ex = None
                    if is_request:
                        ex = Exchange(payload, member, self.n_exchanges, rec.source, rec.t, ctx=rec.ctx,
                                      unit=self.unit)
                        self.n_exchanges += 1
                        if self.keep:
                            cas.exchanges.append(ex)
                        self.pending_client[verbatim_key(payload["id"])] = ex
                    self.last_item = ClientItem(payload, ex, source=rec.source)
                    self.n_items += 1
                    if self.keep:
                        cas.items.append(self.last_item)
                    else:
                        self.out.append(("item", self.last_item))
                elif is_response:
                    sx = self.pending_server.pop(verbatim_key(payload.get("id")), None)
                    if sx is not None:
                        sx.response, sx.t_response = payload, rec.t
            elif direction == "out":
                if is_response:
                    ex = self.pending_client.pop(verbatim_key(payload.get("id")), None)
                    if ex is not None:
                        ex.response, ex.t_response = payload, rec.t
                        ex.answered_before_item = self.n_items
                        if not self.keep:
                            self.out.append(("answered", ex))
                    continue
                if not (is_request or is_note):
                    continue
                if is_request:
                    sx = Exchange(payload, member, len(cas.server_exchanges), rec.source, rec.t, ctx=rec.ctx,
                                  unit=self.unit)
                    cas.server_exchanges.append(sx)
                    self.pending_server[verbatim_key(payload["id"])] = sx
                if not self.keep:
                    continue
                owner = _owner(payload, rec.ctx, self.pending_client)
                if owner is not None:
                    owner.before.append(payload)
                elif self.last_item is not None:
                    last = self.last_item
                    target = last.exchange.after if last.exchange is not None else last.after
                    target.append(payload)
                else:
                    cas.prologue.append(payload)


def _owner(message: dict[str, Any], ctx: dict[str, Any] | None,
           pending: dict[tuple[str, Any], Exchange]) -> Exchange | None:
    if not pending:
        return None
    if message.get("method") == "notifications/progress":
        params = message.get("params")
        token = params.get("progressToken") if isinstance(params, dict) else None
        if token is not None:
            for ex in reversed(pending.values()):
                if progress_token(ex.request) == token:
                    return ex
    if ctx:
        exchange_id = ctx.get("exchange")
        if exchange_id is not None:
            for ex in reversed(pending.values()):
                if ex.ctx and ex.ctx.get("exchange") == exchange_id:
                    return ex
        if ctx.get("method") == "GET":
            return None  # said on the standalone stream: it belongs to no request
    return next(reversed(pending.values()))
