"""The client sessions inside one recording, and the protocol era each one speaks.

A recording is often more than one conversation: an HTTP proxy left running records every client that
connects (the Inspector CLI opens a session per call, langchain-mcp-adapters one per tool call), and a
merged reel holds one session per source file. Replaying or serving such a file as one stream gives
wrong verdicts, so the verbs that judge work session by session.

Where one session ends and the next begins, from the most to the least certain evidence:

1. the source file of a merged reel (``Message.extra["file"]``);
2. the HTTP session: ``Mcp-Session-Id`` (Streamable HTTP, handshake era) or the legacy endpoint's
   ``session_id`` / ``sessionId`` query parameter, found on the exchange's request or answer;
3. the start of a conversation in recorded order: a client ``initialize`` or ``server/discover``. A
   ``server/discover`` that a handshake-era server refused (``-32601``), followed by ``initialize``, is one
   session: that is how a 2026 client falls back.

The era of a session:

- ``modern`` (2026-07-28, stateless): a ``server/discover`` that succeeded, or requests carrying
  ``_meta["io.modelcontextprotocol/protocolVersion"]`` and no ``initialize``;
- ``legacy`` (the handshake era, 2024-11-05 .. 2025-11-25): an ``initialize``;
- ``unknown``: neither (a fragment of a session, a bare JSON-RPC log).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcpreel._infra.record_spool import RecordSpool
from mcpreel.drafts import carries_dpop as dpop_bound
from mcpreel.eras import LEGACY, MODERN, MODERN_PROTOCOL, UNKNOWN, client_identity, era_name, protocol_of_request
from mcpreel.model import SCOPE_KEY, Kind, Message, Session, SessionInfo

#: the requests that start a conversation
_STARTS = ("initialize", "server/discover")
_MESSAGE = Kind.MESSAGE

__all__ = ["ClientSession", "Describer", "describe_session", "split_sessions", "split_sessions_streaming"]


@dataclass
class ClientSession:
    """One client's conversation inside a recording."""

    index: int  # 1-based, in order of first appearance
    records: list[Message] = field(default_factory=list)
    era: str = UNKNOWN
    protocol: str | None = None
    client: str | None = None  # "name version" from clientInfo
    http_session: str | None = None  # Mcp-Session-Id or the legacy endpoint's session id
    source_file: str | None = None  # the file of a merged reel
    requests: int = 0  # client requests
    dpop: bool = False  # its requests carried a DPoP proof (SEP-1932): the recording cannot be re-signed

    def label(self) -> str:
        """How a report names the client session: its index, era, client and where it came from."""
        parts = [f"session {self.index}", era_name(self.era, self.protocol)]
        if self.client:
            parts.append(self.client)
        if self.source_file:
            parts.append(self.source_file)
        if self.http_session:
            parts.append(f"Mcp-Session-Id {self.http_session}")
        return ", ".join(parts)

    #: a streaming split's way to read this conversation's records again (see split_sessions_streaming)
    stream: Callable[[], Iterator[Message]] | None = field(default=None, repr=False, compare=False)

    def as_session(self, info: SessionInfo) -> Session:
        """This conversation alone, as a session of its own (the file's header, these records)."""
        if self.stream is not None:
            return Session.streaming(info, self.stream)
        return Session(info, self.records)


