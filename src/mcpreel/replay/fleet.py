"""The fleet: many recordings replayed in one run, each client session a job of its own, run concurrently.

Teams that gate on replay hold hundreds of recordings (cassettes in CI, ``wrap``'s sessions, the corpus);
replaying them one after another wastes the time spent waiting on the server. The fleet turns files (and
folders: every file :func:`~mcpreel.corpus.index.find_files` finds that mcpreel reads, as ``index`` finds
them) into **jobs**, one per client session that sent requests (:func:`plan_jobs`), and runs each job with
:func:`~mcpreel.replay.replay_file` (the same replay as ``mcpreel replay FILE --session N``) on a
connection of its own -- over stdio, a server process of its own.

Executors (:class:`FleetRun`): ``local`` runs up to ``jobs`` at once in a pool of worker processes (or
threads; one job at a time runs in this process), ``ray`` fans the same jobs out as Ray tasks
(:func:`run_on_ray`, below), the recordings travelling as bytes. Whatever finished first, the
outcomes come back in job order (:class:`FleetResult`); ``on_done`` hears each as it finishes, for a
progress bar. A Ctrl-C (``KeyboardInterrupt``) stops every job and its server and returns what was done
before it, marked ``interrupted``. The library never prints: the CLI renders (:mod:`mcpreel.render.fleet`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from mcpreel.errors import McpreelError, UsageError
from mcpreel.replay import ReplayOptions, ReplayReport, ReplayTarget, replay_file

__all__ = ["EXECUTORS", "NO_FAIL_ON", "FailOn", "FleetJob", "FleetResult", "FleetRun", "FleetSpec", "SessionOutcome", "ToolRow",
           "default_jobs", "exit_code", "find_recordings", "plan_jobs", "run_fleet", "run_job", "run_on_ray",
           "replay_rows", "session_verdict", "to_json", "tool_rows"]

#: where a fleet's jobs run
EXECUTORS = ("local", "ray")
#: how long stopped workers get to close their connections and servers before they are killed
STOP_GRACE_S = 15.0
#: seconds a cancelled Ray task gets to end before the run stops waiting for it
CANCEL_GRACE_S = 15.0
#: the verdict words of a result that is a change (``different`` is the old spelling of ``changed``)
_CHANGED = frozenset(("changed", "different", "definition changed"))  # the last: DigestChanged (drafts)


def default_jobs() -> int:
    """Sessions replayed at once by default: the machine's CPUs, at most 8 (a replay mostly waits)."""
    return max(1, min(os.cpu_count() or 1, 8))


@dataclass(frozen=True)
class FleetJob:
    """One client session to replay: ``number`` its place in the run's stable order (1-based), ``path`` its
    file, ``session`` which client session of the file (1-based; None: the file holds one, replayed whole)."""

    number: int
    path: str
    session: int | None
    label: str
    requests: int = 0

    def name(self) -> str:
        """How reports name the job: the file, and the session when the file holds several."""
        return self.path if self.session is None else f"{self.path} (session {self.session})"


@dataclass(frozen=True)
class FleetSpec:
    """What every job is replayed against and how: the one target, the replay options (``session_index``
    is set per job), the files' format."""

    target: ReplayTarget
    options: ReplayOptions = field(default_factory=ReplayOptions)
    format: str = "auto"


@dataclass(frozen=True)
class FleetRun:
    """How the jobs run: ``executor`` ``local`` or ``ray``; ``jobs`` at once; the local pool of ``processes``
    (each job in a worker process: stoppable mid-job, no shared interpreter) or ``threads``;
    ``ray_address`` a cluster to join (None: ``RAY_ADDRESS``, else a local Ray started for the run)."""

    executor: str = "local"
    jobs: int = field(default_factory=default_jobs)
    pool: str = "processes"
    ray_address: str | None = None


@dataclass
class SessionOutcome:
    """A job's end: its report, or why it could not run (``error``: the target could not be reached, the
    file could not be read); ``seconds`` it took."""

    job: FleetJob
    report: ReplayReport | None = None
    error: str | None = None
    seconds: float = 0.0

    @property
    def verdict(self) -> str:
        """The session's verdict (:func:`session_verdict`); ``error`` when it could not run."""
        return "error" if self.report is None else session_verdict(self.report)

    def to_json(self) -> dict[str, Any]:
        """The session as ``--output`` writes it: the job, its verdict, and the replay report's document."""
        return {"number": self.job.number, "file": self.job.path, "session": self.job.session,
                "label": self.job.label, "verdict": self.verdict, "error": self.error,
                "seconds": round(self.seconds, 3),
                "report": None if self.report is None else self.report.to_json()}


