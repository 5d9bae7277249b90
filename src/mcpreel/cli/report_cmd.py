"""``mcpreel report SESSION [-o report.html]``: a session as one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.params import FORMAT_AUTO, SESSION_FILE
from mcpreel.cli.vocabulary import hidden


@click.command("report", epilog=examples(
    "mcpreel report session.jsonl  # writes ./session.html",
    "mcpreel report qai_session.json -o report.html --detail 500  # any readable format",
    "mcpreel report --db ~/.mcpreel/corpus.duckdb -o fleet.html  # every indexed session (mcpreel index)",
))
@click.argument("path", metavar="SESSION", type=SESSION_FILE, required=False)
@click.option("-o", "--output", "out", **hidden("--out"), type=click.Path(dir_okay=False),
              help="The HTML file to write [default: ./<session name>.html].")
@click.option("--format", "fmt", type=FORMAT_AUTO, default="auto", show_default=True,
              help="Input format; auto sniffs the content.")
@click.option("--detail", type=click.IntRange(min=0), default=100, show_default=True, metavar="N",
              help="Calls shown with their JSON: the first N and the N slowest (failures always, up to --max-errors).")
@click.option("--max-errors", type=click.IntRange(min=0), default=2000, show_default=True, metavar="N",
              help="Failed or unanswered calls shown with their JSON.")
@click.option("--timeline", type=click.IntRange(min=0), default=400, show_default=True, metavar="N",
              help="Records shown in the sequence view (the first N).")
@click.option("--redact/--no-redact", default=True, show_default=True,
              help="Redact secrets in what the page shows (the rules of `mcpreel redact`); --no-redact shows "
                   "them as recorded.")
@click.option("--db", type=click.Path(dir_okay=False), metavar="FILE",
              help="Report on the corpus index FILE (`mcpreel index`) instead of one SESSION [default -o: corpus.html]; "
                   "the report of each session it lists goes beside it, in <name>.sessions/.")
@output.run_command
def report_command(path: str | None, out: str | None, fmt: str, detail: int, max_errors: int, timeline: int,
                   redact: bool, db: str | None = None) -> None:
    """Write an HTML report of a session: header, latency chart, calls per tool, calls, sequence."""
    if db is not None or path is None:
        _corpus_report(path, db, out, redact)
        return
    from mcpreel.formats import open_session
    from mcpreel.report import ReportLimits, write_report

    session, detection = open_session(path, fmt)
    target = out or f"{Path(path).name.split('.')[0] or 'session'}.html"
    data = write_report(session, target, ReportLimits(timeline=timeline, detail=detail, max_errors=max_errors), redact=redact)
    if not detection.obvious:  # said once the file is read: a file that fails is one error line, nothing else
        output.info(f"{path}: read as {detection.format}: {detection.reason}")
    c = data.counts
    output.info(f"wrote {target}: {c.get('messages', 0):,} messages, {data.calls_total:,} calls "
                f"({len(data.calls):,} in detail), {data.failures_total:,} failed or unanswered")


def _corpus_report(path: str | None, db: str | None, out: str | None, redact: bool) -> None:
    """``report --db FILE``: the corpus report (:mod:`mcpreel.corpus.page`)."""
    from mcpreel.errors import UsageError

    if path is not None:
        raise UsageError("give a SESSION or --db FILE, not both")
    if db is None:
        raise UsageError("give a SESSION file to report on (or --db FILE for the corpus index)")
    from mcpreel.corpus.page import pages_folder, write_corpus_report

    target = out or "corpus.html"
    data = write_corpus_report(Path(db), target, redact=redact)
    t = data.totals
    output.info(f"wrote {target}: {t['sessions']:,} sessions, {t['operations']:,} operations, {t['failed']:,} failed"
                + (f"; and the report of each of the {len(data.pages):,} files it lists in "
                   f"{pages_folder(target).name}/" if data.pages else ""))
