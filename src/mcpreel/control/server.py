"""The control server a recording proxy runs: a private socket through which viewers watch and decide.

:class:`ControlServer` is two things at once, so both recorders need nothing of their own for it:

- an **addon** of the recording pipeline (:mod:`mcpreel.record.pipeline`): ``started`` writes the
  description beside the socket (with the target as the reel has it, redacted), ``recorded`` sends each
  reel record to every viewer (and keeps the last :data:`BACKLOG` of them, sent first to a viewer that
  attaches later; it de-duplicates by ``seq``), ``finished`` sends ``end`` and closes;
- an **interceptor** (:mod:`mcpreel.record.intercept`): with a filter set (``--intercept``), a matching
  message is *held*: every viewer gets a ``held`` line, and the recorder's thread waits until a viewer
  decides, the ``--intercept-timeout`` passes (then it goes on unchanged, ``by: timeout``), or the proxy
  stops (``by: detach``). With no viewer attached a held message waits, and the proxy says so on stderr
  (``note``); a viewer that detaches leaves its holds waiting (or timing out), never stalls the proxy: each
  viewer has its own writer thread and a bounded queue, and one that does not keep up is disconnected.

Security: the socket lives in the 0700 runtime directory (:mod:`mcpreel.control.discovery`), is chmod 0600
before it listens, and every connection's peer uid is checked with ``SO_PEERCRED`` (:func:`peer_uid`);
another user's connection is closed before a byte is sent. Nothing goes to the proxy's stdout.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcpreel._infra.timeutil import iso_from_ms, now_ms
from mcpreel.control import discovery, protocol
from mcpreel.control.filters import DEFAULT_INTERCEPT, Filter, parse
from mcpreel.model import Message, SessionInfo
from mcpreel.record.intercept import Decision, InjectPort, Pending

__all__ = ["BACKLOG", "ControlServer", "peer_uid"]

#: records (or fast-path reads) kept for a viewer that attaches later, and the bytes they may hold
BACKLOG = 20000
BACKLOG_BYTES = 64 << 20
#: lines queued for one viewer before it is judged stuck and disconnected
_QUEUE_LIMIT = 50000
_STOP = object()
#: a connection shorter than this is not a viewer whose leaving is worth a line on stderr
_PROBE_SECONDS = 0.5


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a connected AF_UNIX socket (``SO_PEERCRED``)."""
    fmt = "3i"  # struct ucred: pid, uid, gid
    data = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize(fmt))
    return int(struct.unpack(fmt, data)[1])


class _Hold:
    __slots__ = ("decision", "done", "id", "item", "since", "timeout")

    def __init__(self, hold_id: str, item: Pending, timeout: float | None):
        self.id = hold_id
        self.item = item
        self.since = now_ms()
        self.timeout = timeout
        self.done = threading.Event()
        self.decision: Decision | None = None


class _Viewer:
    """One attached viewer: a reader thread (its commands) and a writer thread (its bounded queue)."""

    def __init__(self, server: ControlServer, sock: socket.socket, n: int):
        self.server = server
        self.sock = sock
        self.n = n
        self.queue: queue.Queue[Any] = queue.Queue(_QUEUE_LIMIT)
        self.gone = False
        self.since = time.monotonic()
        self.writer = threading.Thread(target=self._write, name=f"mcpreel-control-w{n}", daemon=True)
        self.reader = threading.Thread(target=self._read, name=f"mcpreel-control-r{n}", daemon=True)

    def put(self, obj: dict[str, Any]) -> bool:
        if self.gone:
            return False
        try:
            self.queue.put_nowait(protocol.encode(obj))
            return True
        except queue.Full:
            self.server._note("control: a viewer does not keep up with the session; disconnecting it")
            self.close()
            return False

    def _write(self) -> None:
        while True:
            data = self.queue.get()
            if data is _STOP:
                break
            try:
                self.sock.sendall(data)
            except OSError:
                break
        self.close()

    def _read(self) -> None:
        try:
            f = self.sock.makefile("rb")
            while True:
                line = f.readline(protocol.MAX_LINE)
                if not line:
                    break
                if not line.strip():
                    continue
                self.server._command(self, line)
        except (OSError, ValueError):
            pass
        self.close()

    def close(self) -> None:
        if self.gone:
            return
        self.gone = True
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(queue.Full):
            self.queue.put_nowait(_STOP)
        self.server._detached(self)