def session_verdict(report: ReplayReport) -> str:
    """One word for a replayed session: ``changed`` (a changed answer, or a server request the recording
    could not answer), else ``error`` (a request without an answer), else ``flaky``, else ``same``."""
    if any(report.count(s) for s in _CHANGED) or report.unmatched_server_requests:
        return "changed"
    if report.count("error"):
        return "error"
    if report.count("flaky"):
        return "flaky"
    return "same"


@dataclass
class FleetResult:
    """A fleet run: the outcomes of the jobs that finished, in job order; ``total`` jobs planned;
    ``interrupted`` when a Ctrl-C stopped the run (the outcomes are those done before it)."""

    outcomes: list[SessionOutcome]
    total: int
    interrupted: bool = False
    started_ms: int = 0
    seconds: float = 0.0

    def count(self, verdict: str) -> int:
        """Sessions with this verdict."""
        return sum(1 for o in self.outcomes if o.verdict == verdict)


# -- which recordings, which jobs ------------------------------------------------------------------


def find_recordings(paths: Iterable[str | Path]) -> tuple[list[str], list[tuple[str, str]]]:
    """The files to replay under ``paths``: a file named is kept as named; a folder gives every file
    ``mcpreel index`` would read under it (:func:`~mcpreel.corpus.index.find_files`), in a stable order.
    Returns (files, skipped): a folder's file whose content is no session mcpreel reads is skipped, with
    why, as ``index`` keeps it as an error and goes on."""
    from mcpreel.corpus.index import find_files
    from mcpreel.errors import FormatError

    files: list[str] = []
    skipped: list[tuple[str, str]] = []
    for given in paths:
        root = Path(given)
        if not root.exists():
            raise UsageError(f"{given}: no such file or folder")
        if root.is_file():
            files.append(str(given))
            continue
        for found in find_files([root]):
            try:
                _sniff(found)
            except FormatError as exc:
                skipped.append((str(found), exc.rule))
                continue
            except (OSError, ValueError) as exc:
                skipped.append((str(found), str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
                continue
            files.append(str(found))
    return files, skipped


def _sniff(path: Path) -> None:
    """Raise when ``path`` holds no format mcpreel reads (what ``--format auto`` sniffs, nothing more)."""
    from mcpreel.formats._source import Source
    from mcpreel.formats.sniff import detect

    detect(Source(path))


def plan_jobs(files: Iterable[str | tuple[str, int | None]], format: str = "auto") -> list[FleetJob]:
    """The jobs of ``files``: a file of one client session is one job (replayed whole, as
    ``mcpreel replay FILE`` replays it); a file of several gives a job per session that sent requests (as
    ``--session N`` replays it). An entry ``(path, N)`` is that one session only (a session the index
    picked). A file that cannot be read raises its input error."""
    from mcpreel.formats import open_session
    from mcpreel.operations.sessions import split_sessions_streaming

    jobs: list[FleetJob] = []
    for entry in files:
        path, only = (entry, None) if isinstance(entry, str) else entry
        session, _ = open_session(path, format)
        parts = split_sessions_streaming(session)
        if only is not None:
            if not 1 <= only <= len(parts):
                raise UsageError(f"{path}: session {only}: the file holds {len(parts)} client session"
                                 f"{'s' if len(parts) != 1 else ''} now (index it again: `mcpreel index`)")
            part = parts[only - 1]
            session_index = only if len(parts) > 1 else None
            jobs.append(FleetJob(len(jobs) + 1, str(path), session_index, part.label(), part.requests))
            continue
        if len(parts) == 1:
            jobs.append(FleetJob(len(jobs) + 1, str(path), None, parts[0].label(), parts[0].requests))
            continue
        for part in parts:
            if part.requests:
                jobs.append(FleetJob(len(jobs) + 1, str(path), part.index, part.label(), part.requests))
    return jobs


# -- one job ---------------------------------------------------------------------------------------


def run_job(job: FleetJob, spec: FleetSpec, data: bytes | None = None) -> SessionOutcome:
    """Replay one job (in whatever process or Ray worker runs it). ``data``: the recording's bytes, written
    to a private temporary file first (a worker that does not share the disk); the report still names the
    job's own path. An error that stops the replay (unreachable target, unreadable file) is the outcome's
    ``error``; a Ctrl-C is not caught."""
    t0 = time.perf_counter()
    options = dataclasses.replace(spec.options, session_index=job.session)
    try:
        if data is None:
            report = replay_file(job.path, spec.target, format=spec.format, options=options)
        else:
            with tempfile.TemporaryDirectory(prefix="mcpreel-fleet-") as folder:
                local = Path(folder) / (Path(job.path).name or "recording")
                fd = os.open(local, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                report = replay_file(local, spec.target, format=spec.format, options=options)
        report.session = job.path
    except McpreelError as exc:
        return SessionOutcome(job, error=str(exc) or type(exc).__name__, seconds=time.perf_counter() - t0)
    except (OSError, ValueError, RuntimeError) as exc:
        return SessionOutcome(job, error=f"{type(exc).__name__}: {exc}", seconds=time.perf_counter() - t0)
    return SessionOutcome(job, report=report, seconds=time.perf_counter() - t0)


# -- running many ----------------------------------------------------------------------------------


def run_fleet(jobs: Sequence[FleetJob], spec: FleetSpec, how: FleetRun | None = None,
              on_done: Callable[[SessionOutcome], None] | None = None) -> FleetResult:
    """Run ``jobs`` as ``how`` says; ``on_done`` hears each outcome as it finishes (any order). Returns
    the outcomes in job order; a Ctrl-C stops every running job (and its server) and returns those done
    before it, ``interrupted``."""
    how = how or FleetRun()
    if how.executor not in EXECUTORS:
        raise UsageError(f"--executor {how.executor!r}: choose one of {', '.join(EXECUTORS)}")
    if how.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    started_ms = int(time.time() * 1000)
    t0 = time.perf_counter()
    done: dict[int, SessionOutcome] = {}

    def finished(outcome: SessionOutcome) -> None:
        done[outcome.job.number] = outcome
        if on_done is not None:
            on_done(outcome)

    interrupted = False
    try:
        if how.executor == "ray":
            interrupted = run_on_ray(jobs, spec, how, finished)
        elif how.jobs == 1 or len(jobs) <= 1:
            for job in jobs:
                finished(run_job(job, spec))
        elif how.pool == "threads":
            interrupted = _run_threads(jobs, spec, how.jobs, finished)
        else:
            interrupted = _run_processes(jobs, spec, how.jobs, finished)
    except KeyboardInterrupt:
        interrupted = True
    outcomes = [done[n] for n in sorted(done)]
    return FleetResult(outcomes, len(jobs), interrupted, started_ms, time.perf_counter() - t0)


def _run_threads(jobs: Sequence[FleetJob], spec: FleetSpec, n: int,
                 finished: Callable[[SessionOutcome], None]) -> bool:
    """Jobs on ``n`` threads. A Ctrl-C cancels the jobs not started; the running ones end by their own
    timeouts (a thread cannot be stopped mid-job: the process pool can)."""
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="mcpreel-fleet")
    pending = {pool.submit(run_job, job, spec) for job in jobs}
    try:
        while pending:
            ready, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for future in ready:
                finished(future.result())
    except KeyboardInterrupt:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        return True
    pool.shutdown(wait=True)
    return False


# -- the process pool ------------------------------------------------------------------------------


def _on_stop(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _ignore(_signum: int, _frame: FrameType | None) -> None:
    """A terminal's Ctrl-C reaches the workers too: the parent decides when they stop (a Python handler,
    not SIG_IGN, so the servers a worker starts still get the default)."""


def _worker_main(conn: Any, spec: FleetSpec) -> None:
    """A pool worker: replay the jobs the parent sends, one at a time, and send back each outcome; a
    SIGTERM from the parent stops the job it runs (its connection and server closed) and the worker."""
    signal.signal(signal.SIGINT, _ignore)
    with contextlib.suppress(ValueError, AttributeError):
        signal.signal(signal.SIGTERM, _on_stop)
    with contextlib.suppress(KeyboardInterrupt, EOFError, OSError):
        while True:
            job = conn.recv()
            if job is None:
                return
            conn.send(run_job(job, spec))


class _Worker:
    def __init__(self, ctx: Any, spec: FleetSpec) -> None:
        parent, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker_main, args=(child, spec), daemon=True, name="mcpreel-fleet")
        self.process.start()
        child.close()
        self.conn = parent
        self.job: FleetJob | None = None

    def give(self, job: FleetJob | None) -> None:
        self.job = job
        with contextlib.suppress(OSError, BrokenPipeError):
            self.conn.send(job)


def _context() -> Any:
    """Workers start from a clean interpreter (forkserver where there is one, else spawn): forking a
    process that runs threads (a progress bar, an HTTP client) is unsafe."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    if "forkserver" not in methods:
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])  # imported once by the fork server, not by every worker
    return ctx


def _run_processes(jobs: Sequence[FleetJob], spec: FleetSpec, n: int,
                   finished: Callable[[SessionOutcome], None]) -> bool:
    """Jobs on ``n`` worker processes, each sent its next job when it hands back an outcome. A worker
    that dies makes its job's outcome an error and is replaced."""
    from multiprocessing.connection import wait

    ctx = _context()
    queue = deque(jobs)
    workers = [_Worker(ctx, spec) for _ in range(min(n, len(jobs)))]
    try:
        for w in workers:
            w.give(queue.popleft())
        while any(w.job is not None for w in workers):
            busy = [w for w in workers if w.job is not None]
            ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy]))
            for w in busy:
                job = w.job
                assert job is not None
                if w.conn in ready:
                    try:
                        outcome = w.conn.recv()
                    except (EOFError, OSError):
                        outcome = None
                    if outcome is not None:
                        finished(outcome)
                        w.give(queue.popleft() if queue else None)
                        continue
                if w.conn in ready or w.process.sentinel in ready:
                    w.process.join(1.0)
                    finished(SessionOutcome(job, error=f"the worker process replaying it ended (exit code "
                                                       f"{w.process.exitcode})"))
                    workers[workers.index(w)] = fresh = _Worker(ctx, spec)
                    fresh.give(queue.popleft() if queue else None)
    except KeyboardInterrupt:
        _stop(workers)
        return True
    finally:
        _stop(workers, quiet=True)
    return False


