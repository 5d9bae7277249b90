"""``mcpreel replay PATH...`` with many recordings (folders, several files, or ``--db`` picks): the fleet.

:mod:`mcpreel.cli.replay_cmd` hands a run of more than one file here (a single file keeps its own output,
:func:`~mcpreel.cli.replay_cmd.run_replay`). This module picks the sessions (files and folders, or the
index's ``sessions`` filters), runs them through :func:`mcpreel.replay.fleet.run_fleet`, and says what
happened: the heading, a progress bar on stderr (sessions done of total, changed and flaky so far), a line
per session in the run's order as soon as every session before it is done, then the per-tool table and
the totals; then the documents (``-o`` JSON, ``--junit``, ``--html``) and the run appended to the corpus'
``replays`` table (``--db``). A Ctrl-C stops every job and server, still writes all that for the sessions
done, and exits 130.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from mcpreel.cli import output
from mcpreel.errors import UsageError
from mcpreel.replay import ReplayOptions, ReplayTarget
from mcpreel.replay.fleet import (
    FailOn,
    FleetJob,
    FleetResult,
    FleetRun,
    FleetSpec,
    SessionOutcome,
    find_recordings,
    plan_jobs,
    run_fleet,
)

__all__ = ["FleetCommand", "Selection", "run_fleet_command"]


@dataclass(frozen=True)
class Selection:
    """The index's ``sessions`` filters (``--server-name``, ``--tool``, ``--client``, ``--since``,
    ``--failed``): which indexed client sessions ``--db`` replays when no path is given."""

    server: str | None = None
    tool: str | None = None
    client: str | None = None
    since: str | None = None
    failed: bool = False

    def given(self) -> bool:
        """Whether any filter was given."""
        return bool(self.server or self.tool or self.client or self.since or self.failed)


@dataclass(frozen=True)
class FleetCommand:
    """What a fleet run was asked to do, as one record (the replay options already built)."""

    paths: tuple[str, ...]
    target: ReplayTarget
    options: ReplayOptions
    run: FleetRun
    fmt: str = "auto"
    db: Path | None = None
    selection: Selection = field(default_factory=Selection)
    fail_on: FailOn = field(default_factory=FailOn)
    out_json: str | None = None
    junit: str | None = None
    html: str | None = None
    all_rows: bool = False
    redact: bool = True
    baseline: str | None = None


def _target_text(target: ReplayTarget) -> str:
    if target.url is not None:
        return target.url
    return target.command if isinstance(target.command, str) else " ".join(target.command or [])


def pick_files(cmd: FleetCommand) -> list[str | tuple[str, int | None]]:
    """The recordings of the run: the paths (folders expanded as ``index`` finds files), or the index's
    sessions matching the filters (``--db`` without paths), in a stable order."""
    if cmd.paths:
        if cmd.selection.given():
            raise UsageError("--server-name, --tool, --client, --since and --failed pick sessions from the index: "
                             "give --db FILE without paths")
        files, skipped = find_recordings(cmd.paths)
        if skipped:
            shown = "; ".join(f"{p}: {why}" for p, why in skipped[:3])
            more = f" (and {len(skipped) - 3} more)" if len(skipped) > 3 else ""
            output.warning(f"{len(skipped)} file{'s' if len(skipped) != 1 else ''} under the folders "
                           f"{'are' if len(skipped) != 1 else 'is'} no session mcpreel reads, left out: {shown}{more}")
        return list(files)
    if cmd.db is None:
        raise UsageError("give the recordings to replay: files, folders, or --db FILE (with the sessions filters)")
    from mcpreel.corpus.query import sessions

    s = cmd.selection
    found = sessions(cmd.db, server=s.server, tool=s.tool, failed=s.failed, since=s.since, client=s.client)
    at = {c: i for i, c in enumerate(found.columns)}
    picked = sorted({(str(row[at["file"]]), int(row[at["session"]])) for row in found.rows})
    if not picked:
        raise UsageError(f"{cmd.db}: no indexed session matches the filters (`mcpreel sessions` lists them)")
    return [(path, n) for path, n in picked]


@contextmanager
def _progress(total: int) -> Iterator[Callable[[int, int, int], None] | None]:
    """A bar on stderr when it is a terminal: sessions done of total, and how many changed and were flaky."""
    if not sys.stderr.isatty() or total < 2:
        yield None
        return
    from rich.progress import MofNCompleteColumn, TextColumn, TimeElapsedColumn

    progress = output.progress_bar(
        MofNCompleteColumn(),
        TextColumn("sessions, [red]{task.fields[changed]} changed[/], [yellow]{task.fields[flaky]} flaky[/]"),
        TimeElapsedColumn())
    with progress:
        task = progress.add_task("replaying", total=total, changed=0, flaky=0)
        yield lambda done, changed, flaky: progress.update(task, completed=done, changed=changed, flaky=flaky)


def run_fleet_command(cmd: FleetCommand) -> int:
    """Pick, plan, run, say, write; returns the exit code (0 all the same, 1 a change or what --fail-on
    adds, 2 nothing could run). Each job's results come back redacted (``ReplayOptions.redact``, as every
    replay's); a job's own error line is redacted here."""
    from mcpreel.render import fleet as render

    files = pick_files(cmd)
    jobs = plan_jobs(files, cmd.fmt)
    if not jobs:
        raise UsageError("no client session with requests to replay in " + (", ".join(cmd.paths) or str(cmd.db)))
    target = _target_text(cmd.target)
    output.show(render.heading(len({j.path for j in jobs}), len(jobs), target, min(cmd.run.jobs, len(jobs)),
                               cmd.run.executor))
    redactor = None
    if cmd.redact:
        from mcpreel.redact import Redactor

        redactor = Redactor()
    waiting: dict[int, SessionOutcome] = {}
    said = [0]  # the sessions said so far, in job order
    tally = {"done": 0, "changed": 0, "flaky": 0}

    def say_ready() -> None:
        while (o := waiting.pop(said[0] + 1, None)) is not None:
            said[0] += 1
            sys.stdout.write("\n".join(render.session_lines(o, all_rows=cmd.all_rows)) + "\n")
            sys.stdout.flush()

    result: FleetResult
    with _progress(len(jobs)) as progress:
        def done(o: SessionOutcome) -> None:
            if redactor is not None and o.error:
                o.error = redactor.text(o.error)
            tally["done"] += 1
            tally["changed"] += o.verdict == "changed"
            tally["flaky"] += o.verdict == "flaky"
            if progress is not None:
                progress(tally["done"], tally["changed"], tally["flaky"])
            waiting[o.job.number] = o
            say_ready()

        result = run_fleet(jobs, FleetSpec(cmd.target, cmd.options, cmd.fmt), cmd.run, done)
    for number in sorted(waiting):  # an interrupted run: what finished after a session that never did
        sys.stdout.write("\n".join(render.session_lines(waiting[number], all_rows=cmd.all_rows)) + "\n")
    output.show(render.closing(result, cmd.fail_on))
    _write(cmd, result, target, jobs)
    if result.interrupted:
        raise KeyboardInterrupt
    from mcpreel.replay.fleet import exit_code

    return exit_code(result, cmd.fail_on)


def _write(cmd: FleetCommand, result: FleetResult, target: str, jobs: list[FleetJob]) -> None:
    """The documents and the corpus rows of the run (those of the sessions done, when interrupted)."""
    from mcpreel._infra import jsonio
    from mcpreel.replay.fleet import replay_rows, to_json

    if cmd.out_json:
        doc = to_json(result, target=target, fail_on=cmd.fail_on)
        output.save(cmd.out_json, lambda fh: fh.write(jsonio.dumps(doc) + b"\n"))
    if cmd.junit:
        from mcpreel.render.fleet import junit

        xml = junit(result, f"mcpreel replay of {len(jobs)} sessions against {target}")
        output.save_text(cmd.junit, xml)
    if cmd.html:
        from mcpreel.report.fleet_page import write_fleet_pages

        write_fleet_pages(result, cmd.html, target=target, fail_on=cmd.fail_on, redact=cmd.redact)
    if cmd.db is not None:
        from mcpreel.corpus.replays import append_rows

        run_id = uuid.uuid4().hex[:16]
        rows = replay_rows(result, run_id=run_id, target=target, baseline=cmd.baseline or "recording")
        n = append_rows(cmd.db, rows, on_wait=output.info)
        output.info(f"run {run_id}: {n:,} row{'s' if n != 1 else ''} appended to the replays table of {cmd.db}")
