"""The session model: the one document every reader produces and every writer consumes.

A :class:`Session` is what one MCP client and one MCP server said to each other: a header
(:class:`SessionInfo`) and an ordered stream of :class:`Message` records. Readers of line-based formats
hand out a *re-iterable* stream that reads the file again on each pass, so a multi-gigabyte transcript
never sits in memory whole; readers of JSON documents hold a list.

A record is a JSON-RPC message (``kind="message"``, ``raw`` is the message or a batch array) or one of
the things a faithful recording also keeps: server stderr, a frame that was not JSON, a transport-only
event (an SSE ``endpoint`` event, a 202, a 401 challenge), or another producer's event line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Direction",
    "IdError",
    "Kind",
    "Message",
    "Session",
    "SessionInfo",
    "SCOPE_KEY",
    "WireBlock",
    "clean_ctx",
    "jsonrpc_id",
    "is_server_method",
]


class Direction:
    """Directions as the reel writes them: ``in`` = client -> server, ``out`` = server -> client.

    Plain strings rather than an Enum: they are compared on the hot path of a gigabyte import. What a
    person reads says ``c2s`` / ``s2c`` (:data:`WORDS`): the reel's in/out are the server's point of view
    and read backwards next to other tools' "out = to the server", so they stay inside the file format.
    """

    IN = "in"
    OUT = "out"
    #: the reel's direction -> the one word every surface shows (filter tokens, inspect, docs)
    WORDS = {"in": "c2s", "out": "s2c"}

    @staticmethod
    def opposite(direction: str) -> str:
        """The other direction (who answers a request that went ``in``)."""
        return "out" if direction == "in" else "in"


#: members of a transport context that the writers read as objects (the SSE event's fields); headers of
#: any type are tolerated by every writer, so they are kept as they were
_CTX_OBJECTS = ("sse",)


def clean_ctx(ctx: Any) -> dict[str, Any] | None:
    """A transport context as a reader may keep it: an object whose ``sse`` is an object (or null).

    Readers pass every ``ctx`` they take from a file through here, so the model never holds a value its
    writers cannot write (a ``"sse": 5`` would crash the HAR and envelope writers far from the file that
    held it). A member of the wrong type is dropped; everything else is kept as it was.
    """
    if type(ctx) is not dict:
        return None
    for key in _CTX_OBJECTS:
        if ctx.get(key) is not None and type(ctx[key]) is not dict:
            return {k: v for k, v in ctx.items() if not (k in _CTX_OBJECTS and v is not None and type(v) is not dict)}
    return ctx


class Kind:
    """What a record is: the wire's messages and what else a recorder keeps beside them (stderr, invalid frames,
    transport events), so readers and writers agree on one vocabulary."""
    MESSAGE = "message"  # a JSON-RPC message (or batch) that crossed the wire
    STDERR = "stderr"  # a line the server wrote on stderr (stdio)
    INVALID = "invalid"  # a frame that was not JSON, kept as text
    TRANSPORT = "transport"  # transport-only: SSE endpoint event, 202 with no body, a 401 challenge
    EVENT = "event"  # another producer's non-MCP line (dir:"event"/"command", type:"turn"), kept as is
    BYTES = "bytes"  # raw bytes that crossed a stdio pipe, not newline-delimited JSON (``raw`` is the bytes)


@dataclass(slots=True)
class Message:
    """One record of a session.

    ``t`` is the receive time in epoch milliseconds (None when the source has none); ``seq`` the 0-based
    position the recorder gave it; ``ctx`` the transport context (HTTP method, path, status, headers, SSE
    event/id, stream id). ``modified``/``original`` record an intercept edit, ``dropped`` an intercept
    drop, ``injected`` a message the proxy sent itself (a viewer's or a rule's, or the error answer to a
    dropped request), ``decided_by`` who decided (``viewer``, ``timeout``, ``rules:NAME``). ``source`` is where the record stood in the input (1-based line, array index or entry index,
    as the format defines it) so errors can name it. ``extra`` keeps the members of the source record
    that the model has no place for, so a round trip through the same format loses nothing.
    """

    dir: str | None
    raw: Any = None
    t: int | None = None
    kind: str = Kind.MESSAGE
    seq: int | None = None
    ctx: dict[str, Any] | None = None
    text: str | None = None
    modified: bool = False
    original: Any = None
    dropped: bool = False
    source: int | None = None
    injected: bool = False
    decided_by: str | None = None
    extra: dict[str, Any] | None = None

    # -- JSON-RPC views of ``raw`` (a batch has none of them) --------------------------------------
    @property
    def is_jsonrpc(self) -> bool:
        """Whether the record is one JSON-RPC message (not a batch, not stderr or a transport event)."""
        return self.kind == Kind.MESSAGE and isinstance(self.raw, dict)

    @property
    def is_batch(self) -> bool:
        """Whether the record is a JSON-RPC batch (an array of messages)."""
        return self.kind == Kind.MESSAGE and isinstance(self.raw, list)

    @property
    def method(self) -> str | None:
        """The method a request or notification names; None for answers and anything that is not a message."""
        raw = self.raw
        if isinstance(raw, dict):
            m = raw.get("method")
            return m if isinstance(m, str) else None
        return None

    @property
    def is_request(self) -> bool:
        """A message with a method and an ``id`` member (a null id is a request without correlation)."""
        raw = self.raw
        return isinstance(raw, dict) and "method" in raw and "id" in raw

    @property
    def is_notification(self) -> bool:
        """Whether the record is a notification (a method and no id: nothing answers it)."""
        raw = self.raw
        return isinstance(raw, dict) and "method" in raw and "id" not in raw

    @property
    def is_response(self) -> bool:
        """Whether the record is an answer (a result or an error, no method)."""
        raw = self.raw
        return isinstance(raw, dict) and "method" not in raw and ("result" in raw or "error" in raw)

    @property
    def id(self) -> Any:
        """The JSON-RPC id as sent (None for a notification or anything that is not a message)."""
        raw = self.raw
        return raw.get("id") if isinstance(raw, dict) else None

    def members(self) -> list[dict[str, Any]]:
        """The JSON-RPC messages this record carries: itself, a batch's objects, or none."""
        raw = self.raw
        if self.kind != Kind.MESSAGE:
            return []
        if isinstance(raw, dict):
            return [raw]
        if isinstance(raw, list):
            return [m for m in raw if isinstance(m, dict)]
        return []


