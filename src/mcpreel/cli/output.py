"""Where the CLI's words go: data to stdout, diagnostics to stderr, errors to one line and an exit code.

The library never prints: it returns reports, and :mod:`mcpreel.render` turns a report into renderables,
lines or documents. This module owns the streams: the console they are printed on (:func:`console`,
:func:`show`) and the files they are saved to (:func:`save`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

import click

from mcpreel.errors import DifferenceFound, McpreelError, ProblemsReported, UsageError
from mcpreel.render.terminal_safe import terminal_safe

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

F = TypeVar("F", bound=Callable[..., Any])


def error(text: str) -> None:
    """Say an error on stderr, one line (the exit path adds the exit code); control characters from the
    data it names (a tool's name, a server's message) escaped (:func:`~mcpreel.render.terminal_safe`)."""
    click.echo(f"error: {terminal_safe(text)}", err=True)


def warning(text: str) -> None:
    """Say a warning on stderr: something the user should know that did not stop the command."""
    click.echo(f"warning: {terminal_safe(text)}", err=True)


def other_loggers(verbose: bool) -> None:
    """Whether other libraries' log lines reach stderr (``mcpreel -v``): by default they do not.

    mcpreel's own lines are written by this module; what uvicorn (``Invalid HTTP request received.``), the
    OpenTelemetry SDK (its export retries) and other libraries log would otherwise reach stderr through
    :data:`logging.lastResort` and bury the one line mcpreel says about the same thing. A handler on the
    root logger -- a null one, or with ``verbose`` one writing ``name: level: message`` to stderr -- keeps
    the last resort out. Handlers added later (the TUI's) still get every record.
    """
    import logging

    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == "mcpreel-other-loggers"]:
        root.removeHandler(old)
    handler: logging.Handler
    if verbose:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(name)s: %(levelname)s: %(message)s"))
    else:
        handler = logging.NullHandler()
    handler.set_name("mcpreel-other-loggers")
    root.addHandler(handler)


def warn_exposed(host: str, reached: str) -> None:
    """The one warning of a listener bound beyond loopback (record, serve, demo-server), said before it
    binds: ``listening on HOST: <reached>``, where ``reached`` says what others can get at through it."""
    from mcpreel.serving.origin import is_loopback

    if not is_loopback(host):
        warning(f"listening on {host}: {reached}")


def printable(text: str) -> str:
    """``text`` as a terminal line can hold it: a lone surrogate (JSON allows ``"\\udc00"``, UTF-8 cannot
    encode it) escaped as ``\\udc00`` instead of ending the verb in a ``UnicodeEncodeError``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def info(text: str) -> None:
    """Say something on stderr (stdout stays for the command's data), control characters escaped."""
    click.echo(terminal_safe(text), err=True)


def echo(text: str) -> None:
    """A line of a verb's data on stdout, control characters escaped (session data on a terminal)."""
    click.echo(terminal_safe(text))


def terminal_console(**options: Any) -> Console:
    """A rich console (``options`` as :class:`rich.console.Console` takes them) that escapes the control
    characters of every text it prints (:func:`~mcpreel.render.terminal_safe`) while its own styles
    still colour it: renderables hold session data (a tool's name, an error), never rich markup, and a
    terminal must not obey the escape sequences in them."""
    from rich.console import Console
    from rich.segment import Segment

    class _SafeConsole(Console):
        def _render_buffer(self, buffer: Iterable[Segment]) -> str:
            return super()._render_buffer(
                Segment(terminal_safe(seg.text), seg.style, seg.control) if not seg.control else seg
                for seg in buffer)

    return _SafeConsole(**options)


#: the width of a console that is not a terminal: wide enough that no line is ever broken (CI logs are
#: grepped, a pasted line stays one line); tables still take only the width their cells need
PIPED_WIDTH = 100_000


def console(stream: Any = None) -> Console:
    """A console on ``stream`` (stdout): the terminal's width, or plain lines never broken when piped."""
    file = stream or sys.stdout
    width = None if getattr(file, "isatty", lambda: False)() else PIPED_WIDTH
    return terminal_console(file=file, highlight=False, soft_wrap=False, width=width)


def show(items: Iterable[RenderableType], on: Console | None = None) -> None:
    """Print a report's renderables, one after the other, on ``on`` (default: :func:`console`)."""
    out = on or console()
    for item in items:
        out.print(item)


def save(path: str, write: Callable[[BinaryIO], object]) -> None:
    """Write an output file atomically (mode 0600); a path that cannot be written is one clear error."""
    from mcpreel._infra.fileio import atomic_output

    try:
        with atomic_output(path) as fh:
            write(fh)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror or exc}") from exc


def save_text(path: str, text: str) -> None:
    """:func:`save` a document (a report as JSON, JUnit XML or lines), UTF-8."""
    save(path, lambda fh: fh.write(text.encode("utf-8")))


