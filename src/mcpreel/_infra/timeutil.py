"""Times in the session model are integer milliseconds since the Unix epoch (UTC).

Every format that writes ISO-8601 goes through here, so a session converted between formats keeps
its times to the millisecond; and every layer that stamps a record takes the clock from :func:`now_ms`,
so a recorder, a client transport and a writer agree on what "now" is.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime, timedelta

__all__ = ["MAX_MS", "MIN_MS", "duration_ms_text", "iso_from_ms", "ms_from_any", "ms_from_iso", "now_ms"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

#: The times an ISO-8601 string can name (years 1 to 9999 UTC). Readers refuse or ignore times outside
#: this range, so every time in the model can be written back in every format.
MIN_MS = -62_135_596_800_000  # 0001-01-01T00:00:00.000Z
MAX_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z


def now_ms() -> int:
    """The wall clock in epoch milliseconds, the unit of every time in the model (exact: no float)."""
    return time.time_ns() // 1_000_000


def in_range(ms: int) -> bool:
    """True when ``ms`` names a time ISO-8601 can write (see :data:`MIN_MS`, :data:`MAX_MS`)."""
    return MIN_MS <= ms <= MAX_MS


def iso_from_ms(ms: int) -> str:
    """``1747090800123`` -> ``"2025-05-12T23:00:00.123Z"`` (the reel's and seed 004's form).

    The year always has four digits (``strftime`` drops the zeros of years before 1000, which no
    ISO-8601 reader takes back). Raises ``ValueError`` outside years 1 to 9999.
    """
    secs, rem = divmod(int(ms), 1000)
    return f"{iso_second(secs)}.{rem:03d}Z"


def iso_second(secs: int) -> str:
    """Epoch seconds -> ``"2025-05-12T23:00:00"`` (UTC, no zone), computed once per second: the head
    every writer's time text starts with. Raises ``ValueError`` outside years 1 to 9999."""
    head = _ISO_OF_SECOND.get(secs)
    if head is None:
        try:
            dt = _EPOCH + timedelta(seconds=secs)
        except OverflowError:
            raise ValueError(f"time {secs} s is outside years 1 to 9999") from None
        head = dt.replace(tzinfo=None).isoformat()
        if len(_ISO_OF_SECOND) >= _CACHE:
            _ISO_OF_SECOND.clear()
        _ISO_OF_SECOND[secs] = head
    return head


# A session's times fall in few distinct seconds per thousand messages: the date and clock part of a
# time is computed once per second (both ways), the milliseconds added to it (the readers and writers
# of a million-message session convert two million times).
_CACHE = 4096
_ISO_OF_SECOND: dict[int, str] = {}
_MS_OF_SECOND: dict[str, int] = {}
#: "000".."999" -> 0..999: one lookup that also refuses what ``int`` would take ("+12", " 12", "1_2")
_MS_OF_DIGITS: dict[str, int] = {f"{n:03d}": n for n in range(1000)}


def ms_from_iso(text: str) -> int:
    """Parse an ISO-8601 time (``Z`` or an offset, any fraction) into epoch milliseconds.

    A time without an offset is taken as UTC. Raises ``ValueError`` for anything else, and for a time
    whose UTC instant falls outside years 1 to 9999 (``0001-01-01T00:00:00+01:00``).
    """
    if len(text) == 24 and text[19] == "." and text[23] == "Z":
        frac = _MS_OF_DIGITS.get(text[20:23])
        if frac is not None:  # the reel's own form: the second looked up, once parsed
            head = text[:19]
            base = _MS_OF_SECOND.get(head)
            if base is None:
                base = ms_from_iso(head + "Z")
                if len(_MS_OF_SECOND) >= _CACHE:
                    _MS_OF_SECOND.clear()
                _MS_OF_SECOND[head] = base
            return base + frac
    s = text.strip()
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    dt = datetime.fromisoformat(s)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    delta = dt - _EPOCH
    ms = (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
    if not MIN_MS <= ms <= MAX_MS:
        raise ValueError(f"{text!r} is outside years 1 to 9999 in UTC")
    return ms


def ms_from_any(value: object) -> int | None:
    """A timestamp in any form a session file uses: integer ms, float seconds or ms, ISO string.

    None for anything that is not a time, NaN and infinities included, and for a time outside years
    1 to 9999 (which no format could write back).
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if MIN_MS <= value <= MAX_MS else None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        # below 1e11 it can only be seconds (year 5138 in ms)
        ms = value * 1000 if value < 1e11 else value
        return int(round(ms)) if MIN_MS <= ms <= MAX_MS else None  # (a huge one turned into an infinity)
    if isinstance(value, str):
        try:
            return ms_from_iso(value)
        except ValueError:
            try:
                return ms_from_any(float(value))
            except ValueError:
                return None
    return None


def duration_ms_text(ms: float | None, missing: str = "-") -> str:
    """A duration in milliseconds as every surface shows it (inspect rows, replay and diff tables, the
    viewer, the report): whole milliseconds, ``<1`` for a measured time under half a millisecond, and
    ``missing`` when unknown. Recorded times are whole milliseconds; a live measurement is rounded to the
    same precision, so a column never mixes ``3`` and ``2.3`` (issue 29)."""
    if ms is None:
        return missing
    whole = int(ms + 0.5) if ms >= 0 else -int(-ms + 0.5)  # half up, not to even: 12.5 ms is 13
    return "<1" if whole == 0 and ms > 0 else str(whole)
