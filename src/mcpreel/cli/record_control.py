"""The control channel of ``mcpreel record`` / ``proxy start`` (both transports): ``--intercept``,
``--intercept-timeout``, ``--no-control``, and the socket's one line on stderr.

Every recording runs a :class:`~mcpreel.control.server.ControlServer` (a viewer — ``mcpreel tui`` — can
attach at any time) unless ``--no-control``; it is an addon of the recording and its interceptor. A runtime
directory that cannot be used costs a warning and the recording goes on without it, except when
``--intercept`` asked for holding: holding with no way to decide would stall the client, so that is an error.
"""

from __future__ import annotations

from typing import Any

from mcpreel.cli import output
from mcpreel.errors import McpreelError, UsageError

__all__ = ["say", "start_control"]


def start_control(*, transport: str, reel: Any, intercept: str | None, intercept_timeout: float | None,
                  no_control: bool, quiet: bool, announce: bool = True) -> Any:
    """The started control server of this recording (None with ``--no-control`` or when it cannot start).

    ``announce``: say where it is now (else the caller calls :func:`announce` once it is sure to run: the
    HTTP recorder, after its port is bound, so a taken port stays a one-line error)."""
    if no_control:
        if intercept is not None:
            raise UsageError("--intercept needs the control channel: drop --no-control")
        if intercept_timeout is not None:
            raise UsageError("--intercept-timeout needs the control channel: drop --no-control")
        return None
    if intercept_timeout is not None and intercept is None:
        raise UsageError("--intercept-timeout applies with --intercept")
    from mcpreel.control.filters import FilterError, parse

    if intercept is not None:
        try:
            parse(intercept)
        except FilterError as exc:
            raise UsageError(f"--intercept: {exc}") from exc
    from mcpreel.control.server import ControlServer

    server = ControlServer(transport=transport, reel=reel, intercept=intercept, timeout=intercept_timeout,
                           note=lambda text: output.info(f"mcpreel: {text}"))
    try:
        path = server.start()
    except (McpreelError, OSError) as exc:
        why = str(exc) if isinstance(exc, McpreelError) else f"cannot open the control socket: {exc.strerror or exc}"
        if intercept is not None:
            raise UsageError(f"{why} (--intercept needs the control channel)") from exc
        output.warning(f"{why}; recording without a control channel")
        return None
    del path
    if announce and not quiet:
        say(server)
    return server


def say(server: Any) -> None:
    """The control socket's line on stderr (and what is held, with ``--intercept``)."""
    output.info(f"mcpreel: control: {server.socket_path} (mcpreel tui attaches)")
    if server.filter_text is not None:
        output.info(f"mcpreel: intercept: holding {server.filter_text}"
                    + (f" (forwarded unchanged after {server.timeout:g}s)" if server.timeout is not None else ""))
