"""One cassette run: decide from the record mode what to do, then replay the cassette or record it.

:func:`plan` reads the cassette on disk first, whatever the mode, so a corrupt cassette is an error
naming the file and is never overwritten (vcrpy's trap: a corrupt cassette taken as empty, then
replaced). Then:

    mode           cassette exists                          cassette missing
    once           replay; a miss fails                     record
    new_episodes   replay; a miss goes to the real server,  record
                   its answer joins the cassette
    none           replay; a miss fails                     error
    all            record                                   record

Replaying is the mock (:func:`mcpreel.mock.serve_file`, ``--on-miss fail|forward``); recording is
the one recording entry point (:func:`mcpreel.record.record`, options as every front end fills them)
writing a temporary reel beside the cassette. That reel
replaces the cassette (a rename: atomic) only when the recording ended cleanly — the client ended the
session, the real server was reachable — and holds at least one client message; otherwise it is
deleted and the cassette left as it was. A rename that fails (a read-only folder, a cassette another
process holds) is an error naming the cassette and the reason, never a recording silently lost.

With a redaction key (``redact_key``; the pytest plugin's default, ``serve --redact``) what is written is
what ``mcpreel redact`` would make of it, keyed markers and all: the recording is redacted into the file
that replaces the cassette, and the answers ``new_episodes`` adds are redacted as the cassette is
rewritten. The mock still matches a live request carrying the same secret through the same key
(:mod:`mcpreel.mock.matcher`).

The real server is reached the way the client reaches the cassette: a command over stdio, a URL over
HTTP. Everything that happens can go to a :class:`~mcpreel.cassette.report.RunReport` as it happens.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mcpreel.cassette.mode import RecordMode
from mcpreel.cassette.report import RunReport
from mcpreel.errors import InputError, McpreelError, UsageError
from mcpreel.model import Kind
from mcpreel.serving.listen import Listener

__all__ = ["CassetteHooks", "CassetteOptions", "CassetteRun", "Plan", "Recording", "check_target",
           "http_transport_for", "plan", "serve_cassette"]

TRANSPORTS = ("stdio", "streamable-http", "sse")
Command = str | Sequence[str]


def http_transport_for(url: str) -> str:
    """The HTTP transport a URL names when nobody says: legacy SSE for a path ending in ``/sse``."""
    return "sse" if urlsplit(url).path.rstrip("/").endswith("/sse") else "streamable-http"


@dataclass(frozen=True)
class Plan:
    """What a run does: record the real server, or replay the cassette (and what a miss does)."""

    cassette: Path
    mode: RecordMode
    exists: bool
    record: bool
    on_miss: str  # replay: "fail" or "forward"
    format: str | None = None  # the existing cassette's format

    @property
    def action(self) -> str:
        """``record`` or ``replay``: what the plan decided, in one word for reports."""
        return "record" if self.record else "replay"

    def describe(self) -> str:
        """One line saying what the mode decided and why (the first thing a user wants to know)."""
        if self.record:
            why = "missing" if not self.exists else "to be replaced"
            return f"record mode {self.mode}: {self.cassette} is {why}: recording the real server"
        misses = ("go to the real server and join the cassette" if self.on_miss == "forward"
                  else "fail")
        return f"record mode {self.mode}: replaying {self.cassette}; requests it lacks {misses}"


@dataclass
class Recording:
    """How a recording ended, and whether it became the cassette."""

    cassette: Path
    saved: bool
    clean: bool
    messages: int
    reason: str

    def describe(self) -> str:
        """One line saying whether the recording replaced the cassette, and if not, that the cassette is untouched."""
        if self.saved:
            return f"recorded {self.messages} messages -> {self.cassette} ({self.reason})"
        return f"recording not saved ({self.reason}): {self.cassette} was left as it was"


@dataclass
class CassetteRun:
    """What one run did: the plan, and the replay's stats or the recording's end."""

    plan: Plan
    stats: Any = None  # MockStats of a replay
    recording: Recording | None = None

    @property
    def misses(self) -> list[Any]:
        """The requests the cassette could not answer (empty when the run recorded)."""
        return list(self.stats.misses) if self.stats is not None else []

    @property
    def failed(self) -> bool:
        """A request the cassette could not answer (or the real server behind it failed)."""
        return bool(self.misses)


def plan(cassette: str | os.PathLike[str], mode: RecordMode | str) -> Plan:
    """Decide what a run of ``mode`` on ``cassette`` does; a corrupt cassette raises here, untouched."""
    from mcpreel.formats import FORMATS, open_session

    mode = RecordMode.parse(mode)
    path = Path(cassette)
    if path.is_dir():
        raise UsageError(f"{path}: is a folder, not a cassette file")
    exists = path.exists()
    fmt = None
    if exists:
        session, detection = open_session(path)  # an InputError names the file, the line and the rule
        for _ in session:  # line formats read lazily: read it all, so a bad line anywhere is found now
            pass
        fmt = detection.format
        if mode is RecordMode.ALL and fmt != "reel":
            raise UsageError(f"{path}: a {fmt} file, and record mode all would replace it with a reel: "
                             "convert it to a reel (mcpreel convert) or delete it first")
        if mode is RecordMode.NEW_EPISODES and not FORMATS[fmt].writes:
            raise UsageError(f"{path}: record mode new_episodes adds answers to the cassette, and {fmt} files "
                             "cannot be written: convert it to a reel first")
    elif mode is RecordMode.NONE:
        raise InputError("no such cassette (record mode none replays only: record it with once or all)",
                         path=str(path))
    record = mode is RecordMode.ALL or not exists
    on_miss = "forward" if mode is RecordMode.NEW_EPISODES else "fail"
    return Plan(path, mode, exists, record, on_miss, fmt)


def _argv(command: Command) -> list[str]:
    argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
    if not argv:
        raise UsageError("the real server's command is empty")
    return argv


def check_target(p: Plan, transport: str, command: Command | None, url: str | None) -> None:
    """Is the real server named the way the client reaches the cassette, and named when the plan needs it?"""
    if transport not in TRANSPORTS:
        raise UsageError(f"unknown transport {transport!r} (known: {', '.join(TRANSPORTS)})")
    if command is not None and url is not None:
        raise UsageError("give the real server as a command or as a URL, not both")
    if transport == "stdio" and url is not None:
        raise UsageError("a cassette served over stdio reaches its real server over stdio too: give its command "
                         "(--target-command), or serve over HTTP (--transport streamable-http|sse)")
    if transport != "stdio" and command is not None:
        raise UsageError(f"a cassette served over {transport} reaches its real server over HTTP too: give its URL "
                         "(--target-url), or serve over stdio")
    if command is None and url is None and (p.record or p.on_miss == "forward"):
        need = "its command (--target-command)" if transport == "stdio" else "its URL (--target-url)"
        why = "is missing" if not p.exists else "is to be recorded again"
        if not p.record:
            why = "may lack a request"
        raise UsageError(f"{p.cassette} {why}, and record mode {p.mode} then asks the real server: give {need}")


@dataclass(frozen=True)
class CassetteOptions:
    """How a cassette is served and written, beside where (:class:`~mcpreel.serving.listen.Listener`).

    ``match``/``repeat``/``answer_timeout`` are the mock's (:class:`mcpreel.mock.MockOptions`; what a miss
    does comes from the record mode, not from here). ``report``: a file every event is appended to as a
    JSON line. ``rules`` (a :class:`mcpreel.rules.RuleSet`) act on what the client sends and is answered:
    on the mock when replaying, on the recording proxy (:mod:`mcpreel.rules.intercept`) when recording.
    ``redact_key``: what is written to the cassette is redacted with keyed markers under this key.
    One record, so a new cassette option is one field and not a parameter threaded through each flow."""

    match: str = "method-params"
    repeat: bool = True
    answer_timeout: float = 10.0
    report: str | os.PathLike[str] | None = None
    rules: Any = None
    redact_key: bytes | None = None
    #: written into a recording's header (``metadata.tags``), as ``record --tag`` writes them
    tags: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CassetteHooks:
    """What the front end is told during a cassette run (the library never prints), each optional:
    ``on_event`` one line per event, ``on_ready(plan, where)`` once the client can connect (``where`` is
    ``"stdio"`` or a URL), ``warn`` a recorder's warnings."""

    on_event: Callable[[str], None] | None = None
    on_ready: Callable[[Plan, str], None] | None = None
    warn: Callable[[str], None] | None = None


