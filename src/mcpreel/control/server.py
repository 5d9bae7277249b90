"""The control server a recording proxy runs: a private socket through which viewers watch and decide.

:class:`ControlServer` is two things at once, so both recorders need nothing of their own for it:

- an **addon** of the recording pipeline (:mod:`mcpreel.record.pipeline`): ``started`` writes the
  description beside the socket (with the target as the reel has it, redacted), ``recorded`` sends each
  reel record to every viewer (and keeps the last :data:`BACKLOG` of them, sent first to a viewer that
  attaches later; it de-duplicates by ``seq``), ``finished`` sends ``end`` and closes;
- an **interceptor** (:mod:`mcpreel.intercept`): with a filter set (``--intercept``), a matching
  message is *held*: every viewer gets a ``held`` line, and the recorder's thread waits until a viewer
  decides, the ``--intercept-timeout`` passes (then it goes on unchanged, ``by: timeout``), or the proxy
  stops (``by: detach``). With no viewer attached a held message waits, and the proxy says so on stderr
  (``note``); a viewer that detaches leaves its holds waiting (or timing out), never stalls the proxy.

Neighbours never slow the forwarding path (issue 28): what the recorder's threads do under the lock is
append a record to the ring (and, with viewers attached, to an outbox) and wake one thread. That thread,
the *fan-out*, does all the rest outside the lock: it encodes each record once (a stdio frame is spliced
as the reel writer splices it, never parsed), keeps the encoded line in the ring so that a viewer that
attaches later gets the backlog as bytes already made (the first viewer after a quiet spell pays the
encoding once, in slices that let the pumps run), and sends to every viewer with non-blocking sends,
in batches (a viewer sees records within :data:`_BATCH_SECONDS`). A viewer that does not read is
disconnected once it owes more than :data:`_OWED_LIMIT` bytes; at most :data:`MAX_VIEWERS` viewers are
attached at once (the next one gets an ``error`` line saying so, and is closed).

Security: the socket lives in the 0700 runtime directory (:mod:`mcpreel.control.discovery`), is chmod 0600
before it listens, and every connection's peer uid is checked (:func:`peer_uid`: ``SO_PEERCRED`` on Linux,
``LOCAL_PEERCRED``/``getpeereid`` on macOS and the BSDs); another user's connection is closed before a byte is
sent. Where the system cannot tell (or has no Unix sockets: Windows) the socket is a loopback TCP one and a
connection's first line must carry the run's secret (a file only the user can read, beside the description:
:func:`~mcpreel.control.discovery.write_secret`), compared in constant time, within
:data:`_AUTH_SECONDS`; anything else is closed before a byte is sent. Nothing goes to the proxy's stdout.
"""

from __future__ import annotations

import contextlib
import hmac
import itertools
import os
import secrets
import select
import selectors
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcpreel._infra import jsonio, platform
from mcpreel._infra.timeutil import iso_from_ms, iso_second, now_ms
from mcpreel.control import discovery, protocol
from mcpreel.control.filters import DEFAULT_INTERCEPT, Filter, parse
from mcpreel.errors import UsageError
from mcpreel.intercept import ABANDONED, Decision, InjectPort, Pending
from mcpreel.model import Kind, Message, SessionInfo

__all__ = ["BACKLOG", "MAX_VIEWERS", "ControlServer", "peer_uid"]

