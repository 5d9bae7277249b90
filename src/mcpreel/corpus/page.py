"""The corpus report: the whole index as one self-contained HTML page (``mcpreel report --db FILE``).

In the session report's style and under its rules (:mod:`mcpreel.report.page`): its stylesheet, a
Content-Security-Policy that allows only the page's own stylesheet and its small script
(``assets/corpus.js``: sorting and filtering the tables) by their hashes and fetches nothing
(``default-src 'none'``), every text from a session HTML-escaped, charts drawn here as inline SVG. The
tables are bounded (:data:`TOP`, :data:`SESSIONS`) and ordered by what matters; without script they read
the same, only unsorted by hand.

What it shows: sessions per day (with their failed operations), the latest sessions with their time, each
linking to its own report (written beside the page in ``<page>.sessions/``, as ``mcpreel report`` writes
one, so a failed or slow operation links to its call there, ``#call-N``), tools by calls with error rate and p95,
the slowest and the failed operations each with the file and line to open and the id for ``mcpreel show``,
servers and clients and their eras, the tool definitions that changed, and the files that could not be read.
Error messages are stored redacted in the index; with ``redact`` (the default) every text the page shows
passes the redactor again, paths included.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from mcpreel.corpus.db import connect

__all__ = ["CorpusData", "collect", "pages_folder", "render", "write_corpus_report", "write_session_pages"]

#: rows of each table on the page, at most (the counts above them are whole)
TOP = 50
#: the latest sessions listed, each with its own report page: the pages cost a read of each file
SESSIONS = 200


@dataclass
class CorpusData:
    db: str
    totals: dict[str, int] = field(default_factory=dict)
    per_day: list[tuple[Any, ...]] = field(default_factory=list)
    tools: list[tuple[Any, ...]] = field(default_factory=list)
    slowest: list[tuple[Any, ...]] = field(default_factory=list)
    failed: list[tuple[Any, ...]] = field(default_factory=list)
    peers: list[tuple[Any, ...]] = field(default_factory=list)
    changed: list[tuple[Any, ...]] = field(default_factory=list)
    unreadable: list[tuple[Any, ...]] = field(default_factory=list)
    runs: list[tuple[Any, ...]] = field(default_factory=list)  # replay runs kept by `replay --db`, newest first
    sessions: list[tuple[Any, ...]] = field(default_factory=list)  # the latest SESSIONS sessions, newest first
    pages: dict[str, str] = field(default_factory=dict)  # a file as the page shows it -> its report page's link
    #: the files the listed sessions and operations are in: (the path, the path as the page shows it)
    sources: list[tuple[str, str]] = field(default_factory=list)
    redacted: bool = True


_QUERIES = {
    "per_day": "SELECT day, count(*), sum(failed), sum(operations) FROM sessions GROUP BY day ORDER BY day",
    "tools": "SELECT tool, count(*) AS calls, count(*) FILTER (WHERE failed), "
             "count(*) FILTER (WHERE status IN ('unanswered', 'cancelled', 'dropped')), "
             "quantile_disc(latency_ms, 0.5), quantile_disc(latency_ms, 0.95), max(latency_ms) "
             "FROM operations WHERE tool IS NOT NULL GROUP BY tool ORDER BY calls DESC, tool LIMIT ?",
    "slowest": "SELECT id, file, request_line, method, coalesce(tool, target), latency_ms, status, start_ms, n "
               "FROM operations WHERE latency_ms IS NOT NULL AND kind <> 'listen' ORDER BY latency_ms DESC, id LIMIT ?",
    "failed": "SELECT id, file, request_line, method, coalesce(tool, target), status, code, message, start_ms, n "
              "FROM operations WHERE failed ORDER BY start_ms DESC NULLS LAST, id LIMIT ?",
    "sessions": "SELECT file, session, start_ms, end_ms, server_name, client_name, era, operations, failed, unanswered, "
                "line FROM sessions ORDER BY start_ms DESC NULLS LAST, file, session LIMIT ?",
    "peers": "SELECT server_name, server_version, client_name, client_version, era, protocol, count(*) AS n, "
             "sum(failed) FROM sessions GROUP BY ALL ORDER BY n DESC, server_name NULLS LAST, client_name NULLS LAST "
             "LIMIT ?",
    "changed": "SELECT server_name, name, count(DISTINCT hash), count(DISTINCT file), min(day), max(day) FROM tools "
               "GROUP BY server_name, name HAVING count(DISTINCT hash) > 1 ORDER BY server_name NULLS LAST, name LIMIT ?",
    "unreadable": "SELECT path, error FROM files WHERE status = 'error' ORDER BY path LIMIT ?",
}


#: the replay runs over time: one row per run, with its sessions and how its requests ended
_RUNS = ("SELECT day, run_id, any_value(target), count(DISTINCT (file, session)), count(request), "
         "count(*) FILTER (WHERE verdict = 'same'), count(*) FILTER (WHERE verdict = 'changed'), "
         "count(*) FILTER (WHERE verdict = 'flaky'), count(*) FILTER (WHERE verdict = 'error'), min(run_ms) AS t "
         "FROM replays GROUP BY day, run_id ORDER BY t DESC, run_id LIMIT ?")


def collect(db: Path, *, redact: bool = True) -> CorpusData:
    """What the page shows, from the index at ``db`` (read-only)."""
    con = connect(db, read_only=True)
    try:
        data = CorpusData(str(db), redacted=redact)
        row = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE status = 'error'), count(*) FILTER (WHERE status = 'in-progress'), "
            "coalesce(sum(messages), 0) FROM files").fetchone()
        data.totals.update(files=row[0], unreadable=row[1], in_progress=row[2], messages=row[3])
        row = con.execute("SELECT count(*), coalesce(sum(operations), 0), coalesce(sum(failed), 0), "
                          "coalesce(sum(unanswered), 0), count(DISTINCT server_name) FROM sessions").fetchone()
        data.totals.update(sessions=row[0], operations=row[1], failed=row[2], unanswered=row[3], servers=row[4])
        for name, sql in _QUERIES.items():
            params = [] if name == "per_day" else [SESSIONS if name == "sessions" else TOP]
            setattr(data, name, con.execute(sql, params).fetchall())
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if "replays" in tables:  # an index made before `replay --db` existed has none
            data.runs = con.execute(_RUNS, [TOP]).fetchall()
    finally:
        con.close()
    raw = list(dict.fromkeys([r[0] for r in data.sessions] + [r[1] for r in data.failed] + [r[1] for r in data.slowest]))
    data.sources = [(f, f) for f in raw]
    if redact:
        from mcpreel.redact import Redactor

        redactor = Redactor()

        def clean(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
            return [tuple(redactor.text(v) if isinstance(v, str) else v for v in r) for r in rows]

        for name in ("slowest", "failed", "unreadable", "tools", "peers", "changed", "runs", "sessions"):
            setattr(data, name, clean(getattr(data, name)))
        data.sources = [(f, redactor.text(f)) for f in raw]
    return data


def _ms(value: Any) -> str:
    from mcpreel.report.svg import fmt_ms

    return fmt_ms(value) if value is not None else "–"


def _cell(value: Any, cls: str = "") -> str:
    text = "–" if value is None else (f"{value:,}" if isinstance(value, int) and not isinstance(value, bool)
                                        else str(value))
    return f'<td class="{cls}">{escape(text)}</td>' if cls else f"<td>{escape(text)}</td>"


def _where(file: str, line: Any) -> str:
    name = os.path.basename(file)
    at = f"{name}:{line}" if line is not None else name
    return f'<td title="{escape(file)}"><code>{escape(at)}</code></td>'


def _table(table_id: str, heads: list[tuple[str, bool]], rows: list[str], empty: str, filter_words: str = "") -> str:
    """A table whose headings sort it (``corpus.js``); with ``filter_words``, a filter box above it too."""
    if not rows:
        return f'<p class="empty">{escape(empty)}</p>'
    head = "".join(f'<th class="num">{escape(h)}</th>' if num else f"<th>{escape(h)}</th>" for h, num in heads)
    controls = ""
    if filter_words:
        status = ('<select class="table-status" data-table="sessions-table" aria-label="which sessions">'
                  '<option value="all">all sessions</option><option value="failed">with failed or unanswered '
                  'operations</option></select>' if table_id == "sessions-table" else "")
        controls = (f'<div class="controls"><input type="search" class="table-filter" data-table="{table_id}" '
                    f'placeholder="filter: {escape(filter_words)}" aria-label="filter the table">{status}'
                    f'<span class="note table-count" data-table="{table_id}"></span></div>')
    return (f'{controls}<table id="{table_id}" class="sortable"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _time(ms: Any) -> str:
    """A time cell: UTC to the second, its epoch ms kept for sorting."""
    if ms is None:
        return '<td class="time" data-v="">–</td>'
    from datetime import UTC, datetime

    try:
        text = datetime.fromtimestamp(int(ms) / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, OSError, ValueError):
        text = str(ms)
    return f'<td class="time" data-v="{int(ms)}">{escape(text)}</td>'


def _ms_cell(value: Any) -> str:
    return f'<td class="num" data-v="{"" if value is None else escape(str(value))}">{_ms(value)}</td>'


def _open(d: CorpusData, file: str, n: Any = None) -> str:
    """The cell that links to a file's own report (at the call ``n`` when given)."""
    href = d.pages.get(file)
    if href is None:
        return '<td class="open">–</td>'
    if n is None:
        return f'<td class="open"><a href="{escape(href)}">report</a></td>'
    return f'<td class="open"><a href="{escape(href)}#call-{int(n) + 1}">call {int(n) + 1}</a></td>'


