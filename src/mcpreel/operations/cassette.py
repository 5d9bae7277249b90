"""A session as replay and the mock play it (a :class:`Playback`): the client's turns in order, each with what
came back.

Both directions of replay read a session through :class:`~mcpreel.operations.walk.Walker` (the one
reading) and keep what playing needs: every client message in recorded order (:class:`ClientItem`), each
client request with its answer and what the server said before it (:class:`Turn`), the server's own
requests with the client's answers (which the replayer gives a server that asks the same again), and the
operation each turn belongs to (a task's polls, a multi-round-trip retry, a listen stream).

Placement of server messages: progress notifications go to the request whose ``progressToken`` they
carry; a task's messages to its latest exchange; other messages to the request of the same HTTP exchange
when the recording knows it, else to the request still waiting that came last (``Turn.before``); after a
client message when no request was waiting (``ClientItem.after``): the ``list_changed`` notifications a
server sends after ``notifications/initialized``, for example; before any client message: the prologue.

Dropped messages (an intercept drop) are left out; an edited request plays its edited payload unless
``original=True``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpreel.model import Message, Session
from mcpreel.operations.facts import subject
from mcpreel.operations.http_lists import ListGet, ListGets
from mcpreel.operations.walk import Exchange, Operation, Walker

__all__ = ["Builder", "ClientItem", "Playback", "Turn", "build"]


@dataclass(eq=False)
class Turn:
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
    wire: Exchange | None = None  # the exchange of the one reading (its operation, role, marks)

    @property
    def method(self) -> str:
        """The request's method ("" when it has none, so it can key a table)."""
        m = self.request.get("method")
        return m if isinstance(m, str) else ""

    @property
    def subject(self) -> str | None:
        """What the request names: the tool, prompt or resource (None for the others)."""
        return subject(self.request)

    @property
    def latency_ms(self) -> int | None:
        """How long the answer took (None without both times); never negative, whatever the clocks said."""
        if self.t_request is None or self.t_response is None:
            return None
        return max(0, self.t_response - self.t_request)

    @property
    def operation(self) -> Operation | None:
        """The operation this turn opened in the one reading of the session (a task, a multi-round request), if any."""
        return self.wire.operation if self.wire is not None else None

    @property
    def role(self) -> str:
        """What it is to its operation (``call``, ``round``, ``poll``, ``result``, ``cancel``, ``listen``)."""
        return self.wire.role if self.wire is not None else "call"

    def label(self) -> str:
        """How a miss message or a report names this request so a person can find it in the file."""
        where = f" ({self.unit} {self.source})" if self.source is not None else ""
        name = f" {self.subject}" if self.subject else ""
        return f"request #{self.position + 1}{where} {self.method}{name}"


@dataclass(eq=False)
class ClientItem:
    """One message the client sent: a request (with its turn) or a notification."""

    message: dict[str, Any]
    exchange: Turn | None = None
    after: list[dict[str, Any]] = field(default_factory=list)  # server messages it set off (notifications)
    source: int | None = None
    t: int | None = None  # when the client sent it (epoch ms; replay --pace recorded keeps the gaps)

    @property
    def method(self) -> str:
        """The method the client sent ("" when it has none)."""
        m = self.message.get("method")
        return m if isinstance(m, str) else ""


@dataclass
class Playback:
    """The turns of one session, ready to play (what replay sends and the mock answers with); kept on disk
    behind an index instead for a long recording (:class:`~mcpreel.mock.compact.CompactPlayback`)."""

    items: list[ClientItem] = field(default_factory=list)  # the client side, in recorded order
    exchanges: list[Turn] = field(default_factory=list)  # client requests, in recorded order
    server_exchanges: list[Turn] = field(default_factory=list)  # server requests + client answers
    prologue: list[dict[str, Any]] = field(default_factory=list)  # server messages before any client one
    skipped_dropped: int = 0
    notes: list[str] = field(default_factory=list)
    #: lists retrieved over HTTP GET (the drafts' ``?mcp_list=``): not JSON-RPC, kept beside the turns
    http_lists: list[ListGet] = field(default_factory=list)

    @property
    def has_initialize(self) -> bool:
        """Whether the recording holds a handshake (else the mock makes up an ``initialize`` answer)."""
        return any(ex.method == "initialize" for ex in self.exchanges)

    def methods(self) -> list[str]:
        """The recorded methods in order of first appearance (what a miss lists as known)."""
        seen: dict[str, None] = {}
        for ex in self.exchanges:
            seen.setdefault(ex.method, None)
        return list(seen)


#: what a record's ``source`` counts, per format (line-based formats count lines)
_SOURCE_UNITS = {"reel": "line", "jsonrpc": "line", "qai": "message"}


