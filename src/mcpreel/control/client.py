"""A small client of the control channel, for viewers (the TUI, tests, scripts). Synchronous, thread-based.

:class:`ControlClient` connects to a proxy's socket, reads the ``hello`` and then keeps one background
thread reading: every proxy message goes into a queue that :meth:`ControlClient.events` (or
:meth:`ControlClient.next_event`) hands out in order, and the ``ok`` / ``error`` answers to commands that
carried a ``ref`` also settle those commands. Commands (:meth:`decide`, :meth:`forward`, :meth:`edit`,
:meth:`drop`, :meth:`inject`, :meth:`intercept`) are thread-safe and by default wait for the proxy's answer,
raising :class:`ControlError` with the proxy's message when it refused; ``wait=False`` sends and returns.

Why threads and not asyncio: the viewer (Textual) and the tests each have their own loop or none; a
blocking client run from a worker thread (Textual's ``run_worker(thread=True)``, or a plain thread) fits
both without tying the library to one loop. Events can be consumed from any one thread.

Example::

    with ControlClient.connect(path) as c:
        for event in c.events():
            if event["type"] == "held":
                c.edit(event["hold"], {**event["message"], "params": {...}})
"""

from __future__ import annotations

import itertools
import queue
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcpreel._infra import jsonio, platform
from mcpreel.control import discovery, protocol

__all__ = ["ControlClient", "ControlError", "pick"]


class ControlError(Exception):
    """The proxy refused a command (its ``error`` message), or the connection is gone."""


_CLOSED = object()


