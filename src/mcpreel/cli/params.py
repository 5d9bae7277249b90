"""Click parameter types shared by the commands: format names validated at the edge."""

from __future__ import annotations

from typing import Any

import click

from mcpreel.errors import UsageError
from mcpreel.formats import canonical_name


class FormatName(click.ParamType):
    """A session format name or alias (``auto`` allowed when ``allow_auto``), made canonical."""

    name = "format"

    def __init__(self, allow_auto: bool = True, writable: bool = False):
        self.allow_auto = allow_auto
        self.writable = writable

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        if self.allow_auto and str(value).lower() == "auto":
            return "auto"
        try:
            return canonical_name(str(value))
        except UsageError as exc:
            self.fail(str(exc), param, ctx)

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        """The format names that start with what is typed (writable ones only where a format is written)."""
        from click.shell_completion import CompletionItem

        from mcpreel.formats.table import reader_names, writer_names

        writes = self.writable or param.name == "to"  # convert/merge/redact --to: a format written
        names = (writer_names() if writes else reader_names()) + (["auto"] if self.allow_auto else [])
        return [CompletionItem(n) for n in sorted(set(names)) if n.startswith(incomplete)]


FORMAT_AUTO = FormatName()


class SessionFile(click.Path):
    """A session file argument: a folder given instead is refused with what to do with a folder of
    sessions (index it, then report on or search the index), not only "is a directory"."""

    def __init__(self) -> None:
        super().__init__(dir_okay=False)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        import os
        import shlex

        if isinstance(value, (str, os.PathLike)) and os.path.isdir(value):
            shown = shlex.quote(os.fspath(value))
            self.fail(f"{os.fspath(value)} is a folder, not a session file. For every session in it: "
                      f"mcpreel index {shown}, then mcpreel report --db ~/.mcpreel/corpus.duckdb (one page) or "
                      f"mcpreel calls --failed (the failed calls)", param, ctx)
        return super().convert(value, param, ctx)


#: the SESSION argument of the verbs that read one session file
SESSION_FILE = SessionFile()
