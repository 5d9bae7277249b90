"""Lists compared by meaning: the items of a list result are a set keyed by what names them.

``tools/list`` and ``prompts/list`` name their items by ``name``, ``resources/list`` by ``uri``,
``resources/templates/list`` by ``uriTemplate``; a server that returns the same tools in another order
has not changed, and one that adds a tool has changed by one tool, not by every position after it. So a
list that sits directly in a result (``$.result.tools``, ``$.result.resources``, ... and any other
``$.result.<member>`` whose items all carry a distinct string ``name``, ``uri`` or ``uriTemplate``) is
compared item by item *by key*: an item only one side has is ``added`` or ``removed`` (the words of
``mcpreel diff`` and ``contract``), a kept item is compared member by member, and the order is no
difference.

An item is named in a path by its key, ``$.result.tools[name=add].description``,
``$.result.resources[uri="test://static/resource/1"]`` (quoted when the value holds anything but letters,
digits and ``_-.:/@+~``); :mod:`mcpreel._infra.jsonpath` reads that step back, so the path a difference
shows can be pasted into ``--ignore-path`` or a rules file (``[*]`` addresses every item).
"""

from __future__ import annotations

import re
from typing import Any

from mcpreel._infra import jsonio

__all__ = ["KEYS", "collection_key", "item_path"]

#: the member that names an item of each list result the protocol defines
KEYS = {"tools": "name", "prompts": "name", "resources": "uri", "resourceTemplates": "uriTemplate"}
#: what names the items of any other list result, tried in this order
_FALLBACK = ("name", "uri", "uriTemplate")
_LIST_RESULT = re.compile(r"^\$\.result\.([A-Za-z_][\w-]*)$")
_BARE = re.compile(r"^[\w.:/@+~-]+$")


def collection_key(path: str, recorded: list[Any], new: list[Any]) -> str | None:
    """The member two lists at ``path`` are keyed by when they are compared as sets, or None (compared
    by position): only lists directly in a result, whose items on both sides are objects that each carry
    a distinct string under that member."""
    m = _LIST_RESULT.match(path)
    if m is None:
        return None
    member = m.group(1)
    for key in ((KEYS[member],) if member in KEYS else _FALLBACK):
        if _named_by(recorded, key) and _named_by(new, key):
            return key
    return None


def _named_by(items: list[Any], key: str) -> bool:
    seen: set[str] = set()
    for item in items:
        if not isinstance(item, dict):
            return False
        value = item.get(key)
        if not isinstance(value, str) or value in seen:
            return False
        seen.add(value)
    return True


def item_path(parent: str, key: str, value: str) -> str:
    """The path of the item of the list at ``parent`` whose ``key`` is ``value``: ``$.result.tools[name=add]``."""
    shown = value if _BARE.match(value) else jsonio.dumps_str(value)
    return f"{parent}[{key}={shown}]"
