"""``mcpreel help [TOPIC]``: the short texts on formats, filters, rules, eras and names (or a verb's help)."""

from __future__ import annotations

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import TOPICS, examples, topic_text
from mcpreel.errors import UsageError


@click.command("help", epilog=examples(
    "mcpreel help filters",
    "mcpreel help eras",
    "mcpreel help replay  # a verb's own --help",
))
@click.argument("topic", required=False, metavar="[TOPIC|VERB]")
@click.pass_context
@output.run_command
def help_command(ctx: click.Context, topic: str | None) -> None:
    """What a word means: formats, filters, rules, eras, names (or a verb's --help)."""
    root = ctx.find_root()
    if topic is None:
        click.echo(root.get_help())
        click.echo(f"\nTopics: mcpreel help {'|'.join(TOPICS)}")
        return
    if topic in TOPICS:
        click.echo(topic_text(topic))
        return
    group = root.command
    cmd = group.get_command(root, topic) if isinstance(group, click.Group) else None
    if cmd is None:
        raise UsageError(f"no topic or verb {topic!r} (topics: {', '.join(TOPICS)}; verbs: mcpreel --help)")
    with click.Context(cmd, info_name=topic, parent=root) as sub:
        click.echo(cmd.get_help(sub))