def _stop(workers: list[_Worker], *, quiet: bool = False) -> None:
    """End every worker: an idle one is told to, a busy one gets SIGTERM (its job stops, its server is
    ended); past :data:`STOP_GRACE_S` a worker is killed (its servers die with it)."""
    for w in workers:
        if not w.process.is_alive():
            continue
        if w.job is None or quiet:
            with contextlib.suppress(OSError, BrokenPipeError):
                w.conn.send(None)
        else:
            with contextlib.suppress(OSError):
                w.process.terminate()
    deadline = time.monotonic() + STOP_GRACE_S
    for w in workers:
        w.process.join(max(0.1, deadline - time.monotonic()))
        if w.process.is_alive():
            w.process.kill()
            w.process.join(5.0)
        with contextlib.suppress(OSError):
            w.conn.close()


# -- Ray -------------------------------------------------------------------------------------------
#
# The fleet's jobs as Ray tasks (``mcpreel replay --executor ray``; ``pip install 'mcpreel[ray]'``).
#
# Past one machine: each job (:class:`~mcpreel.replay.fleet.FleetJob`) becomes a Ray task that runs the
# same :func:`~mcpreel.replay.fleet.run_job` as the local pool, so verdicts and documents are the local
# executor's. The recording travels with the task as bytes (no shared disk is assumed: the worker writes it
# to a private temporary file); the outcome, report included, travels back. At most ``jobs`` tasks are in
# flight at once; the outcomes are handed on as they finish (the fleet puts them in job order).
#
# Where Ray runs: ``--ray-address`` (else ``RAY_ADDRESS``) joins a cluster; without either, ``ray.init()``
# starts a local Ray for the run, on loopback only (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, which makes its
# processes bind 127.0.0.1; by default they listen on every interface), without its dashboard, and shuts it
# down at the end. Every worker needs mcpreel installed (and, with ``--target-command``, the server
# command); a ``--target-url`` must be reachable from the workers.
#
# A Ctrl-C cancels every task still running (Ray raises ``KeyboardInterrupt`` in it: its connection and
# server are closed) and keeps the outcomes that came before.


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise UsageError("--executor ray needs Ray: pip install 'mcpreel[ray]'") from exc
    return ray


