"""Session data made safe to print on a terminal: the one escaping of control characters.

A recorded tool name, error message or server name is another program's text, and a terminal obeys the
control characters in it: ``ESC ] 52`` sets the clipboard (OSC 52), ``ESC [ 2 J`` clears the screen,
``ESC ] 0 ;`` retitles the window, a carriage return overwrites what the line said, the bidi controls
make a line read otherwise than it is. Every renderer that prints session data on a terminal passes it
through :func:`terminal_safe` (the CLI's console and its line writers do so for every string they print),
which writes each such character as a visible escape (``\\x1b``, ``\\x9b``, ``\\u202e``) instead.
"""

from __future__ import annotations

import re

__all__ = ["json_terminal_safe", "terminal_safe"]

#: C0 (but tab and newline), DEL, C1, the line/paragraph separators, the bidi embeddings, overrides and
#: isolates, and lone surrogates (UTF-8 cannot encode them)
_UNSAFE_MULTILINE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
#: the same and tab and newline too: one line stays one line
_UNSAFE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str, *, multiline: bool = True) -> str:
    """``text`` with every character a terminal would obey written as a visible escape.

    ``multiline`` keeps newlines and tabs (a renderer's deliberate multi-line text: a payload block);
    without it they are escaped too, so one field stays on one line. Text with nothing to escape is
    returned as it came (the same object: the common case costs one regex search)."""
    pattern = _UNSAFE_MULTILINE if multiline else _UNSAFE_LINE
    if pattern.search(text) is None:
        return text
    return pattern.sub(_escape, text)


#: what JSON leaves raw that a terminal obeys: DEL, C1, the separators, the bidi controls (JSON escapes C0 itself)
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def json_terminal_safe(document: str) -> str:
    """A JSON document with the characters a terminal obeys and JSON leaves raw written as ``\\uXXXX``
    escapes: the same JSON value, safe to print."""
    if _UNSAFE_IN_JSON.search(document) is None:
        return document
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group(0)):04x}", document)
