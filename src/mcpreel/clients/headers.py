"""``--header 'Name: value'``: the one reading of an HTTP header a person gives on the command line.

Every verb that talks to an HTTP server takes it (``check``, ``replay``, ``contract``, ``audit``), and
all of them read it here, so one spelling works everywhere and a mistake gets the same one line
(exit 2) everywhere, before anything is sent. Besides the ``Name: value`` shape it refuses what the
HTTP client would only refuse later with a traceback, or send as a broken request: a name that is
not an HTTP token (RFC 9110: letters, digits and ``!#$%&'*+-.^_`|~``), a value with a line break, NUL
or another control character, and text that is not ASCII (a header's bytes are ASCII on the wire).
Spaces around the name and the value are dropped; an empty value is allowed; the last of two
headers with the same name wins.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mcpreel.errors import UsageError

__all__ = ["parse_header", "parse_headers"]

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: what a header value may hold: visible ASCII, space and tab
_VALUE = re.compile(r"[\t\x20-\x7e]*")


def parse_header(text: str) -> tuple[str, str]:
    """``"Name: value"`` -> ``("Name", "value")``; a :class:`~mcpreel.errors.UsageError` of one line
    naming the header and the rule it breaks otherwise."""
    name, sep, value = text.partition(":")
    name, value = name.strip(" \t"), value.strip(" \t")
    if not sep:
        raise UsageError(f"--header {text!r}: expected 'Name: value'")
    if not name:
        raise UsageError(f"--header {text!r}: the header has no name; expected 'Name: value'")
    if not _TOKEN.fullmatch(name):
        raise UsageError(f"--header {text!r}: {name!r} is not an HTTP header name "
                         "(letters, digits and !#$%&'*+-.^_`|~ only)")
    if not _VALUE.fullmatch(value):
        bad = next(c for c in value if not _VALUE.fullmatch(c))
        what = "text that is not ASCII" if ord(bad) > 0x7F else "a line break or control character"
        raise UsageError(f"--header {text!r}: the value holds {what} ({bad!r}), which an HTTP header cannot carry")
    return name, value


def parse_headers(values: Iterable[str]) -> dict[str, str]:
    """Every ``--header`` given, in order (the last of two with the same name wins)."""
    return dict(parse_header(v) for v in values)
