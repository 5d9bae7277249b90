"""The error tree. Every class carries the exit code the CLI maps it to.

    McpreelError                 exit 2  anything that stops a command from running
    ├── UsageError               exit 2  the call's words are off (unknown format, bad option mix)
    ├── InputError               exit 2  a file we were asked to read breaks a rule
    │   └── FormatError                  ... a rule of a session format (names file, line/entry, rule)
    ├── TransportError           exit 2  a peer could not be started or reached
    ├── ProblemsReported         exit 2  the command went on past inputs that broke a rule, each already said
    └── DifferenceFound          exit 1  a comparison found differences (replay, diff, check, audit, contract)

Foreign exceptions (orjson, OSError, ...) are mapped to these at the edge where they happen and
re-raised with ``from``, so the CLI has one exit path and the user one clear line. That path is
:func:`mcpreel.cli.output.run_command`: it alone ends the process, printing ``error: <the message>``
(nothing when the message is empty: the verb's own report already said it) and exiting with the class's
``exit_code``. The library raises these for what a user gave it (a bad option value, a file); a
``ValueError`` or ``TypeError`` from mcpreel means a programming error, not bad input.
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


class ProblemsReported(McpreelError):
    """Some inputs broke a rule and the command went on with the others (``wrap`` over several client
    configs): each problem was said on its own line as it was met, so this carries no message of its
    own unless given one. Exit 2, like any input error: the run was not clean."""

    def __init__(self, message: str = ""):
        super().__init__(message)


class ServerExited(McpreelError):
    """The server a recording proxy ran ended with a code the proxy passes on as its own (a transparent
    recorder exits as its server did: 128+N for signal N, 127 when it could not start). No message: the
    recording's summary already said what happened."""

    def __init__(self, code: int):
        super().__init__("")
        self.exit_code = code


class DifferenceFound(McpreelError):
    """A comparison found differences; not a failure to run (exit 1, which CI tells apart from 2).

    The message may be empty: a verb whose report already lists the differences (``diff``, ``replay``,
    ``check``) raises it bare, and the CLI adds no line. A verb without such a report says in the message
    what was found (``serve --on-miss fail``: how many requests were not in the recording)."""

    exit_code = 1

    def __init__(self, message: str = ""):
        super().__init__(message)
