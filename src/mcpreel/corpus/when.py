"""The one reading of a time a person types (``--since``/``--until`` of ``calls`` and ``sessions``).

People ask for "yesterday's failed call", not for epoch milliseconds, so a bound is any of: a duration
back from now (``30m``, ``2h``, ``2d``, ``1w``, ``90s``), a word (``now``, ``today``, ``yesterday``), a
date (``2026-11-25``) or an ISO time (``2026-11-25T14:00``, with ``Z`` or an offset when it matters).
Words and dates are days of the reader's own clock (a day starts at local midnight), because that is
what "yesterday" means to whoever types it; an ISO time without an offset is local too, one with ``Z``
or an offset is that instant. As an upper bound (``--until``) a day counts whole: ``--until
yesterday`` ends at today's midnight, so ``--since yesterday --until yesterday`` is all of yesterday.

"Now" is a parameter (:class:`Clock`), never read inside the parse: tests freeze it, and a whole
command reads every bound against the same instant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

from mcpreel.errors import UsageError

__all__ = ["Clock", "parse_duration_ms", "parse_when"]

_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 7 * 86_400_000}
_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*", re.I)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

WHEN_HELP = "30m, 2h, 2d, 1w (that long ago), today, yesterday, a date (2026-11-25) or an ISO time"


@dataclass(frozen=True)
class Clock:
    """The instant "now" and the time zone days are counted in (the machine's unless a test says)."""

    now: datetime

    @classmethod
    def local(cls) -> Clock:
        """The machine's clock and time zone, read once."""
        return cls(datetime.now().astimezone())

    @property
    def tz(self) -> tzinfo:
        tz = self.now.tzinfo
        assert tz is not None  # built aware (local() or a test's datetime with a zone)
        return tz

    @property
    def epoch_ms(self) -> int:
        return int(self.now.timestamp() * 1000)

    def midnight_ms(self, day: date) -> int:
        """Epoch ms of ``day``'s local midnight."""
        return int(datetime.combine(day, time(), tzinfo=self.tz).timestamp() * 1000)


def parse_duration_ms(text: str, *, option: str = "--slower-than") -> int:
    """``500ms``, ``2s``, ``1.5m``, ``1h`` -> milliseconds; a bare number is milliseconds."""
    s = text.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", s):
        return int(float(s))
    m = _DURATION.fullmatch(s)
    if m is None:
        raise UsageError(f"{option} {text!r}: give a duration such as 500ms, 2s, 1.5m or 1h")
    return int(float(m.group(1)) * _UNITS_MS[m.group(2).lower()])


def parse_when(text: str, *, clock: Clock | None = None, end: bool = False, option: str = "--since") -> int:
    """A bound a person typed -> epoch ms (see the module's doc). ``end``: an upper bound, where a day
    (a word or a date) counts whole and so ends at the next midnight."""
    clock = clock or Clock.local()
    s = text.strip().lower()
    m = _DURATION.fullmatch(s)
    if m is not None and m.group(2).lower() != "ms":
        return clock.epoch_ms - int(float(m.group(1)) * _UNITS_MS[m.group(2).lower()])
    today = clock.now.astimezone(clock.tz).date()
    day: date | None = None
    if s == "now":
        return clock.epoch_ms
    if s == "today":
        day = today
    elif s == "yesterday":
        day = today - timedelta(days=1)
    elif _DATE.fullmatch(s):
        try:
            day = date.fromisoformat(s)
        except ValueError:
            day = None
            s = ""  # a date that is no date (2026-02-30): said below
    if day is not None:
        return clock.midnight_ms(day + timedelta(days=1) if end else day)
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00")) if s else None
    except ValueError:
        moment = None
    if moment is None:
        raise UsageError(f"{option} {text!r}: give {WHEN_HELP}")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=clock.tz)
    return int(moment.timestamp() * 1000)
