"""``mcpreel calls`` drawn: a row per operation, then the commands that open it; or one JSON document.

A row is what a person scans for -- time (the reader's clock), server, tool, status, latency, the error's
first line -- fitted to the terminal: the error takes what the other columns leave and is cut with ``…``,
never wrapped, so a row stays one line. Under each row, indented, the two commands that open the call
(``mcpreel show ID`` and ``mcpreel tui FILE --at N``), never cut: a command must paste whole. Piped
(``width`` None) nothing is cut and no line is broken (CI logs are grepped). Every cell is another
program's text, escaped to one visible line (:func:`~mcpreel.render.terminal_safe.terminal_safe`).
"""

from __future__ import annotations

import shlex
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.text import Text

from mcpreel._infra.timeutil import duration_ms_text, iso_from_ms
from mcpreel.corpus.calls import Call, CallPage
from mcpreel.render.terminal_safe import terminal_safe

__all__ = ["call_lines", "local_time", "open_commands", "to_json"]

HEADINGS = ("TIME", "SERVER", "TOOL", "STATUS", "LATENCY", "ERROR")
#: the widest a name column grows when the row must fit a terminal (the error gets the rest)
NAME_MAX = 28
#: the least the error column keeps before the row is let run past the terminal's edge
ERROR_MIN = 12
#: what the error column is given on a narrow terminal by cutting the names (to NAME_MIN at least)
ERROR_WANT = 30
NAME_MIN = 12
_STATUS_STYLE = {"ok": "green", "error": "bold red", "isError": "bold red"}


def local_time(ms: int | None, tz: tzinfo | None = None) -> str:
    """An epoch-ms time as ``2026-11-27 14:03:05`` on the reader's clock (``tz``: the machine's)."""
    if ms is None:
        return "-"
    when = datetime.fromtimestamp(ms / 1000, UTC)
    return (when.astimezone(tz) if tz is not None else when.astimezone()).strftime("%Y-%m-%d %H:%M:%S")


def open_commands(call: Call, db: Path | None = None) -> list[str]:
    """The commands that open ``call``: ``mcpreel show ID`` (with ``--db`` when not the default index) and,
    when its record is known, ``mcpreel tui FILE --at N``; shell-quoted, ready to paste."""
    show = f"mcpreel show {call.id}" + (f" --db {shlex.quote(str(db))}" if db is not None else "")
    out = [show]
    if call.at is not None:
        out.append(f"mcpreel tui {shlex.quote(call.file)} --at {call.at}")
    return out


def _one_line(text: str | None) -> str:
    return terminal_safe(text or "", multiline=False)


def _status(call: Call) -> str:
    status = call.status or "-"
    return f"{status} {call.code}" if call.code is not None else status


def _latency(call: Call) -> str:
    return "-" if call.latency_ms is None else f"{duration_ms_text(call.latency_ms)} ms"


def _cut(text: str, width: int) -> str:
    if cell_len(text) <= width:
        return text
    out = ""
    for ch in text:
        if cell_len(out + ch) > width - 1:
            break
        out += ch
    return out + "…"


def call_lines(page: CallPage, *, width: int | None, db: Path | None = None, tz: tzinfo | None = None) -> list[Text]:
    """The heading, then each call's row and its open commands (see the module's doc); ``width`` None: piped,
    nothing cut."""
    rows = [[local_time(c.start_ms, tz), _one_line(c.server) or "-", _one_line(c.name), _one_line(_status(c)),
             _latency(c), _one_line(c.error_line)] for c in page.calls]
    widths = [max([cell_len(h)] + [cell_len(r[i]) for r in rows]) for i, h in enumerate(HEADINGS)]
    if width is not None:
        widths[1] = min(widths[1], NAME_MAX)
        widths[2] = min(widths[2], NAME_MAX)
        for i in (2, 1):  # a narrow terminal: the names give way (down to NAME_MIN) before the error does
            short = ERROR_WANT - (width - sum(widths[:5]) - 2 * 5)
            if short > 0:
                widths[i] -= min(short, max(0, widths[i] - NAME_MIN))
        widths[5] = max(ERROR_MIN, width - sum(widths[:5]) - 2 * 5)

    def line(cells: list[str], styles: list[str]) -> Text:
        text = Text()
        for i, (cell, w) in enumerate(zip(cells, widths, strict=True)):
            if i:
                text.append("  ")
            shown = _cut(cell, w) if width is not None else cell
            pad = w - cell_len(shown)
            if i == 4:  # latency: numbers to the right
                text.append(" " * pad + shown, style=styles[i])
            elif i == len(cells) - 1:
                text.append(shown, style=styles[i])
            else:
                text.append(shown + " " * pad, style=styles[i])
        text.rstrip()
        return text

    out = [line(list(HEADINGS), ["bold"] * len(HEADINGS))]
    for call, cells in zip(page.calls, rows, strict=True):
        status_style = _STATUS_STYLE.get(call.status or "", "yellow")
        out.append(line(cells, ["", "cyan", "bold", status_style, "", "red"]))
        out.append(Text("    " + "   ".join(open_commands(call, db)), style="dim"))
    return out


def to_json(page: CallPage, db: Path | None = None) -> list[dict[str, Any]]:
    """The calls as JSON objects: the row's fields (times as UTC ISO and as epoch ms, the whole error
    message as the index keeps it: redacted), where it is (file, line, record) and the commands that open it."""
    out: list[dict[str, Any]] = []
    for c in page.calls:
        commands = open_commands(c, db)
        out.append({"id": c.id, "time": iso_from_ms(c.start_ms) if c.start_ms is not None else None,
                    "start_ms": c.start_ms, "server": c.server, "client": c.client, "method": c.method,
                    "tool": c.tool, "target": c.target, "status": c.status, "code": c.code, "error": c.message,
                    "latency_ms": c.latency_ms, "file": c.file, "session": c.session, "line": c.line,
                    "record": c.at, "show": commands[0], "tui": commands[1] if len(commands) > 1 else None})
    return out
