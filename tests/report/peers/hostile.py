"""Session text that tries to run script in a page, and its harmless twin.

Every string field of the hostile recordings is ``hostile(tag)``: it breaks out of an attribute
(``"'>``), out of a ``<script>`` block (``</script><script>``), and carries an ``<img onerror>`` and an
``<svg onload>``. Whatever of it runs appends ``tag`` to ``window.__pwned`` and sets the page's title to
``PWNED``, so a test sees that script ran and which field carried it. ``plain(tag)`` is the same field
as harmless text: the same recording built from it is the page's own element census to compare with.
File names cannot hold ``/``: ``hostile_name`` is the payload without its ``</script>``.
"""

from __future__ import annotations

PWNED_TITLE = "PWNED"


def _run(tag: str) -> str:
    return f"window.__pwned=(window.__pwned||[]).concat('{tag}');document.title='{PWNED_TITLE}'"


def hostile(tag: str) -> str:
    run = _run(tag)
    return (f"{tag} \"'><img src=x onerror=\"{run}\"></script><script>{run}</script>"
            f"<svg onload=\"{run}\"></svg><iframe srcdoc=\"<script>{run}</script>\"></iframe>")


def hostile_name(tag: str) -> str:
    return f"{tag} \"'><img src=x onerror=\"{_run(tag)}\">"


def plain(tag: str) -> str:
    return f"plain {tag}"
