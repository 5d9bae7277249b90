"""One big JSON document read as a stream: its top-level members, and one array member element by element.

A qai session is one JSON object whose ``messages`` array holds the whole session; parsing it at once
holds every message as Python objects (374 MB at 100k messages). :func:`scan` walks the document once in
1 MiB blocks: it parses every top-level member but that array, and finds (and checks) the array's
elements without keeping them; :func:`elements` then yields the array's elements one at a time, each
parsed by :func:`mcpreel._infra.jsonio.loads` (orjson, with its faithful fallbacks), as often as the
session is iterated.

Finding an element's end: in an indented document the ``}`` at the element's own indent is tried first;
else an object element ends at a ``}`` followed by ``,`` and the next object, or by ``]``: the first
such candidate that orjson parses whole is the end (orjson's "unexpected end of data" means the
candidate closed an inner object, such as the last of an array of objects: try the next). That is one C
parse per element in the usual case, done in place in the read buffer, and the parse the element needs
anyway; the walk and each pass over the session parse every element once. An element orjson refuses
for another reason (NaN, a lone surrogate, a syntax error), one with many inner objects, and every
element that is not an object are delimited by an exact scanner (strings skipped by one regex, brackets
counted) and parsed with ``jsonio.loads``.

Anything this reader does not expect (a syntax error, a duplicate array member, trailing data) makes
:func:`scan` return None: the caller then parses the document at once, which names the error exactly as
it always did (or reads what this reader found unusual but valid). So the stream only ever yields what
the whole-document parse would hold.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from mcpreel._infra import jsonio
from mcpreel.errors import InputError
from mcpreel.formats._source import Source

_BLOCK = 1 << 20
_WS = b" \t\r\n"
_CANDIDATE = re.compile(rb"\}[ \t\r\n]*(?:,[ \t\r\n]*\{|\])")  # then the next object, or the end
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|"|[\[\]{}]', re.DOTALL)  # a lone '"': cut by the block end
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SCALAR = re.compile(rb"[^,}\] \t\r\n]+")
_OPEN = frozenset(b"[{")
_MAX_MISSES = 8  # candidate ends tried before the exact scanner takes over for that element
_EOD = "unexpected end of data"


class _Unexpected(Exception):
    """The document is not what the stream reads (the caller parses it whole instead)."""


@dataclass
class Scan:
    """What :func:`scan` found: the top-level members but the array, and where the array starts."""

    members: dict[str, Any]
    offset: int  # file offset of the array's "["
    count: int  # elements in the array
    first_object: dict[str, Any] | None = field(default=None)  # the first element that is an object


class _Reader:
    """A window on the file: ``buf[pos:]`` is what is not consumed yet; ``base`` is ``buf[0]``'s offset."""

    def __init__(self, source: Source, offset: int = 0):
        try:
            self.fh = source.open()
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", path=source.name) from exc
        self.fh.seek(offset)
        self.buf = b""
        self.pos = 0
        self.base = offset
        self.eof = False
        self.indented = True  # the last element ended at its own indent (else that is not tried again)

    def close(self) -> None:
        self.fh.close()

    def more(self) -> bool:
        """Read another block (dropping what is consumed); False at the end of the file."""
        if self.eof:
            return False
        chunk = self.fh.read(max(_BLOCK, len(self.buf) - self.pos))
        if not chunk:
            self.eof = True
            return False
        self.base += self.pos
        self.buf = self.buf[self.pos:] + chunk
        self.pos = 0
        return True

    def peek(self) -> int:
        """The next byte that is not whitespace (consuming the whitespace); -1 at the end."""
        while True:
            buf = self.buf
            n = len(buf)
            p = self.pos
            while p < n and buf[p] in _WS:
                p += 1
            self.pos = p
            if p < n:
                return buf[p]
            if not self.more():
                return -1

    def expect(self, byte: bytes) -> None:
        if self.peek() != byte[0]:
            raise _Unexpected
        self.pos += 1

    def value(self, element: bool = False) -> Any:
        """The next JSON value, parsed (the position moves past it); ``element``: one of
        an array of objects (where the candidate ends are tried)."""
        c = self.peek()
        if c == -1:
            raise _Unexpected
        if element and c == 0x7B:  # "{"
            found = self._object()
            if found is not None:
                return found
        end = self._exact_end()
        text = self.buf[self.pos:end]
        self.pos = end
        try:
            return jsonio.loads(text)
        except (ValueError, UnicodeDecodeError):
            raise _Unexpected from None

    def _object(self) -> Any:
        """An object parsed by orjson at the first candidate end that closes it; None to scan exactly."""
        start = self.pos
        buf = self.buf
        j = start
        while j > 0 and buf[j - 1] in b" \t":
            j -= 1
        indent = buf[j:start] if j > 0 and buf[j - 1] == 0x0A else None
        if self.indented and indent is not None:  # indented: the end is likely "}" at this indent
            m = _closing(indent).search(buf, start)
            if m is not None:
                try:
                    value = _load(buf, start, m.end())
                except orjson.JSONDecodeError:
                    pass
                else:
                    self.pos = m.end()
                    return value
        searched = start
        misses = 0
        while True:
            m = _CANDIDATE.search(self.buf, searched)
            if m is None:
                # read on, however far: an element of 50 MB is searched once, not token by token
                # (only a file that ends the object with no "}" before "," and "{" or "]" holds the rest
                # of the array, and that is no qai session: its next element is not an object)
                if self.eof or not self.more():
                    return None
                searched -= start - self.pos  # more() moved the window; keep the search's place
                start = self.pos
                continue
            end = m.start() + 1
            try:
                value = _load(self.buf, start, end)
            except orjson.JSONDecodeError as exc:
                if exc.msg != _EOD or exc.pos < end - start or (misses := misses + 1) > _MAX_MISSES:
                    return None  # NaN, a lone surrogate, a syntax error, or a maze of inner objects
                searched = end
                continue
            self.pos = end
            # try the indent again only when this element ended at its own (the search above missed
            # it at a block's end); otherwise the layout is another, and searching for it costs
            if indent is not None:  # (None: a block's end cut the line before it, nothing learnt)
                self.indented = self.buf.endswith(b"\n" + indent + b"}", start, end)
            return value

    def _exact_end(self) -> int:
        """The end of the value at ``pos``, by counting brackets outside strings."""
        while True:
            buf = self.buf
            p = self.pos
            c = buf[p]
            if c == 0x22:  # '"'
                m = _STRING.match(buf, p)
                if m is not None:
                    return m.end()
            elif c not in _OPEN:
                m = _SCALAR.match(buf, p)
                if m is not None and (m.end() < len(buf) or self.eof):
                    return m.end()
            else:
                depth = 0
                for t in _TOKEN.finditer(buf, p):
                    b = t.group()
                    if b == b'"':
                        break  # a string the block cuts: read on
                    if b in (b"{", b"["):
                        depth += 1
                    elif b in (b"}", b"]"):
                        depth -= 1
                        if depth == 0:
                            return t.end()
            if not self.more():
                raise _Unexpected


