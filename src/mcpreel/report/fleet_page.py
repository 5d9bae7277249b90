"""The fleet page: one run of many sessions (``mcpreel replay PATH... --html fleet.html``) as HTML.

In the report's style and under its rules (:mod:`mcpreel.report.page`): its stylesheet, a
Content-Security-Policy that allows only that stylesheet and fetches nothing, every text escaped; the page
needs no script. It shows the run's facts and counts, a row per session in the run's stable order (its
verdict and counts, each linking to the session's own page), and a row per tool (requests, same, changed,
flaky, p50/p95 before and after, the tools past ``--fail-on slower``). Each session's page is
:func:`~mcpreel.report.compare_page.replay_page` of its report, written beside the fleet page in
``<name>.sessions/`` (``0001.html``, ...), so one link opens what a single ``replay --html`` shows.
"""

from __future__ import annotations

import os
from html import escape
from pathlib import Path
from typing import Any

from mcpreel.replay.fleet import NO_FAIL_ON, FailOn, FleetResult, SessionOutcome, exit_code, tool_rows

__all__ = ["fleet_page", "session_page_name", "sessions_folder", "write_fleet_pages"]


def sessions_folder(out: str | os.PathLike[str]) -> Path:
    """Where the sessions' own pages go: ``<page name>.sessions/`` beside the fleet page."""
    out = Path(out)
    return out.with_name(out.name.removesuffix(".html") + ".sessions")


def session_page_name(outcome: SessionOutcome) -> str:
    """A session's page, by its number in the run (stable whatever finished first)."""
    return f"{outcome.job.number:04d}.html"


def _ms(value: float | None) -> str:
    from mcpreel.report.svg import fmt_ms

    return "–" if value is None else fmt_ms(value)


def _cell(value: Any, cls: str = "") -> str:
    text = "–" if value is None else (f"{value:,}" if isinstance(value, int) and not isinstance(value, bool)
                                        else str(value))
    return f'<td class="{cls}">{escape(text)}</td>' if cls else f"<td>{escape(text)}</td>"


