"""An input file as the readers see it: its path, how to parse it, and where errors point.

Readers of JSON documents call :meth:`Source.document` (parsed once and cached, so sniffing and
reading share one parse). Readers of line formats call :func:`iter_json_lines`, which reads in large
blocks (the floor of every import's speed) and keeps memory flat whatever the file's size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

import orjson

from mcpreel._infra import jsonio
from mcpreel._infra.fileio import open_regular
from mcpreel.errors import FormatError, InputError

__all__ = ["Source", "iter_json_lines", "iter_line_blocks", "line_limit", "parse_line"]

_UNSET = object()
_BLOCK = 1 << 20
#: the longest line a reader holds (a whole document read at once counts as one line); None: no limit.
#: ``index`` sets it (:func:`line_limit`): a 2 GB line in a corpus folder must not take 2 GB to refuse.
_LINE_LIMIT: ContextVar[int | None] = ContextVar("mcpreel_line_limit", default=None)


@contextmanager
def line_limit(limit: int | None) -> Iterator[None]:
    """Within the block, a line (or a document read whole) longer than ``limit`` bytes is refused in one
    line as soon as that many bytes are read (memory stays bounded), not read on to its end."""
    token = _LINE_LIMIT.set(limit)
    try:
        yield
    finally:
        _LINE_LIMIT.reset(token)


def _too_long(source: Source, what: str, line: int | None = None) -> InputError:
    limit = _LINE_LIMIT.get()
    return InputError(f"{what} is longer than {limit:,} bytes, the most a line may be here", path=source.name,
                      line=line)


class Source:
    """One input file. ``name`` is the path as the user gave it (it appears in every error)."""

    def __init__(
        self,
        path: str | Path,
        *,
        strict: bool = False,
        on_progress: Callable[[int], None] | None = None,
    ):
        self.path = Path(path)
        self.name = str(path)
        self.strict = strict
        self.on_progress = on_progress
        self._doc: Any = _UNSET
        self._head: bytes | None = None
        self._head_raw = 0  # bytes of the file the head holds (with its BOM)
        self._first: tuple[bytes, bool] | None = None
        #: one streaming pass over a big JSON document per array member, shared by sniffing and reading
        #: (:mod:`mcpreel.formats._jsondoc`; None: read it whole)
        self.scanned: dict[str, Any] = {}

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", path=self.name) from exc

    def open(self) -> BinaryIO:
        """The file opened to read: a regular file only (:func:`~mcpreel._infra.fileio.open_regular`: a
        FIFO or device put in its place is refused, never waited on); OSError as ``open`` raises it."""
        return open_regular(self.path)

    def read_bytes(self) -> bytes:
        limit = _LINE_LIMIT.get()
        try:
            with self.open() as fh:
                data = fh.read() if limit is None else fh.read(limit + 1)
        except IsADirectoryError as exc:
            raise InputError("is a directory, not a session file", path=self.name) from exc
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", path=self.name) from exc
        if limit is not None and len(data) > limit:
            raise _too_long(self, "the document (read whole)")
        if self.on_progress is not None:
            self.on_progress(len(data))
        return data

    def head(self, size: int = 65536) -> bytes:
        """The first bytes of the file (for sniffing), BOM removed."""
        if self._head is None:
            try:
                with self.open() as fh:
                    self._head = fh.read(size)
            except IsADirectoryError as exc:
                raise InputError("is a directory, not a session file", path=self.name) from exc
            except OSError as exc:
                raise InputError(f"cannot read: {exc.strerror or exc}", path=self.name) from exc
            self._head_raw = len(self._head)
            if self._head.startswith(b"\xef\xbb\xbf"):
                self._head = self._head[3:]
        return self._head

    def first_line(self) -> tuple[bytes, bool]:
        """The first non-blank line (no newline) and whether anything but whitespace follows it.

        Usually both are in :meth:`head`; a first line longer than the head (a JSONL transcript that
        opens with a large message) is read on to its end, so a sniffer never mistakes a cut line for
        a whole document.
        """
        if self._first is None:
            head = self.head()
            line, nl, rest = head.lstrip().partition(b"\n")
            if (nl and rest.strip()) or self._head_raw < 65536:
                self._first = (line, bool(rest.strip()))
            else:
                self._first = self._read_first_line(line, nl, rest)
        return self._first

    def _read_first_line(self, line: bytes, nl: bytes, rest: bytes) -> tuple[bytes, bool]:
        try:
            fh = self.open()
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", path=self.name) from exc
        limit = _LINE_LIMIT.get()
        with fh:
            fh.seek(self._head_raw)
            parts = [line]
            held = len(line)
            while not nl:
                chunk = fh.read(_BLOCK)
                if not chunk:
                    return b"".join(parts), False  # the whole file is one line
                cut = chunk.find(b"\n")
                if cut < 0:
                    parts.append(chunk)
                    held += len(chunk)
                    if limit is not None and held > limit:
                        raise _too_long(self, "the first line", 1)
                    continue
                parts.append(chunk[:cut])
                nl, rest = b"\n", chunk[cut + 1 :]
            while not rest.strip():
                rest = fh.read(_BLOCK)
                if not rest:
                    return b"".join(parts), False
            return b"".join(parts), True

    def document(self) -> Any:
        """The whole file parsed as one JSON document (cached)."""
        if self._doc is _UNSET:
            data = self.read_bytes()
            if data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]
            if not data.strip():
                raise InputError("empty file: no session in it", path=self.name)
            try:
                self._doc = jsonio.loads_strict(data) if self.strict else jsonio.loads(data)
            except (ValueError, UnicodeDecodeError) as exc:
                line = getattr(exc, "lineno", None)
                where = f" on line {line}" if line else ""
                raise InputError(f"invalid JSON{where}: {jsonio.error_reason(exc)}", path=self.name, line=line) from exc
        return self._doc

    def set_document(self, doc: Any) -> None:
        self._doc = doc

    def fail(self, rule: str, line: int | None = None) -> FormatError:
        """A :class:`FormatError` for this file (to ``raise``)."""
        return FormatError(rule, path=self.name, line=line)


def encodable_header(info: Any) -> None:
    """Escape lone surrogates in a session header's strings (command words, label, URL, id, transport),
    whatever reader filled it: the net under every reader (:func:`mcpreel.formats.open_session`), so no
    writer meets one in a file name, a URL it quotes or a printed line."""
    info.command = [encodable(c) if type(c) is str else c for c in info.command]
    for name in ("label", "url", "id", "transport"):
        value = getattr(info, name)
        if type(value) is str:
            setattr(info, name, encodable(value))


def encodable(text: str) -> str:
    """``text`` with lone surrogates (JSON allows ``"\\ud800"``; UTF-8 cannot hold it) escaped as ``\\ud800``.

    Session-level strings (a command, a URL, a label) end up in file names, ids, headers and printed
    lines, where a lone surrogate is fatal; escaping it when the file is read keeps every writer safe.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def session_text(value: Any) -> str | None:
    """A session-level string member as a reader keeps it: a string (escaped by :func:`encodable`) or None."""
    return encodable(value) if isinstance(value, str) else None


