"""Drawing an :class:`~mcpreel.inspection.Report`: the header, one line per record, the summary.

Two faces of the same content. :func:`plain_lines` yields greppable text lines (no colour, no box
drawing) for pipes and files; :func:`renderables` yields rich renderables (styled rows, tables) for a
terminal. Both are built from :func:`row_parts`, so what a row says is decided once. :func:`to_json` is
the ``--json`` document.

A row reads like qai's inspect: ``#000 > initialize id=1``, ``#001 < (response) id=1 corr=#000 12ms``,
plus flags in brackets: ``[MODIFIED]``, ``[DROPPED]``, ``[INJECTED]``, ``[ERROR -32602 …]``, ``[isError]``,
``[UNANSWERED]``, ``[ENDED]`` (a listen stream the client cancelled), ``[ORPHAN]``. A file of several
client sessions names each row's session after its index (``#004 s2 > tools/call``); a task's polls,
result and status notifications name the task and the call that created it (``task=T1 of #003``). ``>`` is client -> server (c2s), ``<`` server -> client (s2c), ``!`` server stderr,
``·`` a line that is not MCP traffic.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

from mcpreel._infra import jsonio
from mcpreel._infra.nesting import cut_repr
from mcpreel._infra.timeutil import iso_from_ms
from mcpreel.eras import era_name
from mcpreel.inspection import EXACT_LATENCIES, SKETCH_ERROR, Report, Row

__all__ = ["plain_lines", "renderables", "row_parts", "row_text", "to_json"]

_ARROWS = {"in": ">", "out": "<"}
_TEXT_LIMIT = 200


def _short(text: str, limit: int = _TEXT_LIMIT) -> str:
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _id(value: Any) -> str:
    return jsonio.dumps_str(value) if isinstance(value, str) and not value.isprintable() else cut_repr(value, 200)


def row_parts(row: Row, *, sessions: bool = False) -> list[tuple[str, str]]:
    """A row as (text, style) pieces; joined with spaces they are the plain line. ``sessions``: the file
    holds several client sessions, so each row names its own (``s2``) after its index."""
    kind = row.kind
    parts: list[tuple[str, str]] = [(f"#{row.index:03d}", "dim")]
    if sessions:
        parts.append((f"s{row.session}", "blue"))
    if kind == "stderr":
        parts.append(("!", "yellow"))
    elif kind == "event":
        parts.append(("·", "dim"))
    else:
        d = row.dir
        parts.append((_ARROWS.get(d or "", "·"), "cyan" if d == "in" else "magenta"))
    if row.origin:
        parts.append((f"[{row.origin}]", "blue"))
    if kind != "message":
        if kind == "stderr":
            parts.append((f"stderr: {_short(row.text or '')}", "yellow"))
            return parts
        if kind == "invalid":
            parts.append(("[INVALID]", "bold red"))
            parts.append((_short(row.text or ""), "red"))
            return parts
        if kind == "bytes":
            parts.append(("[BYTES]", "bold blue"))
            parts.append((_short(row.text or ""), "blue"))
            return parts
        if kind == "transport":
            parts.append(("(transport)", "dim"))
            parts.append((_short(row.text or ""), "dim"))
            if row.sse_events:
                parts.append((_sse_note(row.sse_events), "dim"))
            return parts
        if kind == "event":
            parts.append((f"event {row.label}", "dim"))
            if row.text:
                parts.append((row.text, "dim"))
            return parts
    is_response = row.is_response
    if row.batch is not None:
        parts.append((f"(batch of {row.batch})", "bold"))
    else:
        parts.append((row.label, "" if is_response else "bold"))
    rid = row.id
    if rid is not None:
        parts.append((f"id={rid}" if type(rid) is int else f"id={_id(rid)}", ""))
    if row.tool is not None and not is_response:
        parts.append((row.tool, "green"))
    if row.retry_of is not None:
        parts.append((f"retry of #{row.retry_of:03d}", "cyan"))
    if row.task is not None:
        parts.append((f"task={_id(row.task)}", "cyan"))
    if row.part_of is not None:
        parts.append((f"of #{row.part_of:03d}", "cyan"))
    if row.corr is not None:
        parts.append((f"corr=#{row.corr:03d}", "dim"))
    if row.latency_ms is not None:
        parts.append((f"{row.latency_ms}ms", "dim"))
    if row.modified:
        parts.append(("[MODIFIED]", "bold yellow"))
    if row.dropped:
        parts.append(("[DROPPED]", "bold yellow"))
    if row.injected:
        parts.append(("[INJECTED]", "bold yellow"))
    if row.error is not None:
        code = row.error.get("code")
        message = row.error.get("message")
        words = " ".join(cut_repr(x, 200) for x in (code, message) if x is not None)
        parts.append((f"[ERROR {_short(words, 120)}]" if words else "[ERROR]", "bold red"))
    if row.input_required:
        parts.append(("[INPUT_REQUIRED]", "cyan"))
    if row.is_error:
        parts.append(("[isError]", "red"))
    if row.unanswered:
        parts.append(("[UNANSWERED]", "bold red"))
    if row.ended:
        parts.append(("[ENDED]", "dim"))
    if row.orphan:
        parts.append(("[ORPHAN]", "red"))
    if row.sse_events:
        parts.append((_sse_note(row.sse_events), "dim"))
    return parts


def _sse_note(n: int) -> str:
    return f"(+{n} SSE framing {'event' if n == 1 else 'events'}, -v shows them)"


def row_text(row: Row, *, sessions: bool = False) -> str:
    """One row of the table as plain text (the width-free form: pipes and files)."""
    return " ".join([part[0] for part in row_parts(row, sessions=sessions)])


def _ms(value: int | None) -> str:
    return "-" if value is None else f"{value}ms"


def _header_pairs(report: Report) -> list[tuple[str, str]]:
    h = report.header
    s = report.summary
    pairs = [("Session", h.id or "-")]
    if h.label:
        pairs.append(("Label", h.label))
    pairs.append(("Transport", h.transport or "unknown"))
    if h.command:
        pairs.append(("Server command", " ".join(h.command)))
    if h.url:
        pairs.append(("Server URL", h.url))
    pairs.append(("Started", iso_from_ms(h.started) if h.started is not None else "unknown"))
    if h.ended is not None:
        ended = iso_from_ms(h.ended)
        extra = []
        if h.exit_code is not None:
            extra.append(f"exit code {h.exit_code}")
        if h.end_reason:
            extra.append(h.end_reason)
        pairs.append(("Ended", ended + (f" ({', '.join(extra)})" if extra else "")))
    else:
        pairs.append(("Ended", "- (no end recorded)"))
    count = f"{h.messages}"
    others = []
    for n, word in ((s.stderr, "stderr line"), (s.invalid, "invalid frame"), (s.transport, "transport event"),
                    (s.events, "other line")):
        if n:
            others.append(f"{n} {word}{'s' if n != 1 else ''}")
    if s.byte_chunks:
        others.append(f"{s.raw_bytes} raw byte{'s' if s.raw_bytes != 1 else ''} in {s.byte_chunks} "
                      f"chunk{'s' if s.byte_chunks != 1 else ''}")
    if others:
        count += f" (and {', '.join(others)})"
    pairs.append(("Messages", count))
    if h.format:
        pairs.append(("Format", h.format))
    if len(h.sessions) == 1:
        pairs.append(("Era", _session_text(h.sessions[0])))
    elif h.sessions:
        pairs.append(("Sessions", f"{len(h.sessions)} client sessions"))
        for session in h.sessions:
            pairs.append((f"  #{session['index']}", _session_text(session)))
    for note in h.notes:
        pairs.append(("Note", note))
    return pairs


def _session_text(s: dict[str, Any]) -> str:
    parts = [era_name(s["era"], s.get("protocol")), f"{s['requests']} request{'s' if s['requests'] != 1 else ''}"]
    if s.get("client"):
        parts.append(f"client {s['client']}")
    if s.get("file"):
        parts.append(f"file {s['file']}")
    if s.get("http_session"):
        parts.append(f"Mcp-Session-Id {s['http_session']}")
    return ", ".join(parts)


class _Boundaries:
    """Where the rows of a file of several client sessions go from one session to another: a line saying
    which session starts (its era, requests, client the first time; ``continued`` when sessions interleave,
    as concurrent HTTP sessions do), so the rows are never read as one conversation (issue 29)."""

    def __init__(self, report: Report):
        self.sessions = {s["index"]: s for s in report.header.sessions} if len(report.header.sessions) > 1 else {}
        self.current: int | None = None
        self.seen: set[int] = set()

    def line(self, row: Row) -> str | None:
        if not self.sessions or row.session == self.current:
            return None
        self.current = row.session
        s = self.sessions.get(row.session)
        if row.session in self.seen or s is None:
            return f"-- session {row.session} (continued) --"
        self.seen.add(row.session)
        return f"-- session {row.session}: {_session_text(s)} --"


def _tool_rows(report: Report) -> list[list[str]]:
    return [
        [name, str(t.calls), str(t.errors), str(t.is_errors), str(t.unanswered), _ms(t.p50_ms), _ms(t.p95_ms)]
        for name, t in report.summary.tools.items()
    ]


_SKETCH_WORDS = (f"p50 and p95 at most {SKETCH_ERROR:.0%} below the exact value: over {EXACT_LATENCIES} distinct "
                 "latencies, counted in buckets")
_TOOL_HEAD = ["tool", "calls", "errors", "isError", "unanswered", "p50", "p95"]
_LAT_HEAD = ["method", "n", "p50", "p95", "max"]


def _latency_rows(report: Report) -> list[list[str]]:
    return [[m, str(v.count), _ms(v.p50_ms), _ms(v.p95_ms), _ms(v.max_ms)] for m, v in report.summary.latency.items()]


def _error_lines(report: Report) -> list[str]:
    out = []
    for e in report.summary.errors:
        what = e.method or "(orphan response)"
        if e.tool:
            what += f" {e.tool}"
        if e.kind == "jsonrpc":
            detail = " ".join(cut_repr(x, 200) for x in (e.code, e.message) if x is not None)
            out.append(f"#{e.row:03d} {what} id={_id(e.id)}: JSON-RPC error {detail}".rstrip())
        else:
            out.append(f"#{e.row:03d} {what} id={_id(e.id)}: isError" + (f": {_short(e.message, 120)}" if e.message else ""))
    return out


def _ref_lines(report: Report, indexes: list[int]) -> list[str]:
    several = len(report.header.sessions) > 1
    return [row_text(report.row(i), sessions=several) for i in indexes]


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _counts_line(report: Report) -> str:
    s = report.summary
    parts = [f"{_n(s.messages, 'message')} ({s.client_to_server} c2s >, {s.server_to_client} s2c <)", _n(s.requests, "request"),
             _n(s.responses, "response"), _n(s.notifications, "notification")]
    if s.batches:
        parts.append(_n(s.batches, "batch").replace("batchs", "batches"))
    if s.modified:
        parts.append(f"{s.modified} modified")
    if s.dropped:
        parts.append(f"{s.dropped} dropped")
    parts.append(_n(s.operations, "operation"))
    if s.tasks:
        parts.append(f"{_n(s.tasks, 'task')} ({_n(s.polls, 'poll')})")
    parts.append(_n(len(s.errors), "error"))
    parts.append(f"{len(s.unanswered)} unanswered")
    if s.ended:
        parts.append(f"{_n(len(s.ended), 'listen stream')} ended by the client")
    parts.append(_n(len(s.orphans), "orphan"))
    return ", ".join(parts)


def _payload_text(value: Any) -> str:
    return jsonio.dumps_indented(value).decode("utf-8", "surrogatepass")


def _table_lines(head: list[str], rows: list[list[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    fmt = lambda r: indent + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()  # noqa: E731
    return [fmt(head), *(fmt(r) for r in rows)]


def to_json(report: Report, *, verbose: bool = False, rows: bool = True) -> str:
    """One indented JSON document (newline-terminated): session, rows (unless ``rows=False``), summary;
    ``verbose`` adds each message's payload."""
    return jsonio.dumps_indented(report.to_dict(payloads=verbose, rows=rows)).decode("utf-8") + "\n"


