"""``--listen HOST:PORT``: where a listener mcpreel runs binds, said one way on every verb.

``record`` (HTTP transports) always took ``--listen``; ``serve`` and ``demo-server`` took ``--host`` and
``--port``. They take ``--listen`` now too (``HOST:PORT``, ``:PORT`` or ``PORT``; the host defaults to
127.0.0.1), and ``--host``/``--port`` still parse, hidden, so no script breaks: given with ``--listen``
they replace its part (``--host 0.0.0.0`` keeps the port).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

__all__ = ["ListenAddress", "listen_options"]


class ListenAddress(click.ParamType):
    """``HOST:PORT``, ``[::1]:PORT``, ``:PORT`` or ``PORT`` -> ``(host, port)``; a bad one is a usage error
    (one line, exit 2) naming the option."""

    name = "address"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[str, int]:
        if isinstance(value, tuple):
            return value
        from mcpreel.errors import UsageError
        from mcpreel.serving.listen import parse_listen

        try:
            return parse_listen(str(value))
        except UsageError as exc:
            self.fail(str(exc).removeprefix("--listen must be "), param, ctx)


def listen_options(default_port: int, what: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--listen`` shown, ``--host`` and ``--port`` hidden; the command gets ``host`` and ``port`` as before.
    ``what`` starts the help (``"HTTP: "``)."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, listen: tuple[str, int], host: str | None, port: int | None, **kwargs: Any) -> Any:
            return fn(*args, host=listen[0] if host is None else host, port=listen[1] if port is None else port,
                      **kwargs)

        for option in reversed([
            click.option("--listen", type=ListenAddress(), default=f"127.0.0.1:{default_port}", show_default=True,
                         metavar="HOST:PORT",
                         help=f"{what}the address and port to listen on (PORT alone: on 127.0.0.1; 0 picks a free "
                              f"port)."),
            click.option("--host", default=None, hidden=True),
            click.option("--port", type=click.IntRange(0, 65535), default=None, hidden=True),
        ]):
            wrapper = option(wrapper)
        return wrapper

    return decorate
