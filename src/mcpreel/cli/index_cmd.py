"""``mcpreel index [PATH...] [--db FILE]``: every session file under the paths, into the corpus index."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples

#: unreadable files named one by one after a pass, at most (the rest are counted; `files` has them all)
_ERRORS_SHOWN = 20


@click.command("index", epilog=examples(
    "mcpreel index  # ~/.mcpreel/sessions into ~/.mcpreel/corpus.duckdb",
    "mcpreel index ci-cassettes/ team/ --db team.duckdb",
    "mcpreel index --watch --parquet bucket/laptop-7",
))
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path),
              help="The index database [default: ~/.mcpreel/corpus.duckdb, beside the folder `wrap` records into].")
@click.option("--watch", is_flag=True, help="Keep indexing as recorders write, until Ctrl-C (a pass every --interval).")
@click.option("--interval", type=click.FloatRange(min=0.2), default=2.0, show_default=True, metavar="SECONDS",
              help="Seconds between the passes of --watch.")
@click.option("--no-wait", is_flag=True,
              help="Stop at once, naming it, when another indexer is writing the index (default: wait for it).")
@click.option("--parquet", "parquet_dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Then write the tables as Parquet, partitioned by day (as `mcpreel export parquet`).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, metavar="N",
              help="Processes that read the files (this one writes the index) [default: one per core].")
@output.run_command
def index_command(paths: tuple[Path, ...], db: Path | None, watch: bool, interval: float, no_wait: bool,
                  parquet_dir: Path | None, jobs: int | None) -> None:
    """Index every session file under PATHs (default: ~/.mcpreel/sessions), any format mcpreel reads.

    Unchanged files are skipped, changed ones read again, removed ones dropped; a file that cannot be read
    is kept with its one-line error; a reel still being written is indexed as in progress and completed on a
    later pass. Then: `mcpreel query`, `mcpreel sessions`, `mcpreel show`, `mcpreel report --db`.
    """
    from mcpreel._infra.pool import default_jobs
    from mcpreel.corpus.db import default_db, default_paths
    from mcpreel.corpus.index import index_paths
    from mcpreel.corpus.index import watch as watch_paths
    from mcpreel.errors import UsageError

    roots = list(paths) or default_paths()
    for root in roots:
        if not root.exists():
            hint = " (record with `mcpreel wrap`, or give the folders to index)" if not paths else ""
            raise UsageError(f"{root}: no such file or folder{hint}")
    target = db or default_db()
    jobs = jobs or default_jobs()
    if watch:
        output.info(f"watching {', '.join(str(r) for r in roots)} -> {target} (Ctrl-C to stop)")
        try:
            watch_paths(roots, target, interval=interval, on_wait=output.info, jobs=jobs,
                        on_pass=lambda stats: _said(stats, target, quiet_when_idle=True))
        except KeyboardInterrupt:
            output.info("stopped watching")
        return
    with output.fewer_collections(), _Bar() as bar:
        stats = index_paths(roots, target, wait=not no_wait, on_wait=output.info, on_start=bar.start,
                            on_progress=bar.advance, jobs=jobs)
    _said(stats, target)
    if parquet_dir is not None:
        from mcpreel.corpus.parquet import export_parquet

        written = export_parquet(target, parquet_dir)
        output.info(f"wrote {sum(written.values()):,} rows as Parquet to {parquet_dir}")


def _said(stats: Any, db: Path, quiet_when_idle: bool = False) -> None:
    if quiet_when_idle and not (stats.read or stats.removed):
        return
    parts = [f"{stats.read:,} read", f"{stats.skipped:,} unchanged"]
    if stats.removed:
        parts.append(f"{stats.removed:,} removed")
    if stats.errors:
        parts.append(f"{stats.errors:,} unreadable")
    if stats.in_progress:
        parts.append(f"{stats.in_progress:,} still being written")
    read = (f"; read {stats.sessions:,} sessions, {stats.operations:,} operations, {stats.messages:,} messages"
            if stats.read else "")
    output.info(f"indexed {stats.found:,} files ({', '.join(parts)}){read} in {stats.seconds:.1f} s -> {db}")
    for path, error in stats.failed_files[:_ERRORS_SHOWN]:
        output.warning(f"{path}: {error}")
    if len(stats.failed_files) > _ERRORS_SHOWN:
        output.warning(f"... and {len(stats.failed_files) - _ERRORS_SHOWN:,} more unreadable files "
                       f"(mcpreel query \"SELECT path, error FROM files WHERE status = 'error'\")")


class _Bar:
    """A rich progress bar of the bytes a pass reads, on stderr, only when it is a terminal."""

    def __init__(self) -> None:
        self.progress: Any = None
        self.task: Any = None

    def __enter__(self) -> _Bar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()

    def start(self, files: int, total: int) -> None:
        if not sys.stderr.isatty() or not files:
            return
        self.progress = output.progress_bar(*output.byte_columns())
        self.progress.start()
        self.task = self.progress.add_task(f"indexing {files:,} files", total=total)

    def advance(self, done: int) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=done)