def write_json(report: Report, out: BinaryIO, *, verbose: bool = False, rows: bool = True) -> None:
    """:func:`to_json`, written to ``out`` one row at a time (the same bytes, in flat memory)."""
    from dataclasses import asdict

    from mcpreel._infra.jsonstream import marker, write_document

    doc: dict[str, Any] = {"session": asdict(report.header)}
    arrays = {}
    if rows:
        key = marker()
        doc["rows"] = key
        arrays[key] = report.row_dicts(payloads=verbose)
    doc["summary"] = report.summary_dict()
    write_document(out, doc, arrays)
    out.write(b"\n")


# -- plain ------------------------------------------------------------------------------------------


def plain_lines(report: Report, *, verbose: bool = False, rows: bool = True) -> Iterator[str]:
    """The report as plain text lines (no trailing newlines; with ``verbose``, a message's payload comes
    as one piece of several lines); ``rows=False``: header and summary only."""
    pairs = _header_pairs(report)
    width = max(len(k) for k, _ in pairs) + 1
    for key, value in pairs:
        yield f"{(key + ':').ljust(width)} {value}"
    yield ""
    if rows:
        several = len(report.header.sessions) > 1
        boundaries = _Boundaries(report)
        for row in report.rows:
            boundary = boundaries.line(row)
            if boundary is not None:
                yield "  " + boundary
            yield "  " + row_text(row, sessions=several)
            if verbose:
                yield from _verbose_lines(row)
        yield ""
    yield "Summary: " + _counts_line(report)
    if report.summary.tools:
        yield ""
        yield "Tools:"
        yield from _table_lines(_TOOL_HEAD, _tool_rows(report))
    if report.summary.errors:
        yield ""
        yield "Errors:"
        for line in _error_lines(report):
            yield "  " + line
    if report.summary.unanswered:
        yield ""
        yield "Unanswered:"
        for line in _ref_lines(report, report.summary.unanswered):
            yield "  " + line
    if report.summary.orphans:
        yield ""
        yield "Orphans:"
        for line in _ref_lines(report, report.summary.orphans):
            yield "  " + line
    if report.summary.streams:
        yield ""
        yield "Listen streams:"
        for line in stream_lines(report):
            yield "  " + line
    if report.summary.latency:
        yield ""
        yield "Latency per method:" if report.exact_latency else f"Latency per method ({_SKETCH_WORDS}):"
        yield from _table_lines(_LAT_HEAD, _latency_rows(report))


