"""``mcpreel redact IN OUT``: a copy of a session with its secrets replaced by keyed markers.

Keyed markers (``[REDACTED:rule:1a2b3c4d]``, an HMAC of the secret) are the default: equal secrets stay
equal, different ones differ, and ``serve``/the pytest plugin can match a live request that carries the
secret. ``--plain`` keeps the bare ``[REDACTED]`` of earlier versions (and a rules file's own
``marker`` is used as given).
"""

from __future__ import annotations

from pathlib import Path

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.params import FORMAT_AUTO, SESSION_FILE


@click.command("redact", epilog=examples(
    "mcpreel redact session.jsonl shared.jsonl",
    "mcpreel redact session.jsonl shared.jsonl --rules rules.json",
    "mcpreel redact session.qai.json shared.jsonl --to reel --plain",
))
@click.argument("input_path", metavar="IN", type=SESSION_FILE)
@click.argument("output_path", metavar="OUT", type=click.Path(dir_okay=False))
@click.option("--rules", "rules_path", type=click.Path(dir_okay=False),
              help='A JSON rules file: {"keys": [...], "patterns": [...], "paths": ["$.params.arguments.email"], '
                   '"rules": [{"path": ..., "regex": ...}], "defaults": true, "marker": "[REDACTED]"}.')
@click.option("--from", "from_", type=FORMAT_AUTO, default="auto", show_default=True, help="Input format.")
@click.option("--to", type=FORMAT_AUTO, default="auto", show_default=True,
              help="Output format [default: the input's, when it can be written].")
@click.option("--redact-key", "key_path", type=click.Path(dir_okay=False),
              help="The HMAC key file of the keyed markers [default: $MCPREEL_REDACT_KEY, else "
                   ".mcpreel/redact.key here, created (0600) on first use].")
@click.option("--plain", is_flag=True, help="Every secret becomes a bare [REDACTED] (no keyed hash, no key file).")
@output.run_command
@output.fewer_collections()
def redact_command(input_path: str, output_path: str, rules_path: str | None, from_: str, to: str,
                   key_path: str | None, plain: bool) -> None:
    """Redact secrets in a session file: by key (token, password, authorization, api_key, secret,
    cookie, ...), by value pattern (bearer tokens, JWTs, sk-... keys, AWS and GitHub tokens, URL
    passwords) and by your JSONPath/regex rules, the server command's argv included. Each secret
    becomes [REDACTED:rule:1a2b3c4d], an HMAC of it under a key kept beside the project."""
    from mcpreel.errors import UsageError
    from mcpreel.redact import MARKER, load_rules
    from mcpreel.redact.files import redact_file
    from mcpreel.redact.keys import DEFAULT_KEY_FILE, find_key, load_or_create_key

    rules = load_rules(rules_path) if rules_path else None
    keyed = not plain and (rules is None or rules.marker == MARKER)
    if plain and key_path:
        raise UsageError("--plain and --redact-key exclude each other: give one")
    key = None
    if keyed:
        created = find_key(key_path) is None
        key = load_or_create_key(key_path)
        if created:
            output.info(f"created the redaction key {DEFAULT_KEY_FILE} (mode 0600): keep it out of version control, "
                        "and give CI the same key (MCPREEL_REDACT_KEY=FILE) so cassettes match")
    size = output.file_size(input_path)
    with output.byte_progress(size, f"redacting {Path(input_path).name}") as progress:
        result = redact_file(input_path, output_path, rules=rules, from_=from_, to=to, key=key,
                             on_progress=progress)
    if result.lost:
        output.warning(f"writing {result.format} drops {', '.join(result.lost)}")
    for rule in result.unmatched:
        output.warning(f"{rules_path}: {rule} matched nothing in {input_path}")
    if result.raw_redacted:
        output.info(f"rewrote {result.raw_redacted} raw bytes line{'s' if result.raw_redacted != 1 else ''} "
                    "(credential headers in HTTP/2 header blocks, secrets in raw text)")
    detail = ", ".join(f"{n} {name}" for name, n in sorted(result.counts.items(), key=lambda kv: (-kv[1], kv[0])))
    click.echo(f"redacted {result.total} value{'s' if result.total != 1 else ''}"
               + (f" ({detail})" if detail else "") + f" -> {output_path} ({result.format})")
