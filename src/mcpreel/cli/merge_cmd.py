"""``mcpreel merge A B ... -o OUT``: several servers' sessions, one file, interleaved by time."""

from __future__ import annotations

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.params import FORMAT_AUTO, SESSION_FILE


@click.command("merge", epilog=examples(
    "mcpreel merge fs.jsonl web.jsonl -o all.jsonl",
    "mcpreel merge a.qai.json b.har -o all.jsonl --to reel",
))
@click.argument("inputs", metavar="SESSION...", nargs=-1, required=True, type=SESSION_FILE)
@click.option("-o", "--output", "out", required=True, type=click.Path(dir_okay=False), help="The merged file.")
@click.option("--to", type=FORMAT_AUTO, default="auto", show_default=True, help="Output format; auto: from OUT's name.")
@click.option("--from", "from_", type=FORMAT_AUTO, default="auto", show_default=True, help="Input format of every file.")
@output.run_command
@output.fewer_collections()
def merge_command(inputs: tuple[str, ...], out: str, to: str, from_: str) -> None:
    """Merge session files (one per server) into one, interleaved by time.

    In a reel each record keeps the file it came from (its "file" member); another format that has no
    place for it says so ("drops which file each record came from"). Serve or replay one source of the
    merged file with --source NAME.
    """
    from mcpreel.merge import merge

    size = output.file_size(*inputs)
    with output.byte_progress(size, f"merging {len(inputs)} files") as progress:
        result = merge(list(inputs), out, to=to, from_=from_, warn=lambda w: output.warning(w), on_progress=progress)
    if result.lost:
        output.warning(f"writing {result.format} drops {', '.join(result.lost)}")
    names = ", ".join(f"{i.name} ({i.format})" for i in result.inputs)
    click.echo(f"merged {len(result.inputs)} files ({names}) -> {out} ({result.format}): {result.records} records")