def _task(job: FleetJob, spec: FleetSpec, data: bytes) -> SessionOutcome:
    """What a Ray worker runs: the job replayed from the recording's bytes."""
    return run_job(job, spec, data)


def run_on_ray(jobs: Sequence[FleetJob], spec: FleetSpec, how: FleetRun,
               finished: Callable[[SessionOutcome], None]) -> bool:
    """Run ``jobs`` as Ray tasks, at most ``how.jobs`` at once; ``finished`` hears each outcome. Returns
    whether a Ctrl-C stopped the run."""
    ray = _import_ray()
    address = how.ray_address or os.environ.get("RAY_ADDRESS") or None
    started = False
    if not ray.is_initialized():
        if address is None:
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # a local Ray on loopback only
            ray.init(num_cpus=how.jobs, include_dashboard=False, log_to_driver=False, configure_logging=False)
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
        started = True
    try:
        return _fan_out(ray, jobs, spec, how.jobs, finished)
    finally:
        if started:
            ray.shutdown()


def _fan_out(ray: Any, jobs: Sequence[FleetJob], spec: FleetSpec, n: int,
             finished: Callable[[SessionOutcome], None]) -> bool:
    remote = ray.remote(num_cpus=1, max_retries=0)(_task)
    spec_ref = ray.put(spec)
    queue = list(reversed(jobs))
    running: dict[Any, FleetJob] = {}

    def submit() -> None:
        while queue and len(running) < n:
            job = queue.pop()
            running[remote.remote(job, spec_ref, Path(job.path).read_bytes())] = job

    try:
        submit()
        while running:
            ready, _ = ray.wait(list(running), num_returns=1, timeout=0.5)
            for ref in ready:
                job = running.pop(ref)
                try:
                    outcome = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    outcome = SessionOutcome(job, error=f"the Ray task failed: {str(exc).splitlines()[0]}")
                finished(outcome)
            submit()
    except KeyboardInterrupt:
        for ref in running:
            with contextlib.suppress(Exception):
                ray.cancel(ref)
        with contextlib.suppress(Exception):
            ray.wait(list(running), num_returns=len(running), timeout=CANCEL_GRACE_S)
        return True
    return False