class ControlServer:
    """The control channel of one recording (see the module docstring).

    ``intercept`` is the filter text of what to hold (``""`` or :data:`~mcpreel.control.filters.DEFAULT_INTERCEPT`
    for every client request; None holds nothing until a viewer sends ``intercept``); ``timeout`` the
    seconds after which a held message goes on unchanged (None: it waits). ``note`` gets the lines meant for
    the proxy's stderr. Call :meth:`start` (binds the socket), put the server among the recording's addons
    and pass it as its interceptor, and :meth:`close` it on every way out (idempotent).
    """

    def __init__(self, *, transport: str, reel: str | os.PathLike[str] | None = None, listen: str | None = None,
                 intercept: str | None = None, timeout: float | None = None,
                 note: Callable[[str], None] | None = None, directory: Path | None = None,
                 allowed_uid: int | None = None):
        self.transport = transport
        self.reel = os.fspath(reel) if reel is not None else None
        self.listen = listen
        self.timeout = timeout
        self._note_fn = note
        self._directory = directory
        self._uid = os.getuid() if allowed_uid is None else allowed_uid
        self.filter: Filter | None = None
        self.filter_text: str | None = None
        self.set_filter(intercept)
        self.target: Any = None
        self.socket_path: Path | None = None
        self.info_path: Path | None = None
        self._listener: socket.socket | None = None
        self._lock = threading.RLock()
        self._viewers: list[_Viewer] = []
        self._backlog: deque[tuple[Any, int]] = deque(maxlen=BACKLOG)
        self._backlog_bytes = 0
        self._holds: dict[str, _Hold] = {}
        self._hold_ids = itertools.count(1)
        self._viewer_ids = itertools.count(1)
        self._port: InjectPort | None = None
        self._started_at = now_ms()
        self._closed = False
        self._accepter: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------------
    def start(self) -> Path:
        """Create the socket (0600, in the private runtime directory) and its description; returns its path."""
        directory = self._directory if self._directory is not None else discovery.runtime_dir()
        sock_path, info_path = discovery.new_endpoint(directory)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(sock_path))
            os.chmod(sock_path, 0o600)
            listener.listen(16)
        except OSError:
            listener.close()
            discovery.remove_endpoint(sock_path, info_path)
            raise
        self._listener, self.socket_path, self.info_path = listener, sock_path, info_path
        self.write_info()
        self._accepter = threading.Thread(target=self._accept, name="mcpreel-control", daemon=True)
        self._accepter.start()
        return sock_path

    def describe(self) -> dict[str, Any]:
        """The ``proxy`` object of ``hello`` and of the ``.json`` beside the socket."""
        return {"version": protocol.VERSION, "pid": os.getpid(), "socket": str(self.socket_path),
                "transport": self.transport, "target": self.target, "listen": self.listen, "reel": self.reel,
                "started": iso_from_ms(self._started_at), "intercept": self.filter_text,
                "intercept_timeout": self.timeout}

    def write_info(self) -> None:
        """(Re)write the description beside the socket (after ``listen`` or the filter changed)."""
        if self.info_path is not None and not self._closed:
            with contextlib.suppress(OSError):
                discovery.write_info(self.info_path, self.describe())

    def close(self, exit_code: int | None = None, reason: str = "the recording ended") -> None:
        """Tell viewers the recording ended, release every hold (``by: detach``), remove the socket."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            viewers = list(self._viewers)
            for v in viewers:
                v.put(protocol.end(exit_code, reason))
            holds = list(self._holds.values())
        for hold in holds:
            self._release(hold, Decision("forward", by="detach"))
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.close()
        if self.socket_path is not None and self.info_path is not None:
            discovery.remove_endpoint(self.socket_path, self.info_path)
        deadline = time.monotonic() + 2.0
        for v in viewers:  # let the end line go out, then hang up
            with contextlib.suppress(queue.Full):
                v.queue.put_nowait(_STOP)
            v.writer.join(max(0.0, deadline - time.monotonic()))
            with contextlib.suppress(OSError):
                v.sock.close()

    def _note(self, text: str) -> None:
        if self._note_fn is not None:
            self._note_fn(text)

    # -- connections ---------------------------------------------------------------------------------
    def _accept(self) -> None:
        listener = self._listener
        assert listener is not None
        while not self._closed:
            try:
                conn, _ = listener.accept()
            except OSError:
                break
            try:
                uid = peer_uid(conn)
            except OSError:
                uid = -1
            if uid != self._uid:
                self._note(f"control: refused a connection from uid {uid}")
                conn.close()
                continue
            viewer = _Viewer(self, conn, next(self._viewer_ids))
            with self._lock:
                if self._closed:
                    conn.close()
                    break
                viewer.put(protocol.hello(self.describe()))
                for item, _size in self._backlog:
                    for rec in (_frame_records(item) if isinstance(item, tuple) else (item,)):
                        viewer.put(protocol.record(_line(rec)))
                for hold in self._holds.values():
                    viewer.put(self._held_line(hold))
                self._viewers.append(viewer)
            viewer.writer.start()
            viewer.reader.start()

    def _detached(self, viewer: _Viewer) -> None:
        with self._lock:
            if viewer not in self._viewers:
                return
            self._viewers.remove(viewer)
            left = len(self._viewers)
            held = len(self._holds)
        # a connection that came and went at once is a listing's probe (discovery.running), not a viewer leaving
        if not left and held and not self._closed and time.monotonic() - viewer.since >= _PROBE_SECONDS:
            then = (f"forwarded unchanged after the --intercept-timeout of {self.timeout:g}s"
                    if self.timeout is not None else "waiting for a viewer")
            self._note(f"control: the viewer detached; {held} held message(s) keep {then} "
                       f"(attach again with mcpreel tui --attach {self.socket_path})")

    @property
    def viewers(self) -> int:
        with self._lock:
            return len(self._viewers)

    def _broadcast(self, obj: dict[str, Any]) -> None:
        with self._lock:
            for v in list(self._viewers):
                v.put(obj)

    # -- commands ------------------------------------------------------------------------------------
    def _command(self, viewer: _Viewer, line: bytes) -> None:
        ref: Any = None
        try:
            obj = protocol.decode(line)
            ref = obj.get("ref")
            cmd = protocol.parse_command(obj)
            self._carry_out(cmd)
        except protocol.CommandError as exc:
            viewer.put(protocol.error(ref, str(exc)))
            return
        if ref is not None:
            viewer.put(protocol.ok(ref))

    def _carry_out(self, cmd: dict[str, Any]) -> None:
        typ = cmd["type"]
        if typ == "decide":
            with self._lock:
                hold = self._holds.get(cmd["hold"])
            if hold is None:
                raise protocol.CommandError(f"no message is held as {cmd['hold']!r} (already released?)")
            action = cmd["action"]
            if action == "edit":
                decision = Decision("edit", message=cmd["message"], by="viewer")
            elif action == "drop":
                decision = Decision("drop", error=cmd.get("error"), by="viewer")
            else:
                decision = Decision("forward", by="viewer")
            if not self._release(hold, decision):
                raise protocol.CommandError(f"{cmd['hold']} was already released")
        elif typ == "inject":
            if self._port is None:
                raise protocol.CommandError("this proxy cannot inject messages")
            try:
                self._port.inject(cmd["direction"], cmd["message"])
            except Exception as exc:
                raise protocol.CommandError(f"inject failed: {exc}") from exc
        else:
            self.set_filter(cmd["filter"])
            self.write_info()

    def set_filter(self, text: str | None) -> None:
        """Hold what ``text`` matches from now on (``""``: every client request; None: nothing)."""
        if text is None:
            self.filter, self.filter_text = None, None
            return
        text = text.strip() or DEFAULT_INTERCEPT
        self.filter, self.filter_text = parse(text), text

    # -- the pipeline addon --------------------------------------------------------------------------
    def started(self, info: SessionInfo) -> None:
        """The session header, after redaction: the target as the reel has it goes into the description."""
        self.target = info.url if info.url else (list(info.command) if info.command else None)
        self.write_info()

    def recorded(self, rec: Message) -> None:
        # the record itself goes into the ring (its reel line is made only when a viewer is there to get it:
        # a recording nobody watches pays an append per record)
        with self._lock:
            self._keep(rec, 512)
            if self._viewers:
                obj = protocol.record(_line(rec))
                for v in list(self._viewers):
                    v.put(obj)

    def frames(self, direction: str, frames: Any, t: int, first_seq: int) -> None:
        """The stdio fast path's frames: kept as they are, parsed only for a viewer (see the pipeline)."""
        item = (direction, list(frames), t, first_seq)
        with self._lock:
            self._keep(item, sum(len(f) for f in item[1]))
            if self._viewers:
                for rec in _frame_records(item):
                    obj = protocol.record(_line(rec))
                    for v in list(self._viewers):
                        v.put(obj)

    def _keep(self, item: Any, size: int) -> None:
        """Into the backlog ring, bounded by items and by bytes (a few huge messages do not pin memory)."""
        ring = self._backlog
        if len(ring) == ring.maxlen:
            self._backlog_bytes -= ring[0][1]
        ring.append((item, size))
        self._backlog_bytes += size
        while self._backlog_bytes > BACKLOG_BYTES and len(ring) > 1:
            self._backlog_bytes -= ring.popleft()[1]

    def finished(self, exit_code: int | None, reason: str) -> None:
        self.close(exit_code, reason)

    # -- the interceptor -----------------------------------------------------------------------------
    def attach(self, port: InjectPort) -> None:
        self._port = port

    @property
    def active(self) -> bool:
        """Something may be held (an intercept filter is set)."""
        return self.filter is not None and not self._closed

    def wants(self, direction: str, message: Any) -> bool:
        f = self.filter
        return f is not None and not self._closed and f.matches(message, direction)

    def _held_line(self, hold: _Hold) -> dict[str, Any]:
        return protocol.held(hold.id, hold.item.direction, hold.item.message, hold.since, hold.timeout,
                             hold.item.session)

    def decide(self, item: Pending) -> Decision:
        hold = _Hold(f"h{next(self._hold_ids)}", item, self.timeout)
        with self._lock:
            if self._closed:
                return Decision("forward", by="detach")
            self._holds[hold.id] = hold
            line = self._held_line(hold)
            for v in list(self._viewers):
                v.put(line)
            watched = bool(self._viewers)
        if not watched:
            what = _describe(item)
            then = (f"it goes on unchanged after {self.timeout:g}s" if self.timeout is not None
                    else "it waits")
            self._note(f"control: holding {what}; no viewer is attached, {then} "
                       f"(attach with mcpreel tui --attach {self.socket_path})")
        if not hold.done.wait(self.timeout):
            self._release(hold, Decision("forward", by="timeout"))
        hold.done.wait()
        assert hold.decision is not None
        return hold.decision

    def _release(self, hold: _Hold, decision: Decision) -> bool:
        with self._lock:
            if hold.done.is_set() or self._holds.get(hold.id) is not hold:
                return False
            del self._holds[hold.id]
            hold.decision = decision
            hold.done.set()
            line = protocol.released(hold.id, decision.action, decision.by)
            for v in list(self._viewers):
                v.put(line)
        return True

    def shutdown(self) -> None:
        """The proxy is stopping: held messages go on unchanged (``by: detach``) so nothing waits forever."""
        with self._lock:
            holds = list(self._holds.values())
        for hold in holds:
            self._release(hold, Decision("forward", by="detach"))


