"""Drawing a fleet run (:mod:`mcpreel.replay.fleet`): a line per session, a table per tool, JUnit, JSON.

What a reader of a run of hundreds of sessions wants, in order: what is replayed against what
(:func:`heading`), a line per session in the run's stable order with the rows of its requests that are not
the same (:func:`session_lines`), then a row per tool -- requests, same, changed, flaky, p50/p95 before
(recorded) and after (replayed) -- marking a tool whose p95 grew past ``--fail-on slower:F``
(:func:`tool_table`), then the totals (:func:`closing`). :func:`junit` gives a test case per session (a
flaky one as Surefire's ``flakyFailure``, inside a passing case); the ``--output`` document is
:func:`mcpreel.replay.fleet.to_json`'s.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from mcpreel.render.junit import Case, junit_xml
from mcpreel.render.replay import ms, result_lines
from mcpreel.replay.fleet import NO_FAIL_ON, FailOn, FleetResult, SessionOutcome, exit_code, tool_rows

__all__ = ["closing", "heading", "junit", "session_lines", "tool_table"]

_STYLE = {"same": "green", "changed": "bold red", "flaky": "yellow", "error": "bold magenta"}


def heading(files: int, jobs: int, target: str, workers: int, executor: str) -> Iterator[RenderableType]:
    """What is said before the first session: how many sessions of how many files, against what, how."""
    how = "one at a time" if workers == 1 else f"{workers} at a time"
    if executor == "ray":
        how += " on Ray"
    yield Text(f"replay of {jobs} client session{'s' if jobs != 1 else ''} from {files} file"
               f"{'s' if files != 1 else ''} against {target}, {how}", style="bold")


def session_lines(outcome: SessionOutcome, *, all_rows: bool = False) -> list[str]:
    """A session's line (verdict, name, requests and how they ended), then the rows of its requests that
    are not the same (``all_rows``: every row), or why it could not run."""
    verdict = outcome.verdict
    name = outcome.job.name()
    if outcome.report is None:
        return [f"{verdict:<8} {name}: could not run: {outcome.error}"]
    report = outcome.report
    lines = [f"{verdict:<8} {name}: {report.summary()}"]
    for r in report.results:
        if all_rows or r.status != "same":
            lines.extend("  " + line for line in result_lines(r))
    for asked in report.unmatched_server_requests:
        lines.append(f"    server request {asked.method} not in the recording: {asked.error}")
    return lines


def _cell(value: float | None) -> str:
    return "" if value is None else ms(value)


def tool_table(result: FleetResult, fail_on: FailOn = NO_FAIL_ON) -> Table:
    """A row per tool (a method, for requests that are no tool call): requests, same, changed, flaky,
    error, and p50/p95 milliseconds before (recorded) and after (replayed); ``slower`` marks a tool past
    ``fail_on.slower``."""
    table = Table(title="per tool", title_justify="left")
    for name, right in (("tool", False), ("requests", True), ("same", True), ("changed", True), ("flaky", True),
                        ("error", True), ("p50 ms before", True), ("after", True), ("p95 ms before", True),
                        ("after", True)):
        table.add_column(name, justify="right" if right else "left")
    for row in tool_rows(result):
        slower = fail_on.slower is not None and row.slower(fail_on.slower)
        table.add_row(row.name, str(row.requests), str(row.count("same")),
                      Text(str(row.count("changed")), style="bold red" if row.count("changed") else ""),
                      Text(str(row.count("flaky")), style="yellow" if row.count("flaky") else ""),
                      Text(str(row.count("error")), style="bold magenta" if row.count("error") else ""),
                      _cell(row.p("before", 50)), _cell(row.p("after", 50)), _cell(row.p("before", 95)),
                      Text(_cell(row.p("after", 95)) + (f"  slower than {fail_on.slower:g}x" if slower else ""),
                           style="bold red" if slower else ""))
    return table


def closing(result: FleetResult, fail_on: FailOn = NO_FAIL_ON) -> Iterator[RenderableType]:
    """The per-tool table and the totals line (how many sessions, how each ended, what failed the run)."""
    parts: list[RenderableType] = []
    if result.outcomes:
        parts.append(tool_table(result, fail_on))
    counts = ", ".join(f"{result.count(v)} {v}" for v in ("same", "changed", "flaky", "error")
                       if result.count(v) or v in ("same", "changed"))
    line = (f"{len(result.outcomes)} of {result.total} client session{'s' if result.total != 1 else ''} replayed"
            f" in {result.seconds:.1f} s: {counts}")
    if result.interrupted:
        line += f"; interrupted: {result.total - len(result.outcomes)} not replayed"
    slower = [row.name for row in tool_rows(result) if fail_on.slower is not None and row.slower(fail_on.slower)]
    if slower:
        line += f"; p95 more than {fail_on.slower:g}x slower: {', '.join(slower)}"
    code = exit_code(result, fail_on)
    parts.append(Text(line, style="bold green" if code == 0 else "bold red"))
    yield Group(*parts)


def junit(result: FleetResult, suite: str) -> str:
    """A test case per session (classname: the file; name: the session), in job order: a changed one a
    failure with its differences, one that could not run or lost an answer an error, a flaky one a pass
    holding a ``flakyFailure``."""
    cases: list[Case] = []
    for o in result.outcomes:
        name = o.job.label if o.job.session is not None else f"{o.job.label} (the file's only session)"
        case = Case(name, o.job.path, o.seconds)
        verdict = o.verdict
        if o.report is None:
            case.error = o.error or "could not run"
        else:
            detail = "\n".join(line for r in o.report.results if r.status != "same" for line in result_lines(r))
            if verdict == "changed":
                changed = o.report.count("changed") + o.report.count("different")
                case.failure = (f"{changed} of {o.report.requests} requests changed"
                                + (f", {len(o.report.unmatched_server_requests)} server requests not in the "
                                   f"recording" if o.report.unmatched_server_requests else ""))
                case.details = detail or None
            elif verdict == "error":
                case.error = f"{o.report.count('error')} of {o.report.requests} requests got no answer"
                case.details = detail or None
            elif verdict == "flaky":
                case.flaky = f"{o.report.count('flaky')} of {o.report.requests} requests flaky"
                case.flaky_details = detail or None
        cases.append(case)
    return junit_xml(suite, cases, time_s=result.seconds)