# -- what a run says per tool ----------------------------------------------------------------------


@dataclass
class ToolRow:
    """A tool's (or, for what is not a tool call, a method's) requests across the run: how many, their
    verdicts, and the latencies recorded (before) and replayed (after)."""

    name: str
    requests: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    before_ms: list[float] = field(default_factory=list)
    after_ms: list[float] = field(default_factory=list)

    def count(self, verdict: str) -> int:
        """Requests with this verdict (``changed`` counts the old spelling ``different`` too)."""
        if verdict == "changed":
            return sum(self.verdicts.get(v, 0) for v in _CHANGED)
        return self.verdicts.get(verdict, 0)

    def p(self, side: str, q: float) -> float | None:
        """The nearest-rank ``q`` percentile of ``before`` or ``after`` latencies (None: none known)."""
        from mcpreel.inspection import percentile

        values = sorted(self.before_ms if side == "before" else self.after_ms)
        return float(percentile(values, q)) if values else None  # type: ignore[arg-type]

    def slower(self, factor: float) -> bool:
        """Whether the p95 replayed grew past ``factor`` times the p95 recorded."""
        before, after = self.p("before", 95), self.p("after", 95)
        return before is not None and after is not None and before > 0 and after > factor * before

    def to_json(self) -> dict[str, Any]:
        """The row as ``--output`` writes it (milliseconds, rounded to the microsecond)."""
        def r(v: float | None) -> float | None:
            return None if v is None else round(v, 3)

        return {"tool": self.name, "requests": self.requests, "same": self.count("same"),
                "changed": self.count("changed"), "flaky": self.count("flaky"), "error": self.count("error"),
                "unrecorded": self.count("unrecorded"),
                "p50_before_ms": r(self.p("before", 50)), "p95_before_ms": r(self.p("before", 95)),
                "p50_after_ms": r(self.p("after", 50)), "p95_after_ms": r(self.p("after", 95))}


