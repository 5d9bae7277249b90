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


FORMAT_AUTO = FormatName()
