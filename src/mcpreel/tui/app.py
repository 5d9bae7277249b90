"""``mcpreel tui``: a Textual viewer of a session, from a file or live from a recording proxy.

The screen is a list of records (:class:`~mcpreel.tui.widgets.MessageList`, drawn lazily), a detail pane
with the selected message as indented JSON and its pair (request <-> response), a header naming the file
or proxy with its client sessions and their eras, and a filter line (``/``) that takes the filter tokens
of :mod:`mcpreel.control.filters` (the same words ``--intercept`` and ``--rules`` take).

Records reach the app in batches through :meth:`ViewerApp.add_records`, whoever reads them: a worker
thread reading a file (:class:`FileFeed`) or the control client of a live proxy (:mod:`mcpreel.tui.live`).
Held messages (live intercept) are listed after the records, marked HELD, until the proxy says they were
released; their keys (forward, edit, drop, inject) go to the feed, which speaks the control protocol. The
footer shows the keys of where the cursor is (a HELD row: forward, edit, drop), and quitting while
messages are held asks first: they would wait for another viewer, or their timeout.

The list has a heading line, and its columns are as wide as the longest method and tool seen (up to a
bound), each followed by a space, so a long name is cut with ``…`` rather than running into the next
column. ``s`` saves what the list shows (the filter applies), ``S`` every record.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual import events, on, work
from textual.app import App, ComposeResult, ScreenStackError
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import Footer, Input, Static

from mcpreel._infra import jsonio
from mcpreel._infra.timeutil import ms_from_iso, now_ms
from mcpreel.errors import McpreelError
from mcpreel.model import Kind, Message, Session, SessionInfo
from mcpreel.tui.entries import PENDING, Entries, Entry, pretty, when
from mcpreel.tui.widgets import MessageList

__all__ = ["FileFeed", "Held", "ViewerApp"]

#: records handed to the screen at a time while a file loads (one screen update a batch)
BATCH = 2000
#: a payload shorter than this is shown highlighted; a longer one as plain text (highlighting is slow)
_HIGHLIGHT_LIMIT = 20_000


@dataclass
class Held:
    """A message the proxy holds until someone decides (the control protocol's ``held``)."""

    hold: str
    direction: str  # client_to_server | server_to_client
    message: Any
    session: Any = None
    since: str | None = None
    timeout: float | None = None

    @property
    def label(self) -> str:
        """What the held message is, in the list: its method, or that it is an answer."""
        msg = self.message
        if isinstance(msg, dict):
            method = msg.get("method")
            if isinstance(method, str):
                return method
            return "(response)"
        return "(message)"

    @property
    def is_request(self) -> bool:
        """Whether dropping it needs an answer for the client (a request waits for one; nothing else does)."""
        return isinstance(self.message, dict) and "method" in self.message and "id" in self.message


class Feed(Protocol):
    """Where the records come from, and where decisions about held messages go (live only)."""

    live: bool

    def start(self, app: ViewerApp) -> None:
        """Begin delivering records to ``app`` (from a worker thread: the screen stays responsive)."""

    def decide(self, hold: str, action: str, message: Any = None, error: Any = None) -> None:
        """Release a held message: forward, edit (``message``), drop, or answer with ``error``."""

    def inject(self, direction: str, message: Any) -> None:
        """Send a message of the person's own into the live session."""

    def intercept(self, filter_text: str | None) -> None:
        """Hold the messages that match ``filter_text`` from now on (None: hold nothing)."""

    def stop(self) -> None:
        """Stop delivering records (the app is closing)."""


class FileFeed:
    """A recorded file, read in a worker thread and handed to the app in batches."""

    live = False

    def __init__(self, session: Session):
        self.session = session
        self._stop = threading.Event()

    def start(self, app: ViewerApp) -> None:
        """Read the file in a worker thread, delivering records in batches."""
        app.run_worker(lambda: self._read(app), thread=True, exclusive=True, group="feed")

    def _read(self, app: ViewerApp) -> None:
        try:
            self._feed(app)
        except RuntimeError:
            pass  # the app closed while the file was still being read: nobody to hand records to

    def _feed(self, app: ViewerApp) -> None:
        batch: list[Message] = []
        try:
            for msg in self.session:
                if self._stop.is_set():
                    return
                batch.append(msg)
                if len(batch) >= BATCH:
                    app.call_from_thread(app.add_records, batch)
                    batch = []
        except McpreelError as exc:
            app.call_from_thread(app.fail, exc)
            return
        if not self._stop.is_set():
            app.call_from_thread(app.add_records, batch)
            # every row is in (call_from_thread waited): the sessions are found here, off the screen's thread
            app.call_from_thread(app.loaded, app.entries.sessions_of())

    def decide(self, hold: str, action: str, message: Any = None, error: Any = None) -> None:
        """A file has nothing held: refused with a line saying so."""
        raise McpreelError("a file has no held messages")

    def inject(self, direction: str, message: Any) -> None:
        """A file cannot be written into: refused with a line saying what can."""
        raise McpreelError("inject needs a live proxy (mcpreel tui --attach)")

    def intercept(self, filter_text: str | None) -> None:
        """A file has no traffic to hold: refused with a line saying what can."""
        raise McpreelError("intercept needs a live proxy (mcpreel tui --attach)")

    def stop(self) -> None:
        """Stop reading (the reader thread checks between batches)."""
        self._stop.set()


_DIR = {"in": ("C→S", "cyan"), "out": ("S→C", "green")}

#: the bounds of the method and tool columns (as wide as the longest name seen, between these)
METHOD_WIDTH, TOOL_WIDTH = (12, 30), (6, 24)
ID_WIDTH, STATUS_WIDTH, LATENCY_WIDTH = 6, 13, 8
#: the bounds of the marks column ("[MODIFIED]", "[MODIFIED] [HELD 12.3s]"), as wide as the widest seen
MARKS_WIDTH = (5, 34)


def _cell(text: str, width: int) -> str:
    """``text`` in a column of ``width`` characters and the space after it: cut with … when longer."""
    return (text[: width - 1] + "…" if len(text) > width else text.ljust(width)) + " "


def _seconds(ms: int) -> str:
    return f"{ms}ms" if ms < 1000 else f"{ms / 1000:.1f}s"


def marks_of(e: Entry) -> str:
    """A row's marks: what an intercept did to it, then how long it was held (live): the first is what a
    narrow terminal must not cut off."""
    marks = e.flags()
    if e.held_ms is not None:
        marks.append(f"[HELD {_seconds(e.held_ms)}]")
    return " ".join(marks)


@dataclass
class Columns:
    """The widths of the list's columns, grown as longer names and marks arrive (the heading follows)."""

    method: int = METHOD_WIDTH[0]
    tool: int = TOOL_WIDTH[0]
    marks: int = MARKS_WIDTH[0]

    def fit(self, entries: Iterable[Entry]) -> bool:
        """Widen for ``entries``; True when a width changed."""
        before = (self.method, self.tool, self.marks)
        for e in entries:
            if len(e.label) > self.method:
                self.method = min(len(e.label), METHOD_WIDTH[1])
            if e.tool and len(e.tool) > self.tool:
                self.tool = min(len(e.tool), TOOL_WIDTH[1])
            if e.msg.modified or e.msg.dropped or e.msg.injected or e.held_ms is not None:
                self.marks = min(max(self.marks, len(marks_of(e))), MARKS_WIDTH[1])
        return (self.method, self.tool, self.marks) != before


class ViewerApp(App[None]):
    """The viewer. ``feed`` brings the records; ``save_path``/``save_format`` are what ``s`` writes."""

    TITLE = "mcpreel"
    CSS = """
    #header { height: auto; max-height: 4; background: $boost; padding: 0 1; }
    #main { height: 1fr; }
    #list-pane { width: 3fr; border-right: solid $primary-darken-2; }
    #columns { height: 1; background: $boost; text-style: bold; }
    MessageList { height: 1fr; }
    #detail-scroll { width: 2fr; padding: 0 1; }
    .-narrow #main { layout: vertical; }
    .-narrow #list-pane { width: 1fr; height: 1fr; border-right: none; border-bottom: solid $primary-darken-2; }
    .-narrow #detail-scroll { width: 1fr; height: 1fr; }
    #filter { dock: bottom; display: none; }
    #filter.shown { display: block; }
    #status { height: 1; padding: 0 1; background: $boost; }
    """

    #: below 120 columns the detail pane goes under the list, so a row keeps its status and marks
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]

    BINDINGS = [
        Binding("slash", "filter", "Filter"),
        Binding("p", "pair", "Pair"),
        Binding("tab", "switch", "Detail", show=False),
        Binding("s", "save", "Save shown"),
        Binding("S", "save_all", "Save all"),
        Binding("e", "export", "Export"),
        Binding("f", "forward", "Forward"),
        Binding("m", "edit", "Edit"),
        Binding("d", "drop", "Drop"),
        Binding("i", "inject", "Inject"),
        Binding("I", "intercept", "Intercept"),
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    #: the keys of a HELD row, and the keys of browsing (not offered on a HELD row: the footer shows
    #: what the cursor's row can do)
    HELD_ACTIONS = frozenset({"forward", "edit", "drop"})
    BROWSE_ACTIONS = frozenset({"pair", "save", "save_all", "export", "filter"})
    LIVE_ACTIONS = frozenset({"inject", "intercept"})

    def __init__(self, feed: Feed, info: SessionInfo, *, title: str, save_path: str | None = None,
                 save_format: str = "auto", filter_text: str = "", at: int | None = None):
        super().__init__()
        #: the record to put the cursor on once the file is read (``tui FILE --at N``, from ``mcpreel calls``)
        self.at = at
        self.feed = feed
        self.entries = Entries(info)
        self.title_text = title
        self.save_path = save_path or default_save_path(info, title)
        #: the format ``s``, ``S`` and ``e`` write; ``auto``: from the file name's ending
        self.save_format = save_format or "auto"
        self.columns = Columns()
        self._on_held = False  # the cursor is on a HELD row (the footer offers its keys)
        #: live: how long each released request was held, by (reel direction, id), until its record comes
        self._held_for: dict[tuple[str, str], int] = {}
        self.filter_text = filter_text
        self._filter: Any = None
        self.held: dict[str, Held] = {}
        self.intercept_text: str | None = None  # what a live proxy holds (its --intercept filter)
        self.error: McpreelError | None = None
        self.status_text = ""
        self._sessions_dirty = False
        self._sessions_next = 0.0  # monotonic time before which live sessions are not split again
        #: ``record --tui``: what the recorder says on stderr while the viewer owns the terminal is shown as a
        #: notification (Textual swallows it otherwise)
        self.show_stderr = False

    # -- layout ------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(id="header")
        with Horizontal(id="main"):
            with Vertical(id="list-pane"):
                yield Static(id="columns")
                yield MessageList(self.line_of, id="list")
            with VerticalScroll(id="detail-scroll"):
                yield Static(id="detail")
        yield Static(id="status")
        yield Input(placeholder="filter: method:tools/call tool:search dir:c2s status:error id:7 text:… (Enter)",
                    id="filter")
        yield Footer()

    def on_mount(self) -> None:
        """Focus the list, apply the filter given on the command line, and show the session header."""
        #: the screen of the list and the panes: records keep arriving while a dialog is on top
        self.main = self.screen
        self.list.follow = self.feed.live
        self.list.focus()
        if self.filter_text:
            self._set_filter(self.filter_text)
        self._show_header()
        self._show_columns()
        if self.show_stderr:
            self.begin_capture_print(self, stdout=False, stderr=True)
        self.feed.start(self)
        if self.feed.live:
            self.set_interval(1.0, self._refresh_sessions)

    def on_unmount(self) -> None:
        """Stop the feed with the app, so no worker outlives it."""
        self.feed.stop()

    def on_print(self, event: events.Print) -> None:
        """What a library writes to the terminal becomes a notification instead of breaking the screen."""
        text = event.text.strip()
        if text:
            self.notify(text, severity="warning" if text.startswith(("warning", "error")) else "information",
                        timeout=8)

    @property
    def list(self) -> MessageList:
        """The message list of the main screen (found there even while a dialog is on top)."""
        return self.main.query_one("#list", MessageList)

    # -- records in ----------------------------------------------------------------------------------
    def add_records(self, messages: Iterable[Message]) -> None:
        """New records (a file's next batch, or what a live proxy just wrote)."""
        added = self.entries.extend(messages)
        if not added:
            return
        if self._held_for:
            for e in added:
                self._take_held_time(e)
        if self.columns.fit(added):
            self._show_columns()
        shown = [e.index for e in added if self._keep(e)]
        held = [k for k in self.list.items if isinstance(k, str)]
        if held:  # held messages stay last
            rows = [k for k in self.list.items if not isinstance(k, str)]
            self.list.set_items(rows + shown + held, keep=self.list.current())
        else:
            self.list.append(shown)
        self._sessions_dirty = True
        self._show_status()
        current = self.list.current()
        if isinstance(current, int) and any(e.pair == current or e.index == current for e in added):
            self._show_detail(current)

    def loaded(self, sessions: tuple[Sequence[Any], Sequence[int | None]] | None = None) -> None:
        """A file has been read to its end: unanswered requests are known, and its sessions (found by the
        reading thread, or here)."""
        self.entries.finish()
        if sessions is not None:
            self.entries.set_sessions(*sessions)
            self._sessions_dirty = False
            self._show_header()
        self._refresh_sessions()
        if self.at is not None:
            at, self.at = self.at, None
            if not 0 <= at < len(self.entries.rows):
                self.notify(f"--at {at}: the file has {len(self.entries.rows):,} records (0 to "
                            f"{len(self.entries.rows) - 1:,})", severity="warning", timeout=5)
            elif not self.list.select(at):
                self.notify(f"--at {at}: record #{at} is hidden by the filter", severity="warning", timeout=5)
        self.list.refresh()
        self._show_status()

    def fail(self, exc: McpreelError) -> None:
        """Bad input found while reading: leave with its one line (the CLI prints it, exit 2)."""
        self.error = exc
        self.exit(return_code=exc.exit_code)

    def _refresh_sessions(self) -> None:
        """Find the sessions again after records arrived; live, at most every ten times what it took the last
        time (a long session is split over all its records, in the screen's thread)."""
        if not self._sessions_dirty or time.monotonic() < self._sessions_next:
            return
        if not self.main.query("#list"):
            return  # the interval's last tick as the app closes: its widgets are gone (kept dirty)
        self._sessions_dirty = False
        began = time.monotonic()
        self.entries.find_sessions()
        self._sessions_next = time.monotonic() + 10 * (time.monotonic() - began)
        self._show_header()
        self.list.refresh()

    # -- held messages (live) ----------------------------------------------------------------------------
    def hold(self, held: Held) -> None:
        """A message is held by the live proxy: list it, select it when following, and count it in the status."""
        new = held.hold not in self.held
        self.held[held.hold] = held
        if new:
            self.list.append([held.hold])
            if self.list.follow or len(self.held) == 1:
                self.list.select(held.hold)
        self._show_status()
        self.list.refresh()

    def released(self, hold: str, action: str, by: str) -> None:
        """A held message was released (here or by another viewer): take it off the list and say who did what."""
        held = self.held.pop(hold, None)
        if held is None:
            return
        if action in ("forward", "edit") and held.is_request:
            self._held_time(held)
        current = self.list.current()
        self.list.set_items([k for k in self.list.items if k != hold],
                            keep=current if current != hold else None)
        self.notify(f"{hold}: {action} (by {by})", timeout=3)
        self._show_status()
        self._quit_if_asked()

    def _quit_if_asked(self) -> None:
        """The quit question was only asked because messages were held: once none is, the answer is yes."""
        from mcpreel.tui.screens import QuitScreen

        if not self.held and isinstance(self.screen, QuitScreen):
            self.screen.dismiss(True)

    def _held_time(self, held: Held) -> None:
        """A held request went on: how long it waited, kept for its row (its record may come before or after)."""
        try:
            since = ms_from_iso(held.since) if isinstance(held.since, str) else None
        except ValueError:
            since = None
        if since is None:
            return
        key = (_reel_dir(held.direction), _id_key(held.message.get("id")))
        self._held_for[key] = max(0, now_ms() - since)
        for e in reversed(self.entries.rows[-200:]):  # the record came first
            if self._take_held_time(e):
                self.list.refresh()
                break

    def _take_held_time(self, e: Entry) -> bool:
        """Give a request row (and its answer) the time it was held, if it is one the viewer saw released."""
        msg = e.msg
        if not e.is_request or e.held_ms is not None or msg.decided_by is None or not isinstance(msg.raw, dict):
            return False
        ms = self._held_for.pop((msg.dir or "", _id_key(msg.raw.get("id"))), None)
        if ms is None:
            return False
        e.held_ms = ms
        if e.pair is not None:
            self.entries.rows[e.pair].held_ms = ms
        if self.columns.fit([e]):
            self._show_columns()
        return True

    # -- drawing -----------------------------------------------------------------------------------
    def heading(self) -> Text:
        """The column names over the list, in the widths of its rows."""
        c = self.columns
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{'#':>5} ")
        text.append("dir ")
        if len(self.entries.sessions) > 1:
            text.append("S  ")
        text.append(_cell("method", c.method) + _cell("tool", c.tool) + _cell("id", ID_WIDTH)
                    + _cell("status", STATUS_WIDTH) + f"{'latency':>{LATENCY_WIDTH}} " + _cell("marks", c.marks)
                    + "time (UTC)")
        return text

    def _show_columns(self) -> None:
        columns = self._static("#columns")
        if columns is not None:
            columns.update(self.heading())

    def line_of(self, item: Any) -> Text:
        """The list's line for an item (a held message by its hold id, a record by its row)."""
        if isinstance(item, str):
            return self._held_line(item)
        return self._entry_line(self.entries.rows[item])

    def _held_line(self, hold: str) -> Text:
        held = self.held.get(hold)
        if held is None:
            return Text("")
        d = "in" if held.direction == "client_to_server" else "out"
        msg = held.message if isinstance(held.message, dict) else {}
        tool = ""
        if held.label == "tools/call" and isinstance(msg.get("params"), dict):
            tool = str(msg["params"].get("name", ""))
        line = Text()
        line.append(" HELD ", style="bold black on yellow")
        line.append(f"{_DIR[d][0]} ")
        if len(self.entries.sessions) > 1:
            line.append("   ")
        line.append(_cell(held.label, self.columns.method), style="bold yellow")
        line.append(_cell(tool, self.columns.tool))
        line.append(_cell(str(msg.get("id", "")), ID_WIDTH))
        line.append(f"{hold}: f forward · m edit · d drop", style="yellow")
        if held.timeout is not None:
            line.append(f" (goes on unchanged after {held.timeout:g}s)", style="dim yellow")
        return line

    def _entry_line(self, e: Entry) -> Text:
        """One row: what matters first (the list is narrow beside the detail pane), times last."""
        msg = e.msg
        line = Text(no_wrap=True)
        number = msg.seq if msg.seq is not None else e.index
        line.append(f"{number:>5} ", style="dim")
        arrow, colour = _DIR.get(msg.dir or "", ("   ", "white"))
        line.append((arrow if msg.kind == Kind.MESSAGE else "   ") + " ", style=colour)
        if len(self.entries.sessions) > 1:
            line.append(_cell(f"S{e.session}" if e.session is not None else "", 2))
        if msg.kind != Kind.MESSAGE:
            style = ("red" if msg.kind == Kind.INVALID else "magenta" if msg.kind == Kind.STDERR
                     else "blue" if msg.kind == Kind.BYTES else "dim")
            line.append(_cell(e.label, self.columns.method), style=style + " bold")
            line.append(e.text() + " ", style=style)
            line.append(when(msg), style="dim")
            return line
        line.append(_cell(e.label, self.columns.method), style="bold")
        line.append(_cell(e.tool or "", self.columns.tool), style="cyan")
        line.append(_cell("" if e.id is None else str(e.id), ID_WIDTH))
        status_style = "red" if e.failed or e.status == "no answer" else "yellow" if e.status == PENDING else "green"
        line.append(_cell(e.status, STATUS_WIDTH), style=status_style)
        server = e.server_ms
        line.append(f"{'' if server is None else f'{server}ms':>{LATENCY_WIDTH}} ", style="dim")
        marks = marks_of(e)
        line.append(_cell(marks, self.columns.marks), style="bold red" if "[DROPPED]" in marks else "bold magenta")
        line.append(when(msg), style="dim")
        return line

    def _show_header(self) -> None:
        info = self.entries.info
        parts = [self.title_text]
        if info.source_format:
            parts.append(info.source_format)
        if info.transport:
            parts.append(info.transport)
        target = " ".join(info.command) if info.command else info.url
        if target:
            parts.append(target)
        text = Text(" · ".join(parts), style="bold")
        line = self.entries.session_line()
        if line:
            text.append("\n" + line, style="italic")
        header = self._static("#header")
        if header is not None:
            header.update(text)
        self._show_columns()

    def _show_status(self) -> None:
        n, shown = len(self.entries), len(self.list.items) - len(self.held)
        parts = [f"{n:,} records" if shown == n else f"{shown:,} of {n:,} records"]
        if self.filter_text:
            parts.append(f"filter: {self.filter_text}")
        if self.held:
            parts.append(f"{len(self.held)} held")
        if not self.feed.live and not self.entries.complete:
            parts.append("reading…")
        if self.status_text:
            parts.append(self.status_text)
        status = self._static("#status")
        if status is not None:
            status.update(" · ".join(parts))

    @on(MessageList.Highlighted)
    def _highlighted(self, event: MessageList.Highlighted) -> None:
        self._show_detail(event.item)
        on_held = isinstance(event.item, str)
        if on_held != self._on_held:  # the footer shows what this row can do (redrawn only when that changes)
            self._on_held = on_held
            try:
                self.refresh_bindings()
            except ScreenStackError:
                pass  # the app is closing: no footer to refresh

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Which keys the footer offers (and which work) where the cursor is: a HELD row's decisions there
        only, the browsing keys everywhere else, inject and intercept only live."""
        if action in self.HELD_ACTIONS or action in self.BROWSE_ACTIONS:
            try:
                on_held = isinstance(self.list.current(), str)
            except NoMatches:
                return True
            return on_held if action in self.HELD_ACTIONS else not on_held
        if action in self.LIVE_ACTIONS:
            return bool(self.feed.live)
        return True

    def _static(self, selector: str) -> Static | None:
        """A pane of the main screen; None while the app is closing (late messages find no widgets)."""
        try:
            return self.main.query_one(selector, Static)
        except NoMatches:
            return None

    def _show_detail(self, item: Any) -> None:
        detail = self._static("#detail")
        if detail is None:
            return
        if item is None:
            detail.update("")
            return
        if isinstance(item, str):
            held = self.held.get(item)
            if held is None:
                return
            title = Text(f"HELD {held.hold} ({held.direction})", style="bold black on yellow")
            keys = Text("f forward · m edit · d drop with an error · i inject", style="yellow")
            detail.update(Group(title, keys, _json(held.message)))
            return
        e = self.entries.rows[item]
        parts: list[RenderableType] = [self._title(e)]
        msg = e.msg
        if msg.kind == Kind.MESSAGE or msg.kind == Kind.EVENT:
            parts.append(_json(msg.raw))
        elif msg.kind == Kind.BYTES:
            parts.append(Text(e.text()))
            parts.append(Text(_hexdump(msg.raw if isinstance(msg.raw, bytes) else b""), style="dim"))
        else:
            parts.append(Text(msg.text or e.text()))
            if msg.ctx:
                parts.append(_json(msg.ctx))
        if msg.modified and msg.original is not None:
            parts.append(Text("\nthe original, before the edit:", style="bold magenta"))
            parts.append(_json(msg.original))
        if e.pair is not None:
            pair = self.entries.rows[e.pair]
            parts.append(Text(f"\n{'response' if e.is_request else 'request'} (p jumps there):", style="bold"))
            parts.append(self._title(pair))
            parts.append(_json(pair.msg.raw))
        elif e.status == PENDING:
            parts.append(Text("\nno answer yet", style="yellow"))
        detail.update(Group(*parts))
        self.main.query_one("#detail-scroll", VerticalScroll).scroll_home(animate=False)

    def _title(self, e: Entry) -> Text:
        msg = e.msg
        seq = msg.seq if msg.seq is not None else e.index
        text = Text(f"#{seq} ", style="bold")
        arrow = _DIR.get(msg.dir or "", ("", ""))[0]
        text.append(f"{arrow} {e.label}", style="bold")
        if e.tool:
            text.append(f" tool={e.tool}")
        if e.id is not None:
            text.append(f" id={e.id}")
        if e.latency_ms is not None and e.held_ms is not None:
            text.append(f" {e.latency_ms}ms: held {e.held_ms}ms, server {e.server_ms}ms")
        elif e.latency_ms is not None:
            text.append(f" {e.latency_ms}ms")
        if e.status:
            text.append(f" {e.status}", style="red" if e.failed else "")
        for flag in e.flags():
            text.append(" " + flag, style="magenta")
        if msg.decided_by:
            text.append(f" decided by {msg.decided_by}", style="magenta")
            if e.held_ms is None and e.latency_ms is not None and e.is_request:
                text.append(" (its latency includes the time it was held: a recording does not say how long)",
                            style="dim magenta")
        if e.session is not None and self.entries.sessions:
            s = self.entries.sessions[e.session - 1]
            text.append(f"\n{s.label()}", style="italic dim")
        if msg.t is not None:
            text.append(f"  {when(msg)}", style="dim")
        return text

    # -- filter ------------------------------------------------------------------------------------
    def _keep(self, e: Entry) -> bool:
        if self._filter is None:
            return True
        return self.entries.matches(self._filter, e)

    def _set_filter(self, text: str) -> bool:
        text = text.strip()
        if text:
            from mcpreel.control.filters import parse

            try:
                flt = parse(text)
            except (McpreelError, ValueError) as exc:
                self.notify(f"filter: {exc}", severity="error")
                return False
        else:
            flt = None
        self._filter, self.filter_text = flt, text
        current = self.list.current()
        rows = self.entries.select(self._keep)
        self.list.set_items(rows + list(self.held), keep=current)
        self._show_status()
        self._show_detail(self.list.current())
        return True

    def action_filter(self) -> None:
        """Show and focus the filter box with the current filter."""
        box = self.main.query_one("#filter", Input)
        box.add_class("shown")
        box.value = self.filter_text
        box.focus()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        if self._set_filter(event.value):
            event.input.remove_class("shown")
            self.list.focus()

    def key_escape(self) -> None:
        """Escape closes the filter box and returns to the list."""
        box = self.main.query_one("#filter", Input)
        if box.has_class("shown"):
            box.remove_class("shown")
            self.list.focus()

    # -- moving ------------------------------------------------------------------------------------
    def action_pair(self) -> None:
        """Jump between a request and its answer."""
        current = self.list.current()
        if not isinstance(current, int):
            return
        pair = self.entries.rows[current].pair
        if pair is None:
            self.notify("this record has no pair", timeout=2)
            return
        if not self.list.select(pair):
            self.notify(f"its pair (#{pair}) is hidden by the filter", severity="warning", timeout=3)

    def action_switch(self) -> None:
        """Move the focus between the list and the detail pane."""
        if self.list.has_focus:
            self.main.query_one("#detail-scroll", VerticalScroll).focus()
        else:
            self.list.focus()

    # -- save and export -----------------------------------------------------------------------------
    def shown_rows(self) -> Sequence[int]:
        """The records the list shows (the filter applied), in order; held messages are not records."""
        return [item for item in self.list.items if isinstance(item, int)]

    def _open_save(self, *, everything: bool, choose: bool) -> None:
        from mcpreel.tui.screens import SaveScreen

        n = len(self.entries) if everything else len(self.shown_rows())
        what = f"every record ({n:,})" if everything or not self.filter_text else \
            f"the {n:,} records shown (filter: {self.filter_text})"
        verb = "Export" if choose else "Save"

        def chosen(choice: tuple[str, str] | None) -> None:
            if choice is not None:
                self.save_to(choice[0], choice[1], None if everything else self.shown_rows())

        self.push_screen(SaveScreen(self.save_path, self.save_format, title=f"{verb} {what}", choose=choose), chosen)

    def action_save(self) -> None:
        """``s``: what the list shows (the filter applies)."""
        self._open_save(everything=False, choose=False)

    def action_save_all(self) -> None:
        """``S``: every record, whatever the filter."""
        self._open_save(everything=True, choose=False)

    def action_export(self) -> None:
        """``e``: what the list shows, the format chosen first (or ``auto``: from the file name)."""
        self._open_save(everything=False, choose=True)

    @work(thread=True, exclusive=True, group="save")
    def save_to(self, path: str, fmt: str, rows: Sequence[int] | None = None) -> None:
        """Write ``rows`` (every record when None) to ``path`` as ``fmt`` (atomic, mode 0600); ``auto`` takes
        the format from the file name's ending and refuses a name that does not say one."""
        from mcpreel.convert import write_session
        from mcpreel.formats import format_for_name, writer_names

        session = self.entries.session(rows)
        try:
            if fmt in ("", "auto"):
                match = format_for_name(path, session.info.transport)
                if match is None:
                    raise McpreelError(f"cannot tell the format from the name {path!r}: end it with a format's "
                                       f"ending (.jsonl, .har, .qai.json …) or choose one "
                                       f"({', '.join(writer_names())})")
                fmt, how = match.format, "from the file name"
            else:
                how = "chosen"
            features, lost, _ = write_session(session, path, fmt)
        except McpreelError as exc:
            self.call_from_thread(self.notify, str(exc), severity="error", timeout=8)
            return
        note = f"saved {features.records:,} records to {path} ({fmt}, {how})"
        if lost:
            note += f"; {fmt} drops {', '.join(lost)}"
        self.call_from_thread(self._saved, note)

    def _saved(self, note: str) -> None:
        self.status_text = note
        self._show_status()
        self.notify(note, timeout=5)

    # -- quitting ------------------------------------------------------------------------------------
    async def action_quit(self) -> None:
        """``q``: with messages held, asked first (they would wait for another viewer, or their timeout)."""
        if not self.held:
            self.exit()
            return
        from mcpreel.tui.screens import QuitScreen

        def chosen(leave: bool | None) -> None:
            if leave:
                self.exit()

        self.push_screen(QuitScreen(len(self.held), self._held_fate()), chosen)

    def _held_fate(self) -> str:
        timeouts = {h.timeout for h in self.held.values()}
        if timeouts == {None}:
            return "they keep waiting until a viewer attaches again"
        if None not in timeouts and len(timeouts) == 1:
            return f"they go on unchanged after their {timeouts.pop():g}s timeout"
        return "they keep waiting for a viewer, or go on unchanged after their timeout"

    def action_help(self) -> None:
        """Show the keys (the live ones only when attached to a proxy)."""
        from mcpreel.tui.screens import HelpScreen

        self.push_screen(HelpScreen(live=self.feed.live))

    # -- decisions (live) ----------------------------------------------------------------------------
    def _held_current(self) -> Held | None:
        current = self.list.current()
        if isinstance(current, str) and current in self.held:
            return self.held[current]
        if self.held and self.feed.live:
            self.notify("move to a HELD line first", timeout=2)
        elif self.feed.live:
            self.notify("nothing is held", timeout=2)
        else:
            self.notify("held messages exist only live (mcpreel tui --attach)", timeout=3)
        return None

    def _send(self, fn: Any, *args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except McpreelError as exc:
            self.notify(str(exc), severity="error", timeout=5)

    def action_forward(self) -> None:
        """Release the selected held message unchanged."""
        held = self._held_current()
        if held is not None:
            self._send(self.feed.decide, held.hold, "forward")

    def action_edit(self) -> None:
        """Edit the selected held message as JSON, then release the edited one."""
        held = self._held_current()
        if held is None:
            return
        from mcpreel.tui.screens import EditScreen

        def done(message: Any) -> None:
            if message is not None:
                self._send(self.feed.decide, held.hold, "edit", message=message)

        self.push_screen(EditScreen(held.message, title=f"Edit {held.hold} ({held.label})"), done)

    def action_drop(self) -> None:
        """Drop the selected held message (a request asks for the error its client gets)."""
        held = self._held_current()
        if held is None:
            return
        if not held.is_request:
            self._send(self.feed.decide, held.hold, "drop")
            return
        from mcpreel.tui.screens import DropScreen

        def done(error: Any) -> None:
            if error is not None:
                self._send(self.feed.decide, held.hold, "drop", error=error)

        self.push_screen(DropScreen(), done)

    def action_inject(self) -> None:
        """Compose a message and send it into the live session."""
        if not self.feed.live:
            self.notify("inject needs a live proxy (mcpreel tui --attach)", timeout=3)
            return
        from mcpreel.tui.screens import InjectScreen

        def done(choice: tuple[str, Any] | None) -> None:
            if choice is not None:
                self._send(self.feed.inject, choice[0], choice[1])

        self.push_screen(InjectScreen(), done)

    def action_intercept(self) -> None:
        """Change which messages the live proxy holds."""
        if not self.feed.live:
            self.notify("intercept needs a live proxy (mcpreel tui --attach)", timeout=3)
            return
        from mcpreel.tui.screens import InterceptScreen

        def done(text: str | None) -> None:
            if text is None:
                return
            from mcpreel.control.filters import FilterError, parse

            try:
                parse(text)
            except FilterError as exc:
                self.notify(f"intercept: {exc}", severity="error")
                return
            self.intercept_text = text or None
            self._send(self.feed.intercept, text or None)
            self.title_text = self._title_with_intercept()
            self._show_header()

        self.push_screen(InterceptScreen(self.intercept_text), done)

    def _title_with_intercept(self) -> str:
        words = [w for w in self.title_text.split(" · ") if not w.startswith("intercept ")]
        if self.intercept_text:
            words.insert(1, f"intercept {self.intercept_text}")
        return " · ".join(words)

    def disconnected(self) -> None:
        """The control connection closed (the proxy ended or went away): nothing is held any more."""
        for hold in list(self.held):
            self.held.pop(hold)
        self.list.set_items([k for k in self.list.items if not isinstance(k, str)], keep=self.list.current())
        if not self.status_text.startswith("the recording ended"):
            self.status_text = "the proxy closed the control connection"
        self.status_text += " (s still saves what is shown)"
        self._refresh_sessions()
        self._show_status()
        self._quit_if_asked()

    def ended(self, exit_code: Any, reason: str) -> None:
        """The recording ended: say how in the status line and a notification."""
        self.status_text = f"the recording ended ({reason}, exit {exit_code})"
        self._show_status()
        self.notify(self.status_text, timeout=10)


def _reel_dir(direction: str) -> str:
    """The control protocol's direction as the reel's (``in``: client to server)."""
    return "in" if direction == "client_to_server" else "out"


def _id_key(value: Any) -> str:
    """A JSON-RPC id as a key (7 and "7" are different ids)."""
    return jsonio.dumps(value).decode("utf-8", "replace")


def _hexdump(data: bytes, limit: int = 4096) -> str:
    """A raw chunk as offset, hex and text columns (the first ``limit`` bytes: a pane, not a file)."""
    rows = []
    for at in range(0, min(len(data), limit), 16):
        part = data[at : at + 16]
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in part)
        rows.append(f"{at:08x}  {part.hex(' '):<47}  {text}")
    if len(data) > limit:
        rows.append(f"… {len(data) - limit} more bytes")
    return "\n".join(rows)


def _json(value: Any) -> RenderableType:
    text = pretty(value)
    if len(text) <= _HIGHLIGHT_LIMIT:
        return Syntax(text, "json", theme="ansi_dark", word_wrap=True, background_color="default")
    return Text(text)


def default_save_path(info: SessionInfo, title: str) -> str:
    """Where ``s`` saves unless told: beside the current folder, named after the file or the session."""
    stem = Path(info.path).name if info.path else (info.label or "session")
    for ending in (".jsonl", ".json"):
        if stem.endswith(ending):
            stem = stem[: -len(ending)]
    return f"{stem}-saved.jsonl"

