"""``record --tui`` for the HTTP transports: the proxy in a background thread, the viewer in this terminal.

An HTTP proxy's terminal is free (the client talks to it over the network), so the viewer can run there,
attached to the proxy's own control socket like any other viewer. Everything the recorder would say on
stderr while the viewer owns the screen (warnings, the listener's log) is kept and said after it closes;
closing the viewer stops the recording, as Ctrl+C would without it.

The stdio proxy cannot do this: its stdin and stdout are the MCP client's pipe (``record_cmd`` refuses).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from mcpreel.errors import TransportError, UsageError

__all__ = ["record_under_viewer"]

#: how long the proxy may take to listen and publish its control socket
START_TIMEOUT = 15.0


class _Keep(logging.Handler):
    """Log records kept for later (the listener's warnings would draw over the viewer)."""

    def __init__(self, notes: list[str]):
        super().__init__(logging.WARNING)
        self.notes = notes

    def emit(self, record: logging.LogRecord) -> None:
        self.notes.append(f"warning: {record.getMessage()}")


def record_under_viewer(run: Callable[..., Any], socket_path: Callable[[], str | os.PathLike[str]], *,
                        say: Callable[[str], None] = lambda text: None) -> Any:
    """Run ``run(ready=, warn=, handle_signals=False, on_server=)`` (the HTTP recorder) in a thread and the
    viewer, attached to the proxy's control socket (``socket_path()``, known once the proxy listens), on
    this terminal until the person quits it; then stop the proxy and return its result. ``say`` gets what
    the recorder said meanwhile."""
    from mcpreel.tui.live import live_app

    notes: list[str] = []
    holder: dict[str, Any] = {}
    listening = threading.Event()

    def ready(url: str) -> None:
        holder["url"] = url
        listening.set()

    def work() -> None:
        try:
            holder["result"] = run(ready=ready, warn=lambda text: notes.append(f"warning: {text}"),
                                   handle_signals=False, on_server=lambda server: holder.__setitem__("server", server))
        except BaseException as exc:  # said in the main thread, where the exit path is
            holder["error"] = exc
        finally:
            listening.set()

    keep = _Keep(notes)
    logging.getLogger().addHandler(keep)
    thread = threading.Thread(target=work, name="mcpreel-record-tui", daemon=True)
    thread.start()
    try:
        listening.wait(START_TIMEOUT)
        if "error" in holder:
            raise holder["error"]
        if "url" not in holder:
            raise TransportError("the proxy did not start listening")
        app = live_app(os.fspath(socket_path()))
        app.show_stderr = True
        app.title_text = f"point your MCP client at {holder['url']} · q stops the recording · {app.title_text}"
        app.run()
    finally:
        server = holder.get("server")
        if server is not None:
            server.stop()
        thread.join(30)
        logging.getLogger().removeHandler(keep)
        for note in notes:
            say(note)
    if "error" in holder:
        raise holder["error"]
    if "result" not in holder:
        raise UsageError("the recording did not stop within 30 s")
    return holder["result"]