def _day_chart(per_day: list[tuple[Any, ...]]) -> str:
    """Sessions per day as bars; a day with failed operations has a red mark on its bar."""
    if not per_day:
        return '<p class="empty">No sessions indexed.</p>'
    shown = per_day[-120:]  # the last 120 days that have sessions
    plot_w, plot_h, left = 760, 120, 50
    width, height = left + plot_w + 10, plot_h + 44
    peak = max(int(r[1]) for r in shown) or 1
    bw = plot_w / len(shown)
    out = [f'<svg class="chart" id="sessions-chart" role="img" viewBox="0 0 {width} {height}" width="{width}" '
           f'height="{height}" xmlns="http://www.w3.org/2000/svg"><title>Sessions per day</title>',
           f'<text class="tick" x="{left - 6}" y="16" text-anchor="end">{peak}</text>',
           f'<text class="tick" x="{left - 6}" y="{plot_h + 10}" text-anchor="end">0</text>',
           f'<line class="axis" x1="{left}" y1="{plot_h + 10}" x2="{left + plot_w}" y2="{plot_h + 10}"/>']
    for i, (day, sessions, failed, operations) in enumerate(shown):
        h = plot_h * int(sessions) / peak
        x = left + i * bw
        tip = f"{day}: {int(sessions):,} sessions, {int(operations or 0):,} operations, {int(failed or 0):,} failed"
        out.append(f'<g class="bucket"><title>{escape(tip)}</title><rect class="c2s" x="{x:.1f}" '
                   f'y="{plot_h + 10 - h:.1f}" width="{max(bw - 1, 1):.1f}" height="{h:.1f}"/>')
        if failed:
            out.append(f'<circle class="fail" cx="{x + bw / 2:.1f}" cy="{plot_h + 10 - h:.1f}" r="3"/>')
        out.append("</g>")
    out.append(f'<text class="tick" x="{left}" y="{height - 6}">{escape(str(shown[0][0]))}</text>'
               f'<text class="tick" x="{left + plot_w}" y="{height - 6}" text-anchor="end">'
               f'{escape(str(shown[-1][0]))}</text></svg>')
    return "".join(out)