def serve_cassette(
    cassette: str | os.PathLike[str],
    mode: RecordMode | str,
    *,
    command: Command | None = None,
    url: str | None = None,
    listener: Listener | None = None,
    options: CassetteOptions | None = None,
    hooks: CassetteHooks | None = None,
) -> CassetteRun:
    """Serve ``cassette`` in record mode ``mode`` until the client leaves (stdio) or a signal (HTTP).

    ``command``/``url`` is the real server, needed when the plan records or forwards. ``listener`` says
    how the client reaches the cassette (stdio by default), ``options`` how it is served and written,
    ``hooks`` what the front end is told.
    """
    listener = listener or Listener()
    options = options or CassetteOptions()
    hooks = hooks or CassetteHooks()
    transport, on_ready = listener.transport, hooks.on_ready
    out = RunReport(options.report)
    try:
        p = plan(cassette, mode)
        check_target(p, transport, command, url)
        # the pid: a test whose client leaves this process running asks it, through a signal, to end now
        out.write("plan", mode=p.mode.value, action=p.action, cassette=str(p.cassette), pid=os.getpid())
        run = CassetteRun(p)

        def ready(where: str) -> None:
            out.write("ready", transport=transport, url=None if where == "stdio" else where)
            if on_ready is not None:
                on_ready(p, where)

        if p.record:
            with _stop_signals_kept(listener.transport == "stdio"):
                run.recording = _record(p, command=command, url=url, listener=listener, options=options,
                                        ready=ready, warn=hooks.warn)
            rec = run.recording
            if rec.saved:
                out.write("saved", cassette=str(rec.cassette), messages=rec.messages)
            else:
                out.write("not-saved", reason=rec.reason, clean=rec.clean)
        else:
            run.stats = _replay(p, command=command, url=url, listener=listener, options=options, ready=ready, out=out,
                                on_event=hooks.on_event)
            s = run.stats
            out.write("done", requests=s.requests, answered=s.answered, missed=len(s.misses), forwarded=s.forwarded)
        return run
    except McpreelError as exc:
        out.write("error", message=str(exc))
        raise
    finally:
        out.close()


