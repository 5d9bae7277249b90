"""Replay: re-send a recording's client side to a live server and judge every answer.

:mod:`.verify` does the work on top of :mod:`mcpreel.operations` (the one reading of a session) and
:mod:`mcpreel.compare.normalize` (what "the same" means); the server is reached through a client
transport (:mod:`mcpreel.clients`). :func:`replay_file` is the library's entry point (the CLI calls
nothing else): it reads the session file, runs, and returns a report; it never prints.
The other direction, a recording answering a live client, is :mod:`mcpreel.mock`; comparing two
recordings is :mod:`mcpreel.compare`.

What a replay is about to do (which file, against what, which client sessions, in which era) is known
before its first request and handed to ``on_start`` as a :class:`ReplayPlan`, so a caller can say it
first, then the results as they are judged, then the summary.

Samples (:mod:`.noise`): with ``options.sampling`` the recording is replayed more than once -- the earlier
runs against the target, then those against the baseline, each streamed into a
:class:`~mcpreel.replay.noise.SampleBook` that keeps only the digests of what differed -- and the last run
against the target is the one whose results the caller sees, each settled over every sample (``same``,
``changed``, ``flaky``, ``error``) before it is handed on. ``options.noise`` (a learned noise file) becomes
compare rules for the server the recording names.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mcpreel.clients import open_target
from mcpreel.compare.normalize import IgnorePath
from mcpreel.drafts import DPOP_REPLAY_NOTE
from mcpreel.errors import InputError, TransportError, UsageError
from mcpreel.formats import open_session
from mcpreel.operations.sessions import ClientSession, split_sessions_streaming
from mcpreel.replay.noise import BASELINE, TARGET, SampleBook, Sampling, server_name_of
from mcpreel.replay.results import ERA_CHOICES, ReplayOptions, ReplayReport, RequestResult
from mcpreel.replay.verify import replay

__all__ = ["ERA_CHOICES", "IgnorePath", "ReplayHooks", "ReplayOptions", "ReplayPlan", "ReplayReport", "ReplayTarget",
           "replay", "replay_file"]


@dataclass
class ReplayPlan:
    """What a replay will do, known before it sends anything: the file, the target, and each client
    session to replay (``index``, ``label``, ``era`` as recorded, ``replay_in`` the era it is replayed in)."""

    session: str
    target: str
    transport: str
    era: str  # ReplayOptions.era: auto (each session's own), legacy or modern
    pace: str
    sessions: list[dict[str, Any]] = field(default_factory=list)
    of: int = 1  # client sessions in the file (``--session N`` replays one of them)
    #: the runs a sampled replay makes per side (``{"target": K, "baseline": B}``), None for one run
    samples: dict[str, int] | None = None


@dataclass(frozen=True)
class ReplayTarget:
    """The live server a recording is replayed against: a command (over its stdio) or a URL (``transport``:
    ``auto`` -- legacy SSE for a path ending in ``/sse``, else Streamable HTTP), with extra HTTP ``headers``."""

    command: str | Sequence[str] | None = None
    url: str | None = None
    transport: str = "auto"
    headers: dict[str, str] | None = None


@dataclass(frozen=True)
class ReplayHooks:
    """What the caller is told while a replay runs (the library never prints), each optional.

    ``on_event`` a line worth saying (a merged file replayed source by source); ``sink`` each result as soon
    as it is judged, in request order, instead of the report's ``results`` (see :class:`ReplayReport`);
    ``on_progress`` the bytes of the file read so far, on each of its passes (the last pass is the one that
    sends the requests); ``on_start`` the :class:`ReplayPlan`, once, before the first request is sent."""

    on_event: Callable[[str], None] | None = None
    sink: Callable[[RequestResult], None] | None = None
    on_progress: Callable[[int], None] | None = None
    on_start: Callable[[ReplayPlan], None] | None = None


def replay_file(path: str | Path, target: ReplayTarget, *, format: str = "auto", options: ReplayOptions | None = None,
                hooks: ReplayHooks | None = None) -> ReplayReport:
    """Replay the session in ``path`` against ``target``; return the report.

    With ``options.sampling`` the replay takes samples (the module doc and :mod:`.noise`): more runs
    against the target and a baseline, the last run's results settled over all of them. With
    ``options.noise`` the learned noise of the recording's server is left out of every comparison.
    The rest is one run (:func:`_replay_once`). What the report shows of the bodies is redacted unless
    ``options.redact`` is False (the verdicts are made on the bodies as they came).
    """
    opts = options or ReplayOptions()
    hooks = hooks or ReplayHooks()
    if opts.redact:  # judged on the bodies as they came; shown redacted (every result, sunk or kept)
        from mcpreel.redact import Redactor
        from mcpreel.replay.results import redact_result

        redactor = Redactor()
        sink = hooks.sink
        if sink is not None:
            hooks = replace(hooks, sink=lambda result: sink(redact_result(result, redactor)))
        report = replay_file(path, target, format=format, options=replace(opts, redact=False), hooks=hooks)
        for result in report.results:
            redact_result(result, redactor)
        return report
    sampling = opts.sampling if opts.sampling is not None and opts.sampling.needed else None
    server = None
    if opts.noise is not None or (sampling is not None and sampling.learn):
        server = _server_name(path, format)
    if opts.noise is not None:
        noise = opts.noise
        known = noise.servers()
        if server is not None and known and server not in known and hooks.on_event is not None:
            hooks.on_event(f"{noise.source} holds no noise of {server} (it holds: {', '.join(known)}); "
                           f"only its entries for any server apply")
        rules = noise.rules_for(server)
        opts = replace(opts, noise=None, rules=rules if opts.rules is None else opts.rules + rules)
    if sampling is None:
        return _replay_once(path, target, format, replace(opts, sampling=None), hooks)
    return _replay_sampled(path, target, format, replace(opts, sampling=None), _Sampled(hooks, sampling, server))


def _server_name(path: str | Path, format: str) -> str | None:
    """The name the recording's server gives itself (its ``serverInfo``), read from the file's start."""
    session, _ = open_session(path, format)
    return server_name_of(iter(session))


@dataclass(frozen=True)
class _Sampled:
    hooks: ReplayHooks
    sampling: Sampling
    server: str | None


def _replay_sampled(path: str | Path, target: ReplayTarget, format: str, opts: ReplayOptions,
                    how: _Sampled) -> ReplayReport:
    """K runs against the target (the last one is the report), K against the baseline, settled together."""
    hooks, sampling = how.hooks, how.sampling
    book = SampleBook(learn=sampling.learn)
    repeat = max(1, sampling.repeat)
    samples = {TARGET: repeat, BASELINE: repeat if sampling.baseline else 0}
    runs: list[tuple[str, ReplayTarget]] = [(TARGET, target)] * (repeat - 1)
    if sampling.baseline:
        baseline = ReplayTarget(sampling.baseline_command, sampling.baseline_url, target.transport, target.headers)
        runs += [(BASELINE, baseline)] * repeat
    said: set[str] = set()

    def event(line: str) -> None:  # the same warning from every run is said once
        if hooks.on_event is not None and line not in said:
            said.add(line)
            hooks.on_event(line)

    announced = hooks.on_start is None

    def start(plan: ReplayPlan) -> None:
        nonlocal announced
        if not announced and hooks.on_start is not None:
            announced = True
            hooks.on_start(replace(plan, samples=samples))

    for side, where in runs:
        book.started(side)

        def keep(result: RequestResult, side: str = side) -> None:
            book.add(side, result)

        report = _replay_once(path, where, format, opts, ReplayHooks(
            on_event=event, sink=keep, on_progress=hooks.on_progress, on_start=start if side == TARGET else None))
        if side == BASELINE and report.requests and report.compared and \
                report.count("error") >= report.compared:
            raise UsageError(f"the baseline {_shown(where)} answered none of the {report.requests} requests "
                             f"({report.ended or 'no answer'}): there is nothing to judge the target by")
    moved: list[tuple[str, str]] = []

    def settle(result: RequestResult) -> None:
        was = result.status
        book.settle(result)
        moved.append((was, result.status))
        if hooks.sink is not None:
            hooks.sink(result)

    final = _replay_once(path, target, format, opts, ReplayHooks(
        on_event=event, sink=settle if hooks.sink is not None else None, on_progress=hooks.on_progress,
        on_start=start))
    if hooks.sink is None:
        for result in final.results:
            settle(result)
    for was, now in moved:
        final.recount(was, now)
    final.samples = samples
    if sampling.learn:
        final.learned = book.learned(how.server)
    return final


def _shown(target: ReplayTarget) -> str:
    if target.url is not None:
        return target.url
    return target.command if isinstance(target.command, str) else " ".join(target.command or [])


def _replay_once(path: str | Path, target: ReplayTarget, format: str, opts: ReplayOptions,
                 hooks: ReplayHooks) -> ReplayReport:
    """One run of the recording against ``target``.

    A file that holds several client sessions (:func:`mcpreel.operations.sessions.split_sessions_streaming`) is replayed
    session by session, each on a fresh connection (a fresh server process over stdio), in recorded
    order; ``options.session_index`` (1-based) picks one. A merged file's sources are sessions of their own
    (never one target session for two servers); ``options.source`` replays one source only, against its own
    server (:func:`mcpreel.merge.select_source`); without it, a file of several sources is replayed source by
    source against the one target, and ``hooks.on_event`` says so.
    """
    command, url, transport, headers = target.command, target.url, target.transport, target.headers
    on_event, sink, on_progress, on_start = hooks.on_event, hooks.sink, hooks.on_progress, hooks.on_start
    session_index, source = opts.session_index, opts.source
    from mcpreel.merge import merged_sources, select_source

    session, _ = open_session(path, format, on_progress=on_progress)  # a stream, never whole (see replay())
    if source is not None:
        session = select_source(session, source, str(path), stream=True)
    elif len(names := merged_sources(session)) > 1 and on_event is not None:
        on_event(f"{path} merges {len(names)} servers ({', '.join(names)}): each is replayed in its own target "
                 f"session against the one target; --source NAME replays one source against its own server")
    parts = split_sessions_streaming(session)
    of = len(parts)
    if session_index is not None:
        if not 1 <= session_index <= len(parts):
            listing = "; ".join(p.label() for p in parts)
            raise UsageError(f"{path}: --session {session_index}: the file holds {len(parts)} "
                             f"session{'s' if len(parts) != 1 else ''} ({listing})")
        parts = [parts[session_index - 1]]
    shown = _shown(target)

    many = len(parts) > 1
    announced = on_start is None

    def run_one(part: ClientSession, first_index: int = 1) -> ReplayReport:
        nonlocal announced
        client = open_target(command, url, transport=transport, headers=headers)
        if not announced:
            announced = True
            assert on_start is not None
            chosen = [p for p in parts if p.requests or not many]
            on_start(ReplayPlan(str(path), shown, client.name, opts.era, opts.pace, of=of, sessions=[
                {"index": p.index, "label": p.label(), "era": p.era, "requests": p.requests,
                 "replay_in": opts.era if opts.era != "auto" else (p.era if p.era in ("legacy", "modern") else "legacy")}
                for p in chosen]))
        sub = part.as_session(session.info) if many or session_index is not None else session
        try:
            done = asyncio.run(replay(sub, client, opts, target=shown, on_event=on_event, sink=sink,
                                      first_index=first_index, session_index=part.index if many else None))
        except TransportError as exc:
            if part.dpop:  # most likely the reason: say so rather than leave a bare 401
                raise TransportError(f"{exc} -- {DPOP_REPLAY_NOTE}") from exc
            raise
        if part.dpop and DPOP_REPLAY_NOTE not in done.notes:
            done.notes.append(DPOP_REPLAY_NOTE)  # SEP-1932: a proof is per request and per key
        return done

    if not many:
        report = run_one(parts[0])
        report.sessions = [_session_entry(parts[0], report)]
        return _with_list_gets(report, session, url, headers, opts)
    combined: ReplayReport | None = None
    for part in parts:
        if part.requests == 0:
            continue  # server chatter or stderr with no client request: nothing to replay
        report = run_one(part, 1 + (combined.requests if combined is not None else 0))
        results, notes = report.results, report.notes
        entry = _session_entry(part, report)
        if combined is None:
            combined = report
            combined.results, combined.notes, combined.handshake = [], list(session.info.notes), None
        else:
            combined.server_requests.extend(report.server_requests)
            combined.notifications_sent += report.notifications_sent
            combined.notifications_received += report.notifications_received
            combined.skipped_dropped += report.skipped_dropped
            combined.ended = report.ended or combined.ended
            combined.total += report.total
            combined.compared_count += report.compared_count
            for status, n in report.counts.items():
                combined.counts[status] = combined.counts.get(status, 0) + n
        combined.results.extend(results)
        combined.notes.extend(f"session {part.index}: {note}" for note in
                              ([entry["handshake"]] if entry["handshake"] else []) + notes
                              if note not in session.info.notes)
        combined.sessions.append(entry)
    if combined is None:
        raise InputError("holds no client requests to replay", path=str(path))
    eras = {s["replayed_in"] for s in combined.sessions}
    combined.era = eras.pop() if len(eras) == 1 else "mixed"
    recorded = {s["era"] for s in combined.sessions}
    combined.recorded_era = recorded.pop() if len(recorded) == 1 else "mixed"
    return _with_list_gets(combined, session, url, headers, opts)


def _with_list_gets(report: ReplayReport, session: Any, url: str | None, headers: dict[str, str] | None,
                    opts: ReplayOptions) -> ReplayReport:
    """The recording's lists retrieved over HTTP GET (the drafts' ``?mcp_list=``), sent again and judged
    after its JSON-RPC requests (:mod:`mcpreel.replay.list_gets`); one more pass over an HTTP recording."""
    if url is None or session.info.transport == "stdio":
        return report
    from mcpreel.operations.http_lists import list_gets
    from mcpreel.replay.list_gets import replay_list_gets

    lists = list_gets(session)
    if not lists:
        return report
    for result in replay_list_gets(lists, url, headers=headers, timeout=opts.timeout, ignore=opts.ignore_paths):
        report.add(result)
        report.judged(result)
    report.flush()
    return report


def _session_entry(part: ClientSession, report: ReplayReport) -> dict[str, object]:
    return {"index": part.index, "label": part.label(), "era": part.era, "protocol": part.protocol,
            "client": part.client, "replayed_in": report.era, "requests": report.requests,
            "handshake": report.handshake}
