"""The message list: a virtual list that draws only the lines on screen.

A ``DataTable`` of 100,000 rows builds every row up front and slows to a crawl; this list keeps the
indexes of the rows it shows (the filtered view) and asks its owner for the text of a line only when
that line is drawn, so opening a big file costs one row object a record and scrolling costs a screenful.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

__all__ = ["MessageList"]

Item = Any  # an int (a row of the session) or a str (a held message's hold id)


class MessageList(ScrollView, can_focus=True):
    """Lines of ``items``; the cursor line is highlighted and announced with :class:`Highlighted`."""

    BINDINGS = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown,space", "page(1)", "Page down", show=False),
        Binding("home,g", "jump(0)", "First", show=False),
        Binding("end,G", "jump(-1)", "Last", show=False),
    ]

    DEFAULT_CSS = """
    MessageList { background: $surface; overflow-x: hidden; }
    """

    cursor: reactive[int] = reactive(0, always_update=True)

    class Highlighted(Message):
        """The cursor moved to ``item``."""

        def __init__(self, item: Item | None) -> None:
            self.item = item
            super().__init__()

    def __init__(self, line: Callable[[Item], Text], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._line = line
        self.items: list[Item] = []
        self.follow = False  # keep the cursor on the last line as lines arrive (live)

    # -- content -----------------------------------------------------------------------------------
    def set_items(self, items: Sequence[Item], keep: Item | None = None) -> None:
        """Show ``items``; the cursor stays on ``keep`` when it is among them."""
        self.items = list(items)
        self._resize()
        target = 0
        if keep is not None:
            try:
                target = self.items.index(keep)
            except ValueError:
                target = min(self.cursor, max(0, len(self.items) - 1))
        if self.follow and self.items:
            target = len(self.items) - 1
        self.cursor = target
        self.refresh()

    def append(self, items: Sequence[Item]) -> None:
        """Add items at the end, following them when the cursor was on the last one."""
        if not items:
            return
        at_end = self.cursor >= len(self.items) - 1
        self.items.extend(items)
        self._resize()
        if self.follow and at_end:
            self.cursor = len(self.items) - 1
        elif len(self.items) == len(items):
            self.cursor = 0
        self.refresh()

    def current(self) -> Item | None:
        """The item under the cursor (None for an empty list)."""
        if 0 <= self.cursor < len(self.items):
            return self.items[self.cursor]
        return None

    def select(self, item: Item) -> bool:
        """Put the cursor on ``item``; False when it is not shown (filtered out)."""
        try:
            self.cursor = self.items.index(item)
        except ValueError:
            return False
        return True

    def _resize(self) -> None:
        # lines are cut to the width with an ellipsis, never scrolled sideways: a virtual width wider than
        # the lines (the vertical scrollbar takes a column) would add a horizontal scrollbar that hides
        # the last line
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.items))

    def _shown_lines(self) -> int:
        """How many lines the list shows (its height less any scrollbar)."""
        return max(1, self.scrollable_content_region.height)

    def on_resize(self) -> None:
        """Recompute what fits when the widget is resized, and keep the cursor's line in view (the list
        shrinks when the status or the header takes another line)."""
        self._resize()
        if self.items:
            self.call_after_refresh(self.scroll_to_region_line, self.cursor)

    # -- drawing -----------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if row >= len(self.items):
            return Strip.blank(width, base)
        text = self._line(self.items[row])
        text.no_wrap = True
        text.overflow = "ellipsis"
        if row == self.cursor:
            text.stylize(Style(reverse=True, bold=self.has_focus))
        segments = list(text.render(self.app.console))
        strip = Strip(segments).crop_extend(0, width, base)
        return strip.apply_offsets(scroll_x, row)

    def watch_cursor(self, old: int, new: int) -> None:
        if self.items:
            new = max(0, min(new, len(self.items) - 1))
            if new != self.cursor:
                self.cursor = new
                return
            self.scroll_to_region_line(new)
        self.refresh()
        self.post_message(self.Highlighted(self.current()))

    def scroll_to_region_line(self, line: int) -> None:
        top = self.scroll_offset.y
        height = self._shown_lines()
        if line < top:
            self.scroll_to(y=line, animate=False)
        elif line >= top + height:
            self.scroll_to(y=line - height + 1, animate=False)

    # -- keys and mouse ----------------------------------------------------------------------------
    def action_move(self, delta: int) -> None:
        self.follow = False if delta < 0 else self.follow
        self.cursor = self.cursor + delta

    def action_page(self, direction: int) -> None:
        self.cursor = self.cursor + direction * max(1, self._shown_lines() - 1)

    def action_jump(self, where: int) -> None:
        self.cursor = where if where >= 0 else len(self.items) - 1

    def on_click(self, event: Any) -> None:
        self.cursor = self.scroll_offset.y + event.y
