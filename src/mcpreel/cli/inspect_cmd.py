"""``mcpreel inspect SESSION``: a session's header, one row per message, and a summary."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import BinaryIO

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.params import FORMAT_AUTO, SESSION_FILE
from mcpreel.render.terminal_safe import terminal_safe


@click.command("inspect", epilog=examples(
    "mcpreel inspect session.jsonl",
    "mcpreel inspect session.jsonl --summary",
    "mcpreel inspect session.qai.json -v --json",
))
@click.argument("path", metavar="SESSION", type=SESSION_FILE)
@click.option("-v", "--verbose", is_flag=True, help="Show each message's time and payload (and the original of an edit).")
@click.option("--json", "as_json", is_flag=True, help="One JSON document: session, rows, summary.")
@click.option("--summary", "summary_only", is_flag=True, help="The header and the summary only, no rows.")
@click.option("--format", "fmt", type=FORMAT_AUTO, default="auto", show_default=True,
              help="Input format; auto sniffs the content.")
@click.option("--redact/--no-redact", default=True, show_default=True,
              help="Redact secrets in what is shown (the server's argv and URL, stderr lines, -v payloads; the "
                   "rules of `mcpreel redact`); --no-redact shows them as recorded.")
@output.run_command
@output.fewer_collections()
def inspect_command(path: str, verbose: bool, as_json: bool, summary_only: bool, fmt: str, redact: bool = True) -> None:
    """Show what a session file holds: who said what, errors, unanswered calls, latencies."""
    from mcpreel.formats import open_session
    from mcpreel.inspection import analyze
    from mcpreel.render import inspect as render

    size = output.file_size(path)
    with output.byte_progress(size, f"reading {Path(path).name}") as progress:
        session, detection = open_session(path, fmt, on_progress=progress)
        if redact:  # what inspect prints is pasted into issues and CI logs
            from mcpreel.redact import Redactor

            session = Redactor().session(session, payloads=verbose)
        # rows go to a temporary file as they are made (flat memory), or nowhere for --summary; SSE
        # framing events fold into their exchange's row on screen, -v and --json keep a row for each
        report = analyze(session, payloads=verbose, rows="none" if summary_only else "spool",
                         fold_sse=not (verbose or as_json))
    if not detection.obvious:
        output.info(f"{path}: read as {detection.format}: {detection.reason}")
    if as_json:
        render.write_json(report, sys.stdout.buffer, verbose=verbose, rows=not summary_only)
        sys.stdout.flush()
        return
    console = output.terminal_console(soft_wrap=True)
    if console.is_terminal:
        output.show(render.renderables(report, verbose=verbose, rows=not summary_only), console)
        return
    out = sys.stdout.buffer
    batch: list[str] = []
    for line in render.plain_lines(report, verbose=verbose, rows=not summary_only):
        batch.append(line)
        if len(batch) >= _LINES_PER_WRITE:
            _write_lines(out, batch)
            batch.clear()
    _write_lines(out, batch)
    out.flush()


#: lines encoded and written at once (a write and an encode per line cost as much as making the line)
_LINES_PER_WRITE = 1024


def _write_lines(out: BinaryIO, lines: list[str]) -> None:
    if lines:
        # a lone surrogate from a payload or an SSE event is printed escaped, never fatal
        # and the control characters of session data escaped (a tool named ESC]52;... sets no clipboard)
        out.write((terminal_safe("\n".join(lines)) + "\n").encode("utf-8", "backslashreplace"))
