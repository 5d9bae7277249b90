"""Names a package exports but imports only on first use (PEP 562), one copy for every package that does.

``import mcpreel`` must cost no more than its version, so ``python -m mcpreel`` reaches its entry point
(and the early-signal latch) before any heavy module loads; ``mcpreel.clients`` keeps its HTTP stack out
of a stdio verb the same way.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: dict[str, Any], homes: Mapping[str, str],
                 names: Iterable[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose globals are ``package``: a name of ``homes``
    is imported from its module when first asked for, then kept among the globals."""
    listed = set(names)

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package['__name__']!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        package[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(set(package) | listed)

    return getattr_, dir_