@contextlib.contextmanager
def _stop_signals_kept(active: bool) -> Iterator[None]:
    """While a stdio cassette is recorded and saved, a stop signal ends the recording, never the process.

    The pytest plugin sends SIGTERM when the test ended and its client still holds this process (a client
    that leaves its server running): the recording must then be saved, not killed half way. The signal is
    kept (the early-signal latch) until the recorder's own handlers take over, which hand it to the real
    server so the session ends as when a client ends it, and kept again after them while the cassette is
    written. The handlers there before are put back afterwards (only the main thread can set them)."""
    import signal
    import threading

    if not active or threading.current_thread() is not threading.main_thread():
        yield
        return
    from mcpreel._infra import signals

    previous = {sig: signal.getsignal(sig) for sig in signals.LATCHED}
    signals.install()
    try:
        yield
    finally:
        signals.take()  # the session has ended, and the cassette is written: nothing is left for them to stop
        for sig, old in previous.items():
            with contextlib.suppress(OSError, ValueError, TypeError):
                signal.signal(sig, old)


def _replay(p: Plan, *, command: Command | None, url: str | None, listener: Listener, options: CassetteOptions,
            ready: Callable[[str], None], out: RunReport, on_event: Callable[[str], None] | None) -> Any:
    from mcpreel.mock import ForwardTarget, MockOptions, ServeHooks, serve_file

    forwarding = p.on_miss == "forward"
    served: list[Any] = []
    reported = [0]

    def report_misses() -> None:
        if served:
            misses = served[0].stats.misses
            while reported[0] < len(misses):
                miss = misses[reported[0]]
                reported[0] += 1
                out.write("miss", **miss_fields(miss))

    def event(line: str) -> None:
        # the mock tells its events as text, right after counting a miss: the report gets it as data
        report_misses()
        if line.startswith("forward: "):  # what the live server did, and a session opened again
            out.write("forward", message=line.removeprefix("forward: "))
        if on_event is not None:
            on_event(line)

    def started(mock: Any, where: str) -> None:
        served.append(mock)
        ready(where)

    mock_options = MockOptions(match=options.match, repeat=options.repeat, on_miss=p.on_miss,
                               answer_timeout=options.answer_timeout)
    redact_key = options.redact_key
    forward = ForwardTarget(
        command=shlex.join(_argv(command)) if forwarding and command is not None else None,
        url=url if forwarding else None,
        redact=_redaction(redact_key) if forwarding and redact_key is not None else None,
    )
    connection = None
    if options.rules is not None:  # the rules plug into the mock's seam (the mock does not know them)
        from mcpreel.rules.mock import ruled_connections

        connection = ruled_connections(options.rules)
    mock = serve_file(p.cassette, options=mock_options, listener=listener, forward=forward, connection=connection,
                      hooks=ServeHooks(on_event=event, on_ready=started))
    report_misses()
    return mock.stats