class _Splitter:
    """One pass over the records; sessions open at conversation starts and close never (a late answer
    still finds its session through the keys it carries)."""

    def __init__(self, keep: bool = True) -> None:
        #: keep each session's records (False: only describe them as they pass, for flat memory)
        self.keep = keep
        self.describers: dict[int, Describer] = {}
        self.counts: dict[int, int] = {}
        self.sessions: list[ClientSession] = []
        self.current: dict[Any, ClientSession] = {}  # group (source file) -> the session open in it
        self.by_http: dict[tuple[Any, str], ClientSession] = {}
        self.exchange_http: dict[Any, str] = {}  # HTTP exchange -> its session id, once seen
        self.pending_discover: dict[Any, ClientSession | None] = {}  # group -> a session holding only a discover
        #: the fast lane's session: where a plain record of a file with no sources and no HTTP goes without
        #: the general questions (the session open there, unless a ``server/discover`` in it still waits for
        #: its fallback ``initialize``; None when there is none, or the records are kept). The one predicate
        #: of :meth:`place`'s fast lane and of the lean walk's (``Walker(pairing_only=True)``); only the
        #: general path changes what it depends on, and it sets it again at its end.
        self.lane: ClientSession | None = None

    def new(self, group: Any, source_file: str | None) -> ClientSession:
        s = ClientSession(len(self.sessions) + 1, source_file=source_file)
        self.sessions.append(s)
        self.current[group] = s
        return s

    def place(self, rec: Message, http_ids: dict[Any, str]) -> ClientSession:
        """Put ``rec`` in its session (opening one if it starts a conversation); return that session."""
        extra = rec.extra
        if not extra and rec.ctx is None:
            # the fast lane: a lone JSON-RPC object of a file with no sources and no HTTP, in the session
            # already open (:attr:`lane`), that starts none (what nearly every record of a big file is); it
            # ends where the general path would, with the same counts
            open_now = self.lane
            raw = rec.raw
            if open_now is not None and type(raw) is dict and rec.kind == _MESSAGE:
                request = rec.dir == "in" and "method" in raw and "id" in raw
                if not (request and raw["method"] in _STARTS):
                    index = open_now.index
                    settled = self.describers[index]
                    if not settled.done:
                        settled.feed(rec)
                    self.counts[index] += 1
                    if request:
                        open_now.requests += 1
                    return open_now
        group = extra.get(SCOPE_KEY) if extra else None
        source_file = group if isinstance(group, str) else None
        http_id = _http_session_of(rec, http_ids) if rec.ctx is not None else None
        target: ClientSession | None = None
        if http_id is not None:
            target = self.by_http.get((group, http_id))
        asks = rec.kind == _MESSAGE and rec.dir == "in"
        starts: list[str] = []
        requests = 0  # the requests among the record's messages
        members: Sequence[dict[str, Any]] = ()
        if asks:
            raw = rec.raw
            # read once: this runs for every record of a big file (a lone object without a list around it)
            members = (raw,) if type(raw) is dict else rec.members()
            for m in members:
                if "method" in m and "id" in m:
                    requests += 1
                    method = m["method"]
                    if method in _STARTS:
                        starts.append(method)
        if target is None and starts:
            cur = self.current.get(group)
            fallback = (starts[0] == "initialize" and cur is not None and self.pending_discover.get(group) is cur)
            if fallback:
                target = cur
            elif cur is not None and cur.requests == 0 and cur.http_session in (None, http_id):
                target = cur  # notifications or stderr before the first request: the same conversation
            else:
                target = self.new(group, source_file)
            self.pending_discover[group] = target if starts[0] == "server/discover" else None
        if target is None:
            target = self.current.get(group) or self.new(group, source_file)
        elif target is not self.current.get(group) and http_id is None:
            self.current[group] = target
        if http_id is not None and target.http_session is None:
            target.http_session = http_id
            self.by_http[(group, http_id)] = target
        if asks and self.pending_discover and self.pending_discover.get(group) is target:
            if any(m.get("method") not in ("server/discover", None) and "id" in m for m in members):
                self.pending_discover[group] = None
        if self.keep:
            target.records.append(rec)
        else:
            index = target.index
            describer = self.describers.get(index)
            if describer is None:
                describer = self.describers[index] = Describer(target)
            describer.feed(rec)
            self.counts[index] = self.counts.get(index, 0) + 1
        if requests:
            target.requests += requests
        if not self.keep:
            open_now = self.current.get(None)
            self.lane = None if open_now is None or self.pending_discover.get(None) is open_now else open_now
        return target


def _header(headers: Any, name: str) -> str | None:
    if not isinstance(headers, dict):
        return None
    for k, v in headers.items():
        if isinstance(k, str) and k.lower() == name and isinstance(v, str):
            return v
    return None


def _query_session(path: Any) -> str | None:
    if not isinstance(path, str) or "?" not in path:
        return None
    query = parse_qs(urlsplit(path).query)
    for key in ("session_id", "sessionId"):
        if query.get(key):
            return query[key][0]
    return None


