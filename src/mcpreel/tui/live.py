"""A running recording proxy as the viewer's feed, through its control socket (:mod:`mcpreel.control`).

The proxy sends every reel line it writes (the backlog first, on attach), the messages it holds and what
became of them; the viewer sends decisions back. :class:`LiveFeed` reads in a worker thread and hands the
app records in batches (the backlog of a long session arrives at once; one screen update per batch), and
the held / released / end events one by one. Decisions are sent from worker threads too: the proxy
answers each with ``ok`` or ``error`` and the viewer must not freeze while it waits.

A record line that breaks the reel's rules is skipped with a warning: a viewer that stops on one bad line
would leave held messages waiting for nobody.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from mcpreel.control.client import ControlClient, ControlError
from mcpreel.errors import McpreelError, UsageError
from mcpreel.formats._source import Source
from mcpreel.formats.reel import record_of_line
from mcpreel.model import Message, SessionInfo
from mcpreel.tui.app import BATCH, Held, ViewerApp

__all__ = ["LiveFeed", "connect", "live_app", "proxy_info"]


def proxy_info(proxy: dict[str, Any]) -> SessionInfo:
    """The session header a live proxy's description gives (``hello``'s ``proxy``)."""
    target = proxy.get("target")
    info = SessionInfo(transport=proxy.get("transport") if isinstance(proxy.get("transport"), str) else None,
                       path=str(proxy["reel"]) if isinstance(proxy.get("reel"), str) else None)
    if isinstance(target, list):
        info.command = [str(x) for x in target]
    elif isinstance(target, str):
        info.url = target
    return info


def proxy_title(proxy: dict[str, Any]) -> str:
    words = [f"live: pid {proxy.get('pid')}"]
    if proxy.get("listen"):
        words.append(f"listening on {proxy['listen']}")
    if proxy.get("intercept"):
        words.append(f"intercept {proxy['intercept']}")
    if proxy.get("reel"):
        words.append(f"reel {proxy['reel']}")
    return " · ".join(words)


class LiveFeed:
    """Records, held messages and decisions over one control connection."""

    live = True

    def __init__(self, client: ControlClient):
        self.client = client
        self.app: ViewerApp | None = None
        reel = client.proxy.get("reel")
        self._source = Source(reel if isinstance(reel, str) else "control socket")
        self._bad = 0
        self._stopped = False

    def start(self, app: ViewerApp) -> None:
        self.app = app
        app.run_worker(self._read, thread=True, group="feed")

    def _record(self, obj: Any) -> Message | None:
        seq = obj.get("seq") if isinstance(obj, dict) else None
        try:
            return record_of_line(obj, seq + 1 if isinstance(seq, int) else 0, self._source)
        except McpreelError as exc:
            self._bad += 1
            assert self.app is not None
            self.app.call_from_thread(self.app.notify, f"a record the proxy sent was skipped: {exc}",
                                      severity="warning")
            return None

    def _read(self) -> None:
        app = self.app
        assert app is not None
        client = self.client
        batch: list[Message] = []

        def flush() -> None:
            nonlocal batch
            if batch:
                tell(app.add_records, batch)
                batch = []

        def tell(fn: Any, *args: Any) -> None:
            if not self._stopped:  # the app is closing: nobody to tell, and waiting on its loop would hang
                try:
                    app.call_from_thread(fn, *args)
                except RuntimeError:
                    self._stopped = True

        while True:
            event = client.next_event(timeout=0.05 if batch else 0.5)
            if event is None:
                flush()
                if client.closed or self._stopped:
                    break
                continue
            kind = event.get("type")
            if kind == "record":
                msg = self._record(event.get("record"))
                if msg is not None:
                    batch.append(msg)
                if len(batch) >= BATCH:
                    flush()
                continue
            flush()
            if kind == "held":
                held = Held(str(event.get("hold")), str(event.get("direction")), event.get("message"),
                            event.get("session"), event.get("since"), event.get("timeout"))
                tell(app.hold, held)
            elif kind == "released":
                tell(app.released, str(event.get("hold")), str(event.get("action")), str(event.get("by")))
            elif kind == "end":
                tell(app.ended, event.get("exit_code"), str(event.get("reason") or "ended"))
            elif kind == "error":
                tell(functools.partial(app.notify, severity="error"), f"proxy: {event.get('message')}")
        tell(app.disconnected)

    def _command(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> None:
        app = self.app
        assert app is not None

        def run() -> None:
            try:
                fn(*args, **kwargs)
            except ControlError as exc:
                app.call_from_thread(app.notify, f"{what}: {exc}", severity="error", timeout=8)

        app.run_worker(run, thread=True, group="commands")

    def decide(self, hold: str, action: str, message: Any = None, error: Any = None) -> None:
        self._command(f"{action} {hold}", self.client.decide, hold, action, message=message, error=error)

    def inject(self, direction: str, message: Any) -> None:
        self._command("inject", self.client.inject, direction, message)

    def intercept(self, filter_text: str | None) -> None:
        self._command("intercept", self.client.intercept, filter_text)

    def stop(self) -> None:
        self._stopped = True
        self.client.close()


def connect(path: str | Path) -> ControlClient:
    """The control connection at ``path``; a socket nobody answers on is one clear error (exit 2)."""
    try:
        return ControlClient.connect(path)
    except ControlError as exc:
        raise UsageError(str(exc)) from exc


def live_app(path: str | Path, *, save_path: str | None = None, save_format: str = "auto",
             filter_text: str = "") -> ViewerApp:
    """The viewer attached to the proxy whose control socket is ``path``."""
    client = connect(path)
    app = ViewerApp(LiveFeed(client), proxy_info(client.proxy), title=proxy_title(client.proxy),
                    save_path=save_path, save_format=save_format, filter_text=filter_text)
    intercept = client.proxy.get("intercept")
    app.intercept_text = intercept if isinstance(intercept, str) and intercept else None
    return app
