"""``--max-body``, ``--max-header`` and ``--header-timeout``: the limits of every HTTP listener mcpreel runs.

``record`` (HTTP transports), ``proxy start``, ``serve`` and ``demo-server`` take the same three options
(why the defaults are what they are: :mod:`mcpreel.serving.limits`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import click

from mcpreel.serving.limits import DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_BODY, DEFAULT_MAX_HEADER, Limits

__all__ = ["LIMIT_FLAGS", "SIZE", "limit_options", "limits_of"]

#: option name -> its flag (for "applies to HTTP transports only")
LIMIT_FLAGS = {"max_body": "--max-body", "max_header": "--max-header", "header_timeout": "--header-timeout"}
_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]?)(i?b)?\s*$", re.IGNORECASE)
_SHIFT = {"": 0, "k": 10, "m": 20, "g": 30}


class Size(click.ParamType):
    """A size in bytes: ``65536``, ``64K``, ``32M``, ``32MiB``, ``1G`` (binary multiples), at least 1."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        m = _SIZE.match(str(value))
        if m is None or int(m.group(1)) < 1:
            self.fail(f"{value!r} is not a size (bytes, or with K, M or G: 64K, 32M)", param, ctx)
        return int(m.group(1)) << _SHIFT[m.group(2).lower()]


SIZE = Size()


def _shown(n: int) -> str:
    """A default as the user would write it (``32M``), so ``--help`` shows it that way."""
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def limit_options(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The three options; ``what`` starts their help (``"HTTP transports: "`` or ``""``)."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed([
            click.option("--max-body", type=SIZE, default=_shown(DEFAULT_MAX_BODY), show_default=True, metavar="SIZE",
                         help=f"{what}the largest request body the listener takes (more: 413)."),
            click.option("--max-header", type=SIZE, default=_shown(DEFAULT_MAX_HEADER), show_default=True, metavar="SIZE",
                         help=f"{what}the largest request head (request line and headers; more: 431)."),
            click.option("--header-timeout", type=click.FloatRange(min=0.01), default=DEFAULT_HEADER_TIMEOUT,
                         show_default=True, metavar="SECONDS",
                         help=f"{what}how long a client may take to send a request's head (then 408)."),
        ]):
            fn = option(fn)
        return fn

    return decorate


def limits_of(max_body: int, max_header: int, header_timeout: float) -> Limits:
    """The three options as the one record every listener takes."""
    return Limits(max_body=max_body, max_header=max_header, header_timeout=header_timeout)