def miss_fields(miss: Any) -> dict[str, Any]:
    """A miss as the report tells it: the words, and as data the request that missed, the closest recorded
    one and the paths where they differ (so the plugin can lay them out the way pytest shows an assertion)."""
    fields: dict[str, Any] = {"method": miss.method, "code": miss.code, "message": miss.reason,
                              "params": miss.shown_params()}
    closest = miss.closest
    if closest is not None:
        fields["closest"] = {"label": closest.label(), "params": closest.request.get("params")}
        fields["differences"] = [d.describe(60) for d in miss.differences[:10]]
        if len(miss.differences) > 10:
            fields["differences"].append(f"(+{len(miss.differences) - 10} more)")
    return fields


def _record(p: Plan, *, command: Command | None, url: str | None, listener: Listener, options: CassetteOptions,
            ready: Callable[[str], None], warn: Callable[[str], None] | None) -> Recording:
    from mcpreel.record import HttpTarget, RecordHooks, RecordOptions, StdioServer, record

    cassette = p.cassette
    try:
        cassette.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{cassette.name}.", suffix=".recording", dir=cassette.parent)  # 0600
    except OSError as exc:
        # a read-only folder: one line (the error event, exit 2) before the real server is started
        raise McpreelError(f"{cassette}: cannot record here: {exc.strerror or exc} ({cassette.parent}); "
                           "nothing was recorded") from exc
    os.close(fd)
    tmp = Path(name)
    saved = False
    redact_key = options.redact_key
    try:
        server: StdioServer | HttpTarget
        if listener.transport == "stdio":
            assert command is not None
            server = StdioServer(tuple(_argv(command)))
        else:
            from mcpreel.record.http_proxy import ProxyConfig

            assert url is not None
            config = ProxyConfig(listener.transport, url, allow_origins=tuple(listener.allow_origins),
                                 allow_hosts=tuple(listener.allow_hosts), limits=listener.limits)
            server = HttpTarget(config, listener.host, listener.port)
        recording_options = RecordOptions(server, tmp, label=cassette.stem, save_every=None, tags=options.tags,
                                          rules=options.rules)
        result = record(recording_options, RecordHooks(warn=warn, ready=ready))
        clean, reason = result.client_ended, result.reason
        if not clean:
            reason += " before the client ended the session"
        recording = _judge(tmp, cassette, clean, reason)
        if recording.saved:
            if redact_key is not None:
                _redact_in_place(tmp, redact_key)
            try:
                os.replace(tmp, cassette)
            except OSError as exc:
                # the test or script that asked for the recording must not go on as if it were kept
                reason = exc.strerror or str(exc)
                raise McpreelError(f"{cassette}: the recording could not be saved: {reason}; "
                                   "the cassette was left as it was") from exc
            saved = True
        return recording
    finally:
        if not saved:
            with contextlib.suppress(OSError):
                tmp.unlink()


def _redaction(key: bytes) -> Callable[[Any], Any]:
    """A session as ``mcpreel redact`` with this key would write it (a new redactor a pass: counts start at 0)."""
    from mcpreel.redact import Redactor, Rules

    return lambda session: Redactor(Rules(key=key)).session(session)


def _redact_in_place(path: Path, key: bytes) -> None:
    """``mcpreel redact path path`` with keyed markers: through a temporary file beside it, then a rename."""
    from mcpreel.redact import Rules
    from mcpreel.redact.files import redact_file

    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".redacted", dir=path.parent)  # 0600
    os.close(fd)
    try:
        redact_file(path, name, rules=Rules(key=key), from_="reel", to="reel")
        os.replace(name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise


def _judge(tmp: Path, cassette: Path, clean: bool, reason: str) -> Recording:
    """Is the new recording worth replacing the cassette with? Read it back and look."""
    from mcpreel.formats import open_session

    try:
        session, _ = open_session(tmp, "reel")
        records = list(session)
    except McpreelError as exc:
        return Recording(cassette, False, False, 0, f"the recording cannot be read back: {exc}")
    messages = sum(1 for r in records if r.kind == Kind.MESSAGE)
    client = sum(1 for r in records if r.kind == Kind.MESSAGE and r.dir == "in")
    unreachable = next((r for r in records if r.kind == Kind.TRANSPORT and (r.ctx or {}).get("proxy") == "unreachable"),
                       None)
    if unreachable is not None:
        error = (unreachable.ctx or {}).get("error") or "unreachable"
        return Recording(cassette, False, False, messages, f"the real server could not be reached: {error}")
    if not clean:
        return Recording(cassette, False, False, messages, reason)
    if client == 0:
        return Recording(cassette, False, True, messages, f"the client sent nothing; {reason}")
    return Recording(cassette, True, True, messages, reason)
