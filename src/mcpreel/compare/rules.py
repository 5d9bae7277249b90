"""Rules people write about what a comparison leaves out: ignore a value, or mask part of a text.

A server's answer can hold what changes on every run (a time, an id, an object address) next to what
must not change. ``--ignore-path`` leaves a path out of every comparison; a rule says more:

- **where**: a JSONPath into the compared view (``$.result.content[0].text.datetime``; ``..`` descends to
  a member at any depth, ``[*]``/``.*`` are wildcards, ``[name=add]`` is the item of a list result named
  so -- the paths a difference row shows can be pasted as they are);
- **for which requests**: ``method`` and ``tool`` (the tool, prompt or resource URI the request names);
  ``*`` in either matches any run of characters (``tool: "git_*"``); absent = every request;
- **what**: without ``mask`` the whole value at the path is left out on both sides; with ``mask`` (a
  regular expression) only the parts of the strings at (or below) the path that it matches are replaced
  by ``<masked>`` on both sides before they are compared, so the rest of the text still counts.

JSON inside a text (a tool's JSON result in ``content[].text``, a resource's ``contents[].text``) is
compared as JSON, so a rule's path goes on inside it (:func:`mcpreel.compare.normalize.comparable`).

The rules file (``replay --compare-rules FILE``), YAML or JSON::

    version: 1            # optional; 1 is the only version
    rules:
      - path: "$.result.content[0].text"
        method: tools/call
        tool: get_current_time
        mask: '\\d{4}-\\d{2}-\\d{2}T[\\d:.]+(Z|[+-]\\d{2}:\\d{2})?'
      - path: "$..createdAt"      # ignored in every answer
        note: the server stamps its objects   # optional, for people

A bad file or entry is one :class:`~mcpreel.errors.InputError` line naming the file, the entry and the
rule it breaks. :func:`suggest` turns a difference that looks volatile (both sides a timestamp, a UUID,
a hex address or id, or texts that differ only in such tokens) into the rule that would absorb it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.jsonpath import PathSyntaxError, Step
from mcpreel.compare.jsondiff import Difference
from mcpreel.compare.normalize import MASK, delete_at, mask_at, view_steps
from mcpreel.errors import InputError, UsageError
from mcpreel.rules.load import read_document

__all__ = ["VOLATILE_TOKENS", "CompareRule", "CompareRules", "load_compare_rules", "parse_compare_rules", "suggest"]

#: the members an entry of the rules file may have
_FIELDS = ("path", "method", "tool", "mask", "note")
#: the versions of the rules file this mcpreel reads
_VERSIONS = (1,)


@dataclass(frozen=True)
class CompareRule:
    """One rule: leave the value at ``path`` out of a comparison (``mask`` None), or mask what the
    regular expression ``mask`` matches in its strings; only for ``method`` and ``tool`` when given.
    ``origin`` says where it came from, for messages (``rules.yaml entry 3``, ``noise.json``)."""

    path: str  # JSONPath, `$..` allowed
    method: str | None = None
    tool: str | None = None
    mask: str | None = None  # regex; None = ignore the whole value at path
    origin: str = ""

    def to_entry(self) -> dict[str, str]:
        """The rule as an entry of the rules file (what a suggestion prints)."""
        entry = {"method": self.method, "tool": self.tool, "path": self.path, "mask": self.mask}
        return {k: v for k, v in entry.items() if v is not None}

    def describe(self) -> str:
        """The entry as one line a person can paste under ``rules:`` (JSON is YAML too)."""
        members = ", ".join(f"{jsonio.dumps_str(k)}: {jsonio.dumps_str(v)}" for k, v in self.to_entry().items())
        return "- {" + members + "}"


@dataclass(frozen=True)
class _Compiled:
    rule: CompareRule
    steps: tuple[Step, ...]
    method: re.Pattern[str] | None
    tool: re.Pattern[str] | None
    mask: re.Pattern[str] | None

    def applies(self, method: str, tool: str | None) -> bool:
        if self.method is not None and not self.method.fullmatch(method):
            return False
        return self.tool is None or (tool is not None and self.tool.fullmatch(tool) is not None)


class _Bad(ValueError):
    """What is wrong with one rule (the loader adds the file and the entry)."""


def _glob(text: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in text.split("*")), re.DOTALL)


def _compile(rule: CompareRule) -> _Compiled:
    try:
        steps = view_steps(rule.path)
    except PathSyntaxError as exc:
        if not exc.rest:
            raise _Bad(f"path {rule.path!r}: {exc}") from None
        raise _Bad(f"path {rule.path!r}: cannot read the path at {exc.rest!r} "
                   "(write it like $.result.content[0].text.timestamp or $..timestamp)") from None
    mask = None
    if rule.mask is not None:
        if rule.mask == "":
            raise _Bad("mask is an empty pattern (leave mask out to ignore the whole value)")
        try:
            mask = re.compile(rule.mask)
        except (re.error, RecursionError, OverflowError) as exc:
            raise _Bad(f"mask {rule.mask!r} is not a regular expression: {exc}") from None
        if mask.fullmatch(""):
            raise _Bad(f"mask {rule.mask!r} matches the empty string (it would mask between every character)")
    return _Compiled(rule, steps, _glob(rule.method) if rule.method is not None else None,
                     _glob(rule.tool) if rule.tool is not None else None, mask)


class CompareRules:
    """Compiled, immutable rules; :meth:`apply` puts them on a compared view for one request."""

    __slots__ = ("_compiled",)

    def __init__(self, rules: Sequence[CompareRule]) -> None:
        compiled = []
        for rule in rules:
            try:
                compiled.append(_compile(rule))
            except _Bad as exc:
                where = f"{rule.origin}: " if rule.origin else ""
                raise UsageError(f"{where}{exc}") from None
        self._compiled: tuple[_Compiled, ...] = tuple(compiled)

    @classmethod
    def _of(cls, compiled: tuple[_Compiled, ...]) -> CompareRules:
        out = cls.__new__(cls)
        out._compiled = compiled
        return out

    @property
    def rules(self) -> tuple[CompareRule, ...]:
        """The rules, in the order they are applied."""
        return tuple(c.rule for c in self._compiled)

    def __iter__(self) -> Iterator[CompareRule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self._compiled)

    def __add__(self, other: CompareRules) -> CompareRules:
        return CompareRules._of(self._compiled + other._compiled)

    def __repr__(self) -> str:
        return f"CompareRules({list(self.rules)!r})"

    def apply(self, view: Any, method: str, tool: str | None) -> Any:
        """``view`` (a :func:`~mcpreel.compare.normalize.comparable` view) with the rules for ``method`` and
        ``tool`` applied, in order: a copy when any applies, ``view`` itself when none does."""
        chosen = [c for c in self._compiled if c.applies(method, tool)]
        if not chosen:
            return view
        view = copy.deepcopy(view)
        for c in chosen:
            if c.mask is None:
                delete_at(view, c.steps)
            else:
                mask_at(view, c.steps, c.mask, MASK)
        return view


# -- the rules file -------------------------------------------------------------------------------


def load_compare_rules(path: str | Path) -> CompareRules:
    """The rules in the file at ``path`` (YAML or JSON, see the module doc); one InputError line otherwise."""
    shown = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the rules file: {exc.strerror or exc}", path=shown) from None
    return parse_compare_rules(read_document(data, shown), source=shown)


def _line(text: str, width: int = 120) -> str:
    """``text`` as one printable line of at most ``width`` characters (values shown in messages)."""
    text = text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= width else text[: width - 1] + "…"


def _shown(value: Any) -> str:
    try:
        return _line(jsonio.dumps_str(value))
    except (TypeError, ValueError, RecursionError):
        return type(value).__name__


def parse_compare_rules(doc: Any, *, source: str = "rules") -> CompareRules:
    """Rules from an already-read document: ``{"version": 1, "rules": [...]}``."""
    if doc is None:
        raise InputError("the rules file is empty (write version: 1 and a rules: list)", path=source)
    if not isinstance(doc, dict):
        raise InputError(f"a rules file is a mapping with a rules: list, not {jsonio.type_name(doc)}", path=source)
    unknown = [k for k in doc if k not in ("version", "rules")]
    if unknown:
        raise InputError(f"unknown member {_shown(str(unknown[0]))} (a rules file has version and rules)",
                         path=source)
    version = doc.get("version", 1)
    if type(version) is not int or version not in _VERSIONS:
        raise InputError(f"version {_shown(version)} is not one this mcpreel reads (1)", path=source)
    entries = doc.get("rules")
    if not isinstance(entries, list):
        raise InputError(f"rules is a list of rules, not {jsonio.type_name(entries)}", path=source)
    rules: list[CompareRule] = []
    for i, raw in enumerate(entries, 1):
        origin = f"{source} entry {i}"
        try:
            rule = _entry(raw, origin)
            _compile(rule)
        except _Bad as exc:
            raise InputError(f"entry {i}: {_line(str(exc), 300)}", path=source) from None
        rules.append(rule)
    return CompareRules(rules)


def _entry(raw: Any, origin: str) -> CompareRule:
    if not isinstance(raw, dict):
        raise _Bad(f"a rule is a mapping with a path, not {jsonio.type_name(raw)}")
    for key in raw:
        if key not in _FIELDS:
            raise _Bad(f"unknown member {_shown(str(key))} (a rule has {', '.join(_FIELDS)})")
    if "path" not in raw:
        raise _Bad("a rule needs a path (a JSONPath like $.result.content[0].text or $..timestamp)")
    for key in ("path", "method", "tool", "mask", "note"):
        if key in raw and not isinstance(raw[key], str):
            raise _Bad(f"{key} is a string, not {_shown(raw[key])}")
    return CompareRule(raw["path"], raw.get("method"), raw.get("tool"), raw.get("mask"), origin)


# -- suggestions ----------------------------------------------------------------------------------

#: the tokens that vary from run to run, by name, most specific first (a mask joins those it needs)
VOLATILE_TOKENS: dict[str, str] = {
    "a UUID": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "a timestamp": (r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
                    r"|\b\d{4}-\d{2}-\d{2}\b"),
    "a time of day": r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?:\s?[AaPp]\.?[Mm]\.?)?",
    "a hex address": r"0x[0-9a-fA-F]{4,16}",
    "an epoch time": r"\b1\d{9}(?:\d{3}|\.\d+)?\b",
    "a hex id": r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{12,}\b",
}
_COMPILED_TOKENS = {name: re.compile(pattern) for name, pattern in VOLATILE_TOKENS.items()}


def _epoch(value: Any) -> bool:
    if type(value) not in (int, float):
        return False
    return 1e9 <= value < 1e10 or 1e12 <= value < 1e13


#: paths whose values look like timestamps but say something (``protocolVersion: "2025-11-25"``)
_NEVER_VOLATILE = (".protocolVersion", "['protocolVersion']")


def suggest(difference: Difference, method: str, tool: str | None) -> CompareRule | None:
    """The rule that would absorb ``difference`` when it looks volatile, else None.

    A changed string whose two sides are the same once timestamps (ISO 8601 / RFC 3339, epoch seconds or
    milliseconds), UUIDs, hex addresses (``0x7f...``) or hex ids are masked gets a rule masking exactly
    those kinds of token at its path, for its ``method`` and ``tool``; a changed number that is an epoch
    time on both sides gets a rule ignoring the path. ``origin`` names what was found (``a timestamp``).
    """
    if difference.kind != "changed" or difference.path.endswith(_NEVER_VOLATILE):
        return None  # a protocol version is dated, but a new one is a real change, never noise
    a, b = difference.recorded, difference.new
    if _epoch(a) and _epoch(b):
        return CompareRule(difference.path, method, tool, None, "an epoch time")
    if not isinstance(a, str) or not isinstance(b, str) or a == b:
        return None
    used = [name for name, pattern in _COMPILED_TOKENS.items() if pattern.search(a) or pattern.search(b)]
    if not used:
        return None
    # the fewest kinds of token that make the two sides equal, in the order above
    for n in range(1, len(used) + 1):
        for names in _combinations(used, n):
            pattern = re.compile("|".join(f"(?:{VOLATILE_TOKENS[x]})" for x in names))
            if pattern.sub(MASK, a) == pattern.sub(MASK, b):
                mask = VOLATILE_TOKENS[names[0]] if len(names) == 1 else pattern.pattern
                return CompareRule(difference.path, method, tool, mask, " and ".join(names))
    return None


def _combinations(items: list[str], n: int) -> Iterator[tuple[str, ...]]:
    from itertools import combinations

    return combinations(items, n)