class ControlClient:
    """One connection to a proxy's control socket (see the module docstring)."""

    def __init__(self, sock: socket.socket, timeout: float = 10.0):
        self._sock = sock
        self._file = sock.makefile("rb")
        self._send_lock = threading.Lock()
        self._events: queue.Queue[Any] = queue.Queue()
        self._waiting: dict[Any, queue.Queue[dict[str, Any]]] = {}
        self._waiting_lock = threading.Lock()
        self._refs = itertools.count(1)
        self.timeout = timeout
        self.closed = False
        line = self._file.readline(protocol.MAX_LINE)
        if not line:
            sock.close()
            raise ControlError("the proxy closed the control connection before saying hello")
        hello = protocol.decode(line)
        if hello.get("type") == "error":  # refused (one viewer too many): the proxy says why
            sock.close()
            raise ControlError(f"the proxy refused the viewer: {hello.get('message')}")
        if hello.get("type") != "hello":
            sock.close()
            raise ControlError(f"the proxy's first line is {hello.get('type')!r}, not hello")
        #: the ``hello`` object: ``version`` and ``proxy`` (pid, socket, transport, target, reel, intercept, ...)
        self.hello = hello
        self.proxy: dict[str, Any] = hello.get("proxy") or {}
        self._reader = threading.Thread(target=self._read, name="mcpreel-control-client", daemon=True)
        self._reader.start()

    @classmethod
    def connect(cls, path: str | Path, timeout: float = 10.0) -> ControlClient:
        """Connect to the socket at ``path``; :class:`ControlError` when nobody answers there (or when this
        system has no control channel: "live view is not available here")."""
        unavailable = platform.control_unavailable()
        if unavailable is not None:
            raise ControlError(unavailable)
        where = Path(path)
        address: Any = None
        if where.suffix == ".json":  # a proxy's description: its socket, or its loopback port and secret
            try:
                info = jsonio.loads(where.read_bytes())
            except (OSError, ValueError) as exc:
                raise ControlError(f"{path}: cannot read the proxy's description: {exc}") from exc
            address = info.get("address") if isinstance(info, dict) else None
            if address is None:
                where = Path(str(info.get("socket"))) if isinstance(info, dict) and info.get("socket") \
                    else where.with_suffix(".sock")
        try:
            if address is not None:
                sock = socket.create_connection((str(address[0]), int(address[1])), timeout=timeout)
            else:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(timeout)
                try:
                    sock.connect(str(where))
                except OSError:
                    sock.close()
                    raise
        except (OSError, ValueError, TypeError, IndexError, AttributeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise ControlError(f"{path}: cannot connect to the control socket: {why}") from exc
        if address is not None:  # loopback TCP: the run's secret first, or the proxy closes the connection
            secret = discovery.read_secret(Path(path))
            if secret is None:
                sock.close()
                raise ControlError(f"{path}: the proxy's secret cannot be read (its .key file beside it)")
            try:
                sock.sendall(jsonio.dumps({"type": "auth", "secret": secret}) + b"\n")
            except OSError as exc:
                sock.close()
                raise ControlError(f"{path}: cannot connect to the control socket: {exc.strerror or exc}") from exc
        sock.settimeout(None)
        return cls(sock, timeout)

    # -- reading -------------------------------------------------------------------------------------
    def _read(self) -> None:
        try:
            while True:
                line = self._file.readline(protocol.MAX_LINE)
                if not line:
                    break
                try:
                    obj = protocol.decode(line)
                except protocol.CommandError:
                    continue
                if obj["type"] in ("ok", "error") and "ref" in obj:
                    with self._waiting_lock:
                        waiter = self._waiting.pop(obj["ref"], None)
                    if waiter is not None:
                        waiter.put(obj)
                        continue
                self._events.put(obj)
        except (OSError, ValueError):
            pass
        finally:
            self.closed = True
            with self._waiting_lock:
                waiters = list(self._waiting.values())
                self._waiting.clear()
            for w in waiters:
                w.put({"type": "error", "message": "the control connection closed"})
            self._events.put(_CLOSED)

    def next_event(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next proxy message; None when the connection closed (or ``timeout`` seconds passed)."""
        try:
            item = self._events.get(timeout=timeout)
        except queue.Empty:
            return None
        if item is _CLOSED:
            self._events.put(_CLOSED)  # every later call sees the end too
            return None
        return item

    def events(self, timeout: float | None = None) -> Iterator[dict[str, Any]]:
        """Proxy messages in order (``record``, ``held``, ``released``, ``end``, unmatched ``error``...) until
        the connection closes (or no message came for ``timeout`` seconds)."""
        while True:
            event = self.next_event(timeout)
            if event is None:
                return
            yield event

    def wait_for(self, type_: str, timeout: float | None = None, **match: Any) -> dict[str, Any]:
        """The next event of ``type_`` whose members equal ``match`` (others are skipped);
        :class:`ControlError` after ``timeout`` seconds or when the connection closes."""
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            event = self.next_event(left)
            if event is None:
                raise ControlError(f"no {type_} event came" + ("" if timeout is None else f" within {timeout}s"))
            if event["type"] == type_ and all(event.get(k) == v for k, v in match.items()):
                return event

    # -- commands ------------------------------------------------------------------------------------
    def send(self, obj: dict[str, Any], *, wait: bool = True) -> dict[str, Any] | None:
        """Send one command; with ``wait`` it carries a ``ref`` and its ``ok`` answer is returned
        (:class:`ControlError` for an ``error`` answer, a timeout or a closed connection)."""
        waiter: queue.Queue[dict[str, Any]] | None = None
        if wait:
            ref = obj.get("ref")
            if ref is None:
                ref = obj["ref"] = f"c{next(self._refs)}"
            waiter = queue.Queue(1)
            with self._waiting_lock:
                self._waiting[ref] = waiter
        data = protocol.encode(obj)
        try:
            with self._send_lock:
                self._sock.sendall(data)
        except OSError as exc:
            raise ControlError(f"the control connection is gone: {exc}") from exc
        if waiter is None:
            return None
        try:
            answer = waiter.get(timeout=self.timeout)
        except queue.Empty:
            raise ControlError(f"the proxy did not answer {obj['type']} within {self.timeout}s") from None
        if answer.get("type") == "error":
            raise ControlError(str(answer.get("message")))
        return answer

    def decide(self, hold: str, action: str, *, message: Any = None, error: dict[str, Any] | None = None,
               wait: bool = True) -> dict[str, Any] | None:
        """Release a held message (forward, edit, drop); ``wait`` for the proxy's answer or not."""
        obj: dict[str, Any] = {"type": "decide", "hold": hold, "action": action}
        if message is not None:
            obj["message"] = message
        if error is not None:
            obj["error"] = error
        return self.send(obj, wait=wait)

    def forward(self, hold: str, *, wait: bool = True) -> dict[str, Any] | None:
        """Release a held message unchanged."""
        return self.decide(hold, "forward", wait=wait)

    def edit(self, hold: str, message: Any, *, wait: bool = True) -> dict[str, Any] | None:
        """Release a held message replaced by ``message`` (recorded as an edit, the original kept)."""
        return self.decide(hold, "edit", message=message, wait=wait)

    def drop(self, hold: str, error: dict[str, Any] | None = None, *, wait: bool = True) -> dict[str, Any] | None:
        """Drop a held message; a held request's client gets ``error`` (or the default error)."""
        return self.decide(hold, "drop", error=error, wait=wait)

    def inject(self, direction: str, message: Any, *, wait: bool = True) -> dict[str, Any] | None:
        """``direction``: ``client_to_server`` / ``server_to_client`` (``in`` / ``out`` are accepted)."""
        return self.send({"type": "inject", "direction": protocol.wire_direction(direction), "message": message},
                         wait=wait)

    def intercept(self, filter_text: str | None, *, wait: bool = True) -> dict[str, Any] | None:
        """Hold what ``filter_text`` matches from now on (None: hold nothing)."""
        return self.send({"type": "intercept", "filter": filter_text}, wait=wait)

    # -- lifecycle -----------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the connection and wait briefly for the reader thread, so nothing is delivered after."""
        self.closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        self._reader.join(2.0)
        self._file.close()

    def __enter__(self) -> ControlClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def pick(path: str | Path | None = None) -> str:
    """The socket to attach to: ``path`` when given, else the only running proxy's;
    :class:`ControlError` naming the candidates when there are none or several."""
    if path is not None:
        return str(path)
    found = discovery.running()
    if not found:
        raise ControlError("no running mcpreel proxy has a control socket (start one with mcpreel record)")
    if len(found) > 1:
        names = "; ".join(f"{p.get('socket')} (pid {p.get('pid')}, {p.get('transport')})" for p in found)
        raise ControlError(f"several proxies are running, pick one with --attach: {names}")
    return str(found[0]["socket"])
