"""The stdio recording proxy: ``mcpreel record -- CMD`` sits where a client expects its server.

Three pump threads move raw bytes with ``os.read``/``os.write`` on file descriptors, nothing in
between: client stdin -> server stdin (``in``), server stdout -> client stdout (``out``), server stderr
-> proxy stderr. Each chunk is forwarded as it was read, never re-serialized; a chunk that completes
lines first has them recorded (one reel write per read, or per 64 lines of a burst), *then* goes on. So anything the peer got
as a complete line is already in the reel: a ``kill -9`` of the proxy loses nothing forwarded.
Bytes of a line not yet complete go on at once (a 10 MB message streams through), since no peer can
act on a line before its newline. What is not newline-delimited JSON (an HTTP/2 ``stdio-v2`` stream, binary,
a line past 16 MiB, text that never ends its line) goes on chunk by chunk just the same, each chunk recorded
first as raw ``bytes`` (and HTTP/2 decoded into HTTP exchanges): nothing waits for a newline, nothing is
held whole (:class:`~mcpreel.record.framing.Framer`).

The main thread starts the server, forwards signals to it and waits for it; the proxy ends when the
server ends, with its exit status. Threads rather than asyncio: a blocked ``os.read`` releases the
GIL and wakes straight into the copy, which keeps the added latency to a few tens of microseconds.
Nothing of the proxy's own is ever written to stdout.

With an interceptor (:mod:`mcpreel.intercept`: ``--intercept``, ``--rules``) that is holding, a pump
forwards whole lines only: each complete line the interceptor ``wants`` waits for its decision on that direction's pump
thread (what comes behind it waits behind it, in wire order, as it would on the pipe), and is recorded as
decided — forwarded, edited, dropped (a dropped request answered with an error on the other pipe) — before
it goes on. Lines it does not want are recorded and go on as they came; while it holds nothing (``active``
False: a control socket nobody intercepts with) bytes stream through as above. Injected messages are
written between whole lines, under the same per-pipe lock as the pump's writes.

A client that goes away while a message is held (it died, or an IDE restarted its servers) would leave the
pump waiting on a decision nobody can use, and the server running: with an interceptor, a watcher polls
the proxy's stdout for its reader's end closing (``POLLERR``/``POLLHUP``, nothing is read or written), and
then every held message ends as abandoned (:data:`~mcpreel.intercept.ABANDONED`: recorded
``dropped`` and ``abandoned``, not sent on) and the server's stdin is closed, so it and the proxy end as
they do when a client closes its end. A client that only closes its stdin is not gone (it may still read
the answers to what it sent), so that alone abandons nothing.
"""

from __future__ import annotations

import dataclasses
import os
import select
import threading
from collections.abc import Callable, Iterator
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra import signals as early_signals
from mcpreel._infra.correlation import correlation_key
from mcpreel._infra.timeutil import now_ms
from mcpreel.clients.process import (
    ServerStartError,
    exit_status,
    forward_signals,
    signal_group,
    signal_name,
    spawn,
)
from mcpreel.errors import UsageError
from mcpreel.formats.reel import ReelWriter
from mcpreel.intercept import ABANDONED, Decision, Interceptor, Pending, drop_answer, safe_decide
from mcpreel.model import Message, SessionInfo
from mcpreel.record.addons import default_addons
from mcpreel.record.framing import Framer, cannot_hold, framing_of
from mcpreel.record.naming import claim_reel
from mcpreel.record.options import RecordHooks, RecordOptions, RecordResult, StdioServer
from mcpreel.record.pipeline import Pipeline
from mcpreel.record.stdio_recorder import WireRecorder, classify

__all__ = ["StdioProxy", "record_stdio"]

_CHUNK = 1 << 16
#: lines recorded before the bytes that carry them go on, in a burst (small: the peer starts sooner)
_BATCH = 64
#: how long output still in the server's pipes is read after it exited (a grandchild may hold them open)
_DRAIN_SECONDS = 2.0
#: how often the client watcher looks again when it was told nothing (its poll is woken by the event itself)
_WATCH_SECONDS = 0.5


