"""Bare JSON-RPC 2.0 messages: JSONL (one message or batch per line) or one JSON array.

The format has no direction and no time. Direction is inferred: a message with a method goes ``in``
unless only a server sends that method (:func:`mcpreel.model.is_server_method`); a response goes the
opposite way of the pending request it answers. A message's own integer ``timestamp_ms`` or
``timestamp`` member, if any, is taken as its time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from orjson import loads as fast_loads

from mcpreel._infra import jsonio
from mcpreel._infra.timeutil import MAX_MS
from mcpreel.formats._source import Source, iter_json_lines, iter_line_blocks, parse_line
from mcpreel.model import Kind, Message, Session, SessionInfo, WireBlock, is_server_method

NAME = "jsonrpc"
LOSSES = "direction, time, transport context, stderr and intercept edits"
KEEPS: frozenset[str] = frozenset()


class DirectionGuesser:
    """Gives bare messages a direction; remembers pending server requests by id to place responses.

    A response answers a pending *server* request with its id if there is one (the client's answer
    to sampling nested in a tool call), else a client request: so it goes ``in`` or ``out``. The
    normalizer applies the same rule to messages without a direction.

    Not pairing: this id map only guesses the *direction* of a bare message while the file is read,
    before any session exists to pair in; which request an answer answers is the one reading's
    (:class:`~mcpreel.operations.walk.Walker`), once the directions are known.
    """

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending: dict[str, int] = {}

    def direction(self, raw: Any) -> str:
        """A message's direction when the file does not say: requests and answers pair up, so who asked tells who
        answered."""
        if isinstance(raw, list):
            first = next((m for m in raw if isinstance(m, dict)), None)
            d = self.direction(first) if first is not None else "in"
            for m in raw[1:]:
                if isinstance(m, dict):
                    self.direction(m)
            return d
        if not isinstance(raw, dict):
            return "in"
        method = raw.get("method")
        if method is not None:
            d = "out" if isinstance(method, str) and is_server_method(method) else "in"
            rid = raw.get("id")
            if d == "out" and isinstance(rid, (str, int, float)) and not isinstance(rid, bool):
                key = str(rid)
                self._pending[key] = self._pending.get(key, 0) + 1
            return d
        rid = raw.get("id")
        if isinstance(rid, (str, int, float)) and not isinstance(rid, bool):
            key = str(rid)  # the normalizer's key (model.jsonrpc_id): "7" for 7, "1.5" for 1.5
            n = self._pending.get(key)
            if n:
                if n == 1:
                    del self._pending[key]
                else:
                    self._pending[key] = n - 1
                return "in"
        return "out"


def own_time(raw: Any) -> int | None:
    """A message's own integer ``timestamp_ms`` (else ``timestamp``) in epoch ms, if it has a usable one."""
    if isinstance(raw, dict):
        t = raw.get("timestamp_ms")
        if t is None:
            t = raw.get("timestamp")
        if type(t) is int and 0 <= t <= MAX_MS:
            return t
    return None


def _from_array(source: Source, doc: list[Any]) -> list[Message]:
    guess = DirectionGuesser()
    out = []
    for i, raw in enumerate(doc):
        if not isinstance(raw, (dict, list)):
            raise source.fail(f"message at index {i + 1} must be a JSON object, found {jsonio.type_name(raw)}", line=i + 1)
        out.append(Message(guess.direction(raw), raw, own_time(raw), source=i + 1))
    return out


_SUB_BLOCK = 1024  # lines: a block's parsed objects stay in the CPU cache until the normalizer is done