def _direct_http_session(rec: Message) -> str | None:
    """The HTTP session a record names itself (its headers, its path, an ``endpoint`` event's URI)."""
    ctx = rec.ctx
    if not isinstance(ctx, dict):
        return None
    found = _header(ctx.get("headers"), "mcp-session-id") or _query_session(ctx.get("path"))
    if not isinstance(found, str):
        found = None
    if found is None:
        sse = ctx.get("sse")
        if isinstance(sse, dict) and sse.get("event") == "endpoint":
            found = _query_session(ctx.get("data") if isinstance(ctx.get("data"), str) else rec.text)
    return found


def _http_session_of(rec: Message, http_ids: dict[Any, str]) -> str | None:
    """The HTTP session of a record: the one it names, else the one its HTTP exchange (or stream) was
    seen to name. What a record names is learnt into ``http_ids`` as the records pass, so one pass finds
    what a first pass over the whole file would (the record that names a session comes first in its
    exchange, but for an ``initialize``, which opens a conversation of its own anyway)."""
    found = _direct_http_session(rec)
    ctx = rec.ctx
    if found is not None:
        if isinstance(ctx, dict):
            for key in ("exchange", "stream"):
                value = ctx.get(key)
                if isinstance(value, (int, str)):
                    http_ids.setdefault(value, found)
        return found
    if isinstance(ctx, dict):
        for key in ("exchange", "stream"):
            value = ctx.get(key)
            if isinstance(value, (int, str)) and value in http_ids:
                return http_ids[value]
    return None


def _exchange_sessions(records: Iterable[Message]) -> dict[Any, str]:
    """HTTP exchange -> session id, from any record of the exchange that names it (the answer to an
    ``initialize`` carries the id its request could not)."""
    out: dict[Any, str] = {}
    for rec in records:
        ctx = rec.ctx
        if not isinstance(ctx, dict):
            continue
        found = _direct_http_session(rec)
        if found is None:
            continue
        for key in ("exchange", "stream"):
            value = ctx.get(key)
            if value is not None and isinstance(value, (int, str)):
                out.setdefault(value, found)
    return out


class Describer:
    """The era, protocol and client of one conversation, found as its records pass (in order)."""

    __slots__ = ("session", "discover_ok", "initialize", "negotiated", "request_protocol", "done")

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.discover_ok = False
        self.initialize = False
        self.negotiated = False  # the answer to the initialize named the protocol
        self.request_protocol: str | None = None
        self.done = False  # nothing a later record says can change what is known

    def feed(self, rec: Message) -> None:
        """Take one record of the session and learn its era and client from its opening requests."""
        if self.done or rec.kind != _MESSAGE:
            return
        session = self.session
        if rec.dir == "in" and rec.ctx and not session.dpop:
            session.dpop = dpop_bound(rec.ctx)
        raw = rec.raw
        d = rec.dir
        for m in (raw,) if type(raw) is dict else rec.members():
            method = m.get("method")
            if d == "in" and "id" in m and isinstance(method, str):
                if method == "initialize":
                    self.initialize = True
                    params = m.get("params")
                    if not isinstance(params, dict):
                        params = {}
                    info = params.get("clientInfo")
                    if isinstance(info, dict) and session.client is None:
                        session.client = _client_name(info)
                    version = params.get("protocolVersion")
                    if isinstance(version, str) and session.protocol is None:
                        session.protocol = version
                elif self.initialize and session.client is not None:
                    continue  # after a handshake that named the client, requests change nothing
                else:
                    if self.request_protocol is None:  # counts only without a handshake
                        self.request_protocol = protocol_of_request(m)
                    if session.client is None:
                        info, _ = client_identity(m)
                        if isinstance(info, dict):
                            session.client = _client_name(info)
            elif d == "out" and method is None and "method" not in m:
                result = m.get("result")
                if isinstance(result, dict):
                    # each answer is looked at only for what is still unknown (a million of them pass here)
                    if (not self.discover_ok and isinstance(result.get("supportedVersions"), list)
                            and "capabilities" in result):
                        self.discover_ok = True
                    if self.initialize and not self.negotiated:
                        version = result.get("protocolVersion")
                        if isinstance(version, str):
                            session.protocol = version  # the negotiated one wins over the asked one
                            self.negotiated = True
        if self.negotiated and session.client is not None:
            self.done = True

    def finish(self) -> None:
        """Settle the era once the session is read (a handshake, a discover, or what its requests named)."""
        session = self.session
        if self.initialize:
            session.era = LEGACY
        elif self.discover_ok or self.request_protocol is not None:
            session.era = MODERN
            session.protocol = self.request_protocol or MODERN_PROTOCOL
        else:
            session.era = UNKNOWN


