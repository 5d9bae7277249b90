"""The four record modes, as vcrpy users know them: a validated enum whose error lists the valid values.

Kept free of heavy imports: the pytest plugin loads it in every pytest run.
"""

from __future__ import annotations

from enum import StrEnum

from mcpreel.errors import UsageError

__all__ = ["RecordMode"]


class RecordMode(StrEnum):
    """What a cassette run does with the real server."""

    #: the cassette exists: replay it, a request it lacks fails; it is missing: record it
    ONCE = "once"
    #: replay what the cassette has; ask the real server what it lacks and add the answers to it
    NEW_EPISODES = "new_episodes"
    #: replay only: a request the cassette lacks fails, and so does a missing cassette
    NONE = "none"
    #: always record, replacing the cassette (only once the new recording ended cleanly)
    ALL = "all"

    @classmethod
    def values(cls) -> tuple[str, ...]:
        """The modes' names, in order (for choices and the error that lists them)."""
        return tuple(m.value for m in cls)

    @classmethod
    def parse(cls, value: RecordMode | str) -> RecordMode:
        """``"once"``, ``"new_episodes"`` (or ``"new-episodes"``), ``"none"``, ``"all"``; else a
        :class:`~mcpreel.errors.UsageError` naming the valid values."""
        if isinstance(value, RecordMode):
            return value
        if isinstance(value, str):
            try:
                return cls(value.strip().lower().replace("-", "_"))
            except ValueError:
                pass
        raise UsageError(f"unknown record mode {value!r} (valid: {', '.join(cls.values())})")
