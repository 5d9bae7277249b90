"""What a check report may quote of a server: secrets and environment dumps are redacted.

A report quotes what was sent and what came back, and reports are pasted into CI logs and issues. Some
tools answer with what must not travel that way: server-everything's ``get-env`` returns the server's
whole environment, other tools echo tokens. Every text of every result passes through
:func:`redact_report` before the report is returned, so the text, JSON and JUnit forms all quote the
redacted text.

Two rules apply: the project's secret patterns (:class:`mcpreel.redact.Redactor`: tokens, keys,
``NAME_TOKEN=…``, credentials in URLs), and environment dumps — a text that holds several members or
``NAME=value`` lines named like environment variables, among them one every environment has (``PATH``,
``HOME``, …), has the value of each such member replaced by the marker; the value of a member named like
one of those is replaced wherever it stands. The texts are excerpts of JSON
(quotes may come escaped, the last value may be cut short), so the dump rule works on text, not on
parsed JSON.
"""

from __future__ import annotations

import re

from mcpreel.check.result import CheckReport
from mcpreel.redact import MARKER, Redactor

__all__ = ["redact_report", "redact_text"]

#: names every process environment has: a dump holds at least one of them
_ENV_ANCHORS = frozenset({"PATH", "HOME", "USER", "SHELL", "PWD", "LANG", "TERM", "HOSTNAME", "LOGNAME",
                          "TMPDIR", "OLDPWD", "SHLVL"})
#: how many env-named values (one of them an anchor) make a text a dump: a cut excerpt may show only two
_DUMP_SIZE = 2
#: names shaped like environment variables: ``PATH``, ``NODE_OPTIONS``, ``npm_config_cache``
_ENV_NAME = r"(?:[A-Z][A-Z0-9_]*|[a-z][a-z0-9]*_[a-z0-9_]+)"
#: a JSON member ``"NAME": "value"``, its quotes escaped any number of times (a JSON string inside a JSON
#: body); the value runs to its closing quote, or to the end of a text cut short
_MEMBER = re.compile(r'(?P<q>\\*")(?P<name>' + _ENV_NAME + r')(?P=q)\s*:\s*(?P=q)'
                     r'(?P<value>(?:(?!(?P=q)).)*?)(?=(?P=q)|…?$)', re.DOTALL)
#: a ``NAME=value`` line (``env`` output), the line ending as a newline or an escaped one
_ASSIGNMENT = re.compile(r'(?:^|(?<=\n)|(?<=\\n)|(?<=\\r)|(?<=[\s"]))(?P<name>' + _ENV_NAME + r')='
                         r'(?P<value>(?:(?!\\n|\\r|\\"|\n|").)*)')


def _redact_dump(text: str, pattern: re.Pattern[str]) -> tuple[str, int]:
    """``text`` with the values ``pattern`` finds replaced, when they make an environment dump."""
    found = list(pattern.finditer(text))
    names = {m.group("name") for m in found}
    if len(names) < _DUMP_SIZE or not names & _ENV_ANCHORS:
        found = [m for m in found if m.group("name") in _ENV_ANCHORS]  # a cut dump may show one name only
    spans = [m.span("value") for m in found if m.group("value") and m.group("value") != MARKER]
    for start, end in reversed(spans):
        text = text[:start] + MARKER + text[end:]
    return text, len(spans)


def redact_text(text: str, redactor: Redactor) -> tuple[str, int]:
    """``text`` with environment dumps and secret patterns replaced by the marker, and how many."""
    total = 0
    for pattern in (_MEMBER, _ASSIGNMENT):
        text, n = _redact_dump(text, pattern)
        total += n
    before = redactor.total
    text = redactor.text(text)
    return text, total + redactor.total - before


def redact_report(report: CheckReport) -> int:
    """Redact every quoted text of ``report``'s results in place; the number of values replaced."""
    redactor = Redactor()
    total = 0

    def clean(text: str) -> str:
        nonlocal total
        text, n = redact_text(text, redactor)
        total += n
        return text

    for r in report.results:
        r.summary = clean(r.summary)
        r.sent = None if r.sent is None else clean(r.sent)
        r.received = None if r.received is None else clean(r.received)
        r.details = [clean(d) for d in r.details]
    return total
