"""``mcpreel export otlp SESSION (-o spans.json | --endpoint URL)``: a session as OpenTelemetry spans."""

from __future__ import annotations

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.params import FORMAT_AUTO, SESSION_FILE
from mcpreel.cli.vocabulary import hidden


@click.group("export", epilog=examples(
    "mcpreel export otlp session.jsonl -o spans.jsonl",
    "mcpreel export otlp session.jsonl --endpoint http://127.0.0.1:4318",
))
def export_group() -> None:
    """Send a recorded session where other telemetry lives."""


@export_group.command("otlp", epilog=examples(
    "mcpreel export otlp session.jsonl -o spans.jsonl",
    "mcpreel export otlp session.jsonl --endpoint http://127.0.0.1:4318 --include-content",
))
@click.argument("path", metavar="SESSION", type=SESSION_FILE)
@click.option("-o", "--output", "out", **hidden("--out"), type=click.Path(dir_okay=False),
              help="Write OTLP JSON here (one ExportTraceServiceRequest per line).")
@click.option("--endpoint", metavar="URL",
              help="Send OTLP/HTTP protobuf to this collector (base URL; /v1/traces is added when it has no path). "
                   "Without --output or --endpoint, OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is used.")
@click.option("--include-content", is_flag=True,
              help="Also export tool arguments and results (redacted by the rules of `mcpreel redact`).")
@click.option("--convention", type=click.Choice(["genai", "openinference"]), default="genai", show_default=True,
              help="Span attributes: genai (OpenTelemetry GenAI MCP conventions) or openinference (Phoenix and "
                   "other evaluation tools: TOOL spans with input.value/output.value, always redacted).")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=None, metavar="SECONDS",
              help="How long to wait for the collector per batch [default: OTEL_EXPORTER_OTLP_TIMEOUT or 10].")
@click.option("--format", "fmt", type=FORMAT_AUTO, default="auto", show_default=True,
              help="Input format; auto sniffs the content.")
@output.run_command
def otlp_command(path: str, out: str | None, endpoint: str | None, include_content: bool, convention: str,
                 timeout: float | None, fmt: str) -> None:
    """Map a session to spans (OpenTelemetry GenAI MCP conventions) and export them as OTLP."""
    from mcpreel.errors import UsageError
    from mcpreel.formats import open_session

    if out and endpoint:
        raise UsageError("--output and --endpoint: give one of them")
    from mcpreel.otel.export import export_session, otlp_exporter

    exporter = None if out else otlp_exporter(endpoint, timeout=timeout)
    session, detection = open_session(path, fmt)
    if out:
        from mcpreel._infra.fileio import atomic_output

        with atomic_output(out) as fh:
            summary = export_session(session, out=fh, include_content=include_content, convention=convention)
        where = out
    else:
        summary = export_session(session, exporter=exporter, include_content=include_content,
                                 convention=convention)
        where = getattr(exporter, "_endpoint", endpoint or "the OTLP endpoint")
    if not detection.obvious:  # said once the file is read: a file that fails is one error line, nothing else
        output.info(f"{path}: read as {detection.format}: {detection.reason}")
    output.info(f"exported {summary.spans:,} spans in {len(summary.traces):,} traces to {where}")


@export_group.command("parquet", epilog=examples(
    "mcpreel export parquet -o bucket/laptop-7  # the default index, ~/.mcpreel/corpus.duckdb",
    "mcpreel export parquet --db team.duckdb -o parquet/",
))
@click.option("--db", type=click.Path(dir_okay=False), help="The corpus index [default: ~/.mcpreel/corpus.duckdb].")
@click.option("-o", "--output", "out_dir", **hidden("--out"), required=True, type=click.Path(file_okay=False),
              metavar="DIR", help="Where the tables go: DIR/<table>/day=YYYY-MM-DD/*.parquet.")
@output.run_command
def parquet_command(db: str | None, out_dir: str) -> None:
    """Write the corpus index's tables (files, sessions, operations, tools) as Parquet, partitioned by day."""
    from pathlib import Path

    from mcpreel.corpus.db import default_db
    from mcpreel.corpus.parquet import export_parquet

    written = export_parquet(Path(db) if db else default_db(), Path(out_dir))
    output.info(f"wrote {', '.join(f'{n:,} {t}' for t, n in written.items())} to {out_dir}")