def _wire(source: Source) -> Iterator[WireBlock]:
    """The fast lane: each 1 MiB of lines parsed straight into :class:`WireBlock`\\ s of 1024 lines.

    No direction is given (the normalizer infers it as :class:`DirectionGuesser` does); times only
    when the block mentions ``"timestamp``. Blank lines, bad lines and long integers take the careful
    path, which also names the line of an error.
    """
    for first, all_lines, chunk in iter_line_blocks(source):
        loads: Callable[[bytes], Any] = fast_loads
        if source.strict or jsonio.might_lose_ints(chunk):
            loads = jsonio.loads_strict if source.strict else jsonio.loads
        timed = b'"timestamp' in chunk
        for offset in range(0, len(all_lines), _SUB_BLOCK):
            lines = all_lines[offset : offset + _SUB_BLOCK]
            start = first + offset
            raws = None
            sources = None
            if all(lines):
                try:
                    raws = [loads(line) for line in lines]
                except (ValueError, UnicodeDecodeError):
                    raws = None
            if raws is None:
                raws, sources = [], []
                n = start - 1
                for line in lines:
                    n += 1
                    if not line or line.isspace():
                        continue
                    raws.append(parse_line(source, line, n))
                    sources.append(n)
            times = [own_time(raw) for raw in raws] if timed else None
            yield WireBlock(raws, start, sources, None, times)


def _stream(source: Source) -> Iterator[Message]:
    guess = DirectionGuesser()
    direction = guess.direction
    for lineno, raw in iter_json_lines(source):
        if type(raw) is dict:
            t = raw.get("timestamp_ms")
            if t is None:
                t = raw.get("timestamp")
            yield Message(direction(raw), raw, t if type(t) is int and 0 <= t <= MAX_MS else None, source=lineno)
        elif type(raw) is list:
            yield Message(direction(raw), raw, None, source=lineno)
        else:
            raise source.fail(f"line {lineno} must be a JSON-RPC object or batch array, found {jsonio.type_name(raw)}", line=lineno)


def is_array_document(source: Source) -> bool:
    """True when the file is one JSON array (possibly pretty-printed), not JSONL of batch lines."""
    head = source.head().lstrip()
    if not head.startswith(b"["):
        return False
    first_line, more = source.first_line()
    if not more:
        return True  # a single line: an array of messages
    try:
        jsonio.loads(first_line)
    except (ValueError, UnicodeDecodeError):
        return True  # the first line is not a complete value: one multi-line document
    return False


def _refuse_foreign(source: Source) -> None:
    """Line 1 of another recorder's JSONL (an MCPSpy event, an mcp-cassette header...) is not a message."""
    from mcpreel.formats.sniff import foreign_record

    line, _more = source.first_line()
    try:
        first = jsonio.loads(line)
    except (ValueError, UnicodeDecodeError):
        return  # the stream names the line
    found = foreign_record(first)
    if found is not None:
        raise source.fail(f"line 1 is not a JSON-RPC message but {found.reason} (read it as {found.format})", line=1)


def read(source: Source) -> Session:
    """Read bare JSON-RPC messages (JSONL or one array), refusing another recorder's file rather than reading it as
    garbage."""
    info = SessionInfo(source_format=NAME, path=source.name)
    if source.head().lstrip()[:1] == b"{":
        _refuse_foreign(source)
    if is_array_document(source):
        doc = source.document()
        if not isinstance(doc, list):
            raise source.fail("expected a JSON array of JSON-RPC messages")
        return Session(info, _from_array(source, doc))
    return Session.streaming(info, lambda: _stream(source), lambda: _wire(source))


def write(session: Session, out: BinaryIO, *, array: bool = False) -> None:
    """One message per line (batches stay one line); ``array=True`` writes one JSON array."""
    dumps = jsonio.dumps
    if array:
        out.write(b"[")
        first = True
        for msg in session:
            if msg.kind != Kind.MESSAGE or msg.dropped:
                continue
            out.write(b"" if first else b",\n")
            out.write(dumps(msg.raw))
            first = False
        out.write(b"]\n")
        return
    for msg in session:
        if msg.kind == Kind.MESSAGE and not msg.dropped:
            out.write(dumps(msg.raw) + b"\n")