def stream_lines(report: Report) -> list[str]:
    """One line per listen stream whose lifecycle was recorded (the subscription lifecycle draft): its
    request row, ``streamId``, ``expiresAt``, lifecycle events by type, paused, and ``missed`` as data loss."""
    out = []
    for stream in report.summary.streams:
        parts = [f"#{stream['request']:03d} listen (subscription {stream.get('subscription')!r})"]
        if "streamId" in stream:
            parts.append(f"streamId {stream['streamId']}")
        if "expiresAt" in stream:
            parts.append(f"expires {stream['expiresAt']}")
        events = stream.get("events") or {}
        if events:
            parts.append("lifecycle: " + ", ".join(f"{kind} x{n}" for kind, n in events.items()))
        if stream.get("paused"):
            parts.append("paused (authorization lapsed)")
        if stream.get("data_loss"):
            parts.append("DATA LOSS: the server says notifications were missed")
        out.append("; ".join(parts))
    return out


#: the line breaks of ``str.splitlines`` that JSON text can hold unescaped (the others are control
#: characters, always escaped)
_OTHER_BREAKS = ("\x85", "\u2028", "\u2029")


def _indented_block(value: Any, pad: str) -> str | None:
    """``value`` as indented JSON, each of its lines after ``pad``, as one piece (several lines, no
    trailing newline; None for none). One ``replace`` instead of a line at a time: ``-v`` prints a
    dozen lines per message. A payload holding a line break ``splitlines`` knows besides ``\n`` takes
    the line-at-a-time way, so the lines stay the ones it gives."""
    text = _payload_text(value)
    if any(b in text for b in _OTHER_BREAKS):
        lines = text.splitlines()
        return "\n".join(pad + line for line in lines) if lines else None
    return pad + text.replace("\n", "\n" + pad) if text else None