def _cards(t: dict[str, int]) -> str:
    items = [("sessions", t["sessions"], False), ("operations", t["operations"], False),
             ("failed", t["failed"], True), ("unanswered", t["unanswered"], True),
             ("messages", t["messages"], False), ("files", t["files"], False), ("servers", t["servers"], False),
             ("unreadable files", t["unreadable"], True), ("still being written", t["in_progress"], False)]
    out = ['<div class="cards" id="counts">']
    for name, value, bad in items:
        cls = "card bad" if bad and value else "card"
        out.append(f'<div class="{cls}"><b>{value:,}</b><span>{escape(name)}</span></div>')
    out.append("</div>")
    return "".join(out)


def _sections(d: CorpusData) -> str:
    tools = [f'<tr class="tool{" failed" if r[2] else ""}"><td>{escape(str(r[0]))}</td>{_cell(r[1], "num")}'
             f'{_cell(r[2], "num")}{_cell(f"{r[2] / r[1]:.1%}" if r[1] else None, "num")}{_cell(r[3], "num")}'
             f'{_ms_cell(r[4])}{_ms_cell(r[5])}{_ms_cell(r[6])}</tr>' for r in d.tools]
    slowest = [f'<tr>{_time(r[7])}{_cell(r[0], "num")}{_where(r[1], r[2])}{_cell(r[3])}{_cell(r[4])}'
               f'{_ms_cell(r[5])}{_cell(r[6], "status")}{_open(d, r[1], r[8])}</tr>' for r in d.slowest]
    failed = [f'<tr class="failed">{_time(r[8])}{_cell(r[0], "num")}{_where(r[1], r[2])}{_cell(r[3])}{_cell(r[4])}'
              f'{_cell(r[5], "status")}{_cell(r[6], "num")}{_cell(r[7])}{_open(d, r[1], r[9])}</tr>' for r in d.failed]
    sessions = [f'<tr class="session{" failed" if r[8] or r[9] else ""}">{_time(r[2])}{_cell(r[4])}{_cell(r[5])}'
                f'{_cell(r[6])}{_cell(r[7], "num")}{_cell(r[8], "num")}{_cell(r[9], "num")}'
                f'{_ms_cell(r[3] - r[2] if r[2] is not None and r[3] is not None else None)}{_where(r[0], r[10])}'
                f'{_open(d, r[0])}</tr>' for r in d.sessions]
    peers = [f"<tr>{_cell(r[0])}{_cell(r[1])}{_cell(r[2])}{_cell(r[3])}{_cell(r[4])}{_cell(r[5])}"
             f'{_cell(r[6], "num")}{_cell(r[7], "num")}</tr>' for r in d.peers]
    changed = [f'<tr>{_cell(r[0])}{_cell(r[1])}{_cell(r[2], "num")}{_cell(r[3], "num")}{_cell(r[4])}{_cell(r[5])}</tr>'
               for r in d.changed]
    unreadable = [f'<tr>{_where(r[0], None)}{_cell(r[1])}</tr>' for r in d.unreadable]
    runs = [f'<tr class="run{" failed" if r[6] or r[8] else ""}">{_cell(r[0])}<td><code>{escape(str(r[1]))}</code></td>'
            f'{_cell(r[2])}{"".join(_cell(v, "num") for v in r[3:9])}</tr>' for r in d.runs]
    top = f"the first {TOP}"
    return "".join([
        '<section id="per-day"><h2>Sessions over time <span class="sub">per day; a red dot: a day with failed '
        'operations</span></h2>', _day_chart(d.per_day), "</section>",
        f'<section id="sessions"><h2>Sessions <span class="sub">the latest {SESSIONS}, newest first; click a '
        'heading to sort, a report to open the session</span></h2>',
        _table("sessions-table", [("started (UTC)", False), ("server", False), ("client", False), ("era", False),
                                  ("operations", True), ("failed", True), ("unanswered", True), ("duration", True),
                                  ("file:line", False), ("", False)], sessions, "No sessions indexed.",
               "server, client, era, file"), "</section>",
        f'<section id="tools"><h2>Tools by calls <span class="sub">{top}; error rate is failed ÷ calls</span></h2>',
        _table("tools-table", [("tool", False), ("calls", True), ("failed", True), ("error rate", True),
                               ("unanswered", True), ("p50", True), ("p95", True), ("max", True)], tools,
               "No tools/call in the corpus."), "</section>",
        f'<section id="slowest"><h2>The slowest operations <span class="sub">{top}; '
        '<code>mcpreel show ID</code> prints one</span></h2>',
        _table("slowest-table", [("sent (UTC)", False), ("id", True), ("file:line", False), ("method", False),
                                 ("tool / target", False), ("latency", True), ("status", False), ("", False)], slowest,
               "No latencies recorded.", "method, tool, file, status"),
        "</section>",
        f'<section id="failed"><h2>Failed operations <span class="sub">the latest {TOP}</span></h2>',
        _table("failed-table", [("sent (UTC)", False), ("id", True), ("file:line", False), ("method", False),
                                ("tool / target", False), ("status", False), ("code", True), ("message", False),
                                ("", False)], failed, "Nothing failed.", "method, tool, file, error text"),
        "</section>",
        f'<section id="peers"><h2>Servers and clients <span class="sub">{top}, with the protocol era each pair '
        'spoke</span></h2>',
        _table("peers-table", [("server", False), ("version", False), ("client", False), ("version", False),
                               ("era", False), ("protocol", False), ("sessions", True), ("failed", True)], peers,
               "No sessions."), "</section>",
        '<section id="changed"><h2>Tool definitions that changed <span class="sub">a tool seen with more than one '
        'definition (description, schema, annotations)</span></h2>',
        _table("changed-table", [("server", False), ("tool", False), ("definitions", True), ("files", True),
                                 ("first seen", False), ("last seen", False)], changed,
               "No tool definition changed."), "</section>",
        f'<section id="runs"><h2>Replay runs over time <span class="sub">the latest {TOP} runs of '
        '<code>mcpreel replay --db</code></span></h2>',
        _table("runs-table", [("day", False), ("run", False), ("target", False), ("sessions", True),
                              ("requests", True), ("same", True), ("changed", True), ("flaky", True),
                              ("error", True)], runs, "No replay run kept (mcpreel replay --db FILE keeps them)."),
        "</section>",
        '<section id="unreadable"><h2>Files that could not be read</h2>',
        _table("unreadable-table", [("file", False), ("why", False)], unreadable, "Every file was read."),
        "</section>",
    ])


