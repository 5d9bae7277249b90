"""The reel: mcpreel's native session file, the mcp-replay trace format v1 (seed 004) extended additively.

A reel is a valid v1 trace (any v1 consumer opens it); we only add optional members and line types.

- ``meta`` (first line): ``v``, ``type``, ``startedAt``, ``label``, ``command`` + ours: ``producer``,
  ``transport``, ``url``, ``session``, ``metadata``, ``transport_context`` (session-level headers).
- message lines: ``t``, ``dir``, ``raw`` + ours: ``seq``, ``ctx``, ``modified``/``original``, ``dropped``,
  ``injected``, ``decided_by`` (the intercept: :mod:`mcpreel.intercept`).
- ours: ``{"t","type":"stderr","text"}``, ``{"t","dir","type":"invalid","text"}`` (+ ``base64``, the line's
  exact bytes, when they are not UTF-8: ``text`` then shows them with ``\\xNN`` escapes),
  ``{"t","dir","type":"transport","ctx"}``.
- ours: ``{"t","dir","type":"bytes","text"}`` or ``{"t","dir","type":"bytes","base64"}``: raw bytes that
  crossed a stdio pipe and were not newline-delimited JSON (HTTP/2 frames of a ``stdio-v2`` session, binary,
  a line too long to hold, bytes with no newline), in order, each chunk as it was read (``text`` when the
  chunk is valid UTF-8, else ``base64``); newlines included. Concatenating one direction's ``bytes`` lines
  gives back what crossed the pipe outside the recorded lines. Read as :attr:`Kind.BYTES` with ``raw`` the bytes.
  ``"redacted": true`` marks a line whose bytes are the redacted copy of what crossed, not the bytes
  themselves (:mod:`mcpreel.record.raw_redact`: an HTTP/2 header block re-encoded with its credential headers
  as ``[REDACTED]``, a DATA payload or text with its secrets replaced); the rest stay exact.
- ``end`` (last line): ``t``, ``type``, ``exitCode``, ``durationMs`` (+ ``reason``).

Other producers' lines (``dir:"event"``, ``dir:"command"``, ``type:"turn"``, unknown types) are read as
:attr:`Kind.EVENT` records holding the whole line, and written back unchanged.

:class:`ReelWriter` is the recorder's writer: append-only, one ``write`` per line, flushed, mode 0600,
so a crash of the recorder loses nothing it already wrote; a file without ``end`` reads all the same.
A write that fails (a full disk) is cut back to the last whole line at once, so the reel never ends in
half a line; the ``end`` line, written when the session ends and there is room again, says where the
recording stopped. A reel torn all the same (another writer, an older mcpreel) is read up to its torn
last line, with a note.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import errno
import os
import threading
import uuid
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO, cast

from mcpreel._infra import jsonio
from mcpreel._infra.fileio import open_private_append, open_regular
from mcpreel._infra.nesting import cut_repr
from mcpreel._infra.timeutil import iso_from_ms, ms_from_iso, now_ms
from mcpreel._version import __version__
from mcpreel.errors import FormatError, InputError
from mcpreel.formats._identity import fallback_label, session_document_id
from mcpreel.formats._source import Source, encodable, iter_json_lines, session_text, session_url
from mcpreel.model import Kind, Message, Session, SessionInfo, WireBlock, WireBlocks, clean_ctx

NAME = "reel"
LOSSES = ""
#: what a reel keeps of a session: everything (see :mod:`mcpreel.convert`)
KEEPS = frozenset({"time", "direction", "ctx", "edits", "drops", "stderr", "invalid", "transport", "event", "header",
                   "foreign", "source", "bytes"})

PRODUCER = {"name": "mcpreel", "version": __version__}
_META_KEYS = frozenset(("v", "type", "startedAt", "label", "command", "producer", "transport", "url", "session", "metadata"))
_MSG_KEYS = frozenset(("t", "dir", "raw", "seq", "ctx", "modified", "original", "dropped", "injected", "decided_by"))
_OWN_LINE_KEYS = frozenset(("t", "dir", "type", "text", "ctx", "seq"))
_BYTES_KEYS = frozenset(("t", "dir", "type", "text", "base64", "seq"))
#: the most bytes one ``bytes`` line holds (a bigger chunk is written as several lines)
BYTES_PIECE = 1 << 18


def bytes_of_line(obj: dict[str, Any], source: Source, line: int) -> bytes:
    """The bytes a ``bytes`` line (or an ``invalid`` line's ``base64``) holds; a bad one is named."""
    b64 = obj.get("base64")
    if b64 is not None:
        if not isinstance(b64, str):
            raise source.fail(f"line {line}: base64 must be a string", line=line)
        try:
            return base64.b64decode(b64, validate=True)
        except (ValueError, binascii.Error) as exc:
            raise source.fail(f"line {line}: base64 is not valid base64", line=line) from exc
    text = obj.get("text")
    if not isinstance(text, str):
        raise source.fail(f"line {line}: a bytes line needs a text or a base64 string", line=line)
    return text.encode("utf-8", "surrogatepass")


class NotText(str):
    """An invalid frame's text (``\\xNN`` escapes) whose bytes were not UTF-8; ``data`` holds them exactly, and
    the ``invalid`` line gets them as ``base64`` (a redactor that rewrites the text makes a plain ``str``: the
    bytes then go with it)."""

    data: bytes

    @classmethod
    def of(cls, data: bytes) -> NotText:
        """The escaped text of ``data``, carrying ``data``."""
        text = cls(data.decode("utf-8", "backslashreplace"))
        text.data = data
        return text


def bytes_members(data: bytes) -> tuple[str, str]:
    """How ``data`` is written in a line: ``("text", str)`` when it is UTF-8, else ``("base64", str)``."""
    try:
        return "text", data.decode("utf-8")
    except UnicodeDecodeError:
        return "base64", base64.b64encode(data).decode("ascii")


def _ms(value: Any, source: Source, line: int) -> int | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise source.fail(f"line {line}: t must be an ISO-8601 time string", line=line)
    try:
        return ms_from_iso(value)
    except ValueError as exc:
        raise source.fail(f"line {line}: t is not an ISO-8601 time: {value!r}", line=line) from exc


def _info_from_meta(meta: dict[str, Any], source: Source) -> SessionInfo:
    info = SessionInfo(source_format=NAME, path=source.name)
    started = meta.get("startedAt")
    if isinstance(started, str):
        try:
            info.started = ms_from_iso(started)
        except ValueError as exc:
            raise source.fail(f"line 1: startedAt is not an ISO-8601 time: {started!r}", line=1) from exc
        if info.started == 0:
            # the epoch itself is what a writer puts in the required member when it had no time (a
            # jsonrpc file has none): unknown, not a real start on 1970-01-01
            info.started = None
    label = meta.get("label")
    info.label = session_text(label)
    cmd = meta.get("command")
    if isinstance(cmd, list):
        # a word that is not text is shown as its cut repr (str() of a value nested to the readers' limit recurses)
        info.command = [encodable(c if isinstance(c, str) else cut_repr(c)) for c in cmd]
    elif isinstance(cmd, str):
        info.command = [encodable(cmd)]
    info.producer = meta.get("producer") if isinstance(meta.get("producer"), dict) else None
    tr = meta.get("transport")
    info.transport = session_text(tr)
    info.url = session_url(source, meta.get("url"), "line 1: url")
    info.id = session_text(meta.get("session"))
    info.metadata = dict(meta["metadata"]) if isinstance(meta.get("metadata"), dict) else {}
    info.extra = {k: v for k, v in meta.items() if k not in _META_KEYS}
    tctx = meta.get("transport_context")
    if isinstance(tctx, dict) and isinstance(tctx.get("headers"), dict):
        info.headers = tctx["headers"]
    if meta.get("kind") not in (None, "mcp"):
        kind = meta.get("kind")
        shown = repr(kind) if isinstance(kind, str) else cut_repr(kind)  # a deep value: cut, not a RecursionError
        info.notes.append(f"kind {shown}: this file holds no MCP messages (its lines are not MCP traffic)")
    if info.url is None and info.transport is None and info.command[:1] == ["fitness-report"] and len(info.command) > 1:
        # the fitness-report harness records HTTP servers on the client side and names the URL in argv
        info.url = session_url(source, info.command[-1], "the fitness-report URL (the command's last word)")
    return info


def _apply_end(info: SessionInfo, end: dict[str, Any], source: Source, line: int) -> None:
    info.ended = _ms(end.get("t"), source, line)
    code = end.get("exitCode")
    info.exit_code = code if type(code) is int else None
    dur = end.get("durationMs")
    info.duration_ms = dur if type(dur) is int else None
    reason = end.get("reason")
    info.end_reason = reason if isinstance(reason, str) else None


def _tail_line(source: Source) -> bytes | None:
    """The last non-blank line of the file, read from its end (so a streaming read knows the end)."""
    try:
        with source.open() as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            back = min(size, 1 << 16)
            fh.seek(size - back)
            data = fh.read(back)
    except OSError:
        return None
    lines = [ln for ln in data.split(b"\n") if ln.strip()]
    return lines[-1] if lines else None


def _torn_line(source: Source) -> int | None:
    """The number of the file's last line when it is torn (no newline after it, and not JSON: a write
    that did not finish), else None. Only a file that does not end in a newline pays for more than
    one byte read."""
    try:
        with source.open() as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return None
            fh.seek(size - 1)
            if fh.read(1) == b"\n":
                return None
            start = size  # where the last line starts: after the last newline, found from the end
            parts: list[bytes] = []
            while start > 0:
                back = min(start, 1 << 20)
                fh.seek(start - back)
                block = fh.read(back)
                cut = block.rfind(b"\n")
                if cut >= 0:
                    parts.append(block[cut + 1:])
                    start -= back - cut - 1
                    break
                parts.append(block)
                start -= back
            tail = b"".join(reversed(parts))
            if not tail.strip():
                return None
            try:
                jsonio.loads(tail)
                return None  # a whole line that only lacks its newline
            except (ValueError, UnicodeDecodeError):
                pass
            fh.seek(0)
            newlines = 0
            while fh.tell() < start:
                newlines += fh.read(min(1 << 20, start - fh.tell())).count(b"\n")
            return newlines + 1
    except OSError:
        return None


def _lines(source: Source, torn: int | None) -> Iterator[tuple[int, Any]]:
    """:func:`iter_json_lines`, ending quietly before a torn last line (``torn``: its number)."""
    if torn is None:
        yield from iter_json_lines(source)
        return
    try:
        yield from iter_json_lines(source)
    except FormatError:
        raise
    except InputError as exc:
        if exc.line != torn:
            raise


def _record(obj: Any, lineno: int, source: Source) -> Message | None:
    """One line -> one record (None for the meta and end lines)."""
    if type(obj) is not dict:
        raise source.fail(f"line {lineno} must be a JSON object", line=lineno)
    typ = obj.get("type")
    d = obj.get("dir")
    if typ is None and (d == "in" or d == "out"):
        if "raw" not in obj:
            raise source.fail(f"line {lineno}: message line has no raw", line=lineno)
        t = obj.get("t")
        extra = None
        if len(obj) > 3:
            extra = {k: v for k, v in obj.items() if k not in _MSG_KEYS} or None
        ctx = obj.get("ctx")
        seq = obj.get("seq")
        return Message(
            d,
            obj["raw"],
            _ms(t, source, lineno) if t is not None else None,
            seq=seq if type(seq) is int else None,
            ctx=clean_ctx(ctx) if ctx is not None else None,
            modified=obj.get("modified") is True,
            original=obj.get("original"),
            dropped=obj.get("dropped") is True,
            source=lineno,
            extra=extra,
            injected=obj.get("injected") is True,
            decided_by=decided_by if isinstance(decided_by := obj.get("decided_by"), str) else None,
        )
    if typ == "meta":
        return None
    if typ == "end":
        _ms(obj.get("t"), source, lineno)  # read() skipped a bad time here: say it where it stands
        return None
    t = _ms(obj.get("t"), source, lineno) if obj.get("t") is not None else None
    seq = obj.get("seq")
    seq = seq if type(seq) is int else None  # the writers count on from it: a string or float would crash them
    # members of our own line types that we do not know (a merged file's "file") are kept in extra
    more = ({k: v for k, v in obj.items() if k not in _OWN_LINE_KEYS} or None) if len(obj) > 4 else None
    if typ == "stderr":
        return Message(None, None, t, kind=Kind.STDERR, text=str(obj.get("text", "")), seq=seq, source=lineno,
                       extra=more)
    if typ == "invalid":
        ctx = obj.get("ctx")
        return Message(d if d in ("in", "out") else None, None, t, kind=Kind.INVALID, text=str(obj.get("text", "")),
                       ctx=clean_ctx(ctx), seq=seq, source=lineno, extra=more)
    if typ == "transport":
        ctx = obj.get("ctx")
        return Message(d if d in ("in", "out") else None, None, t, kind=Kind.TRANSPORT,
                       ctx=clean_ctx(ctx) or {}, seq=seq, source=lineno, extra=more)
    if typ == "bytes":
        data = bytes_of_line(obj, source, lineno)
        rest = {k: v for k, v in obj.items() if k not in _BYTES_KEYS} or None
        return Message(d if d in ("in", "out") else None, data, t, kind=Kind.BYTES, seq=seq, source=lineno,
                       extra=rest)
    # another producer's line: kept whole
    return Message(d if isinstance(d, str) else None, obj, t, kind=Kind.EVENT, source=lineno)


def _plain(obj: Any) -> tuple[str, int] | None:
    """``(dir, ms)`` of a message line with exactly ``t``, ``dir`` and ``raw`` (the recorder's own stdio
    line, most lines of a reel), or None for any other line (the general path reads it, and names the
    line and the rule when it breaks one)."""
    if type(obj) is dict and len(obj) == 3 and "raw" in obj:
        d = obj.get("dir")
        t = obj.get("t")
        if (d == "in" or d == "out") and type(t) is str:
            try:
                return d, ms_from_iso(t)
            except ValueError:
                return None
    return None


def _stream(source: Source, torn: int | None = None) -> Iterator[Message]:
    """The records of the file, in order.

    A plain message line (:func:`_plain`) is made here with one time lookup, every other line goes
    through :func:`_record` with the same result (a million-message reel spends a third of its read in
    the general path's member checks otherwise).
    """
    record = _record
    plain = _plain
    for lineno, obj in _lines(source, torn):
        found = plain(obj)
        if found is not None:
            yield Message(found[0], obj["raw"], found[1], source=lineno)
            continue
        rec = record(obj, lineno, source)
        if rec is not None:
            yield rec


def _wire(source: Source, torn: int | None = None) -> Iterator[WireBlock]:
    """The reel's fast lane (:meth:`Session.wire_blocks`): the payloads that crossed the wire, in blocks,
    with no record object made for a plain message line; the same blocks as the records would give."""
    blocks = WireBlocks()
    raws, dirs, times, sources, scopes = blocks.raws, blocks.dirs, blocks.times, blocks.sources, blocks.scopes
    plain = _plain
    for lineno, obj in _lines(source, torn):
        found = plain(obj)
        if found is not None:
            raws.append(obj["raw"])
            dirs.append(found[0])
            times.append(found[1])
            sources.append(lineno)
            scopes.append(None)
        else:
            rec = _record(obj, lineno, source)
            if rec is None or rec.kind != Kind.MESSAGE or rec.dropped:
                if rec is not None and rec.dropped and rec.kind == Kind.MESSAGE:
                    blocks.dropped += 1  # said, not carried: the importer reads a dropped call's record itself
                continue
            blocks.add_record(rec)
        if len(raws) >= WireBlocks.SIZE:
            yield blocks.take()  # type: ignore[misc]  # full: never None
            raws, dirs, times, sources, scopes = blocks.raws, blocks.dirs, blocks.times, blocks.sources, blocks.scopes
    last = blocks.take()
    if last is not None:
        yield last


def record_of_line(obj: Any, lineno: int, source: Source) -> Message | None:
    """One reel line, already parsed, as a record (None for meta and end): what a live viewer gets from
    the control channel's ``record`` events, read by the same rules as the file."""
    return _record(obj, lineno, source)


def looks_like_reel(first: Any) -> bool:
    """A reel's meta line (the first line of a file mcpreel wrote)."""
    return isinstance(first, dict) and first.get("type") == "meta" and "v" in first


def read(source: Source) -> Session:
    """Read a reel (or bare mcp-replay message lines without a meta line), streaming: memory stays flat whatever its
    length."""
    first = None
    for _lineno, obj in iter_json_lines(source):
        first = obj
        break
    if first is None:
        raise source.fail("empty file: a reel starts with a meta line")
    if looks_like_reel(first):
        if first.get("v") != 1:
            raise source.fail(f"line 1: unsupported trace version v={jsonio.dumps_str(first.get('v'))} (this reads v1)", line=1)
        info = _info_from_meta(first, source)
    elif isinstance(first, dict) and "dir" in first and "t" in first:
        # message lines whose meta line was cut off: read them, with the header unknown
        info = SessionInfo(source_format=NAME, path=source.name)
        info.started = _ms(first.get("t"), source, 1)
        info.notes.append("no meta line: the session's label and command are unknown")
    else:
        raise source.fail('line 1 must be the meta line ({"v":1,"type":"meta",...})', line=1)
    torn = _torn_line(source)
    if torn is not None:
        info.notes.append(f"line {torn} is torn (a write that did not finish: a full disk, a crash) and is left "
                          "out: the reel is read up to the line before")
    last = _tail_line(source) if torn is None else None
    if last is not None:
        try:
            end = jsonio.loads(last)
        except (ValueError, UnicodeDecodeError):
            end = None  # a torn last line (a crash mid-write): the stream reports it where it stands
        if isinstance(end, dict) and end.get("type") == "end":
            try:
                _apply_end(info, end, source, 0)
            except FormatError:
                pass  # a bad end time: the stream names its line when it gets there
    return Session.streaming(info, lambda: _stream(source, torn), lambda: _wire(source, torn))


def raw_marks(path: str | os.PathLike[str]) -> frozenset[str]:
    """What a reel holds beside its lines of JSON: ``bytes`` (raw ``bytes`` lines), ``h2`` (its stdio pipe spoke
    HTTP/2, the ``stdio-v2`` draft) and ``message`` (at least one JSON-RPC message line); empty for a file that
    is not a reel. A byte scan (no parsing: the markers cannot occur inside a JSON string), stopped as soon as
    all three are known."""
    marks = {"bytes": b'"type":"bytes"', "h2": b'"framing":"h2"', "message": b'"raw":'}
    found: set[str] = set()
    try:
        with open_regular(path) as fh:
            if not fh.read(64).startswith(b'{"v":1,"type":"meta"'):
                return frozenset()
            fh.seek(0)
            tail = b""
            while len(found) < len(marks):
                block = fh.read(1 << 20)
                if not block:
                    break
                window = tail + block
                found.update(name for name, mark in marks.items() if name not in found and mark in window)
                tail = window[-32:]
    except OSError:
        return frozenset()
    return frozenset(found)


def raw_note(path: str | os.PathLike[str], verb: str, *, speaks_h2: bool = False) -> str | None:
    """One line for ``serve``/``replay`` (``verb``) about what of a reel they cannot act on: raw ``bytes`` lines
    (a stdio pipe that was not JSON lines) and an HTTP/2 ``stdio-v2`` pipe (``speaks_h2``: the verb serves
    that as HTTP/2 itself, so only the raw frames are left alone). None when the reel has neither.

    Raises :class:`~mcpreel.errors.InputError` when the reel holds raw bytes and no message at all: there
    is nothing to act on.
    """
    found = raw_marks(path)
    if "bytes" not in found:
        return None
    name = os.fspath(path)
    if "message" not in found:
        raise InputError(f"{name}: holds only raw bytes (no JSON-RPC message was recorded): nothing to {verb}")
    if "h2" in found:
        if speaks_h2:
            return (f"{name}: its stdio pipe spoke HTTP/2 (stdio-v2 draft): {verb} speaks it too, from the messages "
                    "decoded from it (the raw frames are kept, not replayed byte for byte)")
        return (f"{name}: its stdio pipe spoke HTTP/2 (stdio-v2 draft); {verb} acts on the messages decoded from it "
                "over its own transport, not over HTTP/2, and leaves the raw frames alone")
    return f"{name}: raw bytes that were not JSON lines are kept in the reel; {verb} cannot act on them and leaves them out"


# -- writing ----------------------------------------------------------------------------------------


def meta_line(info: SessionInfo, started: int | None = None) -> dict[str, Any]:
    """The meta line of a reel for ``info``: shared by the writer and the live recorder so both write the same header."""
    started = started if started is not None else info.started
    meta: dict[str, Any] = {
        "v": 1,
        "type": "meta",
        "startedAt": iso_from_ms(started if started is not None else 0),
        "label": info.label or fallback_label(info),
        "command": list(info.command),
        "producer": info.producer or PRODUCER,
    }
    if info.transport:
        meta["transport"] = info.transport
    if info.url:
        meta["url"] = info.url
    meta["session"] = info.id or str(uuid.uuid4())
    if info.metadata:
        meta["metadata"] = info.metadata
    # the session-level transport context (an envelope's top-level transport_context: the
    # MCP-Protocol-Version and Mcp-Session-Id headers), so reel -> envelope gives it back
    tctx = info.extra.get("transport_context")
    if not isinstance(tctx, dict):
        tctx = {"headers": info.headers} if info.headers else None
    if tctx:
        meta["transport_context"] = tctx
    for k, v in info.extra.items():
        if k not in meta and k != "transport_context":
            meta[k] = v
    return meta


def record_line(msg: Message, t: int, seq: int | None) -> dict[str, Any]:
    """The reel line for one record; ``t`` is the time to write (the record's, or the last known)."""
    if msg.kind == Kind.MESSAGE:
        line: dict[str, Any] = {"t": iso_from_ms(t), "dir": msg.dir or "in", "raw": msg.raw}
        if seq is not None:
            line["seq"] = seq
        if msg.ctx:
            line["ctx"] = msg.ctx
        if msg.modified:
            line["modified"] = True
            line["original"] = msg.original
        if msg.dropped:
            line["dropped"] = True
        if msg.injected:
            line["injected"] = True
        if msg.decided_by:
            line["decided_by"] = msg.decided_by
        if msg.extra:
            for k, v in msg.extra.items():
                if k not in line:
                    line[k] = v
        return line
    if msg.kind == Kind.EVENT and isinstance(msg.raw, dict):
        return msg.raw
    line = {"t": iso_from_ms(t)}
    if msg.kind == Kind.BYTES:
        line["dir"] = msg.dir or "out"
        line["type"] = "bytes"
        data = msg.raw if isinstance(msg.raw, bytes | bytearray) else (msg.text or "").encode("utf-8")
        key, value = bytes_members(bytes(data))
        line[key] = value
    elif msg.kind == Kind.STDERR:
        line["type"] = "stderr"
        line["text"] = msg.text or ""
    elif msg.kind == Kind.INVALID:
        line["dir"] = msg.dir or "out"
        line["type"] = "invalid"
        line["text"] = msg.text or ""
        if isinstance(msg.text, NotText):
            line["base64"] = base64.b64encode(msg.text.data).decode("ascii")
        if msg.ctx:
            line["ctx"] = msg.ctx  # an HTTP body that was not JSON keeps its method, path and headers
    else:
        line["dir"] = msg.dir or "out"
        line["type"] = "transport"
        line["ctx"] = msg.ctx or {}
    if seq is not None:
        line["seq"] = seq
    if msg.extra:
        for k, v in msg.extra.items():
            if k not in line:
                line[k] = v
    return line


def end_line(t: int, exit_code: int | None, duration_ms: int, reason: str | None = None) -> dict[str, Any]:
    """The end line (exit code, duration, why it ended): what tells a finished recording from a cut one."""
    line: dict[str, Any] = {"t": iso_from_ms(t), "type": "end", "exitCode": exit_code if exit_code is not None else 0,
                            "durationMs": duration_ms}
    if reason:
        line["reason"] = reason
    return line


def write(session: Session, out: BinaryIO) -> None:
    """Write a whole session as a reel (times without a value take the last known time)."""
    info = session.info
    dumps = jsonio.dumps
    records = session if session.is_streaming else session.messages
    started = info.started
    if started is None and not session.is_streaming:
        started = next((m.t for m in session.messages if m.t is not None), None)
    meta = meta_line(info, started)
    if info.id is None:
        # a conversion is deterministic: the same input gives the same reel (and the same id as qai's)
        meta["session"] = session_document_id(info)
    out.write(dumps(meta) + b"\n")
    last = started if started is not None else 0
    seq = 0
    for msg in records:
        if msg.t is not None:
            last = msg.t
        line = record_line(msg, last, msg.seq if msg.seq is not None else seq)
        seq = (msg.seq if msg.seq is not None else seq) + 1
        out.write(dumps(line) + b"\n")
    if info.ended is not None or info.exit_code is not None or info.end_reason is not None:
        ended = info.ended if info.ended is not None else last
        duration = info.duration_ms if info.duration_ms is not None else max(0, ended - (started or ended))
        out.write(dumps(end_line(ended, info.exit_code, duration, info.end_reason)) + b"\n")


_iso_second: tuple[int, bytes] = (-1, b"")


def _iso_cached(ms: int) -> bytes:
    """:func:`iso_from_ms` as bytes, formatting the date only once a second (the recorder's hot path)."""
    global _iso_second
    sec, rem = divmod(ms, 1000)
    cached = _iso_second
    if cached[0] != sec:
        cached = (sec, iso_from_ms(sec * 1000)[:-5].encode("ascii"))
        _iso_second = cached
    return cached[1] + b".%03dZ" % rem


_BYTES_ONLY = frozenset((bytes,))


def _invalid_line(head: bytes, text: str, seq: int) -> bytes:
    if isinstance(text, NotText):
        b64 = base64.b64encode(text.data)
        return head + b',"type":"invalid","text":' + jsonio.dumps(text) + b',"base64":"' + b64 + b'","seq":%d}\n' % seq
    return head + b',"type":"invalid","text":' + jsonio.dumps(text) + b',"seq":%d}\n' % seq


class ReelWriter:
    """Append-only, crash-safe reel writer for recorders (thread-safe; one ``write`` per line).

    ``seq`` is given here, in the order records reach the writer. Times are taken from the wall clock
    when the caller does not give one.
    """

    def __init__(self, path: str | os.PathLike[str], info: SessionInfo, *, first_seq: int = 0):
        """``first_seq``: where numbering starts (a session appended to a reel counts on from its last)."""
        self.path = os.fspath(path)
        self.info = info
        if info.started is None:
            info.started = now_ms()
        if info.id is None:
            info.id = str(uuid.uuid4())
        if info.producer is None:
            info.producer = dict(PRODUCER)
        self._fh = open_private_append(self.path)
        self._lock = threading.Lock()
        self._seq = first_seq
        self._closed = False
        #: the bytes of whole lines in the file: where a failed write is cut back to
        self._whole = os.fstat(self._fh.fileno()).st_size
        #: the first write error (a full disk): what the end line says stopped the recording
        self.write_error: OSError | None = None
        try:
            self._write_obj(meta_line(info))
        except BaseException:
            self._fh.close()  # no reel to record in (a full disk): the caller says so
            if self._whole == 0:  # nor an empty file left behind for every verb to refuse
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
            raise

    def _write_obj(self, obj: dict[str, Any]) -> None:
        self._append(jsonio.dumps_line(obj))  # one buffer: a 30 MB record is not copied once more

    def _append(self, data: bytes) -> None:
        """Write ``data`` (whole lines) all, or none of it: a write that fails part way (a full disk
        takes what fits, then refuses) is cut back to the last whole line, and the error raised."""
        fh = self._fh
        view = memoryview(data)
        done = 0
        try:
            while done < len(data):
                n = fh.write(view[done:])
                if not n:  # a regular file never says "would block": do not spin on it
                    raise OSError(errno.EIO, "the reel took no bytes")
                done += n
        except OSError as exc:
            if self.write_error is None:
                self.write_error = exc
            if done:
                try:
                    os.ftruncate(fh.fileno(), self._whole)
                except OSError:
                    pass  # the reader's net: a torn last line is read up to the line before
            raise
        self._whole += done

    @staticmethod
    def now() -> int:
        """The clock of the recording (a method, so a test can stand a fixed clock in)."""
        return now_ms()

    def write(self, msg: Message) -> int:
        """Append one record; returns the ``seq`` it was given."""
        with self._lock:
            if self._closed:
                raise ValueError("reel is closed")
            seq = self._seq
            self._seq += 1
            msg.seq = seq
            if msg.t is None:
                msg.t = self.now()
            self._write_obj(record_line(msg, msg.t, seq))
            return seq

    def write_frames(self, direction: str, frames: Sequence[bytes | str], t: int | None = None) -> int:
        """Append the frames one read off a wire brought in, with one ``write``; returns the first ``seq``.

        A ``bytes`` frame is JSON text exactly as it crossed the wire; the caller vouches that it parses
        and holds no newline. It is spliced into the line as ``raw`` without being parsed or
        re-serialized, so the record keeps the peer's bytes and a recording proxy pays almost nothing
        per message; only a carriage return (whitespace, in valid JSON) becomes a space, since readers
        that split on universal newlines would cut the line there. A ``str`` frame was not JSON and
        becomes an ``invalid`` line holding that text.
        """
        if t is None:
            t = self.now()
        head = b'{"t":"' + _iso_cached(t) + b'","dir":"' + direction.encode("ascii") + b'"'
        raw_head = head + b',"raw":'
        with self._lock:
            if self._closed:
                raise ValueError("reel is closed")
            first = self._seq
            self._seq = first + len(frames)
            if not set(map(type, frames)) - _BYTES_ONLY:
                raw = cast("Sequence[bytes]", frames)  # no str among them
                data = b"".join([raw_head + frame + b',"seq":%d}\n' % seq for seq, frame in enumerate(raw, first)])
            else:
                data = b"".join([
                    raw_head + frame + b',"seq":%d}\n' % seq if not isinstance(frame, str)
                    else _invalid_line(head, frame, seq)
                    for seq, frame in enumerate(frames, first)
                ])
            if b"\r" in data:  # only a frame can hold one (invalid texts are escaped), and only as whitespace
                data = data.replace(b"\r", b" ")
            self._append(data)
            return first

    def write_bytes(self, direction: str, data: bytes, t: int | None = None, *, redacted: bool = False) -> int:
        """Append raw bytes that crossed a pipe as ``bytes`` lines (:data:`BYTES_PIECE` at most each, so a
        50 MB run is never encoded whole); returns the first ``seq``. Every byte is kept: ``text`` when a
        piece is UTF-8, else ``base64``. ``redacted``: these bytes are the recorder's redacted copy of what
        crossed (:mod:`mcpreel.record.raw_redact`), marked ``"redacted": true``."""
        if t is None:
            t = self.now()
        head = b'{"t":"' + _iso_cached(t) + b'","dir":"' + direction.encode("ascii") + b'","type":"bytes",'
        if redacted:
            head += b'"redacted":true,'
        view = memoryview(data)
        with self._lock:
            if self._closed:
                raise ValueError("reel is closed")
            first = self._seq
            for start in range(0, len(data), BYTES_PIECE):
                piece = bytes(view[start : start + BYTES_PIECE])
                key, value = bytes_members(piece)
                seq = self._seq
                self._seq += 1
                body = b'"text":' + jsonio.dumps(value) if key == "text" else b'"base64":"' + value.encode("ascii") + b'"'
                self._append(head + body + b',"seq":%d}\n' % seq)
            return first

    def close(self, exit_code: int | None = None, reason: str | None = None) -> None:
        """Write the ``end`` line (once) and close the file."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            t = self.now()
            self.info.ended = t
            self.info.exit_code = exit_code
            self.info.end_reason = reason
            duration = max(0, t - (self.info.started or t))
            self.info.duration_ms = duration
            if self.write_error is not None:
                why = self.write_error.strerror or str(self.write_error)
                reason = f"{reason or 'closed'}; recording stopped at a write error ({why}): what came after is not here"
                self.info.end_reason = reason
            try:
                self._write_obj(end_line(t, exit_code, duration, reason))
            finally:
                self._fh.close()

    @property
    def closed(self) -> bool:
        """Whether the writer is closed (a late message must not reopen the file)."""
        return self._closed

    def __enter__(self) -> ReelWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(reason="closed" if exc[0] is None else "error")