def _table(table_id: str, heads: list[tuple[str, bool]], rows: list[str], empty: str) -> str:
    if not rows:
        return f'<p class="empty">{escape(empty)}</p>'
    head = "".join(f'<th class="num">{escape(h)}</th>' if num else f"<th>{escape(h)}</th>" for h, num in heads)
    return f'<table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def fleet_page(result: FleetResult, *, target: str, folder: str, fail_on: FailOn = NO_FAIL_ON,
               redact: bool = True) -> str:
    """The fleet page as text; ``folder`` is the sessions' pages' folder as the page links to it."""
    from mcpreel.report.page import fill

    redactor = None
    if redact:
        from mcpreel.redact import Redactor

        redactor = Redactor()

    def text(value: str | None) -> str | None:
        return value if value is None or redactor is None else redactor.text(value)

    sessions = []
    for o in result.outcomes:
        counts: dict[str, int] = {}
        if o.report is not None:
            for r in o.report.results:
                status = "changed" if r.status == "different" else r.status
                counts[status] = counts.get(status, 0) + 1
        link = (f'<a href="{escape(folder)}/{escape(session_page_name(o))}">{escape(o.job.name())}</a>'
                if o.report is not None else escape(o.job.name()))
        verdict = o.verdict
        sessions.append(
            f'<tr class="session {escape(verdict)}">{_cell(o.job.number, "num")}<td title="{escape(o.job.path)}">'
            f'{link}</td>{_cell(verdict, "status")}{_cell(o.report.requests if o.report else None, "num")}'
            f'{_cell(counts.get("same", 0), "num")}{_cell(counts.get("changed", 0), "num")}'
            f'{_cell(counts.get("flaky", 0), "num")}{_cell(counts.get("error", 0), "num")}'
            f'{_cell(f"{o.seconds:.2f} s", "num")}{_cell(text(o.error))}</tr>')
    tools = []
    for row in tool_rows(result):
        slower = fail_on.slower is not None and row.slower(fail_on.slower)
        tools.append(
            f'<tr class="tool{" failed" if row.count("changed") or slower else ""}">{_cell(text(row.name))}'
            f'{_cell(row.requests, "num")}{_cell(row.count("same"), "num")}{_cell(row.count("changed"), "num")}'
            f'{_cell(row.count("flaky"), "num")}{_cell(row.count("error"), "num")}'
            f'<td class="num">{_ms(row.p("before", 50))}</td><td class="num">{_ms(row.p("after", 50))}</td>'
            f'<td class="num">{_ms(row.p("before", 95))}</td><td class="num">{_ms(row.p("after", 95))}</td>'
            f'{_cell(f"more than {fail_on.slower:g}x slower" if slower else "")}</tr>')
    sections = "".join([
        '<section id="sessions"><h2>Sessions <span class="sub">in the run\'s order; click one for its own page'
        '</span></h2>',
        _table("sessions-table", [("#", True), ("session", False), ("verdict", False), ("requests", True),
                                  ("same", True), ("changed", True), ("flaky", True), ("error", True),
                                  ("time", True), ("could not run", False)], sessions, "No session was replayed."),
        "</section>",
        '<section id="tools"><h2>Per tool <span class="sub">latency before (recorded) and after (replayed), '
        'nearest-rank</span></h2>',
        _table("tools-table", [("tool", False), ("requests", True), ("same", True), ("changed", True),
                               ("flaky", True), ("error", True), ("p50 before", True), ("p50 after", True),
                               ("p95 before", True), ("p95 after", True), ("", False)], tools,
               "No request was replayed."),
        "</section>",
    ])
    cards = [("sessions", len(result.outcomes), False), ("same", result.count("same"), False),
             ("changed", result.count("changed"), True), ("flaky", result.count("flaky"), True),
             ("error", result.count("error"), True),
             ("requests", sum(o.report.requests for o in result.outcomes if o.report is not None), False)]
    card_html = '<div class="cards" id="counts">' + "".join(
        f'<div class="card{" bad" if bad and value else ""}" data-count="{escape(name)}"><b>{value:,}</b>'
        f"<span>{escape(name)}</span></div>" for name, value, bad in cards) + "</div>"
    facts = [("target", text(target)), ("sessions planned", f"{result.total:,}"),
             ("time", f"{result.seconds:.1f} s"), ("exit code", str(exit_code(result, fail_on)))]
    if result.interrupted:
        facts.append(("interrupted", f"{result.total - len(result.outcomes):,} sessions not replayed"))
    fact_html = '<dl class="facts">' + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v or '')}</dd>"
                                               for k, v in facts) + "</dl>"
    note = "Texts redacted ([REDACTED])." if redact else "Not redacted (--no-redact)."
    return fill("fleet.html", {
        "TITLE": "replay fleet", "FACTS": fact_html, "CARDS": card_html, "NOTE": escape(note), "SECTIONS": sections})


def write_fleet_pages(result: FleetResult, out: str | os.PathLike[str], *, target: str,
                      fail_on: FailOn = NO_FAIL_ON, redact: bool = True) -> list[Path]:
    """Write the fleet page to ``out`` and each replayed session's own page into
    :func:`sessions_folder` (atomically, mode 0600); returns the pages written."""
    from mcpreel._infra.fileio import atomic_output
    from mcpreel.report.compare_page import replay_page

    folder = sessions_folder(out)
    written: list[Path] = []
    for o in result.outcomes:
        if o.report is None:
            continue
        page = folder / session_page_name(o)
        with atomic_output(page) as fh:
            fh.write(replay_page(o.report, redact=redact).encode("utf-8", "replace"))
        written.append(page)
    with atomic_output(out) as fh:
        fh.write(fleet_page(result, target=target, folder=folder.name, fail_on=fail_on,
                            redact=redact).encode("utf-8", "replace"))
    written.insert(0, Path(out))
    return written
