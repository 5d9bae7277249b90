"""The shell the HTML pages share (``report``, ``diff --html``, ``replay --html``, the fleet and corpus
pages): one ``<head>`` and a template from ``assets/`` filled in once, and the Content-Security-Policy that lets only the page's own script and
stylesheet run.

Why hashes rather than ``'unsafe-inline'``: a page shows what a recorded session said, and a session is
untrusted text. Everything from it is escaped where it is written, but with ``'unsafe-inline'`` one missed
escape is enough for a crafted recording to run script in the page of whoever opens it. Here the policy
names the SHA-256 of the exact ``<script>`` and ``<style>`` text the page carries, computed when the page
is written, so a ``<script>`` or an ``onerror=`` that got into the page anyway is refused by the browser.
Nothing is fetched at all (``default-src 'none'``), ``<base>`` and form posts are off, and the page's script
may not hand a string to an HTML sink (``require-trusted-types-for 'script'``: it builds nodes and sets
``textContent``, so an ``innerHTML`` slipped into it throws rather than parsing session text as markup).

A hash and not a nonce: the page is a file written once and opened many times, so a nonce would be a
constant anyone could read in the file; the hash says exactly which script may run.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping
from html import escape
from importlib import resources
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._version import __version__

__all__ = ["asset", "content_security_policy", "fill", "script_json", "source_hash"]

_PLACEHOLDER = re.compile(r"@([A-Z_]+)@")


def asset(name: str) -> str:
    """A file of ``assets/`` as text (the templates, the stylesheet, the scripts)."""
    return resources.files("mcpreel.report").joinpath("assets", name).read_text(encoding="utf-8")


def script_json(doc: Any) -> str:
    """``doc`` as JSON to put inside a ``<script type="application/json">`` block.

    Every ``<`` is written ``\\u003c`` (the same string to ``JSON.parse``), so nothing in a message can
    close the block (``</script>``) or open the parser's script-data escape states (``<!--``).
    """
    return jsonio.dumps(doc).decode("utf-8").replace("<", "\\u003c")


def source_hash(text: str) -> str:
    """The CSP source that allows exactly the inline element whose text is ``text``: ``'sha256-…'``."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def content_security_policy(script: str | None, style: str) -> str:
    """The page's policy: nothing fetched, only this script (``None``: a page with no script runs none)
    and this stylesheet, no HTML sinks."""
    scripts = source_hash(script) if script is not None else "'none'"
    return "; ".join([
        "default-src 'none'",
        f"script-src {scripts}",
        f"style-src {source_hash(style)}",
        "base-uri 'none'",
        "form-action 'none'",
        "require-trusted-types-for 'script'",
        "trusted-types 'none'",
    ])


def fill(template: str, parts: Mapping[str, str]) -> str:
    """The page: the ``<head>`` every page shares (``assets/head.html``: its policy, the stylesheet
    ``report.css``, the generator and ``parts["TITLE"]``) and then ``assets/<template>``, with each
    ``@NAME@`` replaced by ``parts[NAME]``, and ``@CSP@`` by the policy that allows ``parts["JS"]`` and the
    stylesheet, the texts the page's ``<script>`` and ``<style>`` hold (a page without ``JS`` runs no
    script at all). One head, so every page carries the same policy, style and meta.

    Each placeholder is replaced once, in one pass over the page: a value is never read again for
    placeholders, so session text that looks like ``@JS@`` stays text.
    """
    values = dict(parts, CSS=asset("report.css"), GENERATOR=escape(f"mcpreel {__version__}"))
    values["CSP"] = content_security_policy(values.get("JS"), values["CSS"])
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], asset("head.html") + asset(template))