def build(session: Session, *, original: bool = False) -> Playback:
    """Pair a session's messages into a :class:`Playback` (one pass, recorded order)."""
    builder = Builder(session.info.source_format, original=original)
    for rec in session:
        builder.feed(rec)
    return builder.cas


class Builder:
    """:func:`build` record by record. ``keep=False`` is the lean mode of a long replay: the client
    items and turns are handed out (:attr:`out`) instead of kept in the cassette, and the server's
    notifications are not placed (the replayer never reads them); the server turns are kept either way
    (they are few, and the replayer answers from them)."""

    def __init__(self, source_format: str | None, *, original: bool = False, keep: bool = True,
                 http_ids: dict[Any, str] | None = None) -> None:
        self.cas = Playback()
        self.keep = keep
        self.unit = _SOURCE_UNITS.get(source_format or "reel", "entry")
        self.original = original
        self.walker = Walker(http_ids)
        self.index = 0
        self.turns: dict[int, Turn] = {}  # walk exchange n -> its turn, while unanswered
        self.last_item: ClientItem | None = None
        self.n_items = 0
        self.n_exchanges = 0
        #: lean mode: what this record gave, in order ("item", ClientItem) / ("answered", Turn)
        self.out: list[tuple[str, Any]] = []
        self.list_gets = ListGets()
        self.list_gets.lists = self.cas.http_lists

    def feed(self, rec: Message) -> None:
        """Take one record of the session in order; the walk pairs requests with answers as they come."""
        index = self.index
        self.index += 1
        if rec.kind == "transport":
            self.list_gets.feed(index, rec)
        if rec.dropped and rec.kind == "message":
            self.cas.skipped_dropped += 1
        for step in self.walker.feed(index, rec):
            kind = step.kind
            msg = step.msg
            if msg is None or msg.dropped or kind in ("record", "other", "operation", "orphan"):
                continue
            payload = step.member
            assert payload is not None
            if msg.dir == "in":
                self._client(kind, step, payload)
            else:
                self._server(kind, step, payload)

    def _turn(self, ex: Exchange, position: int) -> Turn:
        play = ex.original if self.original and ex.original is not None else ex.request
        return Turn(play, ex.request, position, ex.source, ex.t, ctx=ex.ctx, unit=self.unit, wire=ex)

    def _client(self, kind: str, step: Any, payload: dict[str, Any]) -> None:
        cas = self.cas
        if kind == "request":
            ex = step.exchange
            turn = self._turn(ex, self.n_exchanges)
            self.n_exchanges += 1
            if self.keep:
                cas.exchanges.append(turn)
            self.turns[ex.n] = turn
            self._item(ClientItem(turn.request, turn, source=ex.source, t=ex.t))
        elif kind == "notification":
            self._item(ClientItem(payload, None, source=step.msg.source, t=step.msg.t))
        elif kind == "response":
            answered = self.turns.pop(step.exchange.n, None)
            if answered is not None:
                answered.response, answered.t_response = payload, step.msg.t

    def _item(self, item: ClientItem) -> None:
        self.last_item = item
        self.n_items += 1
        if self.keep:
            self.cas.items.append(item)
        else:
            self.out.append(("item", item))

    def _server(self, kind: str, step: Any, payload: dict[str, Any]) -> None:
        cas = self.cas
        if kind == "response":
            turn = self.turns.pop(step.exchange.n, None)
            if turn is not None:
                turn.response, turn.t_response = payload, step.msg.t
                turn.answered_before_item = self.n_items
                if not self.keep:
                    self.out.append(("answered", turn))
            return
        if kind == "request":
            ex = step.exchange
            turn = self._turn(ex, len(cas.server_exchanges))
            cas.server_exchanges.append(turn)
            self.turns[ex.n] = turn
        if not self.keep:
            return
        owner = step.related if kind == "notification" else self._owner_of_request(step)
        turn_owner = self.turns.get(owner.n) if owner is not None and owner.dir == "in" else None
        if turn_owner is not None:
            turn_owner.before.append(payload)
        elif self.last_item is not None:
            last = self.last_item
            target = last.exchange.after if last.exchange is not None else last.after
            target.append(payload)
        else:
            cas.prologue.append(payload)

    @staticmethod
    def _owner_of_request(step: Any) -> Exchange | None:
        """The client exchange a server request was nested under (its operation's latest), or None."""
        op = step.operation
        if op is None or step.exchange is None or step.exchange.role != "server":
            return None
        for ex in reversed(op.exchanges):
            if ex.response is None:
                return ex
        return op.exchanges[-1]
