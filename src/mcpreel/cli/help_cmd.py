"""``mcpreel help [TOPIC]``: a reference page of the docs in the terminal (or a verb's help).

The pages are the Markdown files the docs site renders as its reference (:mod:`mcpreel.cli.helptext`), so
``mcpreel help eras`` and the site's *Eras* page are one text. On a terminal the page is drawn with rich;
piped or redirected it is the Markdown itself, unwrapped, for ``grep`` and ``less``.
:func:`cli_reference` makes the site's command reference from the command line itself (every verb's
``--help``), which the site's build hook puts in place of the ``cli-reference`` marker.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import TOPIC_NAMES, examples, topic_text
from mcpreel.errors import UsageError

__all__ = ["cli_reference", "help_command"]


@click.command("help", epilog=examples(
    "mcpreel help filters",
    "mcpreel help eras",
    "mcpreel help replay  # a verb's own --help",
))
@click.argument("topic", required=False, metavar="[TOPIC|VERB]",
                shell_complete=lambda ctx, param, incomplete: complete_topic(ctx, incomplete))
@click.pass_context
@output.run_command
def help_command(ctx: click.Context, topic: str | None) -> None:
    """A reference page in the terminal (formats, filters, rules, eras, ...), or a verb's --help."""
    root = ctx.find_root()
    if topic is None:
        click.echo(root.get_help())
        click.echo(f"\nTopics: mcpreel help {'|'.join(TOPIC_NAMES)}")
        return
    if topic in TOPIC_NAMES:
        _show(topic)
        return
    group = root.command
    cmd = group.get_command(root, topic) if isinstance(group, click.Group) else None
    if cmd is None:
        raise UsageError(f"no topic or verb {topic!r} (topics: {', '.join(TOPIC_NAMES)}; verbs: mcpreel --help)")
    with click.Context(cmd, info_name=topic, parent=root) as sub:
        click.echo(cmd.get_help(sub))


def complete_topic(ctx: click.Context, incomplete: str) -> list[str]:
    """``mcpreel help <Tab>``: the topics, then the verbs, that start with what is typed."""
    root = ctx.find_root()
    verbs = root.command.list_commands(root) if isinstance(root.command, click.Group) else []
    return [n for n in [*TOPIC_NAMES, *verbs] if n.startswith(incomplete)]


def _show(topic: str) -> None:
    """The page drawn for a terminal (headings, tables fitted to its width), else its Markdown as it is."""
    text = topic_text(topic)
    if not sys.stdout.isatty():
        click.echo(text, nl=not text.endswith("\n"))
        return
    from rich.console import Console
    from rich.markdown import Markdown

    Console().print(Markdown(text, hyperlinks=False))


def _commands(group: click.Group, ctx: click.Context,
              path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command, click.Context]]:
    """Every visible command under ``group``, depth first in name order, with its context."""
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is None or cmd.hidden:
            continue
        sub = click.Context(cmd, info_name=name, parent=ctx, terminal_width=100, max_content_width=100)
        yield (*path, name), cmd, sub
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, sub, (*path, name))


def cli_reference() -> str:
    """Every verb's ``--help`` as the command line prints it at 100 columns, one section a verb, for the
    docs site's command reference (made when the site is built, so it is always this version's)."""
    from mcpreel.cli import cli

    root = click.Context(cli, info_name="mcpreel", terminal_width=100, max_content_width=100)
    parts = ["## mcpreel", "", "```text", cli.get_help(root).rstrip(), "```", ""]
    for path, cmd, sub in _commands(cli, root):
        parts += [f"## mcpreel {' '.join(path)}", "", "```text", cmd.get_help(sub).rstrip(), "```", ""]
    return "\n".join(parts)