@dataclass(slots=True)
class SessionInfo:
    """The header of a session. Every member is optional: formats carry different parts of it."""

    id: str | None = None
    label: str | None = None
    transport: str | None = None  # "stdio" | "sse" | "streamable-http"
    command: list[str] = field(default_factory=list)
    url: str | None = None
    started: int | None = None  # epoch ms
    ended: int | None = None  # epoch ms
    exit_code: int | None = None
    end_reason: str | None = None
    duration_ms: int | None = None
    producer: dict[str, Any] | None = None
    headers: dict[str, Any] | None = None  # session-level transport context (envelope's transport_context)
    metadata: dict[str, Any] = field(default_factory=dict)
    source_format: str | None = None
    path: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # unknown header members, kept for round trips
    notes: list[str] = field(default_factory=list)  # what the reader noticed (e.g. "holds no MCP messages")


#: The member of ``Message.extra`` that names the file a record of a merged session came from
#: (:mod:`mcpreel.merge`): each server numbers its own JSON-RPC ids, so ids correlate within it only.
SCOPE_KEY = "file"


@dataclass(slots=True)
class WireBlock:
    """A run of JSON-RPC payloads: the normalizer's fast lane through a gigabyte transcript.

    ``raws[i]`` is a message (or batch) that crossed the wire; ``dirs``/``times``/``sources`` are
    parallel lists, or None: no direction known (bare JSON-RPC), no time anywhere in the block, and
    consecutive sources starting at ``first_source``. ``scopes`` (None unless some record has one) names
    the server each record belongs to in a merged session (see :data:`SCOPE_KEY`). Intercept-dropped
    and non-message records are never in a block; ``dropped`` counts the intercept-dropped messages left
    out since the previous block (a block may hold no payload for them): the importer, which keeps a
    dropped call in its trace, then reads the records themselves.
    """

    raws: list[Any]
    first_source: int = 1
    sources: list[int] | None = None
    dirs: list[str | None] | None = None
    times: list[int | None] | None = None
    scopes: list[Any] | None = None
    dropped: int = 0


_BLOCK_SIZE = 4096


class WireBlocks:
    """Builds :class:`WireBlock` s of at most ``_BLOCK_SIZE`` payloads: one way for every reader's lane.

    ``add`` a payload that crossed the wire (with its direction, time, source and merged-file scope);
    ``full`` says when to ``take`` the block; ``take`` at the end for the rest (None when empty).
    """

    __slots__ = ("raws", "dirs", "times", "sources", "scopes", "scoped", "dropped")
    #: payloads a block holds at most
    SIZE = _BLOCK_SIZE

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self.raws: list[Any] = []
        self.dirs: list[str | None] = []
        self.times: list[int | None] = []
        self.sources: list[int] = []
        self.scopes: list[Any] = []
        self.scoped = False
        self.dropped = 0  # intercept-dropped messages left out (see :attr:`WireBlock.dropped`)

    def add_record(self, m: Message) -> None:
        """A record as :func:`_blocks_from_messages` takes it (the caller skipped non-messages and drops)."""
        self.raws.append(m.raw)
        self.dirs.append(m.dir)
        self.times.append(m.t)
        self.sources.append(m.source or 0)
        scope = m.extra.get(SCOPE_KEY) if m.extra else None
        if type(scope) is not str:
            scope = None
        self.scopes.append(scope)
        if scope is not None:
            self.scoped = True

    @property
    def full(self) -> bool:
        """Whether the block being filled should be handed out (blocks keep the reader's per-message cost down)."""
        return len(self.raws) >= self.SIZE

    def take(self) -> WireBlock | None:
        """The filled block, and start a new one; None when nothing was added since the last."""
        if not self.raws and not self.dropped:
            return None
        block = WireBlock(self.raws, 0, self.sources, self.dirs, self.times, self.scopes if self.scoped else None,
                          self.dropped)
        self._reset()
        return block