def _shown_time(t: int) -> str:
    """``t`` as an ISO time, or as milliseconds when no calendar holds it (a damaged time past year 9999)."""
    try:
        return iso_from_ms(t)
    except (ValueError, OverflowError):
        return f"{t} ms (outside years 1 to 9999)"


def _verbose_lines(row: Row) -> Iterator[str]:
    """The time and payload lines under a row for ``-v``; a payload comes as one piece of lines."""
    pad = "      "
    if row.t is not None:
        yield pad + f"t: {_shown_time(row.t)}" + (f"  seq: {row.seq}" if row.seq is not None else "")
    if row.kind in ("message", "event") and row.payload is not None:
        block = _indented_block(row.payload, pad)
        if block is not None:
            yield block
    if row.modified:
        yield pad + "original (before the edit):"
        block = _indented_block(row.original, pad + "  ")
        if block is not None:
            yield block


# -- rich -------------------------------------------------------------------------------------------


def renderables(report: Report, *, verbose: bool = False, rows: bool = True) -> Iterator[Any]:
    """The report as rich renderables, for a terminal; ``rows=False``: header and summary only."""
    from rich import box
    from rich.json import JSON
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    for key, value in _header_pairs(report):
        grid.add_row(key, Text(value))
    yield grid
    yield Text("")
    several = len(report.header.sessions) > 1
    boundaries = _Boundaries(report)
    for row in report.rows if rows else ():
        boundary = boundaries.line(row)
        if boundary is not None:
            yield Text("  " + boundary, style="bold blue")
        text = Text("  ")
        for i, (piece, style) in enumerate(row_parts(row, sessions=several)):
            if i:
                text.append(" ")
            text.append(piece, style=style or None)
        yield text
        if verbose:
            if row.t is not None:
                yield Padding(Text(f"t: {iso_from_ms(row.t)}" + (f"  seq: {row.seq}" if row.seq is not None else ""),
                                   style="dim"), (0, 0, 0, 6))
            if row.kind in ("message", "event") and row.payload is not None:
                yield Padding(JSON(jsonio.dumps_str(row.payload)), (0, 0, 0, 6))
            if row.modified:
                yield Padding(Text("original (before the edit):", style="yellow"), (0, 0, 0, 6))
                yield Padding(JSON(jsonio.dumps_str(row.original)), (0, 0, 0, 8))
    if rows:
        yield Text("")
    yield Text.assemble(("Summary: ", "bold"), _counts_line(report))
    s = report.summary
    if s.tools:
        table = Table(*_TOOL_HEAD, title="Tools", title_justify="left", box=box.SIMPLE_HEAD)
        for r in _tool_rows(report):
            table.add_row(*(Text(cell) for cell in r))  # names are data, never rich markup
        yield table
    if s.errors:
        yield Text("Errors:", style="bold red")
        for line in _error_lines(report):
            yield Text("  " + line, style="red")
    if s.unanswered:
        yield Text("Unanswered:", style="bold red")
        for line in _ref_lines(report, s.unanswered):
            yield Text("  " + line)
    if s.orphans:
        yield Text("Orphans:", style="bold red")
        for line in _ref_lines(report, s.orphans):
            yield Text("  " + line)
    if s.streams:
        yield Text("Listen streams:", style="bold")
        for line, stream in zip(stream_lines(report), s.streams, strict=True):
            yield Text("  " + line, style="bold red" if stream.get("data_loss") else "")
    if s.latency:
        table = Table(*_LAT_HEAD, title="Latency per method" if report.exact_latency else f"Latency per method ({_SKETCH_WORDS})",
                      title_justify="left", box=box.SIMPLE_HEAD)
        for r in _latency_rows(report):
            table.add_row(*(Text(cell) for cell in r))  # names are data, never rich markup
        yield table
