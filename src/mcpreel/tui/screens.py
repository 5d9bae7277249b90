"""The viewer's dialogs: save/export, help, quit, and the live ones (edit a held message, drop it, inject one).

An edited or injected message is checked here as a JSON-RPC message (the control protocol's own check,
:func:`mcpreel.control.protocol.validate_message`) before it goes to the proxy, which checks it again: the
person sees what is wrong at once, in the editor, instead of an error line later.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from typing import Any

from textual import on
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Input, Label, Select, Static, TextArea

from mcpreel._infra import jsonio
from mcpreel.control.protocol import validate_message
from mcpreel.formats import writer_names

__all__ = ["DropScreen", "EditScreen", "HelpScreen", "InjectScreen", "InterceptScreen", "QuitScreen", "SaveScreen"]

_DIALOG_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{ width: 90%; max-width: 110; height: auto; max-height: 90%; border: thick $primary;
                     background: $surface; padding: 1 2; }}
{name} Label.title {{ text-style: bold; margin-bottom: 1; }}
{name} Label.problem {{ color: $error; height: auto; }}
{name} Horizontal {{ height: auto; margin-top: 1; }}
"""


def _checked(screen: Screen[Any]) -> Any | None:
    """The screen's ``#json`` text as a JSON-RPC message, or None after showing in ``#problem`` why not."""
    value, problem = _parse(screen.query_one("#json", TextArea).text)
    if problem is not None:
        screen.query_one("#problem", Label).update(problem)
        return None
    return value


def _parse(text: str) -> tuple[Any, str | None]:
    try:
        value = jsonio.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"not JSON: {exc}"
    return value, validate_message(value)