@functools.lru_cache(maxsize=64)
def _closing(indent: bytes) -> re.Pattern[bytes]:
    return re.compile(b"\n" + re.escape(indent) + b"\\}")


def _load(buf: bytes, start: int, end: int) -> Any:
    """``buf[start:end]`` parsed by orjson without copying it (an element may be 50 MB), or by
    :func:`jsonio.loads` when it holds a run of 19 digits (an integer orjson would turn into a float)."""
    value = orjson.loads(memoryview(buf)[start:end])
    if _long_digits(buf, start, end):
        value = jsonio.loads(buf[start:end])
    return value


def _long_digits(buf: bytes, start: int, end: int) -> bool:
    """:func:`jsonio.might_lose_ints` of ``buf[start:end]``, copying 1 MiB at a time (a regex is 10x slower)."""
    i = start
    while i < end:
        j = min(end, i + _BLOCK)
        if jsonio.might_lose_ints(buf[max(start, i - 18):j]):  # 18: a run cut by the previous slice's end
            return True
        i = j
    return False


def _elements(reader: _Reader) -> Iterator[Any]:
    """The elements of the array whose ``[`` is at the reader's position."""
    reader.expect(b"[")
    if reader.peek() == 0x5D:  # "]"
        reader.pos += 1
        return
    while True:
        yield reader.value(element=True)
        c = reader.peek()
        reader.pos += 1
        if c == 0x5D:
            return
        if c != 0x2C:  # ","
            raise _Unexpected



def scan(source: Source, array: str) -> Scan | None:
    """Walk the document once: its members but ``array``, and where that array's elements are.

    None when the document is not a JSON object holding ``array`` once as an array, or is anything
    but well-formed JSON (the caller then parses it whole, for the one exact error or the odd case).
    """
    reader = _Reader(source)
    try:
        reader.more()
        if reader.buf.startswith(b"\xef\xbb\xbf"):  # a BOM first, as Source.document allows it
            reader.pos = 3
        reader.expect(b"{")
        members: dict[str, Any] = {}
        found: Scan | None = None
        if reader.peek() == 0x7D:
            return None  # no array: the whole-document path says so
        while True:
            key = reader.value()
            if not isinstance(key, str):
                raise _Unexpected
            reader.expect(b":")
            if key == array:
                if found is not None or reader.peek() != 0x5B:
                    return None  # twice (the last one counts), or not an array: the whole-document path
                found = Scan(members, reader.base + reader.pos, 0)
                for value in _elements(reader):
                    found.count += 1
                    if found.first_object is None and type(value) is dict:
                        found.first_object = value
            else:
                members[key] = reader.value()
            c = reader.peek()
            reader.pos += 1
            if c == 0x7D:
                break
            if c != 0x2C:
                raise _Unexpected
        if reader.peek() != -1:
            raise _Unexpected
        return found
    except (_Unexpected, IndexError):
        return None
    finally:
        reader.close()


def elements(source: Source, found: Scan) -> Iterator[Any]:
    """The array's elements, parsed one at a time (the file is read again on each call)."""
    reader = _Reader(source, found.offset)
    try:
        n = 0
        for value in _elements(reader):
            n += 1
            yield value
        if n != found.count:
            raise _Unexpected
    except (_Unexpected, IndexError):
        raise InputError("changed while it was read (its messages array is no longer what it was)",
                         path=source.name) from None
    finally:
        reader.close()
