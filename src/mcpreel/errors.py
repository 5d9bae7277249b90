"""The error tree. Every class carries the exit code the CLI maps it to.

    McpreelError                 exit 2  anything that stops a command from running
    ├── UsageError               exit 2  the call's words are off (unknown format, bad option mix)
    ├── InputError               exit 2  a file we were asked to read breaks a rule
    │   └── FormatError                  ... a rule of a session format (names file, line/entry, rule)
    ├── TransportError           exit 2  a peer could not be started or reached
    └── DifferenceFound          exit 1  a comparison found differences (replay, diff, check)

Foreign exceptions (orjson, OSError, ...) are mapped to these at the edge where they happen and
re-raised with ``from``, so the CLI has one exit path and the user one clear line.
"""

from __future__ import annotations


class McpreelError(Exception):
    """Base of every error mcpreel raises on purpose."""

    exit_code = 2


class UsageError(McpreelError):
    """The command was called in a way that cannot work (unknown format name, missing option)."""


class InputError(McpreelError):
    """An input file cannot be read or breaks a rule.

    ``str(err)`` is the one line the user sees: ``<file>: <where>: <rule>``.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None):
        self.path = path
        self.line = line
        self.rule = message
        super().__init__(f"{path}: {message}" if path else message)


class FormatError(InputError):
    """The input is JSON but not the session format it claims or was taken to be."""


class TransportError(McpreelError):
    """A peer (server command or URL) could not be started or reached."""


class DifferenceFound(McpreelError):
    """A comparison found differences; not a failure to run."""

    exit_code = 1