def run_command(fn: F) -> F:
    """The one exit path: a library error becomes ``error: <one line>`` and its exit code.

    Verbs never exit themselves: a difference found is ``raise DifferenceFound()`` (exit 1), bad input
    any other :class:`~mcpreel.errors.McpreelError` (exit 2), and a verb whose outcome is a number
    (a report's ``exit_code``) hands it to :func:`finish`. An error with an empty message adds no line
    (the verb's report already said what happened)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except McpreelError as exc:
            if str(exc):
                error(str(exc))
            sys.exit(exc.exit_code)
        except ImportError as exc:
            said = missing_sdk(exc)
            if said is None:
                raise
            error(said)
            sys.exit(2)
        except KeyboardInterrupt:
            error("interrupted")
            sys.exit(130)
        except BrokenPipeError:
            # stdout closed by a pager or `head`: nothing more to say to anyone
            with contextlib.suppress(OSError):
                sys.stdout = open(os.devnull, "w")
            sys.exit(0)

    return wrapper  # type: ignore[return-value]


#: the modules of the official MCP Python SDK (and what it brings) that only the demo server, the corpus' MCP
#: server and the pytest plugin's ``stdio_parameters`` use: the core installs and runs without them
SDK_MODULES = frozenset({"mcp", "mcp_types", "pydantic", "pydantic_core", "sse_starlette"})


def missing_sdk(exc: ImportError) -> str | None:
    """The one line for a verb that needs the MCP Python SDK when it is absent, or too old (1.x has no
    ``mcp.server.MCPServer``); None for any other import error (a bug: its traceback is wanted)."""
    name = (exc.name or "").split(".")[0]
    if name not in SDK_MODULES:
        return None
    from importlib import metadata

    try:
        found = f"mcp {metadata.version('mcp')} is installed"
    except metadata.PackageNotFoundError:
        found = "it is not installed"
    return (f"this needs the official MCP Python SDK 2.x ({found}): pip install 'mcpreel[sdk]' "
            f"(recording, inspecting, converting, replaying and serving sessions do not)")


def finish(code: int | None) -> None:
    """End a verb whose outcome is an exit code (a report's ``exit_code``) through the one exit path:
    0 (or None) returns, 1 raises :class:`~mcpreel.errors.DifferenceFound`, anything else
    :class:`~mcpreel.errors.ProblemsReported`. Nothing more is printed: the verb has said it already."""
    if not code:
        return
    if code == 1:
        raise DifferenceFound()
    raise ProblemsReported()


#: young objects allocated between two garbage collections while a batch verb runs (Python's default: 700)
GC_YOUNG = 10_000


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect cyclic garbage less often while a batch verb (inspect, convert, import, merge, redact, diff)
    reads a session: each record makes a few objects, none of them in a cycle, and the default collection
    every 700 allocations costs a tenth of the run. What is alive before (the modules imported) is frozen
    out of the collections; all is restored after (the commands also run inside tests)."""
    import gc

    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(GC_YOUNG, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def _progress_min_bytes() -> int:
    """Files smaller than this (8 MiB) read in well under a second: no bar. ``MCPREEL_PROGRESS_MIN_BYTES``
    sets another size (0: a bar for every file on a terminal; the tests use it)."""
    try:
        return int(os.environ.get("MCPREEL_PROGRESS_MIN_BYTES", 8 << 20))
    except ValueError:
        return 8 << 20


def progress_bar(*columns: Any) -> Any:
    """The one progress bar of every verb (a rich ``Progress``, not started): its description and bar, then
    ``columns``, on stderr, gone when done; what the verb prints to stdout goes above the bar when stdout is
    the same terminal, and straight to stdout when it is a file or a pipe (rich would otherwise send it to
    the bar's console, stderr). Callers draw it only when stderr is a terminal."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress

    return Progress("[progress.description]{task.description}", BarColumn(), *columns, console=Console(stderr=True),
                    transient=True, redirect_stdout=sys.stdout.isatty())


def byte_columns() -> tuple[Any, ...]:
    """The columns of a bar over bytes read: done of total, speed, time left."""
    from rich.progress import DownloadColumn, TimeRemainingColumn, TransferSpeedColumn

    return DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn()


@contextlib.contextmanager
def byte_progress(total: int, description: str) -> Iterator[Callable[[int], None] | None]:
    """A rich progress bar on stderr when it is a terminal and the job is big; else no callback.

    What the command prints to stdout meanwhile goes above the bar when stdout is the same terminal,
    and straight to stdout when it is a file or a pipe (rich would otherwise send it to the bar's
    console, stderr). A reader that reads its file again calls back from 0 again: the bar follows.
    """
    if not sys.stderr.isatty() or total < _progress_min_bytes():
        yield None
        return
    progress = progress_bar(*byte_columns())
    with progress:
        task = progress.add_task(description, total=total)
        yield lambda done: progress.update(task, completed=done)


def file_size(*paths: str) -> int:
    """The bytes of ``paths`` together (0 for one that cannot be read: its reader says why)."""
    total = 0
    for path in paths:
        with contextlib.suppress(OSError):
            total += os.path.getsize(path)
    return total
