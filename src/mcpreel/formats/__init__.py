"""Every session format, in one table: name -> reader and/or writer, aliases and file-name endings.

:data:`FORMATS` is the one source for what a format is called, which module reads or writes it, and which
output file names choose it. A row (:class:`FormatSpec`) is::

    FormatSpec(name, module, reads, writes, kwargs={}, aliases=(), extensions=(), description="")

- ``module`` is imported on first use and exposes ``read(source, **kwargs) -> Session`` when ``reads``
  and ``write(session, out, **kwargs)`` when ``writes``; ``LOSSES`` (what a write drops, one line) and
  ``KEEPS`` (the session features a write keeps, from which :mod:`mcpreel.convert` names what one session
  loses) when it writes. Several rows may share a module, told apart by ``kwargs`` (the two HTTP envelope
  flavours, the two tool-call traces).
- ``aliases`` are other names ``--from``/``--to`` accept.
- ``extensions`` are the file-name endings that choose this format for an *output* file: a compound
  ending (``".qai.json"``, matched at the end of the name) or an extension (``".har"``). A plain string
  says so in the default words ("the file name ends in .qai.json", "the extension .har"); a
  :class:`Suffix` gives its own words, marks a guess (``obvious=False``) or applies to one session
  transport only. The longest ending that matches wins (:func:`format_for_name`). Reading never looks at
  names: content sniffing is its own step (:mod:`mcpreel.formats.sniff`), done before a reader is chosen.

Readers and writers speak only to :mod:`mcpreel.model`, so N formats need N modules, not N^2 converters.
Adding a reader is one module and one row.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcpreel.errors import FormatError, InputError
from mcpreel.formats._source import Source, encodable_header
from mcpreel.formats.sniff import Detection, detect
from mcpreel.formats.table import (
    FORMATS,
    FormatSpec,
    NameMatch,
    Suffix,
    canonical_name,
    format_for_name,
    get_reader,
    get_writer,
    reader_names,
    writer_names,
)
from mcpreel.model import Kind, Session

__all__ = [
    "FORMATS",
    "Detection",
    "FormatSpec",
    "NameMatch",
    "Source",
    "Suffix",
    "canonical_name",
    "format_for_name",
    "get_reader",
    "get_writer",
    "open_session",
    "reader_names",
    "writer_names",
]


def open_session(
    path: str | Path,
    format: str = "auto",
    *,
    strict: bool = False,
    on_progress: Callable[[int], None] | None = None,
) -> tuple[Session, Detection]:
    """Read any session file: sniff the format unless given, then run its reader."""
    source = Source(path, strict=strict, on_progress=on_progress)
    if format in (None, "", "auto"):
        detection = detect(source)
    else:
        detection = Detection(canonical_name(format), "given", obvious=True)
    try:
        session = get_reader(detection.format)(source)
        if detection.reason == "given":
            _refuse_foreign(session, detection.format, path, strict)
    except InputError as exc:
        if detection.reason != "given" or "the content looks like" in exc.rule:
            raise
        # a forced format that fails at once: say what the content looks like and how to read it
        hint = _looks_like(path, strict, detection.format)
        if not hint:
            raise
        raise type(exc)(exc.rule + hint, path=exc.path, line=exc.line) from exc
    session.info.source_format = session.info.source_format or detection.format
    encodable_header(session.info)
    return session, detection


#: how many message records a forced format's reading is checked on before it is believed
_SHAPE_PROBE = 1000


def _looks_jsonrpc(member: Any) -> bool:
    """A JSON-RPC message, not another tool's record that wraps one (qai's, say, copies the method)."""
    if not isinstance(member, dict):
        return False
    if any(isinstance(v, dict) and "jsonrpc" in v for v in member.values()):
        return False
    return (member.get("jsonrpc") == "2.0" or isinstance(member.get("method"), str)
            or ("id" in member and ("result" in member or "error" in member)))


def _looks_like(path: str | Path, strict: bool, fmt: str) -> str:
    """``; the content looks like X (why): ...`` when the sniffer sees another format than ``fmt``, else ""."""
    try:
        looks = detect(Source(path, strict=strict))
    except Exception as exc:  # the sniffer knows it no better, or names what it is (a HAR, a trace)
        rule = getattr(exc, "rule", None)
        return f"; the content is {rule}" if isinstance(rule, str) and "does not read" in rule else ""
    if looks.format == fmt:
        return ""
    return f"; the content looks like {looks.format} ({looks.reason}): read it as {looks.format} (--format/--from " \
           f"{looks.format}, or auto)"


def _refuse_foreign(session: Session, fmt: str, path: str | Path, strict: bool) -> None:
    """A format forced with ``--format`` must find its shape in the file: a reading in which none of
    the first message records is a JSON-RPC message is another format read as garbage, an input error
    (exit 2) naming what the content looks like, never a trace of unknown calls."""
    seen = 0
    for msg in session:
        if msg.kind != Kind.MESSAGE:
            continue
        if any(_looks_jsonrpc(m) for m in msg.members()) or _looks_jsonrpc(msg.raw):
            return
        seen += 1
        if seen >= _SHAPE_PROBE:
            break
    if seen == 0:
        return  # nothing but stderr, transport events or nothing at all: no verdict on the shape
    hint = _looks_like(path, strict, fmt)
    raise FormatError(f"does not have the {fmt} format's shape: read as {fmt}, none of its first {seen} records is a JSON-RPC "
                      f"message{hint}", path=str(path))
