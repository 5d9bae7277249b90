"""The audit's rules are data: ``rules.json`` ships with mcpreel, and users add or replace rules with
their own file of the same shape (``mcpreel audit --rules FILE``).

A rule names a *kind* (the check that runs it) and that kind's parameters:

- ``pattern``: ``patterns`` (regexes, matched case-insensitively) against the texts named by ``targets``:
  ``tool.description``, ``tool.parameter.description``, ``prompt.description``, ``resource.description``,
  ``tool.result`` (text content and structured content of ``tools/call`` answers), ``tool.arguments``;
- ``secret``: the redaction patterns and secret key names (:mod:`mcpreel.redact`) against ``targets``
  (``exclude_patterns``: pattern names left out; ``require_digit``: the secret part must hold a digit);
- ``definition-drift``: a tool listed twice in one session with two definitions;
- ``duplicate-tool``: two tools with one name, or names equal once case and ``-``/``_``/``.`` are ignored;
- ``destructive-unannotated``: a tool whose name matches ``name_patterns`` and has no readOnlyHint or
  destructiveHint.

A user rule with an id that already exists replaces it; ``"enabled": false`` turns a rule off.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from mcpreel._infra import jsonio
from mcpreel.errors import InputError

__all__ = ["KINDS", "LEVELS", "TARGETS", "AuditRule", "builtin_rules", "load_rules", "merge_rules"]

KINDS = ("pattern", "secret", "definition-drift", "duplicate-tool", "destructive-unannotated")
LEVELS = ("error", "warning", "note")
TARGETS = ("tool.description", "tool.parameter.description", "prompt.description", "resource.description",
           "tool.result", "tool.arguments")
RULES_VERSION = 1


@dataclass
class AuditRule:
    id: str
    name: str
    kind: str
    level: str
    message: str
    targets: tuple[str, ...] = ()
    patterns: list[re.Pattern[str]] = field(default_factory=list)
    name_patterns: list[re.Pattern[str]] = field(default_factory=list)
    enabled: bool = True
    exclude: tuple[str, ...] = ()  # secret: redaction pattern names left out
    require_digit: bool = False  # secret: a match counts only if the secret part holds a digit


def _rule(raw: Any, where: str) -> AuditRule:
    if not isinstance(raw, dict):
        raise InputError(f"{where}: a rule must be an object")
    rid = raw.get("id")
    if not isinstance(rid, str) or not rid:
        raise InputError(f"{where}: a rule needs an \"id\"")
    where = f"{where} ({rid})"
    kind = raw.get("kind")
    if kind not in KINDS:
        raise InputError(f"{where}: \"kind\" must be one of {', '.join(KINDS)}")
    level = raw.get("level", "warning")
    if level not in LEVELS:
        raise InputError(f"{where}: \"level\" must be one of {', '.join(LEVELS)}")
    targets = tuple(raw.get("targets") or ())
    bad = [t for t in targets if t not in TARGETS]
    if bad:
        raise InputError(f"{where}: unknown target {bad[0]!r} (known: {', '.join(TARGETS)})")
    if kind in ("pattern", "secret") and not targets:
        raise InputError(f"{where}: a {kind} rule needs \"targets\"")

    def compiled(key: str) -> list[re.Pattern[str]]:
        out = []
        for text in raw.get(key) or []:
            try:
                out.append(re.compile(text, re.IGNORECASE if key == "patterns" else 0))
            except (re.error, TypeError) as exc:
                raise InputError(f"{where}: {key}: bad regex {text!r}: {exc}") from exc
        return out

    patterns, name_patterns = compiled("patterns"), compiled("name_patterns")
    if kind == "pattern" and not patterns:
        raise InputError(f"{where}: a pattern rule needs \"patterns\"")
    if kind == "destructive-unannotated" and not name_patterns:
        raise InputError(f"{where}: needs \"name_patterns\"")
    return AuditRule(rid, str(raw.get("name") or rid), kind, level, str(raw.get("message") or raw.get("name") or rid),
                targets, patterns, name_patterns, bool(raw.get("enabled", True)),
                tuple(raw.get("exclude_patterns") or ()), bool(raw.get("require_digit", False)))


def _parse(doc: Any, source: str) -> list[AuditRule]:
    if not isinstance(doc, dict) or doc.get("mcpreel_audit_rules") != RULES_VERSION or not isinstance(doc.get("rules"), list):
        raise InputError(f"not an audit rules file (expected \"mcpreel_audit_rules\": {RULES_VERSION} and \"rules\": [...])",
                         path=source)
    try:
        return [_rule(r, f"rule {i + 1}") for i, r in enumerate(doc["rules"])]
    except InputError as exc:
        raise InputError(exc.rule, path=source) from exc


def builtin_rules() -> list[AuditRule]:
    """The rules shipped with mcpreel (``audit/rules.json``), parsed with the same checks as a user's file."""
    text = resources.files("mcpreel.audit").joinpath("rules.json").read_bytes()
    return _parse(jsonio.loads(text), "mcpreel/audit/rules.json")


def load_rules(path: str | Path) -> list[AuditRule]:
    """A user's rules file; a file that cannot be read or breaks a rule is an input error naming it."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=str(path)) from exc
    try:
        doc = jsonio.loads(data)
    except ValueError as exc:
        raise InputError(f"not JSON: {jsonio.error_reason(exc)}", path=str(path)) from exc
    return _parse(doc, str(path))


def merge_rules(base: list[AuditRule], extra: list[AuditRule], disabled: tuple[str, ...] = ()) -> list[AuditRule]:
    """``extra`` replaces rules of the same id and adds the rest; ``disabled`` ids are dropped."""
    out = {r.id: r for r in base}
    for r in extra:
        out[r.id] = r
    return [r for r in out.values() if r.enabled and r.id not in disabled]
