"""The control channel of ``mcpreel record`` / ``proxy start`` (both transports): ``--intercept``,
``--intercept-timeout``, ``--no-control``, and the socket's one line on stderr.

Every recording runs a :class:`~mcpreel.control.server.ControlServer` (a viewer — ``mcpreel tui`` — can
attach at any time) unless ``--no-control``; it is an addon of the recording and its interceptor, made
where every addon is made (:func:`mcpreel.record.addons.default_addons`): a runtime directory that cannot
be used costs a warning and the recording goes on without it, except when ``--intercept`` asked for
holding: holding with no way to decide would stall the client, so that is an error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpreel.cli import output
from mcpreel.errors import UsageError

if TYPE_CHECKING:
    from mcpreel.record.options import ControlOptions

__all__ = ["control_options", "say"]


def control_options(intercept: str | None, intercept_timeout: float | None, no_control: bool) -> ControlOptions | None:
    """The control channel the words ask for (None with ``--no-control``), refused in one line when they do
    not go together. The server itself is started by the recording
    (:func:`mcpreel.record.addons.default_addons`)."""
    if no_control:
        if intercept is not None:
            raise UsageError("--intercept needs the control channel: drop --no-control")
        if intercept_timeout is not None:
            raise UsageError("--intercept-timeout needs the control channel: drop --no-control")
        return None
    if intercept_timeout is not None and intercept is None:
        raise UsageError("--intercept-timeout applies with --intercept")
    if intercept is not None:
        from mcpreel.control.filters import FilterError, parse

        try:
            parse(intercept)
        except FilterError as exc:
            raise UsageError(f"--intercept: {exc}") from exc
    from mcpreel.record.options import ControlOptions

    return ControlOptions(intercept, intercept_timeout)


def say(server: Any) -> None:
    """The control socket's line on stderr (and what is held, with ``--intercept``)."""
    output.info(f"mcpreel: control: {server.socket_path} (mcpreel tui attaches)")
    if server.filter_text is not None:
        output.info(f"mcpreel: intercept: holding {server.filter_text}"
                    + (f" (forwarded unchanged after {server.timeout:g}s)" if server.timeout is not None else ""))
