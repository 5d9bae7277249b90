"""The ``mcpreel`` command's entry point: ``mcpreel`` (the installed script) and ``python -m mcpreel``.

Only here, never on ``import mcpreel``, does mcpreel touch process-wide state before the command runs:
the early-signal latch (:mod:`mcpreel._infra.signals`: ``record``/``proxy`` keep a stop signal that comes
while they start), stdio as bytes (:func:`mcpreel._infra.platform.binary_stdio`), and the sink of the
one-line notes a missing platform feature gets (stderr). The CLI is imported after the latch is in place.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing is not imported before the latch
if TYPE_CHECKING:
    from typing import Any


def main(argv: Any = None) -> None:
    from mcpreel._infra import platform, signals

    signals.install_for_cli(sys.argv if argv is None else ["mcpreel", *argv])
    platform.binary_stdio()
    platform.set_notice_sink(_to_stderr)
    from mcpreel.cli import main as cli_main

    cli_main(argv)


def _to_stderr(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


if __name__ == "__main__":
    main()