def _frame_records(item: tuple[str, list[bytes | str], int, int]) -> list[Message]:
    from mcpreel._infra import jsonio
    from mcpreel.model import Kind

    direction, frames, t, first = item
    out = []
    for i, frame in enumerate(frames):
        if isinstance(frame, str):
            out.append(Message(direction, None, t, kind=Kind.INVALID, text=frame, seq=first + i))
        else:
            out.append(Message(direction, jsonio.loads(frame), t, seq=first + i))
    return out


def _line(rec: Message) -> dict[str, Any]:
    """A record as the reel wrote it (with its ``seq``)."""
    from mcpreel.formats.reel import record_line

    return record_line(rec, rec.t if rec.t is not None else now_ms(), rec.seq)


def _describe(item: Pending) -> str:
    m = item.message
    who = "from the client" if item.direction == "in" else "from the server"
    if isinstance(m, dict):
        method = m.get("method")
        if isinstance(method, str):
            tool = (m.get("params") or {}).get("name") if method == "tools/call" and isinstance(m.get("params"), dict) else None
            name = f"{method} {tool}" if isinstance(tool, str) else method
            return f"{name} (id {m.get('id')}) {who}" if "id" in m else f"{name} {who}"
        return f"the response to id {m.get('id')} {who}"
    return f"a message {who}"