def render(data: CorpusData) -> str:
    """The whole page, as text (``report/assets/corpus.html``, filled as the session report is, with
    ``corpus.js``; the sessions link to the pages in :attr:`CorpusData.pages`)."""
    from mcpreel.report.page import asset, fill

    note = ("Texts redacted ([REDACTED])." if data.redacted else
            "Not redacted again (--no-redact); the index stores error messages redacted all the same.")
    return fill("corpus.html", {
        "TITLE": "MCP sessions", "DB": escape(data.db), "CARDS": _cards(data.totals), "NOTE": escape(note), "SECTIONS": _sections(data),
        "JS": asset("corpus.js")})


def pages_folder(out: str | os.PathLike[str]) -> Path:
    """Where the sessions' own reports go: ``<page name>.sessions/`` beside the corpus page."""
    out = Path(out)
    return out.with_name(out.name.removesuffix(".html") + ".sessions")


def write_session_pages(data: CorpusData, out: str | os.PathLike[str]) -> list[Path]:
    """Write the report of each file the page lists (``0001.html``, ... in :func:`pages_folder`) and fill
    :attr:`CorpusData.pages`. A file that can no longer be read (moved, changed into something else) gets
    no page and its rows no link: the corpus page is still written."""
    from mcpreel.errors import McpreelError
    from mcpreel.formats import open_session
    from mcpreel.report import write_report

    folder = pages_folder(out)
    written: list[Path] = []
    for path, shown in data.sources:
        if shown in data.pages:
            continue
        page = folder / f"{len(written) + 1:04d}.html"
        try:
            write_report(open_session(path)[0], page, redact=data.redacted)
        except (McpreelError, OSError):
            continue
        written.append(page)
        data.pages[shown] = f"{folder.name}/{page.name}"
    return written


def write_corpus_report(db: Path, out: str | os.PathLike[str], *, redact: bool = True) -> CorpusData:
    """Write the corpus report of the index at ``db`` to ``out`` (atomically, mode 0600), and the own
    report of every session file it lists beside it (:func:`write_session_pages`)."""
    from mcpreel._infra.fileio import atomic_output

    data = collect(db, redact=redact)
    write_session_pages(data, out)
    page = render(data).encode("utf-8", "replace")
    with atomic_output(out) as fh:
        fh.write(page)
    return data
