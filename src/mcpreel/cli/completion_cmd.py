"""``mcpreel completion bash|zsh|fish``: the shell's completion script for mcpreel (click's completion).

The script asks ``mcpreel`` itself what to complete (``_MCPREEL_COMPLETE``), so verbs, options, file
names, format names (``--format``, ``--to``, ``--from``: :class:`~mcpreel.cli.params.FormatName`) and
help topics (``mcpreel help TOPIC``) complete from this version of the command line, never from a list
kept beside it.
"""

from __future__ import annotations

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples

SHELLS = ("bash", "zsh", "fish")


@click.command("completion", epilog=examples(
    "mcpreel completion bash  # in ~/.bashrc: eval \"$(mcpreel completion bash)\"",
    "mcpreel completion zsh  # in ~/.zshrc: eval \"$(mcpreel completion zsh)\"",
    "mcpreel completion fish  # saved as ~/.config/fish/completions/mcpreel.fish",
))
@click.argument("shell", type=click.Choice(SHELLS))
@output.run_command
def completion_command(shell: str) -> None:
    """Print the completion script of SHELL: verbs, options, files, format names and help topics complete
    on Tab."""
    from click.shell_completion import get_completion_class

    from mcpreel.cli import cli

    cls = get_completion_class(shell)
    assert cls is not None  # the three shells click ships
    click.echo(cls(cli, {}, "mcpreel", "_MCPREEL_COMPLETE").source())
