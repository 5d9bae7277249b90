"""Times in the session model are integer milliseconds since the Unix epoch (UTC).

Every format that writes ISO-8601 goes through here, so a session converted between formats keeps
its times to the millisecond.
"""

from __future__ import annotations

from datetime import datetime, timezone

__all__ = ["iso_from_ms", "ms_from_iso", "ms_from_any"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def iso_from_ms(ms: int) -> str:
    """``1747090800123`` -> ``"2025-05-12T23:00:00.123Z"`` (the reel's and seed 004's form)."""
    secs, rem = divmod(int(ms), 1000)
    dt = datetime.fromtimestamp(secs, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{rem:03d}Z"


def ms_from_iso(text: str) -> int:
    """Parse an ISO-8601 time (``Z`` or an offset, any fraction) into epoch milliseconds.

    A time without an offset is taken as UTC. Raises ``ValueError`` for anything else.
    """
    s = text.strip()
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    dt = datetime.fromisoformat(s)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    delta = dt - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def ms_from_any(value: object) -> int | None:
    """A timestamp in any form a session file uses: integer ms, float seconds or ms, ISO string."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        # below 1e11 it can only be seconds (year 5138 in ms)
        return int(round(value * 1000)) if value < 1e11 else int(round(value))
    if isinstance(value, str):
        try:
            return ms_from_iso(value)
        except ValueError:
            try:
                return ms_from_any(float(value))
            except ValueError:
                return None
    return None