class SaveScreen(ModalScreen[tuple[str, str] | None]):
    """Where to write the session, and as what: ``auto`` (the format the file name's ending says, unless
    --save-format chose one) or a format picked here (``e`` opens with the list focused)."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="SaveScreen")
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, path: str, fmt: str, *, title: str, choose: bool = False):
        super().__init__()
        self.path, self.fmt, self.title_text, self.choose = path, fmt, title, choose

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, classes="title")
            yield Label("Format (auto: from the file name):")
            options = [("auto", "auto")] + [(n, n) for n in writer_names()]
            self._shown_format = self.fmt if self.fmt in writer_names() else "auto"
            yield Select(options, value=self._shown_format, allow_blank=False, id="format")
            yield Label("File (written atomically, mode 0600):")
            yield Input(self.path, id="path")
            with Horizontal():
                yield Button("Save", variant="primary", id="ok")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#format" if self.choose else "#path").focus()

    @on(Select.Changed, "#format")
    def _format_changed(self, event: Select.Changed) -> None:
        """Exporting to another format renames the file's ending to that format's own."""
        from mcpreel.formats import FORMATS

        fmt = str(event.value)
        if fmt == self._shown_format:
            return  # the value it opened with (Select announces it too)
        self._shown_format = fmt
        spec = FORMATS.get(fmt)
        if spec is None or not spec.suffixes():
            return
        box = self.query_one("#path", Input)
        ending = spec.suffixes()[0].text
        path = box.value
        for old in sorted({s.text for f in FORMATS.values() for s in f.suffixes()}, key=len, reverse=True):
            if path.endswith(old):
                path = path[: -len(old)]
                break
        box.value = path + ending

    @on(Input.Submitted, "#path")
    @on(Button.Pressed, "#ok")
    def _ok(self) -> None:
        path = self.query_one("#path", Input).value.strip()
        if not path:
            self.notify("give a file name", severity="error")
            return
        self.dismiss((path, str(self.query_one("#format", Select).value)))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


HELP = """\
[b]Keys[/b]
  ↑ ↓ j k, PgUp PgDn, Home End   move in the list (click works too)
  tab        switch between the list and the detail pane
  p          jump to the pair: a request's response, a response's request
  /          filter (Enter applies, an empty filter shows all, Esc closes)
  s          save what is shown (the filter applies)      S  save every record
  e          export what is shown: choose a format (auto: from the file name's ending) and a file
  ?          this help       q  quit (asks first while messages are held)
[b]Live (mcpreel tui --attach)[/b] — the footer shows the keys of the row you are on: on a HELD row f m d i I
  f          forward the HELD message as it is
  m          edit it: a JSON editor, checked as JSON-RPC before it goes (ctrl+o: your $EDITOR)
  d          drop it; a dropped request is answered with a JSON-RPC error you choose
  i          inject a new message, to the server or to the client
  I          change what the proxy holds (its --intercept filter; empty: hold nothing)
[b]Filter tokens[/b] (combined: all must match; the same key twice: either, except words)
  method:tools/call  tool:search  dir:c2s (C→S) | dir:s2c (S→C)  status:error | status:ok
  id:7  kind:request|response|notification  text:word   (a bare word is text:; every word must be
  found: user 99999 is both words, "user 99999" in quotes the phrase)
[b]Marks[/b]
  C→S client to server, S→C server to client, \\[MODIFIED] edited on the way (the original is in
  the detail), \\[DROPPED] never delivered, \\[INJECTED] made up by the proxy, HELD waiting for you,
  \\[HELD 2.0s] how long you held it (live): the latency column is then the server's time alone
"""


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = _DIALOG_CSS.format(name="HelpScreen")
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close")]

    def __init__(self, live: bool = False):
        super().__init__()
        self.live = live

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("mcpreel tui", classes="title")
            yield Static(HELP, id="help")

    def action_close(self) -> None:
        self.dismiss(None)


class QuitScreen(ModalScreen[bool]):
    """Quit while messages are held? They are not lost: they wait for another viewer, or their timeout."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="QuitScreen")
    BINDINGS = [Binding("y", "leave", "Quit"), Binding("escape,n", "stay", "Stay")]

    def __init__(self, held: int, fate: str):
        super().__init__()
        self.held, self.fate = held, fate

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"{self.held} message{'s are' if self.held != 1 else ' is'} held — quit anyway?",
                        classes="title")
            yield Label(f"If you quit, {self.fate}.", id="fate")
            with Horizontal():
                yield Button("Quit (y)", variant="error", id="leave")
                yield Button("Stay (n, Esc)", variant="primary", id="stay")

    def on_mount(self) -> None:
        self.query_one("#stay", Button).focus()

    @on(Button.Pressed, "#leave")
    def action_leave(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#stay")
    def action_stay(self) -> None:
        self.dismiss(False)


class EditScreen(ModalScreen[Any]):
    """A JSON editor for a held message; ``ctrl+s`` sends it once it is valid JSON-RPC."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="EditScreen") + "EditScreen TextArea { height: 20; }"
    BINDINGS = [Binding("ctrl+s", "send", "Send"), Binding("ctrl+o", "external", "$EDITOR"),
                Binding("escape", "cancel", "Cancel")]

    def __init__(self, message: Any, *, title: str):
        super().__init__()
        self.message, self.title_text = message, title

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"{self.title_text} — ctrl+s send · ctrl+o $EDITOR · esc cancel", classes="title")
            yield TextArea(jsonio.dumps_indented(self.message).decode("utf-8"), language=None, id="json")
            yield Label("", classes="problem", id="problem")

    def on_mount(self) -> None:
        self.query_one("#json", TextArea).focus()

    def action_send(self) -> None:
        value = _checked(self)
        if value is not None:
            self.dismiss(value)

    def action_external(self) -> None:
        """Edit in ``$VISUAL``/``$EDITOR`` (vi), the terminal handed over while it runs."""
        area = self.query_one("#json", TextArea)
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        fd, path = tempfile.mkstemp(prefix="mcpreel-edit-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(area.text)
            with self.app.suspend():
                subprocess.run([*shlex.split(editor), path], check=False)
            with open(path, encoding="utf-8") as fh:
                area.text = fh.read()
        except (OSError, ValueError) as exc:  # no such editor, or $EDITOR's quotes do not close
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.query_one("#problem", Label).update(f"$EDITOR {editor}: {why}")
            return
        except SuspendNotSupported:
            self.query_one("#problem", Label).update("this terminal cannot be handed to $EDITOR; edit here")
            return
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass
        _, problem = _parse(area.text)
        self.query_one("#problem", Label).update(problem or "")

    def action_cancel(self) -> None:
        self.dismiss(None)


class DropScreen(ModalScreen[dict[str, Any] | None]):
    """The JSON-RPC error a dropped request is answered with (the defaults are the contract's)."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="DropScreen")
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Drop the request; its sender gets this JSON-RPC error:", classes="title")
            yield Label("code")
            yield Input("-32001", id="code")
            yield Label("message")
            yield Input("dropped by the viewer", id="message")
            yield Label("", classes="problem", id="problem")
            with Horizontal():
                yield Button("Drop", variant="error", id="ok")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#message", Input).focus()

    @on(Input.Submitted)
    @on(Button.Pressed, "#ok")
    def _ok(self) -> None:
        try:
            code = int(self.query_one("#code", Input).value.strip())
        except ValueError:
            self.query_one("#problem", Label).update("the code is an integer")
            return
        self.dismiss({"code": code, "message": self.query_one("#message", Input).value})

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


_INJECT_DEFAULT = '{\n  "jsonrpc": "2.0",\n  "method": "notifications/message",\n  "params": {"level": "info", "data": "from mcpreel"}\n}'


class InjectScreen(ModalScreen[tuple[str, Any] | None]):
    """A new message to send, to the server or to the client."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="InjectScreen") + "InjectScreen TextArea { height: 14; }"
    BINDINGS = [Binding("ctrl+s", "send", "Send"), Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Inject a message — ctrl+s send · esc cancel", classes="title")
            yield Select([("to the client (server_to_client)", "server_to_client"),
                          ("to the server (client_to_server)", "client_to_server")],
                         value="server_to_client", allow_blank=False, id="direction")
            yield TextArea(_INJECT_DEFAULT, id="json")
            yield Label("", classes="problem", id="problem")

    def on_mount(self) -> None:
        self.query_one("#json", TextArea).focus()

    def action_send(self) -> None:
        value = _checked(self)
        if value is not None:
            self.dismiss((str(self.query_one("#direction", Select).value), value))

    def action_cancel(self) -> None:
        self.dismiss(None)


class InterceptScreen(ModalScreen[str | None]):
    """What the proxy holds from now on: filter tokens, or nothing (an empty line turns holding off)."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="InterceptScreen")
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, current: str | None):
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Hold what matches (filter tokens; empty: hold nothing) — Enter sends, Esc cancels",
                        classes="title")
            yield Input(self.current or "", placeholder="dir:c2s kind:request", id="intercept")

    def on_mount(self) -> None:
        self.query_one("#intercept", Input).focus()

    @on(Input.Submitted, "#intercept")
    def _ok(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