def _chunks(fd: int) -> Iterator[bytes]:
    """What the pipe ``fd`` gives, read by read, until it ends: at end of file or on an error reading (the
    peer is gone), the one way every pump stops."""
    while True:
        try:
            chunk = os.read(fd, _CHUNK)
        except OSError:
            return
        if not chunk:
            return
        yield chunk


def _write_all(fd: int, data: bytes) -> None:
    n = os.write(fd, data)
    if n < len(data):
        view = memoryview(data)
        while n < len(data):
            n += os.write(fd, view[n:])


class StdioProxy:
    """One recording session over stdio. Use :func:`record_stdio`; this class holds the moving parts."""

    def __init__(
        self,
        recorder: WireRecorder,
        process: Any,
        *,
        stdin_fd: int = 0,
        stdout_fd: int = 1,
        stderr_fd: int = 2,
        interceptor: Interceptor | None = None,
        warn: Callable[[str], None] | None = None,
    ):
        self.recorder = recorder
        self.process = process
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self.stderr_fd = stderr_fd
        self.client_eof = threading.Event()
        self.client_gone = threading.Event()
        #: held messages that ended as abandoned: the client went away (see the module docstring)
        self.abandoned = 0
        self.signals: list[int] = []
        self.client_ended = False
        self.interceptor = interceptor
        self._warn = warn
        #: where each direction's lines go (-1 once the reader is gone), and the lock a whole line is written under
        self._dst: dict[str, int] = {"in": process.stdin.fileno() if interceptor is not None else -1,
                                     "out": stdout_fd}
        self._locks = {"in": threading.Lock(), "out": threading.Lock()}
        #: the last bytes sent in a direction ended inside a line; lines to send once it ends
        self._midline = {"in": False, "out": False}
        self._queued: dict[str, list[bytes]] = {"in": [], "out": []}
        #: ids of requests a viewer or a rule injected towards the server, whose answers the client must
        #: not get (it never sent them): kept from it, recorded with ``kept_from_client``
        self._injected_ids: set[Any] = set()
        #: the pipes carry HTTP/2 (``stdio-v2``): nothing is held or injected
        self._h2 = False
        #: the directions whose raw bytes the interceptor was said to be unable to hold (once each)
        self._raw_noted: set[str] = set()

    # -- the pumps ---------------------------------------------------------------------------------
    def _pump(self, src: int, dst: int, direction: str) -> None:
        """Copy ``src`` to ``dst`` chunk by chunk, recording every complete line (or raw bytes: whatever is not
        lines of JSON, :class:`~mcpreel.record.framing.Framer`) before it goes on."""
        read, record, raw, clock, forward = os.read, self.recorder.lines, self.recorder.raw, now_ms, self._forward
        framer = Framer(direction, _BATCH)
        while True:
            try:
                chunk = read(src, _CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                break
            sent = 0
            steps = framer.feed(chunk)
            if steps:
                t = clock()
                for what, end in steps:
                    if isinstance(what, list):
                        record(direction, what, t)
                    else:
                        raw(direction, what, t, h2=framer.mode == "h2")
                    if dst >= 0:
                        dst = forward(dst, chunk[sent:end] if sent or end < len(chunk) else chunk, direction)
                    sent = end
            if dst >= 0 and sent < len(chunk):
                dst = forward(dst, chunk[sent:] if sent else chunk, direction)
        rest = framer.finish()
        if isinstance(rest, list):
            # a last line without its newline: it went on as it came; recorded as what it is
            self.recorder.tail(direction, rest[0], clock())
        elif rest:
            raw(direction, rest, clock())

    def _forward(self, dst: int, data: bytes, direction: str) -> int:
        """Send ``data`` on; -1 from now on when the reader is gone (reading and recording go on)."""
        if not data:
            return dst
        try:
            _write_all(dst, data)
            return dst
        except OSError:
            if direction == "out":
                self.client_gone.set()
            # "in": the server closed its stdin (or died); what the client still sends is recorded
            return -1

    # -- the intercept -----------------------------------------------------------------------------
    def _send(self, direction: str, data: bytes) -> bool:
        """Write to ``direction``'s reader under its lock; False when the reader is gone. Injected lines that
        waited for a line in progress to end go out as soon as it has."""
        with self._locks[direction]:
            dst = self._dst[direction]
            if dst < 0:
                return False
            dst = self._forward(dst, data, direction)
            self._midline[direction] = not data.endswith(b"\n")
            queued = self._queued[direction]
            if queued and not self._midline[direction] and dst >= 0:
                self._queued[direction] = []
                dst = self._forward(dst, b"".join(queued), direction)
            self._dst[direction] = dst
            return dst >= 0

    def _send_line(self, direction: str, line: bytes) -> bool:
        """One line of the proxy's own: now, or right after the line in progress ends."""
        with self._locks[direction]:
            if self._dst[direction] >= 0 and self._midline[direction]:
                self._queued[direction].append(line)
                return True
        return self._send(direction, line)

    def inject(self, direction: str, message: Any) -> None:
        """The :class:`~mcpreel.intercept.InjectPort` of this proxy: record ``message`` as injected and
        send it to the server (``in``) or the client (``out``)."""
        if direction not in ("in", "out"):
            raise ValueError(f"direction must be in or out, got {direction!r}")
        if self._h2:
            raise ValueError("this session speaks HTTP/2 over stdio (stdio-v2): a JSON line cannot be injected into it")
        if self._dst[direction] < 0:
            raise ValueError("the server's stdin is closed" if direction == "in" else "the client stopped reading")
        self.recorder.message(Message(direction, message, now_ms(), injected=True))
        if direction == "in" and type(message) is dict and "method" in message and "id" in message:
            key = correlation_key(message.get("id"))
            if key is not None:
                self._injected_ids.add(key)
        if not self._send_line(direction, jsonio.dumps(message) + b"\n"):
            raise ValueError("the receiver went away while the message was sent")

    def _close_direction(self, direction: str) -> None:
        """A ``close`` decision: the pipe to this direction's reader is closed (the reader sees EOF)."""
        with self._locks[direction]:
            dst, self._dst[direction] = self._dst[direction], -1
            if dst >= 0:
                try:
                    if direction == "in":
                        self.process.stdin.close()
                    else:
                        os.close(dst)
                except OSError:
                    pass

    def _decided(self, direction: str, line: bytes, value: Any, t: int) -> None:
        """One line the interceptor wanted: wait for its decision, record it as decided, carry it out."""
        assert self.interceptor is not None
        if self.client_gone.is_set():  # nobody can get an answer any more: no one is asked
            decision: Decision = ABANDONED
        else:
            decision = safe_decide(self.interceptor, Pending(direction, value, t), self._warn)
        by = decision.by or None
        action = decision.action
        if action == "edit":
            self.recorder.message(Message(direction, decision.message, t, modified=True, original=value, decided_by=by))
            self._send(direction, jsonio.dumps(decision.message) + b"\n")
        elif action in ("drop", "close"):
            self.recorder.message(Message(direction, value, t, dropped=True, decided_by=by,
                                          extra={"abandoned": True} if decision.abandoned else None))
            if decision.abandoned:  # the client is gone: the server's stdin closes, whichever way this went
                self.abandoned += 1
                self._close_direction("in")
            answer = drop_answer(value, decision) if action == "drop" else None
            if answer is not None:
                back = "out" if direction == "in" else "in"
                self.recorder.message(Message(back, answer, now_ms(), injected=True, decided_by=by))
                self._send_line(back, jsonio.dumps(answer) + b"\n")
            if action == "close":
                self._close_direction(direction)
        else:
            rec = Message(direction, value, t, decided_by=by)
            self.recorder.message(rec)
            self._send(direction, line + b"\n")
        for inj_direction, message in decision.inject:
            try:
                self.inject(inj_direction, message)
            except ValueError as exc:
                if self._warn is not None:
                    self._warn(f"intercept: could not inject a message: {exc}")

    def _pump_lines(self, src: int, direction: str) -> None:
        """The pump with an interceptor (see the module docstring).

        While the interceptor is ``active`` whole lines go on, each offered to it; while it is not, bytes go
        on as they come, as in :meth:`_pump` (a line begun then cannot be held when holding starts midway:
        its rest goes on).
        """
        interceptor = self.interceptor
        assert interceptor is not None
        wants, record, clock, send = interceptor.wants, self.recorder.lines, now_ms, self._send
        raw = self.recorder.raw
        carried: list[bytes] = []  # the line begun, not finished (a list: a 10 MB line comes in many reads)
        carried_sent = False  # ... and its bytes already went on
        head: bytes | None = b""  # the first bytes, until they decide the framing (None once they have)
        rawline = False  # the rest of a line that cannot be held (not JSON, too long) goes on raw
        for chunk in _chunks(src):
            if head is not None:
                head += chunk
                mode = framing_of(direction, head)
                if mode is None:  # undecided (a preface cut short): these go on now, recorded once it is
                    send(direction, chunk)
                    continue
                if mode == "h2":  # HTTP/2 (stdio-v2): no line to hold, every byte recorded raw and decoded
                    self._h2 = True
                    self._raw_passes(direction)
                    raw(direction, head, clock(), h2=True)
                    send(direction, chunk)
                    self._pump_raw(src, direction)
                    return
                if len(head) > len(chunk):  # what went on while undecided began the first line
                    carried, carried_sent = [head[: len(head) - len(chunk)]], True
                head = None
            if rawline:
                cut = chunk.find(b"\n")
                piece = chunk if cut < 0 else chunk[: cut + 1]
                if direction not in self._raw_noted:
                    self._raw_passes(direction)
                raw(direction, piece, clock())
                send(direction, piece)
                if cut < 0:
                    continue
                rawline = False
                chunk = chunk[cut + 1 :]
                if not chunk:
                    continue
            # an injected request's answer must be found on its way out: lines are read while one is awaited
            active = getattr(interceptor, "active", True) or (direction == "out" and bool(self._injected_ids))
            nl = chunk.rfind(b"\n")
            if nl < 0:
                if carried_sent:
                    send(direction, chunk)
                elif not active:
                    send(direction, b"".join((*carried, chunk)))
                    carried_sent = True
                carried.append(chunk)
                if cannot_hold(carried):
                    rawline = self._spill(direction, carried, carried_sent)
                    carried, carried_sent = [], False
                continue
            body = b"".join((*carried, chunk[:nl])) if carried else chunk[:nl]
            tail = chunk[nl + 1 :]
            t = clock()
            lines = body.split(b"\n")
            if not active:  # holding nothing now: no line is parsed here, bytes go on as they came
                record(direction, lines, t)
                send(direction, chunk if carried_sent else body + b"\n" + tail)
                carried, carried_sent = ([tail], True) if tail else ([], False)
                if carried and cannot_hold(carried):
                    rawline = self._spill(direction, carried, carried_sent)
                    carried, carried_sent = [], False
                continue
            passing: list[bytes] = []
            if carried_sent:  # the first line's beginning already went on: its rest follows, unheld
                first_nl = chunk.find(b"\n")
                record(direction, [lines[0]], t)
                send(direction, chunk[: first_nl + 1])
                lines = lines[1:]
            for line in lines:
                value: Any = None
                if line[:1] == b"{" or line.lstrip()[:1] == b"{":
                    value = classify(line)[1]
                if direction == "out" and self._injected_ids and type(value) is dict and self._answers_injected(value):
                    if passing:
                        record(direction, passing, t)
                        send(direction, b"\n".join(passing) + b"\n")
                        passing = []
                    self.recorder.message(Message(direction, value, t, extra={"kept_from_client": True}))
                    continue
                if type(value) is dict and wants(direction, value):
                    if passing:
                        record(direction, passing, t)
                        send(direction, b"\n".join(passing) + b"\n")
                        passing = []
                    self._decided(direction, line, value, t)
                    t = clock()
                else:
                    passing.append(line)
            if passing:
                record(direction, passing, t)
                send(direction, b"\n".join(passing) + b"\n")
            carried, carried_sent = ([tail], False) if tail else ([], False)
            if carried and cannot_hold(carried):
                rawline = self._spill(direction, carried, carried_sent)
                carried, carried_sent = [], False
        if carried:
            rest = b"".join(carried)
            self.recorder.tail(direction, rest, clock())
            if not carried_sent:
                send(direction, rest)
        elif head:  # the stream ended before its first bytes decided anything: they went on; kept raw
            raw(direction, head, clock())

    def _spill(self, direction: str, carried: list[bytes], carried_sent: bool) -> bool:
        """A line begun that cannot be held (not JSON, or past the line limit): its bytes so far are recorded
        raw, piece by piece, and go on if they had not; its rest will follow raw. Returns True."""
        if direction not in self._raw_noted:
            self._raw_passes(direction)
        t = now_ms()
        for piece in carried:
            self.recorder.raw(direction, piece, t)
        if not carried_sent:
            for piece in carried:
                self._send(direction, piece)
        return True

    def _pump_raw(self, src: int, direction: str) -> None:
        """An HTTP/2 (``stdio-v2``) direction: each chunk recorded raw and decoded, then sent on, as it came."""
        raw, send, clock = self.recorder.raw, self._send, now_ms
        noted = self._raw_noted
        for chunk in _chunks(src):
            if self.interceptor is not None and direction not in noted:
                self._raw_passes(direction)  # (a viewer may turn holding on at any time)
            raw(direction, chunk, clock(), h2=True)
            send(direction, chunk)

    def _raw_passes(self, direction: str) -> None:
        """Say once per direction, when something is holding messages (a viewer's intercept, ``--rules``), that
        raw bytes cannot be held: they were forwarded unchanged (HTTP/2 frames of a ``stdio-v2`` pipe, bytes
        that are not JSON lines); holding, editing and dropping act on JSON lines only."""
        interceptor = self.interceptor
        if interceptor is None or not getattr(interceptor, "active", True):
            return
        self._raw_noted.add(direction)
        if self._warn is not None:
            who = "client" if direction == "in" else "server"
            what = "HTTP/2 frames (stdio-v2)" if self._h2 else "bytes that are not JSON lines"
            self._warn(f"intercept: the {who} sends {what}: they go on unchanged and cannot be held or edited "
                       "(holding acts on JSON lines only)")

    def _answers_injected(self, value: dict[str, Any]) -> bool:
        """An answer to a request the proxy injected (forget it: one answer each)."""
        if "method" in value or ("result" not in value and "error" not in value):
            return False
        key = correlation_key(value.get("id"))
        if key is None or key not in self._injected_ids:
            return False
        self._injected_ids.discard(key)
        return True

    def _pump_in(self) -> None:
        stdin = self.process.stdin
        if self.interceptor is not None:
            self._pump_lines(self.stdin_fd, "in")
            with self._locks["in"]:
                self._dst["in"] = -1
        else:
            self._pump(self.stdin_fd, stdin.fileno(), "in")
        self.client_eof.set()
        try:
            stdin.close()  # the client's EOF becomes the server's EOF
        except OSError:
            pass

    def _pump_out(self) -> None:
        if self.interceptor is not None:
            self._pump_lines(self.process.stdout.fileno(), "out")
        else:
            self._pump(self.process.stdout.fileno(), self.stdout_fd, "out")

    def _pump_err(self) -> None:
        """Server stderr: passed on to the proxy's stderr at once, recorded line by line."""
        src, dst = self.process.stderr.fileno(), self.stderr_fd
        record = self.recorder.stderr
        pending = b""
        for chunk in _chunks(src):
            if dst >= 0:
                try:
                    _write_all(dst, chunk)
                except OSError:
                    dst = -1
            nl = chunk.rfind(b"\n")
            if nl >= 0:
                body = pending + chunk[:nl]
                pending = chunk[nl + 1 :]
                record(body.split(b"\n"), now_ms())
            else:
                pending += chunk
        if pending:
            record([pending], now_ms())

    def _watch_client(self, stop: threading.Event) -> None:
        """With an interceptor: notice the client's end of stdout closing (see the module docstring). Where
        there is no ``poll`` (Windows) a pipe's hang-up cannot be watched for: held messages then end when the
        client's stdin does."""
        if not hasattr(select, "poll"):
            return
        poller = select.poll()
        try:
            poller.register(self.stdout_fd, 0)  # no event asked: only POLLERR / POLLHUP / POLLNVAL come back
        except (OSError, ValueError):
            return
        while not stop.is_set():
            try:
                events = poller.poll(int(_WATCH_SECONDS * 1000))
            except InterruptedError:
                continue
            except OSError:
                return
            if any(ev & (select.POLLERR | select.POLLHUP) for _, ev in events):
                break
            if any(ev & select.POLLNVAL for _, ev in events):
                return
        else:
            return
        self.client_gone.set()
        abandon = getattr(self.interceptor, "abandon", None)
        if callable(abandon):
            try:
                abandon(None, None)
            except Exception as exc:
                if self._warn is not None:
                    self._warn(f"intercept: abandoning the held messages failed ({exc!r})")

    # -- the session -------------------------------------------------------------------------------
    def run(self) -> tuple[int, str]:
        """Pump until the server exits; returns ``(exit status, reason)``."""
        threads = {
            name: threading.Thread(target=target, name=f"mcpreel-{name}", daemon=True)
            for name, target in (("in", self._pump_in), ("out", self._pump_out), ("err", self._pump_err))
        }
        stop_watching = threading.Event()
        if self.interceptor is not None:
            threads["watch"] = threading.Thread(target=self._watch_client, args=(stop_watching,),
                                                name="mcpreel-watch", daemon=True)
        with forward_signals(self.process.pid, self.signals.append):
            for signum in early_signals.take():  # came after the server started, before these handlers
                self.signals.append(signum)
                signal_group(self.process.pid, signum)
            for thread in threads.values():
                thread.start()
            try:
                returncode = self.process.wait()
            finally:
                stop_watching.set()
            # judged the moment the server is gone, before anyone can react to its going
            signals = len(self.signals)
            self.client_ended = self.client_eof.is_set() or self.client_gone.is_set() or bool(signals)
            # what the server wrote before it exited is still in the pipes: read it to the end. Signals are
            # still forwarded meanwhile (to a child of the server that holds the pipes), never fatal here:
            # the file must get its end line
            threads["out"].join(_DRAIN_SECONDS)
            threads["err"].join(_DRAIN_SECONDS)
        del self.signals[signals:]  # a signal that came after the server was gone is not why it ended
        return exit_status(returncode), self._reason(returncode)

    def _reason(self, returncode: int) -> str:
        if returncode < 0:
            why = f"server killed by {signal_name(-returncode)}"
        else:
            why = f"server exited with code {returncode}"
        if self.signals:
            names = ", ".join(dict.fromkeys(signal_name(s) for s in self.signals))
            return f"{why} after {names} was forwarded to it"
        if self.abandoned:
            return f"{why} after the client went away ({self.abandoned} held message(s) abandoned)"
        if self.client_eof.is_set():
            return f"{why} after the client closed its stdin"
        if self.client_gone.is_set():
            return f"{why} after the client stopped reading"
        return why


def record_stdio(options: RecordOptions, hooks: RecordHooks | None = None) -> RecordResult:
    """Run ``options.server`` (a :class:`StdioServer`) behind a transparent recording proxy until it exits.

    Use :func:`mcpreel.record.record`, which takes every transport. The reel goes to ``options.out``
    (an existing reel gets the session appended; mode 0600), appended and flushed per read, and always
    closed by an ``end`` line; ``hooks.ready("stdio")`` is called just before the server is started.
    What else is kept or done (redaction, tags, the session file, live OTLP, the control server, rules) is
    :func:`~mcpreel.record.addons.default_addons`'s business; the interceptor it makes is handed this
    proxy's injection port (``attach``) before the pumps start. Raises :class:`ServerStartError` (exit 127)
    after completing both files when the command cannot start.
    """
    hooks = hooks if hooks is not None else RecordHooks()
    server = options.server
    if not isinstance(server, StdioServer):
        raise TypeError("record_stdio records a StdioServer")
    warnings: list[str] = []

    def _warn(text: str) -> None:
        warnings.append(text)
        if hooks.warn is not None:
            hooks.warn(text)

    argv = [str(a) for a in server.command]
    info = SessionInfo(
        label=options.label or (os.path.basename(argv[0]) if argv else "session"),
        transport="stdio",
        command=argv,
        started=now_ms(),
    )
    addons = default_addons(options, dataclasses.replace(hooks, warn=_warn))
    pipeline = Pipeline(addons.chain)
    try:
        pipeline.started(info)
        out_path, first_seq = claim_reel(options.out)  # an existing reel gets a new session, never replaced
        writer = ReelWriter(out_path, info, first_seq=first_seq)
    except OSError as exc:
        addons.close()
        raise UsageError(f"{os.fspath(options.out)}: cannot write the reel: {exc.strerror or exc}") from exc
    except BaseException:
        addons.close()
        raise
    recorder = WireRecorder(writer, pipeline=pipeline, warn=_warn, keep_secrets=server.keep_secrets)
    early = early_signals.take()  # a signal before the server started: the reel ends here, with its name
    if early:
        names = ", ".join(dict.fromkeys(signal_name(s) for s in early))
        reason = f"{names} before the server started"
        recorder.close(128 + early[0], reason)
        addons.close()
        return RecordResult(exit_code=128 + early[0], reason=reason, out=out_path, warnings=warnings,
                            client_ended=True)
    try:
        if hooks.ready is not None:
            hooks.ready("stdio")
        if not argv:
            raise ServerStartError("no server command given (put it after --)")
        # from this (the main) thread, which lives as long as the server: Linux ties the
        # parent-death signal to the thread that started the child
        process = spawn(argv, env=server.env, cwd=server.cwd, die_with_parent=True)
    except ServerStartError as exc:
        info.metadata["error"] = str(exc)
        recorder.close(127, str(exc))
        addons.close()
        raise
    addons.start()
    code, reason = 1, "proxy error"
    stdin_fd, stdout_fd, stderr_fd = server.fds
    interceptor = addons.interceptor
    proxy = StdioProxy(recorder, process, stdin_fd=stdin_fd, stdout_fd=stdout_fd, stderr_fd=stderr_fd,
                       interceptor=interceptor, warn=_warn)
    attach = getattr(interceptor, "attach", None)
    if callable(attach):
        attach(proxy)
    try:
        code, reason = proxy.run()
    except BaseException as exc:
        reason = f"proxy error: {exc!r}"
        if process.poll() is None:
            process.kill()
            process.wait()
        code = exit_status(process.returncode) if process.returncode is not None else 1
        raise
    finally:
        recorder.close(code, reason)
        addons.close()
    return RecordResult(
        exit_code=code,
        reason=reason,
        out=out_path,
        session_file=addons.session_file,
        messages=recorder.messages,
        invalid=recorder.invalid,
        stderr_lines=recorder.stderr_lines,
        redacted=addons.redacted,
        warnings=warnings,
        client_ended=proxy.client_ended,
    )
