"""The user's redaction rules (``--rules FILE``): more key names, more regexes, JSONPath rules.

:func:`load_rules` reads and checks the file (every error names the member at fault);
:class:`Rules` is what a :class:`~mcpreel.redact.engine.Redactor` applies (``Rules()``: the defaults).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.jsonpath import JsonPath
from mcpreel.errors import InputError
from mcpreel.redact.secrets import DEFAULT_PATTERNS, MARKER, Pattern, norm_key

__all__ = ["PathRule", "Rules", "load_rules", "rules_from_dict"]


@dataclass(frozen=True)
class PathRule:
    """A JSONPath whose values are replaced whole, or (with ``regex``) only where the regex matches."""

    name: str
    path: JsonPath | None
    regex: re.Pattern[str] | None = None


@dataclass
class Rules:
    """What a :class:`Redactor` redacts. ``Rules()`` is the default set."""

    defaults: bool = True
    marker: str = MARKER
    keys: frozenset[str] = frozenset()  # extra key names (normalized)
    patterns: tuple[Pattern, ...] = ()  # extra value patterns
    paths: tuple[PathRule, ...] = ()  # the user's JSONPath rules (applied to JSON-RPC messages)
    #: the HMAC key of keyed markers (``[REDACTED:rule:1a2b3c4d]``, :mod:`mcpreel.redact.keys`); None: the
    #: plain ``marker`` for every secret
    key: bytes | None = None

    @property
    def all_patterns(self) -> tuple[Pattern, ...]:
        """The value patterns in effect: the defaults (unless turned off) and then the file's own."""
        return (DEFAULT_PATTERNS if self.defaults else ()) + self.patterns


_RULE_MEMBERS = ("defaults", "marker", "keys", "patterns", "paths", "rules")


def _compile(regex: Any, where: str, path: str) -> re.Pattern[str]:
    if not isinstance(regex, str) or not regex:
        raise InputError(f"{where}: a regex must be a non-empty string", path=path)
    try:
        return re.compile(regex)
    except re.error as exc:
        raise InputError(f"{where}: invalid regex {regex!r}: {exc}", path=path) from exc


def _jsonpath(text: Any, where: str, path: str) -> JsonPath:
    if not isinstance(text, str):
        raise InputError(f"{where}: a path must be a JSONPath string like $.params.arguments.token", path=path)
    try:
        return JsonPath(text)
    except ValueError as exc:
        raise InputError(f"{where}: invalid JSONPath {text!r}: {exc}", path=path) from exc


def rules_from_dict(doc: Any, path: str = "<rules>") -> Rules:
    """Rules from a parsed rules document (see :func:`load_rules`)."""
    if not isinstance(doc, dict):
        raise InputError("the rules file must hold one JSON object", path=path)
    unknown = sorted(k for k in doc if k not in _RULE_MEMBERS)
    if unknown:
        raise InputError(f"unknown member {unknown[0]!r} (known: {', '.join(_RULE_MEMBERS)})", path=path)
    defaults = doc.get("defaults", True)
    if not isinstance(defaults, bool):
        raise InputError("defaults must be true or false", path=path)
    marker = doc.get("marker", MARKER)
    if not isinstance(marker, str) or not marker:
        raise InputError("marker must be a non-empty string", path=path)
    keys = doc.get("keys", [])
    if not isinstance(keys, list) or not all(isinstance(k, str) and k for k in keys):
        raise InputError("keys must be an array of member names", path=path)
    patterns = doc.get("patterns", [])
    if not isinstance(patterns, list):
        raise InputError("patterns must be an array of regexes", path=path)
    compiled = tuple(Pattern(f"pattern {i + 1}", _compile(p, f"patterns[{i}]", path)) for i, p in enumerate(patterns))
    paths: list[PathRule] = []
    plain = doc.get("paths", [])
    if not isinstance(plain, list):
        raise InputError("paths must be an array of JSONPath strings", path=path)
    for i, p in enumerate(plain):
        paths.append(PathRule(f"path {p}", _jsonpath(p, f"paths[{i}]", path)))
    rules = doc.get("rules", [])
    if not isinstance(rules, list):
        raise InputError("rules must be an array of {path, regex} objects", path=path)
    for i, r in enumerate(rules):
        where = f"rules[{i}]"
        if not isinstance(r, dict) or not r or any(k not in ("path", "regex") for k in r):
            raise InputError(f"{where} must be an object with path and/or regex", path=path)
        jp = _jsonpath(r["path"], where, path) if "path" in r else None
        rx = _compile(r["regex"], where, path) if "regex" in r else None
        paths.append(PathRule(f"rule {i + 1}", jp, rx))
    return Rules(defaults, marker, frozenset(norm_key(k) for k in keys), compiled, tuple(paths))


def load_rules(path: str | Path) -> Rules:
    r"""Read a rules file: one JSON object, every member optional (plain JSON, no comments)::

        {
          "defaults": true,
          "marker": "[REDACTED]",
          "keys": ["ssn", "customer_id"],
          "patterns": ["cust_[0-9]{6}"],
          "paths": ["$.params.arguments.email", "$..patient"],
          "rules": [{"path": "$.result.content[*].text", "regex": "\\d{3}-\\d{2}-\\d{4}"}]
        }

    ``defaults`` keeps the built-in keys and patterns (``false``: only yours); ``keys`` are more secret
    member names; ``patterns`` more regexes matched in every string; ``paths`` JSONPath expressions
    (relative to each JSON-RPC message) whose values are replaced whole; ``rules`` a path and a regex:
    only the matches inside the strings at that path are replaced (a rule without a path: everywhere).
    An unknown member, a bad regex or a bad path is an error naming it.
    """
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the rules file: {exc.strerror or exc}", path=name) from exc
    try:
        doc = jsonio.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        where = f" on line {line}" if line else ""
        raise InputError(f"invalid JSON{where}: {jsonio.error_reason(exc)}", path=name, line=line) from exc
    return rules_from_dict(doc, name)

