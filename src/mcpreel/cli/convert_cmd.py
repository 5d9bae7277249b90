"""``mcpreel convert IN OUT``: a session file in one format -> another format."""

from __future__ import annotations

from pathlib import Path

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.params import FORMAT_AUTO, SESSION_FILE
from mcpreel.convert import convert
from mcpreel.formats import reader_names, writer_names


@click.command("convert", epilog=examples(
    "mcpreel convert session.qai.json session.jsonl",
    "mcpreel convert session.jsonl capture.har",
    "mcpreel convert export.json session.jsonl --from inspector  # mcpreel help formats: every name",
))
@click.argument("input_path", metavar="IN", type=SESSION_FILE)
@click.argument("output_path", metavar="OUT", type=click.Path(dir_okay=False))
@click.option("--from", "from_", type=FORMAT_AUTO, default="auto", show_default=True,
              help=f"Input format ({', '.join(reader_names())}); auto sniffs the content.")
@click.option("--to", type=FORMAT_AUTO, default="auto", show_default=True,
              help=f"Output format ({', '.join(writer_names())}); "
                   "auto: from OUT's name (.jsonl reel, .json qai, .har har, .trace.jsonl assay-v2).")
@click.option("--strict", is_flag=True, help="Also refuse duplicate JSON members in the input.")
@click.option("--keep-secrets", is_flag=True,
              help="Keep secret query parameters (?api_key=, ?token=, …) in the session's URLs (redacted by default).")
@output.run_command
@output.fewer_collections()
def convert_command(input_path: str, output_path: str, from_: str, to: str, strict: bool, keep_secrets: bool) -> None:
    """Convert a session file to another format.

    A lossy target (jsonrpc drops times and directions, a trace keeps only tool semantics, ...) gets
    one warning line naming what this session lost.
    """
    size = output.file_size(input_path)
    with output.byte_progress(size, f"converting {Path(input_path).name}") as progress:
        result = convert(input_path, output_path, from_, to, strict=strict, keep_secrets=keep_secrets,
                         warn=lambda w: output.warning(f"{input_path}: {w}"), on_progress=progress)
    if result.detection is not None and not result.detection.obvious:
        output.info(f"{input_path}: read as {result.detection.format}: {result.detection.reason}")
    for note in result.notes:
        output.info(f"{input_path}: {note}")
    if not result.output_choice.obvious:
        output.info(f"{output_path}: written as {result.to}: {result.output_choice.reason}")
    line = result.lost_line()
    if line:
        output.warning(line)
    source = result.detection.format if result.detection is not None else "?"
    click.echo(f"converted {input_path} ({source}) -> {output_path} ({result.to}): {result.features.records} records")