def _describe(session: ClientSession) -> None:
    """Fill in the era, protocol and client of one conversation from its messages."""
    describer = Describer(session)
    for rec in session.records:
        describer.feed(rec)
    describer.finish()


def _client_name(info: dict[str, Any]) -> str | None:
    name = info.get("name")
    if not isinstance(name, str):
        return None
    version = info.get("version")
    return f"{name} {version}" if isinstance(version, str) and version else name


def split_sessions(session: Session) -> list[ClientSession]:
    """The client sessions of a recording, in order of first appearance, each with its era.

    A recording with one conversation gives one :class:`ClientSession` holding every record.
    """
    records = session.messages
    http_ids = _exchange_sessions(records) if session.info.transport != "stdio" else {}
    splitter = _Splitter()
    for rec in records:
        splitter.place(rec, http_ids)
    sessions = [s for s in splitter.sessions if s.records]
    for i, s in enumerate(sessions, 1):
        s.index = i
        _describe(s)
    return sessions or [ClientSession(1)]


#: above this many client sessions, reading the file again for each one costs more than holding it
STREAMED_SESSIONS = 8


def split_sessions_streaming(session: Session) -> list[ClientSession]:
    """:func:`split_sessions` in flat memory: the sessions hold no records; each one's
    :meth:`ClientSession.as_session` reads the file again and keeps the records the same split gives it.

    One pass to split (two when HTTP exchanges must be mapped to their session ids); a file of one
    conversation is read back whole, unfiltered. A file of more than :data:`STREAMED_SESSIONS`
    sessions (a proxy that recorded a session per call) is read once more into a spool on disk, each
    session's records read back from it (:class:`~mcpreel._infra.record_spool.RecordSpool`): a pass over
    the whole file per session would make the work grow with the square of the file, holding it in
    memory with the file.
    """
    stdio = session.info.transport == "stdio"
    http_ids = _exchange_sessions(session) if not stdio else {}
    splitter = _Splitter(keep=False)
    for rec in session:
        splitter.place(rec, http_ids)
    sessions = [s for s in splitter.sessions if splitter.counts.get(s.index)]
    if not sessions:
        return [ClientSession(1)]
    spool = _spooled(session, http_ids) if len(sessions) > STREAMED_SESSIONS else None
    for i, s in enumerate(sessions, 1):
        splitter.describers[s.index].finish()
        if spool is not None:
            s.stream = spool.reader(s.index)
        elif len(sessions) > 1:
            s.stream = _records_of(session, http_ids, s.index)
        else:
            s.stream = session.__iter__
        s.index = i
    return sessions


def _spooled(session: Session, http_ids: dict[Any, str]) -> RecordSpool:
    """Every record of ``session`` in a spool, grouped by the session the same split puts it in."""
    spool = RecordSpool()
    splitter = _Splitter(keep=False)
    for rec in session:
        spool.append(splitter.place(rec, http_ids).index, rec)
    return spool


def _records_of(session: Session, http_ids: dict[Any, str], index: int) -> Callable[[], Iterator[Message]]:
    """The records the split puts in the session numbered ``index`` (before renumbering), read again."""
    def records() -> Iterator[Message]:
        splitter = _Splitter(keep=False)
        for rec in session:
            if splitter.place(rec, http_ids).index == index:
                yield rec
    return records


def describe_session(session: Session) -> ClientSession:
    """The whole recording taken as one conversation, with its era (for a session already split).

    Reads the session as a stream (its records are not kept: ``records`` is empty).
    """
    whole = ClientSession(1)
    describer = Describer(whole)
    for rec in session:
        describer.feed(rec)
    describer.finish()
    return whole
