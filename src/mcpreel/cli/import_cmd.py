"""``mcpreel import`` and ``mcpreel trace import-mcp``: a session file -> a normalized trace."""

from __future__ import annotations

from pathlib import Path

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.params import FORMAT_AUTO, SESSION_FILE
from mcpreel.cli.vocabulary import hidden
from mcpreel.toolcalls.importer import ImportOptions, import_session

_TRACE_FORMATS = click.Choice(["assay-v2", "simple"])


def _run(path: str, out_trace: str | None, fmt: str, trace_format: str, episode_id: str | None,
         test_id: str | None, prompt: str | None, strict: bool) -> None:
    options = ImportOptions(
        episode_id=episode_id or Path(path).stem,
        prompt=prompt if prompt is not None else "<mcp:session>",
        test_id=test_id,
        strict=strict,
    )
    size = output.file_size(path)
    # the warnings are said once the file has been read whole: a file refused later gets its one error line
    # alone (as `export otlp` does), not warnings about lines of a trace that was never written
    warnings: list[str] = []
    with output.byte_progress(size, f"importing {Path(path).name}") as progress:
        report, detection, target = import_session(
            path, out_trace, format=fmt, trace_format=trace_format, options=options,
            warn=warnings.append, on_progress=progress,
        )
    for w in warnings:
        output.warning(f"{path}: {w}")
    if not detection.obvious:
        output.info(f"{path}: read as {detection.format}: {detection.reason}")
    for note in report.notes:
        output.info(f"{path}: {note}")
    click.echo(
        f"imported {report.messages} messages: {report.tool_calls} tool calls, {report.unanswered} unanswered, "
        f"{report.orphans} orphans -> {target}"
    )


@click.command("import", epilog=examples(
    "mcpreel import session.json  # writes session.trace.jsonl beside it",
    "mcpreel import capture.json --format streamable-http -o out.trace.jsonl --episode-id run-7",
    "mcpreel import session.jsonl --trace-format simple -o calls.jsonl",
))
@click.argument("path", metavar="SESSION", type=SESSION_FILE)
@click.option("--format", "fmt", type=FORMAT_AUTO, default="auto", show_default=True,
              help="Input format (inspector, jsonrpc, streamable-http, http-sse, reel, ...); auto sniffs it.")
@click.option("-o", "--output", "out_trace", **hidden("--out-trace"), type=click.Path(dir_okay=False), help="The trace [default: <dir>/<stem>.trace.jsonl].")
@click.option("--trace-format", type=_TRACE_FORMATS, default="assay-v2", show_default=True)
@click.option("--episode-id", help="Episode id [default: the input file's stem].")
@click.option("--test-id", help="Written into episode_start.meta.test_id.")
@click.option("--prompt", help='The episode prompt [default: "<mcp:session>"].')
@click.option("--strict", is_flag=True, help="Also refuse duplicate JSON members.")
@output.run_command
@output.fewer_collections()
def import_command(path: str, fmt: str, out_trace: str | None, trace_format: str, episode_id: str | None,
                   test_id: str | None, prompt: str | None, strict: bool) -> None:
    """Import an MCP session file into a normalized tool-call trace."""
    _run(path, out_trace, fmt, trace_format, episode_id, test_id, prompt, strict)


@click.group("trace", epilog=examples(
    "mcpreel trace import-mcp --input s.json -o s.trace.jsonl --format http-sse",
))
def trace_group() -> None:
    """Trace commands (the second surface of the importer)."""


@trace_group.command("import-mcp", epilog=examples(
    "mcpreel trace import-mcp --input s.json -o s.trace.jsonl --format http-sse",
    "mcpreel trace import-mcp --input session.json -o calls.jsonl --trace-format simple",
))
@click.option("--input", "path", required=True, type=click.Path(dir_okay=False), help="The session file.")
@click.option("-o", "--output", "out_trace", **hidden("--out-trace"), required=True, type=click.Path(dir_okay=False),
              help="Where the trace goes.")
@click.option("--format", "fmt", type=FORMAT_AUTO, default="auto", show_default=True)
@click.option("--trace-format", type=_TRACE_FORMATS, default="assay-v2", show_default=True)
@click.option("--episode-id")
@click.option("--test-id")
@click.option("--prompt")
@click.option("--strict", is_flag=True)
@output.run_command
@output.fewer_collections()
def import_mcp(path: str, out_trace: str, fmt: str, trace_format: str, episode_id: str | None,
               test_id: str | None, prompt: str | None, strict: bool) -> None:
    """Import an MCP transcript into an Assay V2 trace."""
    _run(path, out_trace, fmt, trace_format, episode_id, test_id, prompt, strict)
