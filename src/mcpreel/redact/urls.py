"""Secret query parameters in URLs: ``?api_key=…``, ``&token=…`` and their kin.

A server URL often carries its key in the query (``https://host/mcp?api_key=…``). The recorders write
that URL in the session header, every request's ``path`` in the transport context, the envelope, the
qai session file and the messages on stderr; a HAR converted from the reel carries it on. By default
(no ``--keep-secrets``) each of those places gets :func:`redact_url`'s copy: the values of the secret
parameters become the marker, everything else (the other parameters, their order, the path) stays.

Which parameter names are secret: the key rule of :mod:`~mcpreel.redact.secrets` (``token``,
``access_token``, ``api_key``, ``apikey``, ``password``, ``secret``, ``auth``, ``client_secret``, …) plus
the names that only in a query say secret (``key``, ``sig``, ``signature``, ``X-Amz-Signature``) — the
names the ``url parameter`` value pattern redacts inside text.
"""

from __future__ import annotations

import re
from typing import Any

from mcpreel.redact.secrets import MARKER, is_secret_key, norm_key

__all__ = ["is_secret_param", "redact_url", "redact_urls_in", "redact_urls_in_value"]

#: names that are secrets as query parameters though not as JSON members (``key`` of a map is no secret)
_QUERY_EXACT = frozenset({"key", "sig", "signature"})
_QUERY_SUFFIXES = ("signature",)

#: one query parameter: the name up to ``=``, the value up to ``&``, ``#`` or the end of the URL
_PARAM = re.compile(r"(?P<lead>[?&;])(?P<name>[^=&#;\s]+)=(?P<value>[^&#;\s\"'<>]*)")
#: a URL inside free text (a warning, a 502 message)
_URL_IN_TEXT = re.compile(r"(?:https?://|/)[^\s\"'<>]*\?[^\s\"'<>]*")


def is_secret_param(name: str) -> bool:
    """True when a query parameter named ``name`` holds a secret (see the module docstring)."""
    from urllib.parse import unquote

    n = norm_key(unquote(name))
    return n in _QUERY_EXACT or is_secret_key(n) or n.endswith(_QUERY_SUFFIXES)


def redact_url(url: str, marker: str = MARKER) -> str:
    """``url`` (or a path with a query: ``/mcp?api_key=x``) with the secret parameters' values replaced.

    A URL without a query, or one whose query holds no secret, is returned as it came (the same object).
    The fragment is left alone: it is never sent to a server.
    """
    q = url.find("?")
    if q < 0:
        return url
    h = url.find("#", q)
    head, query, tail = url[:q], url[q:h] if h >= 0 else url[q:], url[h:] if h >= 0 else ""

    def repl(m: re.Match[str]) -> str:
        value = m.group("value")
        if not value or value == marker or not is_secret_param(m.group("name")):
            return m.group(0)
        return f"{m.group('lead')}{m.group('name')}={marker}"

    new = _PARAM.sub(repl, query)
    return url if new == query else head + new + tail


def redact_urls_in(text: str, marker: str = MARKER) -> str:
    """Free text (a warning, an error message) with every URL in it passed through :func:`redact_url`."""
    if "?" not in text:
        return text
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0), marker), text)


def redact_urls_in_value(value: Any, marker: str = MARKER) -> Any:
    """A JSON value (session metadata) with :func:`redact_urls_in` applied to every string in it; the
    value itself when nothing changed (copies only where something did).

    Iterative: metadata is another tool's, nested as deep as a reader accepts (a recursive walk met
    Python's recursion limit at about 500 levels, far short of the readers' 1024).
    """
    if isinstance(value, str):
        return redact_urls_in(value, marker)
    if not isinstance(value, (dict, list)):
        return value
    # a frame: the container, its (key, child) pairs, the next pair to look at, the children that changed
    stack: list[tuple[Any, list[tuple[Any, Any]], list[int], dict[Any, Any]]] = [(value, _pairs(value), [0], {})]
    result: Any = value
    while stack:
        node, pairs, at, changed = stack[-1]
        if at[0] < len(pairs):
            key, child = pairs[at[0]]
            at[0] += 1
            if isinstance(child, str):
                new = redact_urls_in(child, marker)
                if new is not child:
                    changed[key] = new
            elif isinstance(child, (dict, list)) and child:
                stack.append((child, _pairs(child), [0], {}))
            continue
        stack.pop()
        rebuilt = node
        if changed:
            rebuilt = dict(node) if isinstance(node, dict) else list(node)
            for key, new in changed.items():
                rebuilt[key] = new
        if not stack:
            result = rebuilt
        elif rebuilt is not node:
            parent_pairs, parent_at, parent_changed = stack[-1][1], stack[-1][2], stack[-1][3]
            parent_changed[parent_pairs[parent_at[0] - 1][0]] = rebuilt
    return result


def _pairs(node: dict[Any, Any] | list[Any]) -> list[tuple[Any, Any]]:
    return list(node.items()) if isinstance(node, dict) else list(enumerate(node))


def not_a_url(url: str) -> str:
    """The one wording of a URL mcpreel cannot use (``record --target-url``, ``check``, ``replay``, the
    OTLP endpoint): what was given (its secret query parameters redacted) and what is expected."""
    return f"{redact_url(str(url))!r} is not an http:// or https:// URL with a host (such as http://127.0.0.1:8000/mcp)"
