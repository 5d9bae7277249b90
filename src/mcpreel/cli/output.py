"""Where the CLI's words go: data to stdout, diagnostics to stderr, errors to one line and an exit code."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import click

from mcpreel.errors import McpreelError

F = TypeVar("F", bound=Callable[..., Any])


def error(text: str) -> None:
    click.echo(f"error: {text}", err=True)


def warning(text: str) -> None:
    click.echo(f"warning: {text}", err=True)


def info(text: str) -> None:
    click.echo(text, err=True)


def run_command(fn: F) -> F:
    """The one exit path: a library error becomes ``error: <one line>`` and its exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except McpreelError as exc:
            error(str(exc))
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            error("interrupted")
            sys.exit(130)
        except BrokenPipeError:
            # stdout closed by a pager or `head`: nothing more to say to anyone
            with contextlib.suppress(OSError):
                sys.stdout = open(os.devnull, "w")  # noqa: SIM115
            sys.exit(0)

    return wrapper  # type: ignore[return-value]


@contextlib.contextmanager
def byte_progress(total: int, description: str) -> Iterator[Callable[[int], None] | None]:
    """A rich progress bar on stderr when it is a terminal and the job is big; else no callback."""
    if not sys.stderr.isatty() or total < (8 << 20):
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

    progress = Progress(
        "[progress.description]{task.description}", BarColumn(), DownloadColumn(), TransferSpeedColumn(),
        TimeRemainingColumn(), console=Console(stderr=True), transient=True,
    )
    with progress:
        task = progress.add_task(description, total=total)
        yield lambda done: progress.update(task, completed=done)