def session_url(source: Source, value: Any, where: str) -> str | None:
    """A session's URL as a reader keeps it: None when absent or not a string, refused when not a URL.

    The writers split the URL (HAR entries, envelope paths, cassettes); ``http://[]:8000`` would crash
    each of them, so the reader that meets it names it instead.
    """
    url = session_text(value)
    if url is None:
        return None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a bad port raises only when asked for
    except ValueError as exc:
        raise source.fail(f"{where} is not a valid URL ({exc}): {url!r}") from exc
    return url


def iter_line_blocks(source: Source) -> Iterator[tuple[int, list[bytes], bytes]]:
    """Yield ``(first_line_number, lines, chunk)`` per 1 MiB block; lines hold no newline."""
    progress = source.on_progress
    done = 0
    lineno = 0
    try:
        fh = source.open()
    except IsADirectoryError as exc:
        raise InputError("is a directory, not a session file", path=source.name) from exc
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=source.name) from exc
    limit = _LINE_LIMIT.get()
    with fh:
        tail = b""
        first = True
        while True:
            chunk = fh.read(_BLOCK)
            if first:
                first = False
                if chunk.startswith(b"\xef\xbb\xbf"):
                    chunk = chunk[3:]
            if chunk:
                data = tail + chunk if tail else chunk
                lines = data.split(b"\n")
                tail = lines.pop()
                if limit is not None and len(data) > limit and (len(tail) > limit
                                                                or any(len(ln) > limit for ln in lines)):
                    long = next((i for i, ln in enumerate(lines) if len(ln) > limit), len(lines))
                    raise _too_long(source, f"line {lineno + long + 1}", lineno + long + 1)
            else:
                lines = [tail] if tail else []
                data = tail
            if lines:
                yield lineno + 1, lines, data
                lineno += len(lines)
            if progress is not None and chunk:
                done += len(chunk)
                progress(done)
            if not chunk:
                return


def parse_line(source: Source, line: bytes, lineno: int) -> Any:
    """Parse one line faithfully, or raise the one-line error naming it."""
    try:
        return (jsonio.loads_strict if source.strict else jsonio.loads)(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"invalid JSON on line {lineno}: {jsonio.error_reason(exc)}", path=source.name, line=lineno) from exc


def iter_json_lines(source: Source) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, value)`` for every non-blank line (1-based).

    An unparsable line raises :class:`InputError` naming the line. Integers beyond 64 bits, NaN and
    lone surrogates are kept (see :mod:`mcpreel._infra.jsonio`): a block holding a long digit run is parsed
    with the faithful path, every other block with orjson directly.
    """
    fast = orjson.loads
    faithful = jsonio.loads_strict if source.strict else jsonio.loads
    for first, lines, chunk in iter_line_blocks(source):
        loads = faithful if (source.strict or jsonio.might_lose_ints(chunk)) else fast
        n = first - 1
        for line in lines:
            n += 1
            try:
                value = loads(line)
            except (ValueError, UnicodeDecodeError):
                if not line or line.isspace():  # a blank line fails to parse: skipped, looked at only then
                    continue
                value = parse_line(source, line, n)
            yield n, value
