"""``mcpreel redact IN OUT``: a copy of a session with its secrets replaced by [REDACTED]."""

from __future__ import annotations

from pathlib import Path

import click

from mcpreel.cli import output
from mcpreel.cli.params import FORMAT_AUTO


@click.command("redact")
@click.argument("input_path", metavar="IN", type=click.Path(dir_okay=False))
@click.argument("output_path", metavar="OUT", type=click.Path(dir_okay=False))
@click.option("--rules", "rules_path", type=click.Path(dir_okay=False),
              help='A JSON rules file: {"keys": [...], "patterns": [...], "paths": ["$.params.arguments.email"], '
                   '"rules": [{"path": ..., "regex": ...}], "defaults": true, "marker": "[REDACTED]"}.')
@click.option("--from", "from_", type=FORMAT_AUTO, default="auto", show_default=True, help="Input format.")
@click.option("--to", type=FORMAT_AUTO, default="auto", show_default=True,
              help="Output format [default: the input's, when it can be written].")
@output.run_command
def redact_command(input_path: str, output_path: str, rules_path: str | None, from_: str, to: str) -> None:
    """Redact secrets in a session file: by key (token, password, authorization, api_key, secret,
    cookie, ...), by value pattern (bearer tokens, JWTs, sk-... keys, AWS and GitHub tokens, URL
    passwords) and by your JSONPath/regex rules, the server command's argv included."""
    from mcpreel.redact import load_rules, redact_file

    rules = load_rules(rules_path) if rules_path else None
    size = Path(input_path).stat().st_size if Path(input_path).is_file() else 0
    with output.byte_progress(size, f"redacting {Path(input_path).name}") as progress:
        result = redact_file(input_path, output_path, rules=rules, from_=from_, to=to, on_progress=progress)
    if result.lost:
        output.warning(f"writing {result.format} drops {', '.join(result.lost)}")
    detail = ", ".join(f"{n} {name}" for name, n in sorted(result.counts.items(), key=lambda kv: (-kv[1], kv[0])))
    click.echo(f"redacted {result.total} value{'s' if result.total != 1 else ''}"
               + (f" ({detail})" if detail else "") + f" -> {output_path} ({result.format})")