def tool_rows(result: FleetResult) -> list[ToolRow]:
    """The run per tool, by name (a request that is no tool call is counted under its method)."""
    rows: dict[str, ToolRow] = {}
    for outcome in result.outcomes:
        if outcome.report is None:
            continue
        for r in outcome.report.results:
            name = r.tool if r.tool else r.method
            row = rows.get(name) or rows.setdefault(name, ToolRow(name))
            row.requests += 1
            row.verdicts[r.status] = row.verdicts.get(r.status, 0) + 1
            if r.recorded_duration_ms is not None:
                row.before_ms.append(float(r.recorded_duration_ms))
            if r.duration_ms is not None:
                row.after_ms.append(float(r.duration_ms))
    return [rows[k] for k in sorted(rows)]


@dataclass(frozen=True)
class FailOn:
    """What fails a run besides a changed answer (``--fail-on``, repeatable): ``flaky`` a flaky request,
    ``slower:F`` a tool whose replayed p95 grew past F times its recorded p95."""

    flaky: bool = False
    slower: float | None = None

    @classmethod
    def parse(cls, values: Iterable[str]) -> FailOn:
        """``--fail-on`` values: ``flaky``, ``slower:2.0``; anything else is a usage error naming it."""
        flaky, slower = False, None
        for value in values:
            word, _, arg = value.strip().partition(":")
            if word == "flaky" and not arg:
                flaky = True
            elif word == "slower":
                try:
                    slower = float(arg)
                except ValueError:
                    slower = None
                if slower is None or not slower > 0:
                    raise UsageError(f"--fail-on {value!r}: give the factor, as in slower:2.0")
            else:
                raise UsageError(f"--fail-on {value!r}: choose flaky or slower:FACTOR (e.g. slower:2.0)")
        return cls(flaky, slower)


#: nothing besides a change fails the run (the default of ``--fail-on``)
NO_FAIL_ON = FailOn()


def exit_code(result: FleetResult, fail_on: FailOn = NO_FAIL_ON) -> int:
    """0 when every session is the same; 1 on a changed or failed session (or what ``fail_on`` adds); 2
    when no session could run at all."""
    if result.outcomes and all(o.report is None for o in result.outcomes):
        return 2
    if not result.outcomes:
        return 2 if result.total else 0
    if any(o.verdict in ("changed", "error") for o in result.outcomes):
        return 1
    if fail_on.flaky and any(o.verdict == "flaky" for o in result.outcomes):
        return 1
    if fail_on.slower is not None and any(row.slower(fail_on.slower) for row in tool_rows(result)):
        return 1
    return 0


def to_json(result: FleetResult, *, target: str, fail_on: FailOn = NO_FAIL_ON) -> dict[str, Any]:
    """The run as ``--output`` writes it: the totals, a row per tool, each session's report, in job order."""
    rows = tool_rows(result)
    return {"fleet": True, "target": target, "sessions_planned": result.total,
            "sessions_done": len(result.outcomes), "interrupted": result.interrupted,
            "exit_code": exit_code(result, fail_on),
            "summary": {v: result.count(v) for v in ("same", "changed", "flaky", "error")},
            "slower": ([row.name for row in rows if row.slower(fail_on.slower)]
                       if fail_on.slower is not None else []),
            "tools": [row.to_json() for row in rows],
            "sessions": [o.to_json() for o in result.outcomes]}


def replay_rows(result: FleetResult, *, run_id: str, target: str, baseline: str = "recording") -> list[tuple[Any, ...]]:
    """The run as rows of the corpus' ``replays`` table (:data:`mcpreel.corpus.schema.RUN_TABLES`), in job
    order: one per replayed request, one (verdict ``error``) per session that could not run."""
    from datetime import UTC, datetime

    from mcpreel._infra import jsonio

    day = datetime.fromtimestamp(result.started_ms / 1000, UTC).date().isoformat()
    rows: list[tuple[Any, ...]] = []
    for o in result.outcomes:
        session = o.job.session or 1
        head = (run_id, result.started_ms, target, baseline, str(Path(o.job.path).resolve()), session)
        if o.report is None:
            rows.append((*head, None, None, None, "error", "[]", None, None, (o.error or "")[:500], day))
            continue
        for r in o.report.results:
            status = "changed" if r.status in _CHANGED else r.status
            paths = jsonio.dumps_str(sorted({d.path for d in r.diff}))
            rows.append((*head, r.index, r.method, r.tool, status, paths,
                         None if r.recorded_duration_ms is None else float(r.recorded_duration_ms),
                         None if r.duration_ms is None else round(float(r.duration_ms), 3),
                         None if r.error is None else r.error[:500], day))
    return rows
