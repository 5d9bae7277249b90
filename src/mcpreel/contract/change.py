"""One change between two contracts and the three classes it can fall in: the vocabulary the comparison
(:mod:`mcpreel.contract.compare`), the schema walk (:mod:`mcpreel.contract.schema`) and every report share.

A class says what the change does to a client that relied on the old contract: **breaking** (it can fail
now), **dangerous** (nothing fails, but what the model reads or may assume changed), **minor** (additions
and relaxations).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["BREAKING", "CLASSES", "DANGEROUS", "FAIL_ON", "MINOR", "RANK", "Change", "esc", "j", "same"]

BREAKING, DANGEROUS, MINOR = "breaking", "dangerous", "minor"
#: most severe first
CLASSES = (BREAKING, DANGEROUS, MINOR)
RANK = {c: i for i, c in enumerate(CLASSES)}
#: ``--fail-on`` -> the classes that fail
FAIL_ON = {"breaking": (BREAKING,), "dangerous": (BREAKING, DANGEROUS), "any": CLASSES}


@dataclass(frozen=True)
class Change:
    """One change: its class, a rule id, where it is (a JSON-pointer-like path), and the two values."""

    cls: str
    rule: str
    path: str
    message: str
    before: Any = None
    after: Any = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"class": self.cls, "rule": self.rule, "path": self.path, "message": self.message}
        if self.before is not None:
            out["before"] = self.before
        if self.after is not None:
            out["after"] = self.after
        return out


def j(value: Any) -> str:
    """A value as JSON text in a message (true, not True)."""
    return json.dumps(value, ensure_ascii=False, default=str)


def esc(name: str) -> str:
    """A member name as one JSON-pointer step."""
    return name.replace("~", "~0").replace("/", "~1")


def same(a: Any, b: Any) -> bool:
    """JSON equality: ``1`` and ``1.0`` are one number, but ``true`` is not ``1`` (Python's ``==`` says it is,
    so an enum of ``[1]`` changed to ``[true]`` would pass unseen). Iterative: a value may nest 1024 deep."""
    if a != b:
        return False  # Python's equality only merges more than JSON's
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, bool) or isinstance(y, bool):
            if type(x) is not type(y):
                return False
        elif isinstance(x, dict):
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            stack.extend(zip(x, y, strict=True))
    return True
