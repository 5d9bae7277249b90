"""Helpers shared by the readers of other recorders' files (the hub: mcpspy, mcp-cassette, mcp-vcr, ...).

Those readers all do the same few things: refuse a record that is not an object with the one line
naming the record, map the recorder's direction words onto ``in``/``out``, turn a relative offset into
epoch milliseconds, and keep what the model has no place for (in ``Message.extra`` under the format's
own keys, in ``SessionInfo.extra``) so a conversion to the reel loses nothing. Nothing here guesses.
"""

from __future__ import annotations

from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.timeutil import MAX_MS, MIN_MS, ms_from_iso
from mcpreel.formats._source import Source
from mcpreel.model import Kind, Message

__all__ = ["STASH_KEYS", "iso_time", "object_at", "offset_time", "producer_of", "rest", "text_record"]


#: the ``Message.extra`` members under which the hub readers keep a record's recorder-specific facts; the
#: reel writes them back, other formats drop them (and :mod:`mcpreel.convert` says so)
STASH_KEYS = frozenset({"mcpspy", "mcp_cassette", "mcp_vcr", "agent_vcr", "mcpsnoop", "inspector", "mcp_conformance",
                        "glassport", "otlp"})


def object_at(source: Source, value: Any, what: str, where: int) -> dict[str, Any]:
    """``value`` if it is a JSON object, else the one-line error naming ``what`` at ``where``."""
    if type(value) is not dict:
        raise source.fail(f"{what} {where} must be a JSON object, found {jsonio.type_name(value)}", line=where)
    return value


def iso_time(source: Source, value: Any, what: str, where: int | None, *, required: bool = False) -> int | None:
    """An ISO-8601 time in epoch ms; None when absent (an error when ``required`` or not a time)."""
    if value is None:
        if required:
            raise source.fail(f"{what}: a time is required", line=where)
        return None
    if not isinstance(value, str):
        raise source.fail(f"{what} must be an ISO-8601 time string, found {jsonio.type_name(value)}", line=where)
    try:
        return ms_from_iso(value)
    except ValueError:
        raise source.fail(f"{what} is not an ISO-8601 time: {value[:60]!r}", line=where) from None


def offset_time(source: Source, start: int | None, offset: Any, what: str, where: int) -> int | None:
    """``start`` plus a millisecond offset (a number >= 0); None when either is unknown."""
    if offset is None:
        return None
    if (isinstance(offset, bool) or not isinstance(offset, (int, float)) or offset != offset or offset < 0
            or offset == float("inf")):  # YAML's .inf, JSON's Infinity: no time
        # inf shown as inf (JSON would say null), a value JSON has no word for (YAML's bytes) as Python's
        shown = jsonio.dumps_str(offset)[:40] if isinstance(offset, (str, int, list, dict)) else repr(offset)[:40]
        raise source.fail(f"{what} must be a number of milliseconds >= 0, found {shown}", line=where)
    if start is None:
        return None
    t = start + int(offset)
    if not MIN_MS <= t <= MAX_MS:
        raise source.fail(f"{what} puts the message outside years 1 to 9999", line=where)
    return t


def producer_of(recorder: Any, default: str) -> dict[str, Any]:
    """``"mcp-cassette@0.1.2"`` -> ``{"name": "mcp-cassette", "version": "0.1.2"}``."""
    if isinstance(recorder, str) and recorder:
        name, at, version = recorder.rpartition("@")
        if at and name:
            return {"name": name, "version": version}
        return {"name": recorder}
    return {"name": default}


def rest(obj: dict[str, Any], known: frozenset[str] | set[str]) -> dict[str, Any] | None:
    """The members of ``obj`` a reader did not map (None when there are none)."""
    out = {k: v for k, v in obj.items() if k not in known}
    return out or None


def text_record(d: str | None, text: Any, t: int | None, where: int, *, stderr: bool = False,
                extra: dict[str, Any] | None = None, seq: int | None = None,
                ctx: dict[str, Any] | None = None) -> Message:
    """A line that was not JSON-RPC (server stderr, or a non-JSON frame kept as text)."""
    text = text if isinstance(text, str) else jsonio.dumps_str(text)
    if stderr:
        return Message(None, None, t, kind=Kind.STDERR, text=text, source=where, extra=extra, seq=seq)
    return Message(d, None, t, kind=Kind.INVALID, text=text, source=where, extra=extra, seq=seq, ctx=ctx)
