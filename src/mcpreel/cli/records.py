"""A command's many options handed to it as one typed record instead of a parameter each.

``serve`` takes twenty options; a function of twenty parameters is where a new option gets threaded
wrongly. :func:`options_record` turns the options click parses into one frozen dataclass the command
receives as a single argument, so the command's logic reads ``args.port`` and the record's fields say,
in one place, what the command takes. The click decorators stay what they are (names and help).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["options_record"]

F = TypeVar("F", bound=Callable[..., Any])


def options_record(record: type[Any], name: str = "args") -> Callable[[F], F]:
    """Collect the keyword arguments named like ``record``'s fields into one ``record`` passed as ``name``.

    Applied closest to the function (below the click decorators), so click sees the options it declares and
    the function sees the record. A field without an option is a programming error, caught at the first
    call (click passes every declared option, default or not)."""
    fields = [f.name for f in dataclasses.fields(record)]

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {field: kwargs.pop(field) for field in fields}
            kwargs[name] = record(**values)
            return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
