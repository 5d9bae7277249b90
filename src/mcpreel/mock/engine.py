"""A recording served as an MCP server: the mock engine, free of any I/O.

:class:`Mock` holds one recording (its cassette and match index) and what happened while serving it;
:meth:`Mock.connection` gives one client connection its own cursors (a stdio process has one, an HTTP
server one per ``Mcp-Session-Id``). :meth:`MockConnection.receive` takes a client message and an
``emit`` callback: it matches the request, emits the recorded server notifications and server
requests in their recorded position (progress re-addressed to the incoming ``progressToken``), then
the recorded answer carrying the *incoming* id. When the recording has the server asking the client
something (sampling, roots, elicitation) before it answered, the rest must wait for the client's
reply: ``receive`` then returns a coroutine for the I/O layer to run; everything else is emitted
before ``receive`` returns, which keeps a pipelined stdio client fed at tens of thousands of answers
a second.

Misses follow ``on_miss``: ``error`` answers with a JSON-RPC error naming the closest recorded request
and how it differs, ``fail`` does the same and marks the run failed, ``forward`` passes the request to a
live server (:mod:`mcpreel.mock.forward`) and adds its answer to the recording. A ``ping`` the
recording lacks is answered ``{}``: it is protocol plumbing, not behaviour.

The seam addons plug into: :attr:`Mock.connection_factory` makes each connection (``serve --rules``
plugs a connection whose traffic passes the rules there: :mod:`mcpreel.rules.mock`), and a connection may
emit, besides messages, the two markers the I/O layer (:mod:`mcpreel.mock.server`) carries out:
:class:`RawLine` and :data:`CLOSE`. The mock never imports its addons; the front end that builds a mock
wires them.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from mcpreel._infra import jsonio
from mcpreel._infra.correlation import verbatim_key
from mcpreel.compare.normalize import strip_volatile_meta
from mcpreel.eras import (
    CLIENT_CAPABILITIES_KEY,
    LATEST_LEGACY_PROTOCOL,
    LEGACY,
    LEGACY_PROTOCOLS,
    MODERN,
    MODERN_PROTOCOL,
    SERVER_INFO_KEY,
    client_identity,
    discover_result_from_initialize,
    initialize_result_from_discover,
    protocol_of_request,
    to_legacy_result,
    to_modern_result,
)
from mcpreel.errors import UsageError
from mcpreel.mock.compact import CompactIndex, CompactPlayback
from mcpreel.mock.digests import DigestGuard
from mcpreel.mock.live_operations import ServedStreams, ServedTasks
from mcpreel.mock.matcher import INVALID_PARAMS, Matcher, Miss, RecordingIndex
from mcpreel.operations.cassette import ClientItem, Playback, Turn
from mcpreel.operations.facts import LISTEN, progress_token

__all__ = ["CLOSE", "ON_MISS", "Close", "ConnectionFactory", "Emit", "Mock", "MockConnection", "MockOptions",
           "MockStats", "RawLine"]

ON_MISS = ("error", "fail", "forward")
#: the 2026-07-28 error for a protocol version the server does not support (``data.supported`` lists them)
UNSUPPORTED_VERSION = -32022

Emit = Callable[[dict[str, Any]], None]


class RawLine(bytes):
    """A line to send as it is (not JSON): what a connection emits to put broken data on the wire
    (a rule's ``malformed``); the I/O layer writes it verbatim instead of encoding a message."""


class Close:
    """The marker for "end this connection": stdio closes its stdout, HTTP drops the connection and
    forgets the session (a rule's ``close``). One instance, :data:`CLOSE`, compared by identity."""

    def __repr__(self) -> str:
        return "CLOSE"


CLOSE = Close()

#: what :meth:`Mock.connection` calls to make a connection: the seam an addon plugs into (it returns a
#: :class:`MockConnection` of its own kind, a subclass that sees each message before the mock does)
ConnectionFactory = Callable[["Mock"], "MockConnection"]


class Forwarding(Protocol):
    """What the mock asks of a forwarder (``--on-miss forward``): the engine stays free of I/O and of the client
    stack."""
    async def forward(self, conn: MockConnection, request: dict[str, Any], emit: Emit) -> dict[str, Any] | None:
        """Ask the live server, relaying what it sends meanwhile through ``emit``; None when it could not answer."""


@dataclass
class MockOptions:
    match: str = "method-params"
    repeat: bool = True
    on_miss: str = "error"
    #: how long a recorded server request waits for the client's answer before the mock goes on
    answer_timeout: float = 10.0


@dataclass
class MockStats:
    requests: int = 0
    answered: int = 0
    unanswered: int = 0  # matched a recorded request that the recording never answered
    forwarded: int = 0
    misses: list[Miss] = field(default_factory=list)
    #: recorded server requests (an elicitation a task asked, sampling mid-call) sent to a client, its
    #: answer awaited, and 2026 task input requests a client got in a ``tasks/get``; and the server
    #: requests whose answer never came (what, and of which request)
    asked: int = 0
    ask_unanswered: list[str] = field(default_factory=list)
    #: recorded server requests of the tasks served that no client got to see (yet): key -> what it was
    ask_pending: dict[tuple[int, int, str], str] = field(default_factory=dict)

    def asks_summary(self) -> str | None:
        """What became of the recorded server requests the mock owed its clients (None: it owed none)."""
        if not (self.asked or self.ask_unanswered or self.ask_pending):
            return None
        parts = [f"{self.asked} sent"]
        if self.ask_unanswered:
            parts.append(f"{len(self.ask_unanswered)} not answered by the client ({', '.join(self.ask_unanswered[:3])})")
        if self.ask_pending:
            never = sorted(set(self.ask_pending.values()))
            parts.append(f"{len(self.ask_pending)} never sent ({', '.join(never[:3])}: the client never asked "
                         f"for what the recording had the server ask then)")
        return "recorded server requests: " + ", ".join(parts)


#: requests a client may send that a recording may lack; protocol housekeeping, answered ``{}``
HOUSEKEEPING = frozenset({"ping", "logging/setLevel"})


@dataclass
class RecordedClientSession:
    """One client session of the recording, for serving a client from the session that matches it."""

    index: RecordingIndex | CompactIndex
    era: str
    client: str | None


class Mock:
    """One recording, served to any number of connections.

    Each client is answered in the era it speaks, whatever the recording's era: a handshake-era client
    gets an ``initialize`` answer (the recorded one, or one made from the recorded ``server/discover``)
    at the version it asked for when that is a version of the era, and results without the 2026 members;
    a 2026 client gets ``server/discover`` (recorded, or made from the recorded ``initialize``) and
    results with ``resultType``. Housekeeping a recording lacks (``ping``, ``logging/setLevel``) is
    answered ``{}``. A recording with several client sessions serves each client from the one whose
    client and era match its handshake, falling back to the whole recording.
    """

    def __init__(self, cassette: Playback | CompactPlayback, options: MockOptions | None = None, *,
                 on_event: Callable[[str], None] | None = None, forwarder: Forwarding | None = None,
                 sessions: list[tuple[Playback, str, str | None]] | None = None):
        self.cassette = cassette
        self.options = options or MockOptions()
        if self.options.on_miss not in ON_MISS:
            raise UsageError(f"unknown on-miss policy {self.options.on_miss!r} (known: {', '.join(ON_MISS)})")
        self.index: RecordingIndex | CompactIndex
        if isinstance(cassette, CompactPlayback):  # a long recording kept on disk (mcpreel.mock.compact)
            if cassette.mode != self.options.match:
                raise UsageError(f"the compact index was built for --match {cassette.mode}, not {self.options.match}")
            self.index = cassette.index()
            self.has_initialize = cassette.has_initialize
            self.recorded_discover = cassette.first_discover
            self.recorded_initialize = cassette.first_initialize
        else:
            self.index = RecordingIndex(cassette.exchanges, self.options.match)
            self.has_initialize = cassette.has_initialize
            self.recorded_discover = next((ex for ex in cassette.exchanges if ex.method == "server/discover"
                                           and isinstance((ex.response or {}).get("result"), dict)), None)
            self.recorded_initialize = next((ex for ex in cassette.exchanges if ex.method == "initialize"
                                             and isinstance((ex.response or {}).get("result"), dict)), None)
        self.stats = MockStats()
        self.on_event = on_event or (lambda line: None)
        self.forwarder = forwarder
        #: how a connection is made (None: a plain :class:`MockConnection`); the front end sets it
        self.connection_factory: ConnectionFactory | None = None
        notes: dict[str, list[ClientItem]] = {}
        for item in cassette.items:
            if item.exchange is None:
                notes.setdefault(item.method, []).append(item)
        self._notifications = notes
        self.sessions = [RecordedClientSession(RecordingIndex(cas.exchanges, self.options.match), era, client)
                         for cas, era, client in (sessions or []) if len(sessions or []) > 1]
        #: the client turns of the recording and of each of its sessions (tasks and listen streams look in them)
        self.recorded_turns: list[list[Turn]] = [] if isinstance(cassette, CompactPlayback) else [cassette.exchanges]
        self.recorded_turns += [s.index.exchanges for s in self.sessions if isinstance(s.index, RecordingIndex)]
        #: every 2026-era request of a many-session recording, whatever session it came in: a stateless
        #: request belongs to no session, so it is answered from all of them (in recorded order)
        self.modern_index: RecordingIndex | None = None
        if self.sessions:
            modern = [ex for cas, _, _ in (sessions or []) for ex in cas.exchanges if _is_modern_request(ex.request)]
            modern.sort(key=lambda ex: ex.source if ex.source is not None else -1)
            if modern:
                self.modern_index = RecordingIndex(modern, self.options.match)
        #: the recording refused ``server/discover`` every time it was asked (a handshake-era server): the
        #: mock refuses it as recorded, so a 2026 client falls back to ``initialize`` as it did
        self.discover_refused = self.recorded_discover is None and self.index.has_method("server/discover")
        #: the recording's advertised definition digests and its server's DigestChanged refusal (the drafts)
        self.digests = DigestGuard(turn for turns in self.recorded_turns for turn in turns)
        #: the lists the recording retrieved over HTTP GET (served by the HTTP front end: mock.server)
        self.http_lists = [] if isinstance(cassette, CompactPlayback) else list(cassette.http_lists)

    def session_for(self, handshake: dict[str, Any], era: str) -> RecordedClientSession | None:
        """The recorded session that best matches a client's opening request (None: one session only)."""
        if not self.sessions:
            return None
        info, _ = client_identity(handshake)
        name = info.get("name") if info else None
        version = info.get("version") if info else None
        client = f"{name} {version}" if name and version else name

        def score(s: RecordedClientSession) -> tuple[int, int]:
            return (int(s.era == era), int(client is not None and s.client == client))

        return max(self.sessions, key=score)  # max keeps the first of equals: recorded order

    @property
    def modern_versions(self) -> list[str]:
        """The 2026-era versions the recorded server supports: its recorded ``server/discover`` says which
        (``supportedVersions``); without one, the only version of the era."""
        result = (self.recorded_discover.response or {}).get("result") if self.recorded_discover else None
        versions = result.get("supportedVersions") if isinstance(result, dict) else None
        if isinstance(versions, list) and versions and all(isinstance(v, str) for v in versions):
            return list(versions)
        return [MODERN_PROTOCOL]

    def version_rejection(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The ``-32022`` answer to a 2026-era request at a version the recorded server does not support
        (None: served), with the versions it does, as the 2026-07-28 era has a server say."""
        requested = protocol_of_request(message)
        if requested is None or requested in LEGACY_PROTOCOLS:
            return None
        supported = self.modern_versions
        if requested in supported:
            return None
        return {"jsonrpc": "2.0", "id": message.get("id"),
                "error": {"code": UNSUPPORTED_VERSION, "message": "Unsupported protocol version",
                          "data": {"supported": supported, "requested": requested}}}

    def initialize_answer(self, request: dict[str, Any], recorded: dict[str, Any] | None,
                          recorded_request: dict[str, Any] | None = None) -> dict[str, Any]:
        """The ``initialize`` answer in the handshake era, negotiated as the recorded server would: the
        version the client asked for when the recorded server supports it, else the recorded one."""
        asked = _asked_version(request)
        recorded_asked = _asked_version(recorded_request) if recorded_request is not None else None
        if recorded is not None and "result" in recorded:
            result = dict(to_legacy_result(recorded["result"]))
        elif self.recorded_discover is not None:
            result = initialize_result_from_discover(self.recorded_discover.response["result"],  # type: ignore[index]
                                                     LATEST_LEGACY_PROTOCOL)
        else:
            return self.synthetic_initialize(request)
        recorded_version = result.get("protocolVersion")
        if isinstance(recorded_version, str):  # a recorded answer without one stays as it was
            result["protocolVersion"] = _negotiate(asked, recorded_version, recorded_asked)
        return {**(recorded or {"jsonrpc": "2.0"}), "id": request.get("id"), "result": result}

    def discover_answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """``server/discover`` for a recording that has none: made from its ``initialize`` answer, or from
        the methods it holds."""
        if self.recorded_initialize is not None:
            result = discover_result_from_initialize(self.recorded_initialize.response["result"])  # type: ignore[index]
        else:
            made = self.synthetic_initialize(request)["result"]
            result = discover_result_from_initialize(made)
        return {"jsonrpc": "2.0", "id": request.get("id"), "result": result}

    def synthetic_initialize(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to ``initialize`` for a recording that has none: the client's version, and the
        capabilities the recorded methods imply, so a real client can reach the recorded calls."""
        params = request.get("params")
        version = params.get("protocolVersion") if isinstance(params, dict) else None
        caps: dict[str, Any] = {}
        for method in self.index.methods():
            family = method.split("/", 1)[0]
            if family in ("tools", "resources", "prompts"):
                caps.setdefault(family, {})
            elif method == "logging/setLevel":
                caps["logging"] = {}
            elif method == "completion/complete":
                caps["completions"] = {}
        from mcpreel._version import __version__

        return {"jsonrpc": "2.0", "id": request.get("id"), "result": {
            "protocolVersion": version if isinstance(version, str) else "2025-11-25",
            "capabilities": caps,
            "serverInfo": {"name": "mcpreel-mock", "version": __version__},
            "instructions": "A recording served by mcpreel: it holds no initialize, so this answer is made up.",
        }}

    def connection(self) -> MockConnection:
        """A new client connection with its own cursors, made by :attr:`connection_factory` when an addon
        (``serve --rules``) plugged one in."""
        if self.connection_factory is not None:
            return self.connection_factory(self)
        return MockConnection(self)

    def add_exchange(self, ex: Turn) -> None:
        """A forwarded answer joins the recording: later identical requests are answered from it."""
        assert isinstance(self.cassette, Playback) and isinstance(self.index, RecordingIndex)  # forward: in memory
        ex.position = len(self.cassette.exchanges)
        self.cassette.exchanges.append(ex)
        self.cassette.items.append(ClientItem(ex.request, ex))
        self.index.by_method.setdefault(ex.method, []).append(ex)
        if self.index.mode != "sequential":
            self.index.by_key.setdefault(self.index.key(ex.request), []).append(ex)

    @property
    def compact(self) -> bool:
        """True when the recording is served from disk through a compact index (mcpreel.mock.compact)."""
        return isinstance(self.cassette, CompactPlayback)

    @property
    def recorded_requests(self) -> int:
        """How many client requests the recording holds."""
        return len(self.cassette) if isinstance(self.cassette, CompactPlayback) else len(self.cassette.exchanges)

    @property
    def failed(self) -> bool:
        """Whether the run ends in failure: ``--on-miss fail`` and at least one miss."""
        return self.options.on_miss == "fail" and bool(self.stats.misses)


class MockConnection:
    """One client's session with the mock."""

    def __init__(self, mock: Mock):
        self.mock = mock
        self.matcher = Matcher(mock.index, repeat=mock.options.repeat)
        self._note_used: dict[str, int] = {}
        self._waiting: dict[tuple[str, Any], asyncio.Future[Any]] = {}
        self._relay: dict[tuple[str, Any], Callable[[dict[str, Any]], None]] = {}
        self._ids = itertools.count(1)
        self.client_initialize: dict[str, Any] | None = None  # what the client sent (forwarding replays it)
        self.era: str | None = None  # the era the client speaks, from its first request
        self.fallback: Matcher | None = None  # the whole recording, when a session of it was chosen
        self.whole = self.matcher  # the whole recording's cursors
        self.initialized = False
        self.gone = False  # the client can answer nothing more (its stdin ended)
        # the operations that live across messages: tasks and listen streams (mcpreel.mock.live_operations)
        self.served_tasks = ServedTasks(mock.recorded_turns, mock.stats.ask_pending, self._input_request_sent)
        self.served_streams = ServedStreams(mock.recorded_turns)

    # -- the entry point --------------------------------------------------------------------------
    def receive(self, message: Any, emit: Emit) -> Coroutine[Any, Any, None] | None:
        """Handle one client message; a returned coroutine must be run to finish the answer."""
        if isinstance(message, list):
            return self._batch(message, emit)
        if not isinstance(message, dict):
            emit({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request: not a JSON object"}})
            return None
        method = message.get("method")
        if method is None:
            self._client_answer(message)
            return None
        if "id" not in message:
            self._notification(message, emit)
            return None
        return self._request(message, emit)

    # -- client answers to our server requests ----------------------------------------------------
    def _client_answer(self, message: dict[str, Any]) -> None:
        # live-wire pairing: the live client's answer to a request this connection sent it just now (ids
        # the mock made up, ``mcpreel-N``); a recording's pairs come from the one reading (operations/)
        key = verbatim_key(message.get("id"))
        relay = self._relay.pop(key, None)
        if relay is not None:
            relay(message)
            return
        fut = self._waiting.pop(key, None)
        if fut is not None and not fut.done():
            fut.set_result(message)

    def server_request(self, message: dict[str, Any], emit: Emit) -> asyncio.Future[Any]:
        """Emit a server request under a fresh id; the future gets the client's answer."""
        sid = f"mcpreel-{next(self._ids)}"
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self.gone:
            fut.set_result(None)
        else:
            self._waiting[verbatim_key(sid)] = fut
        emit({**message, "id": sid})
        return fut

    def client_gone(self) -> None:
        """The client can send nothing more (stdin ended): recorded server requests stop waiting for
        answers that cannot come, and the answers they held back go out at once."""
        self.gone = True
        self.served_streams.end_all()
        waiting, self._waiting = self._waiting, {}
        for fut in waiting.values():
            if not fut.done():
                fut.set_result(None)

    def relay_request(self, message: dict[str, Any], emit: Emit, answer: Callable[[dict[str, Any]], None]) -> None:
        """Emit a request that came from elsewhere (a forwarded live server); ``answer`` gets the reply."""
        sid = f"mcpreel-{next(self._ids)}"
        self._relay[verbatim_key(sid)] = answer
        emit({**message, "id": sid})

    # -- notifications ----------------------------------------------------------------------------
    def _notification(self, message: dict[str, Any], emit: Emit) -> None:
        method = message.get("method")
        if method == "notifications/initialized":
            self.initialized = True
        elif method == "notifications/cancelled":
            self.served_streams.cancelled(message)
        recorded = self.mock._notifications.get(method) if isinstance(method, str) else None
        if not recorded:
            return
        n = self._note_used.get(method, 0)  # type: ignore[arg-type]
        if n >= len(recorded):
            return  # recorded side effects happen once per recorded notification
        self._note_used[method] = n + 1  # type: ignore[index]
        for step in recorded[n].after:
            self._emit_step(step, emit)

    def _emit_step(self, step: dict[str, Any], emit: Emit) -> None:
        if "id" in step:
            sid = f"mcpreel-{next(self._ids)}"
            emit({**step, "id": sid})  # nothing waits on the answer (it is ignored when it comes)
        else:
            emit(step)

    # -- requests ---------------------------------------------------------------------------------
    def _handshake(self, message: dict[str, Any], era: str) -> None:
        mock = self.mock
        if self.fallback is None:
            self.whole = self.matcher
        if era == MODERN and mock.modern_index is not None:
            # stateless: every 2026 request of the recording, one set of cursors for the connection (a
            # later server/discover starts no new session, so it resets nothing)
            if not (self.era == MODERN and self.matcher.index is mock.modern_index):
                self.matcher = Matcher(mock.modern_index, repeat=mock.options.repeat)
                self.fallback = self.whole
            self.era = era
            return
        self.era = era
        chosen = mock.session_for(message, era)
        if chosen is not None:
            self.fallback = self.whole  # always the whole recording, never an earlier choice
            self.matcher = Matcher(chosen.index, repeat=mock.options.repeat)

    def _request(self, message: dict[str, Any], emit: Emit) -> Coroutine[Any, Any, None] | None:
        mock = self.mock
        stats = mock.stats
        stats.requests += 1
        method = message.get("method")
        if method == "initialize":
            self.client_initialize = message
            self._handshake(message, LEGACY)
            if not mock.has_initialize:
                emit(mock.initialize_answer(message, None))
                stats.answered += 1
                return None
        elif method == "server/discover" or protocol_of_request(message) is not None:
            refused = mock.version_rejection(message)
            if refused is not None:
                emit(refused)
                stats.answered += 1
                return None
            if method == "server/discover" or self.era is None:
                self._handshake(message, MODERN)
            if method == "server/discover" and mock.recorded_discover is None and not mock.discover_refused:
                emit(mock.discover_answer(message))
                stats.answered += 1
                return None
        elif self.era is None:
            self.era = LEGACY
        if _is_task_request(method):
            served = self.served_tasks.answer(message, emit, self._shape, self.ask)
            if served is not False:
                stats.answered += 1
                return None if served is True else served
        found = self.matcher.match(message)
        if isinstance(found, Miss) and self.fallback is not None:
            wider = self.fallback.match(message)
            if not isinstance(wider, Miss):
                found = wider
        if isinstance(found, Miss):
            stale = mock.digests.refused(message)  # a stale expected digest: refused as the recorded server did
            if stale is not None:
                emit(stale)
                stats.answered += 1
                return None
            if method in HOUSEKEEPING and not mock.index.has_method(method):
                emit({"jsonrpc": "2.0", "id": message["id"], "result": self._shape({})})
                stats.answered += 1
                return None
            if mock.options.on_miss == "forward" and mock.forwarder is not None:
                return self._forward(message, emit)
            found = replace(found, params=message.get("params"))
            stats.misses.append(found)
            mock.on_event(f"miss: {found.method or '(no method)'} id={message.get('id')!r}: {found.reason}")
            emit(found.error(message["id"]))
            return None
        if method == "tasks/update" and "error" not in (found.response or {}):
            self.served_tasks.updated(message)  # the input a task waited for came as recorded
        if found.method == LISTEN and "error" not in (found.response or {}):  # a refused listen: refused again
            stats.answered += 1
            return self.served_streams.serve(found, message, emit, self._answer)
        before = found.before
        if before:
            before = _readdress_progress(before, found.request, message)
            if any("id" in step for step in before):
                return self._answer_slowly(found, before, message["id"], emit)
            for step in before:
                emit(step)
        asked = _input_requests(found)
        if asked is not None:
            if self.era != MODERN:
                return self._answer_in_rounds(found, message["id"], emit)
            # refused only where the recorded server was asked with the capability declared: a recording whose
            # own request lacked it shows the server asking anyway, and that is what it would have done
            recorded_lacked = _undeclared_capability(_modern_capabilities(found.recorded_request), asked) is not None
            if not recorded_lacked and self._refused_undeclared(found, asked, _modern_capabilities(message),
                                                                message["id"], emit):
                return None
        self._answer(found, message["id"], emit)
        return None

    def _refused_undeclared(self, ex: Turn, asked: dict[str, dict[str, Any]], declared: dict[str, Any],
                            request_id: Any, emit: Emit) -> bool:
        """Refuse ``ex`` as the SDK server does (-32021) when the client did not declare the capability one
        of its recorded input requests needs: a server may not ask it, so the recorded server was never
        asked this (a miss). True when refused."""
        undeclared = _undeclared_capability(declared, asked)
        if undeclared is None:
            return False
        key, capability = undeclared
        why = (f"the recorded input request {key!r} of {ex.label()} needs the client's {capability} "
               f"capability, which this client did not declare (a server may not ask it), so the "
               f"recorded server was never asked this")
        miss = Miss(ex.method, MISSING_CLIENT_CAPABILITY, why, ex, params=ex.request.get("params"))
        self.mock.stats.misses.append(miss)
        self.mock.on_event(f"miss: {ex.method} id={request_id!r}: {why}")
        emit(miss.error(request_id))
        return True

    def _shape(self, result: Any, method: str | None = None) -> Any:
        """A recorded result as the client's era has it."""
        return to_modern_result(result, method) if self.era == MODERN else _without_server_info(to_legacy_result(result))

    def _answer(self, ex: Turn, request_id: Any, emit: Emit) -> None:
        stats = self.mock.stats
        self.served_streams.before_answer(ex)
        if ex.response is None:
            stats.unanswered += 1
            self.mock.on_event(f"{ex.label()} has no answer in the recording: none is sent (id={request_id!r})")
        elif ex.method == "initialize" and self.client_initialize is not None and "error" not in ex.response:
            # (a recorded refusal of initialize -- a 2026 server asked it -- is answered as recorded, below)
            stats.answered += 1
            emit(self.mock.initialize_answer({**self.client_initialize, "id": request_id}, ex.response,
                                             ex.recorded_request))
        else:
            stats.answered += 1
            response = ex.response
            if "result" in response:
                shaped = self._shape(response["result"], ex.method)
                if shaped is not response["result"]:
                    response = {**response, "result": shaped}
            emit({**response, "id": request_id})
            self.served_tasks.created(ex)
        for step in ex.after:
            self._emit_step(step, emit)

    def _input_request_sent(self) -> None:
        self.mock.stats.asked += 1

    async def ask(self, step: dict[str, Any], emit: Emit, label: str = "") -> Any:
        """Send a recorded server request to the client and await its answer (at most the answer timeout);
        the answer, or None when none came (counted in :class:`MockStats`)."""
        stats = self.mock.stats
        timeout = self.mock.options.answer_timeout
        stats.asked += 1
        fut = self.server_request(step, emit)
        try:
            reply = await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            reply = None
        if reply is None:
            what = f"{step.get('method')}{f' of {label}' if label else ''}"
            stats.ask_unanswered.append(what)
            self.mock.on_event(f"the client did not answer the recorded {what} within {timeout:g} s; answering anyway")
        return reply

    async def _answer_slowly(self, ex: Turn, before: list[dict[str, Any]], request_id: Any, emit: Emit) -> None:
        for step in before:
            if "id" not in step:
                emit(step)
                continue
            await self.ask(step, emit, ex.label())
        self._answer(ex, request_id, emit)

    async def _answer_in_rounds(self, ex: Turn, request_id: Any, emit: Emit) -> None:
        """A 2026 multi-round-trip answer (``resultType: "input_required"``) said to a handshake-era client,
        as a server of that era says it: each recorded input request goes to the client as a server ->
        client request mid-call, and once it has answered, the recorded retry's answer (the next round,
        or the final result) follows. The retry is the recorded request that carries the round's
        ``requestState``; a client that answers otherwise than the recording did gets a miss (the
        recorded server was never asked that), as does a recording that holds no retry."""
        mock = self.mock
        timeout = mock.options.answer_timeout
        for _ in range(_MAX_ROUNDS):
            asked = _input_requests(ex)
            if asked is None:
                break
            replies: dict[str, Any] = {}
            init = (self.client_initialize or {}).get("params")
            declared = (init.get("capabilities") or {}) if isinstance(init, dict) else None  # None: never seen
            if isinstance(declared, dict) and self._refused_undeclared(ex, asked, declared, request_id, emit):
                return
            for key, request in asked.items():
                fut = self.server_request({"jsonrpc": "2.0", "method": request["method"],
                                           "params": request.get("params", {})}, emit)
                try:
                    reply = await asyncio.wait_for(fut, timeout)
                except TimeoutError:
                    reply = None
                    mock.on_event(f"{ex.label()}: the client did not answer the recorded {request['method']} "
                                  f"within {timeout:g} s")
                replies[key] = reply.get("result") if isinstance(reply, dict) else None
            retry, why = self._recorded_retry(ex, replies)
            if retry is None:
                miss = Miss(ex.method, INVALID_PARAMS, why, ex, params=ex.request.get("params"))
                mock.stats.misses.append(miss)
                mock.on_event(f"miss: {ex.method} id={request_id!r}: {why}")
                emit(miss.error(request_id))
                return
            for step in _readdress_progress(retry.before, retry.request, ex.request):
                if "id" not in step:
                    emit(step)
            ex = retry
        self._answer(ex, request_id, emit)

    def _recorded_retry(self, ex: Turn, replies: dict[str, Any]) -> tuple[Turn | None, str]:
        """The recorded retry of ``ex`` (same method, its answer's ``requestState``), and why there is none
        or why the client's ``replies`` are not the recorded ``inputResponses``."""
        state = ex.response["result"].get("requestState") if ex.response else None
        matchers = [m for m in (self.matcher, self.fallback) if m is not None]
        for matcher in matchers:
            for candidate in matcher.index.candidates(ex.method) or ():
                params = candidate.request.get("params")
                if not isinstance(params, dict) or params.get("requestState") != state or candidate is ex:
                    continue
                recorded = params.get("inputResponses")
                recorded = recorded if isinstance(recorded, dict) else {}
                for key, reply in replies.items():
                    if strip_volatile_meta(reply) != strip_volatile_meta(recorded.get(key)):
                        return None, (f"the client answered the recorded input request {key!r} of {ex.label()} "
                                      f"otherwise than the recording did, so the recorded server was never asked "
                                      f"this: answered {jsonio.dumps_str(reply)[:200]}, recorded "
                                      f"{jsonio.dumps_str(recorded.get(key))[:200]}")
                return candidate, ""
        return None, f"{ex.label()} needed input, and the recording holds no retry of it (no request with its requestState)"

    async def _forward(self, message: dict[str, Any], emit: Emit) -> None:
        mock = self.mock
        assert mock.forwarder is not None
        try:
            answer = await mock.forwarder.forward(self, message, emit)
        except Exception as exc:  # the live server failed: the client still gets an answer
            mock.stats.misses.append(Miss(str(message.get("method")), -32603, f"forwarding failed: {exc}"))
            mock.on_event(f"forward: {message.get('method')} id={message.get('id')!r} failed: {exc}")
            emit({"jsonrpc": "2.0", "id": message["id"],
                  "error": {"code": -32603, "message": f"mcpreel: forwarding to the live server failed: {exc}"}})
            return
        mock.stats.forwarded += 1
        if answer is not None:
            emit({**answer, "id": message["id"]})

    async def _batch(self, batch: list[Any], emit: Emit) -> None:
        answers: list[dict[str, Any]] = []

        def collect(m: dict[str, Any]) -> None:
            if "method" in m:
                emit(m)
            else:
                answers.append(m)

        waits = [c for c in (self.receive(m, collect) for m in batch) if c is not None]
        if waits:
            await asyncio.gather(*waits)
        if answers:
            emit(answers)  # type: ignore[arg-type]
        elif not batch:
            emit({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request: empty batch"}})


def _is_task_request(method: Any) -> bool:
    return method in ("tasks/get", "tasks/result", "tasks/cancel", "tasks/list")


#: rounds of one multi-round-trip request the mock follows before it answers what it has
_MAX_ROUNDS = 32


def _input_requests(ex: Turn) -> dict[str, dict[str, Any]] | None:
    """The input requests of a recorded ``resultType: "input_required"`` answer (None: not one), each a
    ``{"method", "params"}`` the server asks the client."""
    result = (ex.response or {}).get("result")
    if not isinstance(result, dict) or result.get("resultType") != "input_required":
        return None
    asked = result.get("inputRequests")
    if not isinstance(asked, dict):
        return None
    out = {k: v for k, v in asked.items() if isinstance(v, dict) and isinstance(v.get("method"), str)}
    return out or None


#: the 2026 error for a request the client lacks the capability for (what the SDK server answers a
#: handshake-era client that did not declare it, too)
MISSING_CLIENT_CAPABILITY = -32021

#: the client capability each input request a server may send needs
_INPUT_CAPABILITY = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}


def _undeclared_capability(declared: dict[str, Any], asked: dict[str, dict[str, Any]]) -> tuple[str, str] | None:
    """The first input request (key, capability) whose capability the client did not declare (in its
    ``initialize``, or a 2026 request's envelope): a server may not send it (the MCP Inspector CLI declares
    roots, not elicitation, and the SDK server refuses it the call). None when all are declared."""
    for key, request in asked.items():
        capability = _INPUT_CAPABILITY.get(request["method"])
        if capability is not None and not isinstance(declared.get(capability), dict):
            return key, capability
    return None


def _without_server_info(result: Any) -> Any:
    """A 2026 result's ``_meta`` serverInfo (the 2026 era names the server in every result) left out for a
    handshake-era client, which learnt it from ``initialize``: a server of that era sends none (the MCP
    Inspector CLI got it from a 2026 recording, and not from the real server)."""
    if not isinstance(result, dict) or not isinstance(result.get("_meta"), dict) or SERVER_INFO_KEY not in result["_meta"]:
        return result
    meta = {k: v for k, v in result["_meta"].items() if k != SERVER_INFO_KEY}
    return {k: v for k, v in result.items() if k != "_meta"} | ({"_meta": meta} if meta else {})


def _modern_capabilities(request: dict[str, Any]) -> dict[str, Any]:
    """The capabilities a 2026 request's envelope declares (none when it has none)."""
    params = request.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    declared = meta.get(CLIENT_CAPABILITIES_KEY) if isinstance(meta, dict) else None
    return declared if isinstance(declared, dict) else {}


def _is_modern_request(request: dict[str, Any]) -> bool:
    """A request of the 2026 era: ``server/discover``, or one carrying the per-request protocol ``_meta``."""
    return request.get("method") == "server/discover" or protocol_of_request(request) is not None


def _asked_version(request: dict[str, Any]) -> str | None:
    params = request.get("params")
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    return version if isinstance(version, str) else None


def _negotiate(asked: str | None, recorded: str, recorded_asked: str | None) -> str:
    """The version a server that answered ``recorded`` (to ``recorded_asked``) answers to ``asked``: the
    same answer to the same question; the asked version when it is a handshake-era version no newer
    than the recorded answer (the server supports up to that, as far as the recording shows), or any
    one when the recorded answer is not a version the mock knows; else the recorded one."""
    if asked is None or asked == recorded_asked or asked not in LEGACY_PROTOCOLS:
        return recorded
    if recorded not in LEGACY_PROTOCOLS or recorded_asked is None:
        return asked
    if recorded == recorded_asked:  # the server took what it was asked: it may support newer ones too
        return asked
    return asked if LEGACY_PROTOCOLS.index(asked) <= LEGACY_PROTOCOLS.index(recorded) else recorded


def _readdress_progress(steps: list[dict[str, Any]], recorded: dict[str, Any],
                        incoming: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorded steps with the request's progress notifications carrying the *incoming* request's
    ``progressToken`` (a client routes progress by the token it chose; the SDKs use their request id,
    which differs from run to run). A client that sent no token gets no progress: a server reports
    progress only on a token it was given."""
    theirs = progress_token(recorded)
    if theirs is None:
        return steps
    mine = progress_token(incoming)
    out: list[dict[str, Any]] = []
    for step in steps:
        if step.get("method") == "notifications/progress":
            params = step.get("params")
            if isinstance(params, dict) and params.get("progressToken") == theirs:
                if mine is None:
                    continue
                step = {**step, "params": {**params, "progressToken": mine}}
        out.append(step)
    return out
