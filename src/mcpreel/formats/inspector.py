"""MCP Inspector session exports.

Read: ``{"messages":[...]}`` (seed 001), ``{"events":[...]}``, a bare array of JSON-RPC messages, and
the Inspector v2 export, an array of ``{id, timestamp, direction, origin, message, response?,
duration?, clientError?}`` entries in which a request's response is folded into its entry. A folded
response is unfolded right after its request, at ``timestamp + duration``.

Write: the v2 export shape, folding each response into its request's entry (the request the one reading
pairs it with: :class:`~mcpreel.operations.walk.Walker`, within its client session, a reused pending id
first in, first out).
"""

from __future__ import annotations

from typing import Any, BinaryIO

from mcpreel._infra import jsonio
from mcpreel._infra.correlation import correlation_key
from mcpreel._infra.jsonstream import ItemSpool, marker, write_document
from mcpreel._infra.timeutil import MAX_MS, iso_from_ms, ms_from_any
from mcpreel.formats._source import Source
from mcpreel.formats.jsonrpc import DirectionGuesser, own_time
from mcpreel.model import Kind, Message, Session, SessionInfo
from mcpreel.operations.walk import Walker

NAME = "inspector"
LOSSES = "stderr, transport context, invalid frames and intercept edits"
KEEPS = frozenset({"time", "direction"})

_V2_KEYS = ("message", "origin", "direction")


def is_v2_entry(item: Any) -> bool:
    """An Inspector v2 export entry (a message with its origin), told apart from a bare JSON-RPC message."""
    return isinstance(item, dict) and isinstance(item.get("message"), (dict, list)) and (
        "origin" in item or item.get("direction") in ("request", "response", "notification")
    )


def _items(source: Source, doc: Any) -> list[Any]:
    from mcpreel.formats.sniff import foreign_document

    found = foreign_document(doc)
    if found is not None:  # another recorder's document, not an Inspector export
        raise source.fail(f"not an MCP Inspector export but {found.reason} (read it as {found.format})")
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict):
        for key in ("messages", "events"):
            if isinstance(doc.get(key), list):
                return doc[key]
        raise source.fail('expected {"messages":[...]}, {"events":[...]} or an array of messages')
    raise source.fail(f"expected a JSON object or array, found {jsonio.type_name(doc)}")


def _entry_direction(item: dict[str, Any], guess: DirectionGuesser) -> str:
    origin = item.get("origin")
    if origin == "client":
        guess.direction(item["message"])
        return "in"
    if origin == "server":
        guess.direction(item["message"])
        return "out"
    return guess.direction(item["message"])


def _response_time(t: int | None, duration: Any) -> int | None:
    """A folded response's time: its request's plus ``duration`` (ms) when that is a usable number."""
    if t is None or isinstance(duration, bool) or not isinstance(duration, (int, float)) or not 0 <= duration <= MAX_MS:
        return t  # no duration, or NaN, an infinity, a negative or absurd one: the request's time
    return min(t + int(duration), MAX_MS)


def read(source: Source) -> Session:
    """Read an MCP Inspector export (v2 entries or a messages array), guessing directions where the export does not
    say."""
    doc = source.document()
    items = _items(source, doc)
    guess = DirectionGuesser()
    out: list[Message] = []
    for i, item in enumerate(items):
        line = i + 1
        if is_v2_entry(item):
            t = ms_from_any(item.get("timestamp"))
            d = _entry_direction(item, guess)
            extra = {k: v for k, v in item.items() if k not in ("message", "response", "timestamp", "origin", "direction", "duration")}
            out.append(Message(d, item["message"], t, source=line, extra=extra or None))
            resp = item.get("response")
            if isinstance(resp, (dict, list)):
                rt = _response_time(t, item.get("duration"))
                out.append(Message(guess.direction(resp), resp, rt, source=line))
            continue
        if not isinstance(item, (dict, list)):
            raise source.fail(f"MCP event at source line {line} must be a JSON object", line=line)
        out.append(Message(guess.direction(item), item, own_time(item), source=line))
    info = SessionInfo(source_format=NAME, path=source.name)
    if isinstance(doc, dict):
        info.extra = {k: v for k, v in doc.items() if k not in ("messages", "events")}
    return Session(info, out)


def write(session: Session, out: BinaryIO) -> list[str]:
    """The Inspector v2 export: responses folded into their request's entry, with ``duration``.

    Written as a stream: the entries go to a temporary file in order, a request held open there until
    answered (or until another request takes its key), so memory holds only the requests still waiting.
    Folding moves a response ahead of the notifications and server requests that came between its
    request and it; the format cannot keep that order, so the returned loss (for ``convert``'s warning)
    names how many responses moved and ahead of how many messages.
    """
    spool = ItemSpool(jsonio.dumps)
    try:
        moved, overtaken = _entries(session, spool)
        key = marker()
        write_document(out, key, {key: spool.joined(b",")}, indent=False)
    finally:
        spool.close()
    out.write(b"\n")
    if not moved:
        return []
    return [f"the order of {moved} {'response' if moved == 1 else 'responses'} (each is folded into its "
            f"request's entry, ahead of the {overtaken} {'message' if overtaken == 1 else 'messages'} "
            "that came between them)"]


def _entries(session: Session, spool: ItemSpool) -> tuple[int, int]:
    """Every entry into ``spool``; returns how many responses moved, and ahead of how many entries."""
    # a request waiting for its answer, by the walk's number of its exchange: its entry, place and time
    pending: dict[int, tuple[dict[str, Any], int, int | None]] = {}
    walk = Walker(pairing_only=True).feed
    dumps = jsonio.dumps
    hold, settle, append = spool.hold, spool.settle, spool.append
    message_kind = Kind.MESSAGE
    n = 0
    moved = overtaken = 0
    for index, msg in enumerate(session):
        steps = walk(index, msg)
        if msg.kind != message_kind or msg.dropped:
            continue
        t = msg.t
        d = msg.dir
        for step in steps:
            kind = step.kind
            raw = step.member
            if raw is None or kind == "record":
                continue
            if kind == "request" or kind == "notification":
                n += 1
                entry: dict[str, Any] = {
                    "id": n,
                    "timestamp": iso_from_ms(t) if t is not None else None,
                    "direction": "request" if kind == "request" else "notification",
                    "origin": "client" if d == "in" else "server",
                    "message": raw,
                }
                asked = step.exchange
                if asked is not None and (type(asked.id) is int or type(asked.id) is str
                                          or correlation_key(asked.id) is not None):
                    pending[asked.n] = (entry, hold(entry), t)
                else:
                    append(dumps(entry))
                continue
            answered = step.exchange if kind == "response" else None
            found = pending.pop(answered.n, None) if answered is not None else None
            if found is not None:
                req, at, t0 = found
                req["response"] = raw
                between = len(spool) - 1 - at
                if between:
                    moved += 1
                    overtaken += between
                if t0 is not None and t is not None:
                    req["duration"] = t - t0
                settle(at)
            else:
                n += 1
                append(dumps({"id": n, "timestamp": iso_from_ms(t) if t is not None else None, "direction": "response",
                              "origin": "client" if d == "in" else "server", "message": raw}))
    return moved, overtaken
