"""One name per concept on the command line, the other spellings kept as hidden aliases.

Every verb names the same thing the same way: the live server is ``--target-url URL`` or
``--target-command "CMD ARGS"``, the file a verb writes is ``-o/--output``, an HTTP header is
``-H/--header``, the protocol era is ``--era``, where a listener binds ``--listen HOST:PORT``. Older spellings (``record --target``, ``check --command``,
``contract --url``, ``--out``, ``--out-trace``) still parse, so no script breaks, but ``--help`` shows only
the one name: :class:`AliasedOption` keeps them out of the help page and out of error messages.

:data:`CONCEPTS` is the table a test walks every verb's options against (``tests/cli/test_vocabulary.py``):
a visible option spelled like a known synonym fails it, so a new verb cannot bring back a second name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import click

__all__ = ["CONCEPTS", "SPELLED_BY_OTHERS", "AliasedOption", "Concept", "hidden"]


class AliasedOption(click.Option):
    """A click option with hidden second names: they parse like the shown ones, and only the shown ones
    appear in ``--help`` and in error messages ("Missing option '--output'")."""

    def __init__(self, param_decls: Sequence[str] | None = None, *, aliases: Sequence[str] = (), **attrs: Any):
        self.aliases = tuple(aliases)
        super().__init__([*(param_decls or ()), *self.aliases], **attrs)

    def _shown(self) -> list[str]:
        return [o for o in self.opts if o not in self.aliases]

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        opts, self.opts = self.opts, self._shown()
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = opts

    def get_error_hint(self, ctx: click.Context | None) -> str:
        return " / ".join(f"'{x}'" for x in self._shown() or [self.human_readable_name])


def hidden(*aliases: str) -> dict[str, Any]:
    """``click.option("-o", "--output", "out", **hidden("--out"), ...)``: the option's hidden old names."""
    return {"cls": AliasedOption, "aliases": aliases}


@dataclass(frozen=True)
class Concept:
    """One thing the command line names: its one spelling, its short form and the spellings that must stay hidden."""

    what: str
    name: str
    short: str | None = None
    synonyms: tuple[str, ...] = ()
    metavar: str | None = None  # how its value is shown, the same on every verb (None: as the verb says)


#: concept -> the one name (and the spellings a verb may accept only as a hidden alias)
CONCEPTS: tuple[Concept, ...] = (
    Concept("the live server's URL", "--target-url",
            synonyms=("--target", "--url", "--server-url", "--server", "--endpoint-url"), metavar="URL"),
    Concept("the live server's command", "--target-command",
            synonyms=("--command", "--cmd", "--server-command", "--exec"), metavar='"CMD ARGS"'),
    Concept("the file (or folder) a verb writes", "--output", "-o",
            synonyms=("--out", "--out-file", "--output-file", "--outfile", "--out-trace", "--output-path")),
    Concept("an HTTP header sent to the server", "--header", "-H", synonyms=("--headers", "--http-header"),
            metavar="'NAME: VALUE'"),
    Concept("the protocol era", "--era", synonyms=("--protocol-era", "--mode", "--protocol")),
    Concept("where a listener binds", "--listen", synonyms=("--host", "--port", "--bind", "--address"),
            metavar="HOST:PORT"),
    Concept("a session file named by an option (qai's words)", "--session-file",
            synonyms=("--session-path", "--reel", "--recording", "--in")),
)

#: (command path, option) -> why it keeps another tool's spelling (the seeds' surfaces, verbatim)
SPELLED_BY_OTHERS: dict[tuple[str, str], str] = {
    ("trace import-mcp", "--input"): "assay's `trace import-mcp --input` (seed 000)",
}