#: records (or fast-path reads) kept for a viewer that attaches later, and the bytes they may hold
#: (their encoded lines, once a viewer made them, are kept too: about as much again)
BACKLOG = 20000
BACKLOG_BYTES = 64 << 20
#: viewers attached at once (the default cap; more are refused with a line saying so)
MAX_VIEWERS = 50
#: bytes one viewer may owe (not yet read) before it is judged stuck and disconnected
_OWED_LIMIT = 3 * BACKLOG_BYTES
#: how long the fan-out gathers records before it sends them (one send per viewer per batch)
_BATCH_SECONDS = 0.02
#: records encoded between two yields of the GIL when a backlog is encoded
_ENCODE_SLICE = 64
#: records per page of the encoded backlog (a full page is made once and shared by every viewer)
_PAGE = 256
#: chunks one gathering send takes at most
_GATHER = 64
#: loopback TCP: how long a new connection has to send its secret line, and how long that line may be
_AUTH_SECONDS = 2.0
_AUTH_MAX = 512
#: loopback TCP: connections of one uid whose secret line is awaited at once (each on a short thread of its
#: own, so one that says nothing delays no other viewer); one more of that uid closes the oldest of them. The
#: uid is the peer's where the system tells (:func:`mcpreel._infra.platform.tcp_peer_uid`), else all
#: strangers count as one: silent connections of another user never lock the owner out, and a flood of
#: them keeps the newest (a viewer gives its secret the moment it connects)
_AUTH_AT_ONCE = 8
#: a send that never waits (0 where the flag does not exist: Windows, whose sends then go by select)
_DONTWAIT = getattr(socket, "MSG_DONTWAIT", 0)
#: what one send takes where there is no MSG_DONTWAIT: small enough for a socket select calls writable
_SLICE = 16384
#: a connection shorter than this is not a viewer whose leaving is worth a line on stderr
_PROBE_SECONDS = 0.5


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a connected AF_UNIX socket (:class:`OSError` when the
    system cannot tell: :func:`mcpreel._infra.platform.peer_uid`)."""
    return platform.peer_uid(sock)


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
    """One attached viewer: a reader thread (its commands); what it is sent is owed to it by the fan-out."""

    def __init__(self, server: ControlServer, sock: socket.socket, n: int):
        self.server = server
        self.sock = sock
        self.n = n
        self.gone = False
        self.since = time.monotonic()
        #: chunks not yet sent (the fan-out's alone), the bytes they hold, and how far the first went
        self.owed: deque[bytes] = deque()
        self.owed_bytes = 0
        self.offset = 0
        self.reader = threading.Thread(target=self._read, name=f"mcpreel-control-r{n}", daemon=True)

    def put(self, obj: dict[str, Any]) -> bool:
        """Queue ``obj`` for this viewer (in order with everything else it is sent)."""
        if self.gone:
            return False
        self.server._post(("to", self, obj))
        return True

    def owe(self, data: bytes) -> bool:
        """Called by the fan-out only: add ``data`` to what is owed; False when the viewer is judged stuck."""
        if not data or self.gone:
            return not self.gone
        self.owed.append(data)
        self.owed_bytes += len(data)
        if self.owed_bytes - self.offset > _OWED_LIMIT:
            self.server._note("control: a viewer does not keep up with the session; disconnecting it")
            self.close()
            return False
        return True

    def flush(self) -> bool:
        """Called by the fan-out only: send what the socket takes now; True when nothing is owed any more."""
        owed = self.owed
        while owed and not self.gone:
            # one gathering send for many chunks (a backlog is some pages, a batch one chunk)
            chunks: list[bytes | memoryview] = [memoryview(owed[0])[self.offset:],
                                                *itertools.islice(owed, 1, _GATHER)]
            try:
                n = _send_now(self.sock, chunks)
            except (BlockingIOError, InterruptedError):
                return False
            except OSError:
                self.close()
                break
            n += self.offset
            while owed and n >= len(owed[0]):
                n -= len(owed[0])
                self.owed_bytes -= len(owed.popleft())
            self.offset = n
        if self.gone:
            owed.clear()
            self.owed_bytes = self.offset = 0
        return not owed

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
        self.server._detached(self)


class ControlServer:
    """The control channel of one recording (see the module docstring).

    ``intercept`` is the filter text of what to hold (``""`` or :data:`~mcpreel.control.filters.DEFAULT_INTERCEPT`
    for every client request; None holds nothing until a viewer sends ``intercept``); ``timeout`` the
    seconds after which a held message goes on unchanged (None: it waits). ``note`` gets the lines meant for
    the proxy's stderr. ``max_viewers`` caps the viewers attached at once. Call :meth:`start` (binds the
    socket), put the server among the recording's addons and pass it as its interceptor, and :meth:`close`
    it on every way out (idempotent).
    """

    def __init__(self, *, transport: str, reel: str | os.PathLike[str] | None = None, listen: str | None = None,
                 intercept: str | None = None, timeout: float | None = None,
                 note: Callable[[str], None] | None = None, directory: Path | None = None,
                 allowed_uid: int | None = None, max_viewers: int = MAX_VIEWERS):
        self.transport = transport
        self.reel = os.fspath(reel) if reel is not None else None
        self.listen = listen
        self.timeout = timeout
        self._note_fn = note
        self._directory = directory
        self._uid = platform.user_id() if allowed_uid is None else allowed_uid
        self.filter: Filter | None = None
        self.filter_text: str | None = None
        self.set_filter(intercept)
        self.target: Any = None
        self.socket_path: Path | None = None
        self.info_path: Path | None = None
        self._listener: socket.socket | None = None
        self._lock = threading.RLock()
        self._viewers: list[_Viewer] = []
        self.max_viewers = max_viewers
        #: the ring: ``[item, size, encoded line(s) or None, number]`` (the fan-out fills in the third)
        self._backlog: deque[list[Any]] = deque(maxlen=BACKLOG)
        self._kept = 0
        #: full pages of the encoded backlog by page number (the fan-out's alone)
        self._pages: dict[int, bytes] = {}
        #: what the fan-out sends next, in order (under the lock); whether it was woken for it
        self._outbox: list[tuple[Any, ...]] = []
        self._woken = False
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._fanout: threading.Thread | None = None
        self._fanout_done = False
        self._backlog_bytes = 0
        self._holds: dict[str, _Hold] = {}
        self._hold_ids = itertools.count(1)
        self._viewer_ids = itertools.count(1)
        self._port: InjectPort | None = None
        self._started_at = now_ms()
        self._closed = False
        self._accepter: threading.Thread | None = None
        self._silent: dict[int | None, list[socket.socket]] = {}  # peer uid -> connections yet to give the secret
        self._silent_lock = threading.Lock()
        #: how a viewer is known to be the user (:func:`mcpreel._infra.platform.control_auth`); with
        #: ``"secret"``, the loopback address and the run's secret
        self._auth = platform.control_auth()
        self.address: list[Any] | None = None
        self._secret: str | None = None
        self._sock_file: Path | None = None

    # -- lifecycle -----------------------------------------------------------------------------------
    def start(self) -> Path:
        """Create the socket (0600, in the private runtime directory) and its description; returns its path.

        :class:`~mcpreel.errors.UsageError` (one line) where this system has no control channel."""
        unavailable = platform.control_unavailable()
        if unavailable is not None:
            raise UsageError(unavailable)
        directory = self._directory if self._directory is not None else discovery.runtime_dir()
        sock_path, info_path = discovery.new_endpoint(directory)
        if self._auth == "secret":
            # no Unix socket whose peer the kernel tells: loopback TCP, and the run's secret in a user-only file
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                listener.bind(("127.0.0.1", 0))
                listener.listen(max(16, self.max_viewers + 8))
                self._secret = secrets.token_urlsafe(32)
                discovery.write_secret(info_path, self._secret)
            except OSError:
                listener.close()
                discovery.remove_endpoint(sock_path, info_path)
                raise
            self.address = ["127.0.0.1", listener.getsockname()[1]]
            self._listener, self.socket_path, self.info_path = listener, info_path, info_path
            self._sock_file = sock_path
        else:
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                listener.bind(str(sock_path))
                os.chmod(sock_path, 0o600)
                listener.listen(max(16, self.max_viewers + 8))
            except OSError:
                listener.close()
                discovery.remove_endpoint(sock_path, info_path)
                raise
            self._listener, self.socket_path, self.info_path = listener, sock_path, info_path
            self._sock_file = sock_path
        self.write_info()
        self._accepter = threading.Thread(target=self._accept, name="mcpreel-control", daemon=True)
        self._accepter.start()
        self._fanout = threading.Thread(target=self._fan_out, name="mcpreel-control-fanout", daemon=True)
        self._fanout.start()
        return self.socket_path

    def describe(self) -> dict[str, Any]:
        """The ``proxy`` object of ``hello`` and of the ``.json`` beside the socket."""
        out = {"version": protocol.VERSION, "pid": os.getpid(), "socket": str(self.socket_path),
               "transport": self.transport, "target": self.target, "listen": self.listen, "reel": self.reel,
               "started": iso_from_ms(self._started_at), "intercept": self.filter_text,
               "intercept_timeout": self.timeout}
        if self.address is not None:
            out["address"] = self.address  # loopback TCP: attach by the description's path (``socket``)
        return out

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
            if self._viewers:
                self._post(("all", protocol.end(exit_code, reason)))
            holds = list(self._holds.values())
        for hold in holds:
            self._release(hold, Decision("forward", by="detach"))
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.close()
        if self._sock_file is not None and self.info_path is not None:
            discovery.remove_endpoint(self._sock_file, self.info_path)
        self._post(("stop",))  # the fan-out sends what is owed (2 s at most), then hangs up on every viewer
        if self._fanout is not None and self._fanout is not threading.current_thread():
            self._fanout.join(3.0)
        else:
            self._hang_up(list(self._viewers))
        for sock in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                sock.close()

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
            if self._auth == "secret":
                # the secret line is read on a thread of its own: a local process that connects and says
                # nothing must not keep the next viewer waiting for _AUTH_SECONDS
                self._await_secret(conn)
                continue
            try:
                uid = peer_uid(conn)
            except (OSError, ValueError):  # the system could not say who it is: refused like a stranger
                uid = -1
            if uid != self._uid:
                self._note(f"control: refused a connection from uid {uid}")
                conn.close()
                continue
            self._welcome(conn)

    def _await_secret(self, conn: socket.socket) -> None:
        """Loopback TCP: the connection's secret awaited on a thread of its own, at most :data:`_AUTH_AT_ONCE`
        per peer uid (one more closes that uid's oldest still silent)."""
        uid = platform.tcp_peer_uid(conn)
        with self._silent_lock:
            waiting = self._silent.setdefault(uid, [])
            oldest = waiting.pop(0) if len(waiting) >= _AUTH_AT_ONCE else None
            waiting.append(conn)
            if oldest is not None:
                with contextlib.suppress(OSError):
                    oldest.shutdown(socket.SHUT_RDWR)  # its thread sees the end (or that it is gone) and closes it
        if oldest is not None:
            who = "a stranger" if uid is None else f"uid {uid}"
            self._note(f"control: closed a connection that gave no secret: {_AUTH_AT_ONCE} more from {who} came after it")
        threading.Thread(target=self._authenticate, args=(conn, uid), name="mcpreel-control-auth",
                         daemon=True).start()

    def _authenticate(self, conn: socket.socket, uid: int | None) -> None:
        """Loopback TCP, on a thread of the connection's: admitted with the run's secret, else closed."""
        admitted = False
        try:
            admitted = self._admitted(conn)
        finally:
            with self._silent_lock:  # not silent any more: never closed as such once it is a viewer
                waiting = self._silent.get(uid, [])
                if conn in waiting:
                    waiting.remove(conn)
                else:
                    admitted = False  # closed as the oldest silent one meanwhile (see _await_secret)
                if not waiting:
                    self._silent.pop(uid, None)
        if admitted:
            self._welcome(conn)
        else:
            conn.close()

    def _welcome(self, conn: socket.socket) -> None:
        """A connection known to be the user's: a viewer (its backlog and holds after hello), unless the
        server is closing or has all the viewers it takes."""
        viewer = _Viewer(self, conn, next(self._viewer_ids))
        with self._lock:
            if self._closed:
                conn.close()
                return
            full = len(self._viewers) >= self.max_viewers
            if not full:
                # the backlog as it is now, and the holds: the fan-out encodes and sends them, after hello
                self._viewers.append(viewer)
                self._post(("new", viewer, list(self._backlog),
                            [self._held_line(hold) for hold in self._holds.values()]))
        if full:
            self._refuse(conn)
            return
        viewer.reader.start()

    def _admitted(self, conn: socket.socket) -> bool:
        """Loopback TCP: the first line must be ``{"type":"auth","secret":...}`` with this run's secret (read
        within :data:`_AUTH_SECONDS`, before a byte is sent); anything else is closed. A connection that says
        nothing is a listing's probe (:func:`~mcpreel.control.discovery.running`) and closes without a note."""
        data = b""
        try:
            conn.settimeout(_AUTH_SECONDS)
            while b"\n" not in data and len(data) < _AUTH_MAX:
                chunk = conn.recv(_AUTH_MAX - len(data))
                if not chunk:
                    break
                data += chunk
            conn.settimeout(None)
        except OSError:
            pass
        try:
            doc = jsonio.loads(data.split(b"\n", 1)[0]) if b"\n" in data else None
        except ValueError:
            doc = None
        given = doc.get("secret") if isinstance(doc, dict) and doc.get("type") == "auth" else None
        ok = isinstance(given, str) and self._secret is not None and hmac.compare_digest(
            given.encode("utf-8", "replace"), self._secret.encode())
        if not ok and data:
            self._note("control: refused a connection that did not give this recording's secret")
        return ok

    def _refuse(self, conn: socket.socket) -> None:
        """One viewer too many: one ``error`` line saying so (sent at once, never waited on), then closed."""
        text = (f"this proxy already has {self.max_viewers} viewers attached (the most it takes); "
                f"detach one and attach again")
        self._note(f"control: refused a viewer: {self.max_viewers} are attached already")
        with contextlib.suppress(OSError):
            conn.send(protocol.encode(protocol.error(None, text)), _DONTWAIT)
        with contextlib.suppress(OSError):
            conn.shutdown(socket.SHUT_RDWR)
        conn.close()

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
        """How many viewers are attached (a held message with none waits for its timeout)."""
        with self._lock:
            return len(self._viewers)

    def _broadcast(self, obj: dict[str, Any]) -> None:
        with self._lock:
            if self._viewers:
                self._post(("all", obj))

    # -- the fan-out ---------------------------------------------------------------------------------
    def _post(self, entry: tuple[Any, ...]) -> None:
        """Queue ``entry`` for the fan-out and wake it (once per batch). Cheap: called on the forwarding path."""
        with self._lock:
            if self._fanout_done:  # closed: nobody sends any more (viewers still detaching)
                return
            self._outbox.append(entry)
            if self._woken:
                return
            self._woken = True
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")

    def _fan_out(self) -> None:
        """The one thread that encodes and sends to viewers (see the module docstring)."""
        attached: list[_Viewer] = []  # the viewers as of the outbox position being sent
        waiting: dict[int, _Viewer] = {}  # fd -> viewer that owes bytes the socket did not take yet
        poller = selectors.DefaultSelector()  # poll/epoll here, select() on Windows (sockets only: all these are)
        poller.register(self._wake_r, selectors.EVENT_READ)
        stopping: float | None = None
        while True:
            timeout = None if stopping is None else max(0.0, stopping - time.monotonic())
            try:
                events = [(key.fd, mask) for key, mask in poller.select(timeout)]
            except InterruptedError:
                continue
            woken = False
            for fd, _ in events:
                if fd == self._wake_r.fileno():
                    woken = True
                    with contextlib.suppress(OSError):
                        while self._wake_r.recv(4096):
                            pass
            if woken and stopping is None:
                time.sleep(_BATCH_SECONDS)  # gather a batch: one send per viewer for many records
            with self._lock:
                entries, self._outbox = self._outbox, []
                self._woken = False
            try:
                if self._owe_batch(entries, attached) and stopping is None:
                    stopping = time.monotonic() + 2.0
                attached = [v for v in attached if not v.gone]
                for v in attached:
                    fd = v.sock.fileno()
                    if v.flush():
                        if waiting.pop(fd, None) is not None:
                            poller.unregister(fd)
                    elif fd not in waiting and not v.gone:
                        waiting[fd] = v
                        poller.register(fd, selectors.EVENT_WRITE)
                for fd, v in list(waiting.items()):
                    if v.gone or v not in attached:
                        del waiting[fd]
                        with contextlib.suppress(KeyError, ValueError):
                            poller.unregister(fd)
            except Exception as exc:  # a bug here must not stop the recording: viewers are let go
                self._note(f"control: the viewers' channel failed ({exc!r}); disconnecting them")
                for v in attached:
                    v.close()
                attached = []
            if stopping is not None and (not waiting or time.monotonic() >= stopping):
                break
        with self._lock:
            self._fanout_done = True
            self._outbox.clear()
            others = [v for v in self._viewers if v not in attached]
        self._hang_up(attached + others)

    def _owe_batch(self, entries: list[tuple[Any, ...]], attached: list[_Viewer]) -> bool:
        """What each viewer is owed for one batch of the outbox (``attached`` grows with new viewers);
        True when the batch asks the fan-out to stop."""
        shared: list[bytes] = []  # lines for every attached viewer, owed as one chunk
        stop = False
        for entry in entries:
            kind = entry[0]
            if kind == "rec":
                shared.append(self._encoded(entry[1]))
            elif kind == "all":
                shared.append(protocol.encode(entry[1]))
            elif kind == "stop":
                stop = True
            else:
                _owe_all(shared, attached)
                if kind == "to":
                    if entry[1] in attached:
                        entry[1].owe(protocol.encode(entry[2]))
                else:  # "new"
                    viewer, ring, held = entry[1], entry[2], entry[3]
                    viewer.owe(protocol.encode(protocol.hello(self.describe())))
                    for page in self._encode_backlog(ring):
                        viewer.owe(page)
                    for line in held:
                        viewer.owe(protocol.encode(line))
                    attached.append(viewer)
        _owe_all(shared, attached)
        return stop

    def _hang_up(self, viewers: list[_Viewer]) -> None:
        for v in viewers:
            with contextlib.suppress(OSError):
                v.sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                v.sock.close()

    def _encoded(self, entry: list[Any]) -> bytes:
        """A ring entry's ``record`` line(s), made once and kept in the entry."""
        data = entry[2]
        if data is None:
            item = entry[0]
            data = entry[2] = _frame_lines(item) if isinstance(item, tuple) else protocol.encode(
                protocol.record(_line(item)))
        return data

    def _encode_backlog(self, ring: list[list[Any]]) -> list[bytes]:
        """The backlog as chunks: full pages of :data:`_PAGE` records made once and shared by every viewer
        (kept while their records are in the ring), the partial pages at either end made for this one.
        Records not made yet are made in slices between which the GIL is let go (the pumps wait one slice)."""
        chunks: list[bytes] = []
        pages = self._pages
        made = 0
        i, count = 0, len(ring)
        while i < count:
            n = ring[i][3]
            j = min(count, i + _PAGE - n % _PAGE)
            page = pages.get(n // _PAGE) if n % _PAGE == 0 and j - i == _PAGE else None
            if page is None:
                parts = []
                for entry in ring[i:j]:
                    if entry[2] is None:
                        made += 1
                        if made % _ENCODE_SLICE == 0:
                            time.sleep(0)
                    parts.append(self._encoded(entry))
                page = b"".join(parts)
                if j - i == _PAGE:
                    pages[n // _PAGE] = page
            chunks.append(page)
            i = j
        if ring:
            oldest = ring[0][3] // _PAGE
            for p in [p for p in pages if p < oldest]:
                del pages[p]
        return chunks

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
        """A record was written: keep it for viewers that attach later and send it to those attached."""
        # the record goes into the ring; with viewers attached also to the fan-out, which makes its line
        # once (a recording nobody watches pays an append per record, one that is watched two)
        entry = [rec, 512, None, 0]
        with self._lock:
            self._keep(entry)
            if self._viewers:
                self._post(("rec", entry))

    def raw_recorded(self, rec: Message) -> None:
        """A raw ``bytes`` line was written (a stdio pipe that was not JSON lines: HTTP/2, binary): viewers show
        it as the reel has it. Nothing can hold or edit it: the proxy forwarded it unchanged already."""
        entry = [rec, 512 + (len(rec.raw) if isinstance(rec.raw, bytes) else 0), None, 0]  # its weight in the ring
        with self._lock:
            self._keep(entry)
            if self._viewers:
                self._post(("rec", entry))

    def frames(self, direction: str, frames: Any, t: int, first_seq: int) -> None:
        """The stdio fast path's frames: kept as they are, made into lines by the fan-out (see the pipeline)."""
        item = (direction, list(frames), t, first_seq)
        entry = [item, sum(len(f) for f in item[1]), None, 0]
        with self._lock:
            self._keep(entry)
            if self._viewers:
                self._post(("rec", entry))

    def _keep(self, entry: list[Any]) -> None:
        """Into the backlog ring, bounded by items and by bytes (a few huge messages do not pin memory)."""
        ring = self._backlog
        entry[3] = self._kept
        self._kept += 1
        if len(ring) == ring.maxlen:
            self._backlog_bytes -= ring[0][1]
        ring.append(entry)
        self._backlog_bytes += entry[1]
        while self._backlog_bytes > BACKLOG_BYTES and len(ring) > 1:
            self._backlog_bytes -= ring.popleft()[1]

    def finished(self, exit_code: int | None, reason: str) -> None:
        """The recording ended: tell the viewers and close."""
        self.close(exit_code, reason)

    # -- the interceptor -----------------------------------------------------------------------------
    def attach(self, port: InjectPort) -> None:
        """The recorder's port for messages a viewer injects."""
        self._port = port

    @property
    def active(self) -> bool:
        """Something may be held (an intercept filter is set)."""
        return self.filter is not None and not self._closed

    def wants(self, direction: str, message: Any) -> bool:
        """Whether the intercept filter holds this message (checked before anything is held, so the rest pass at
        once)."""
        f = self.filter
        return f is not None and not self._closed and f.matches(message, direction)

    def _held_line(self, hold: _Hold) -> dict[str, Any]:
        return protocol.held(hold.id, hold.item.direction, hold.item.message, hold.since, hold.timeout,
                             hold.item.session)

    def decide(self, item: Pending) -> Decision:
        """Hold a message until a viewer decides or the timeout forwards it."""
        hold = _Hold(f"h{next(self._hold_ids)}", item, self.timeout)
        with self._lock:
            if self._closed:
                return Decision("forward", by="detach")
            self._holds[hold.id] = hold
            watched = bool(self._viewers)
            if watched:
                self._post(("all", self._held_line(hold)))
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
            if self._viewers:
                self._post(("all", protocol.released(hold.id, decision.action, decision.by)))
        return True

    def abandon(self, session: str | None = None, message: Any = None) -> None:
        """The client went away: what is held for it ends as abandoned (:data:`~mcpreel.intercept.ABANDONED`),
        and viewers see it released so: the hold of ``message`` (that very object) when given, else those of
        ``session`` when given, else all (stdio: one client)."""
        with self._lock:
            holds = [h for h in self._holds.values()
                     if (message is None or h.item.message is message)
                     and (session is None or h.item.session == session)]
        for hold in holds:
            self._release(hold, ABANDONED)
        if holds:
            self._note(f"control: the client went away; {len(holds)} held message(s) abandoned")

    def shutdown(self) -> None:
        """The proxy is stopping: held messages go on unchanged (``by: detach``) so nothing waits forever."""
        with self._lock:
            holds = list(self._holds.values())
        for hold in holds:
            self._release(hold, Decision("forward", by="detach"))


def _send_now(sock: socket.socket, chunks: list[bytes | memoryview]) -> int:
    """Send what the socket takes now, never waiting: one gathering send with ``MSG_DONTWAIT``; where there
    is no such flag (Windows), a slice of the first chunk once ``select`` says the socket is writable.
    :class:`BlockingIOError` when it takes nothing now."""
    if _DONTWAIT:
        return sock.sendmsg(chunks, (), _DONTWAIT)
    if not select.select([], [sock], [], 0)[1]:
        raise BlockingIOError
    return sock.send(chunks[0][:_SLICE])


def _owe_all(shared: list[bytes], viewers: list[_Viewer]) -> None:
    """Owe the lines gathered in ``shared`` to every viewer, as one chunk; ``shared`` is emptied."""
    if shared:
        data = b"".join(shared)
        shared.clear()
        for v in viewers:
            v.owe(data)


def _frame_lines(item: tuple[str, list[bytes | str], int, int]) -> bytes:
    """A fast-path item's ``record`` lines: a JSON frame spliced in as the reel writer splices it (no parse)."""
    direction, frames, t, first = item
    sec, ms = divmod(t, 1000)
    stamp = iso_second(sec).encode("ascii") + b".%03dZ" % ms
    head = b'{"type":"record","record":{"t":"' + stamp + b'","dir":"' + direction.encode("ascii") + b'","raw":'
    out = []
    for i, frame in enumerate(frames):
        if isinstance(frame, str):
            rec = Message(direction, None, t, kind=Kind.INVALID, text=frame, seq=first + i)
            out.append(protocol.encode(protocol.record(_line(rec))))
        else:
            out.append(head + frame.replace(b"\r", b" ") + b',"seq":%d}}\n' % (first + i))
    return b"".join(out)


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