def _blocks_from_messages(messages: Iterable[Message]) -> Iterator[WireBlock]:
    blocks = WireBlocks()
    for m in messages:
        if m.kind != Kind.MESSAGE or m.dropped:
            if m.dropped and m.kind == Kind.MESSAGE:
                blocks.dropped += 1
            continue
        blocks.add_record(m)
        if blocks.full:
            yield blocks.take()  # type: ignore[misc]  # full: never None
    last = blocks.take()
    if last is not None:
        yield last


class Session:
    """A header and a re-iterable stream of messages.

    ``Session(info, messages)`` wraps a list (or any re-iterable); ``Session.streaming(info, factory)``
    wraps a zero-argument callable that returns a fresh iterator each time, for readers that stream
    from disk. Iterating twice reads twice; call :meth:`materialize` when a consumer needs random access.
    """

    __slots__ = ("info", "_messages", "_factory", "_wire")

    def __init__(self, info: SessionInfo | None = None, messages: Iterable[Message] | None = None):
        self.info = info if info is not None else SessionInfo()
        self._messages: list[Message] | None = (
            list(messages) if messages is not None and not isinstance(messages, list) else messages)
        if self._messages is None:
            self._messages = []
        self._factory: Callable[[], Iterator[Message]] | None = None
        self._wire: Callable[[], Iterator[WireBlock]] | None = None

    @classmethod
    def streaming(
        cls,
        info: SessionInfo,
        factory: Callable[[], Iterator[Message]],
        wire: Callable[[], Iterator[WireBlock]] | None = None,
    ) -> Session:
        """A session read from disk on each pass; ``wire`` is the reader's fast lane, if it has one."""
        s = cls(info, [])
        s._messages = None
        s._factory = factory
        s._wire = wire
        return s

    @property
    def wire_lane(self) -> Callable[[], Iterator[WireBlock]] | None:
        """The reader's own fast lane of payloads, or None: for a wrapper that changes no payload."""
        return self._wire

    def wire_blocks(self) -> Iterator[WireBlock]:
        """The JSON-RPC messages that crossed the wire, in blocks (see :class:`WireBlock`)."""
        if self._wire is not None and self._factory is not None:
            return self._wire()
        return _blocks_from_messages(self)

    @property
    def is_streaming(self) -> bool:
        """Whether the messages are read on each pass (a long file) rather than held in a list."""
        return self._factory is not None

    def __iter__(self) -> Iterator[Message]:
        if self._factory is not None:
            return self._factory()
        assert self._messages is not None  # a session without a factory holds its list
        return iter(self._messages)

    @property
    def messages(self) -> list[Message]:
        """All records as a list (reads a streaming session into memory once)."""
        self.materialize()
        return self._messages  # type: ignore[return-value]

    def materialize(self) -> Session:
        """Read a streaming session into memory once (for verbs that need random access); returns the session."""
        if self._factory is not None:
            self._messages = list(self._factory())
            self._factory = None
        return self

    def __repr__(self) -> str:
        n = "streaming" if self._factory is not None else f"{len(self.messages)} records"
        return f"<Session {self.info.label or self.info.id or ''} {self.info.transport or ''} {n}>"


# -- JSON-RPC facts ---------------------------------------------------------------------------------

#: Methods only a server sends (requests and notifications). Everything else with a method goes in.
_SERVER_METHODS = frozenset(
    {
        "sampling/createMessage",
        "roots/list",
        "elicitation/create",
        "notifications/progress",
        "notifications/message",
        "notifications/resources/updated",
        "notifications/resources/list_changed",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/elicitation/complete",
        "notifications/tasks/status",
    }
)

def is_server_method(method: str) -> bool:
    """True for methods a server sends to a client (used to give bare JSON-RPC messages a direction).

    ``notifications/progress`` and ``notifications/cancelled`` can go both ways; progress is far more
    often the server's, cancellation the client's.
    """
    return method in _SERVER_METHODS or (method.startswith("notifications/") and method.endswith("/list_changed"))


class IdError(ValueError):
    """A JSON-RPC id of a type the T1a contract refuses; ``kind`` is ``a boolean``/``an object``/``an array``."""

    def __init__(self, kind: str):
        self.kind = kind
        super().__init__(f"must not be {kind}")


def jsonrpc_id(value: Any) -> str | None:
    """The T1a id contract: strings kept, numbers as their decimal text, null -> no correlation id.

    Raises :class:`IdError` for booleans, objects and arrays.
    """
    if value is None:
        return None
    t = type(value)
    if t is str:
        return value
    if t is int:
        return str(value)
    if t is bool:
        raise IdError("a boolean")
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int):  # int subclasses
        return str(int(value))
    if isinstance(value, dict):
        raise IdError("an object")
    if isinstance(value, list):
        raise IdError("an array")
    if isinstance(value, str):
        return str(value)
    raise IdError(f"a {t.__name__}")
