"""Reading a rules file (``--rules rules.json|yaml``): a list of rules, checked whole before anything runs.

A file is a list of rules, or a mapping with a ``rules`` list (room for settings later). A rule::

    - name: search-fails            # optional; default "rule-N" (N from 1)
      match:                        # every key given must hold (AND); a list of values is OR
        direction: client_to_server # or server_to_client; c2s/s2c (and out/in) as in the filter tokens
        kind: request               # request | response | notification
        method: tools/call          # a response is matched by the request it answers
        tool: search                # params.name of a tools/call (a response: its request's)
        id: 7
        path: $.params.arguments.q  # a JSONPath (mcpreel's one dialect) that must point at something
        equals: "boom"              # ... and, with ``equals``, at this value
        filter: "status:error"      # the filter tokens of --intercept and the viewer (mcpreel.control.filters)
      error: {code: -32000, message: "search is down"}
      times: 1                      # act on the first N matches only (then the rule is spent)
      after: 2                      # let the first N matches pass untouched

The action is one of ``rewrite`` (``{merge: PATCH}`` a JSON merge patch, RFC 7396, and/or ``{set:
{PATH: VALUE}}``), ``drop`` (``true``, or ``{error: {...}}`` to answer a dropped request), ``timeout``
(drop, never answer: the client's own timeout is what is tested), ``error`` (answer the sender with this
JSON-RPC error instead of passing the message on), ``malformed`` (``true``: the message cut in half;
or the text to send), ``close`` / ``disconnect`` (end the connection); ``delay: SECONDS`` alone or before
any of them. Deterministic on purpose: no probabilities, so a test that injects a fault sees it every run.

Every problem is one :class:`~mcpreel.errors.InputError` naming the file, the rule (index and name) and
what is wrong, before any message is touched.
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.jsonpath import JsonPath, PathSyntaxError
from mcpreel.errors import InputError

__all__ = ["ACTIONS", "Action", "Match", "Rule", "load_rules", "parse_rules", "read_document"]

#: the actions a rule can take (besides ``delay``, which may come before any of them)
ACTIONS = ("rewrite", "drop", "timeout", "error", "malformed", "close", "disconnect")
DIRECTIONS = {"client_to_server": "client_to_server", "c2s": "client_to_server", "out": "client_to_server",
              "server_to_client": "server_to_client", "s2c": "server_to_client", "in": "server_to_client"}
KINDS = ("request", "response", "notification")
_MATCH_KEYS = ("direction", "kind", "method", "tool", "id", "path", "equals", "filter")
_RULE_KEYS = frozenset({"name", "match", "delay", "times", "after", *ACTIONS})
UNSET = object()


@dataclass(frozen=True)
class Match:
    """What a rule acts on; an unset field matches anything. Tuples are OR'ed values."""

    directions: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    ids: tuple[Any, ...] = ()
    path: JsonPath | None = None
    equals: Any = UNSET
    filter: Any = None  # a mcpreel.control.filters.Filter

    def wants_request(self) -> bool:
        """Whether matching a response needs the request it answers (method or tool is asked)."""
        return bool(self.methods or self.tools)


@dataclass(frozen=True)
class Action:
    """What a rule does: ``kind`` is one of :data:`ACTIONS` or ``delay`` (pass on, later)."""

    kind: str
    delay: float = 0.0
    merge: Any = UNSET
    sets: tuple[tuple[JsonPath, Any], ...] = ()
    error: dict[str, Any] | None = None
    text: str | None = None  # malformed: what to send (None: the message cut in half)


@dataclass
class Rule:
    """One rule of a file: ``index`` counts from 1, as the error messages do."""

    index: int
    name: str
    match: Match
    action: Action
    times: int | None = None
    after: int = 0
    matched: int = field(default=0, compare=False)

    @property
    def label(self) -> str:
        """How errors and events name the rule: its position and its name."""
        return f"rule {self.index} ({_named(self.name)})"


class _Bad(Exception):
    pass


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60


def _shown(value: Any) -> str:
    """``repr(value)`` cut short: a rule's wrong value may be a whole document, the message is one line."""
    return _REPR.repr(value)


def _one_line(text: str) -> str:
    """``text`` with every character a line cannot show (a newline, a control character) escaped."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _named(name: str) -> str:
    """A rule's name as a one-line message can hold it: as written when printable, else escaped (a newline
    or a control character in a name broke the one-line error; found by the hostile-rules fuzz family)."""
    return name if name.isprintable() else _shown(name)


def load_rules(path: str | Path) -> list[Rule]:
    """The rules in ``path`` (JSON, or YAML read with the safe loader), checked; InputError otherwise."""
    shown = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the rules file: {exc.strerror or exc}", path=shown) from None
    doc = read_document(data, shown)
    odd = _not_json(doc)  # a YAML date or a set: JSON never holds one
    if odd is not None:
        raise InputError(f"a value JSON cannot hold ({odd}): rules are JSON, written in YAML", path=shown)
    return parse_rules(doc, source=shown)


def read_document(data: bytes, shown: str) -> Any:
    """A rules document: JSON when it opens like JSON, else YAML read with the safe loader and measured
    before it is built (:mod:`mcpreel._infra.yamlload`: nested aliases would make every later walk endless);
    one InputError line naming ``shown`` otherwise. Every rules file mcpreel reads (``--rules``,
    ``--compare-rules``) comes through here."""
    if data.lstrip()[:1] in (b"[", b"{"):
        try:
            return jsonio.loads(data)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            reason = jsonio.error_reason(exc) if not isinstance(exc, RecursionError) else "nested too deeply"
            raise InputError(f"not JSON: {reason}", path=shown) from None
    return _load_yaml(data, shown)


def _load_yaml(data: bytes, shown: str) -> Any:
    """The YAML document, read with the safe loader and measured before it is built
    (:mod:`mcpreel._infra.yamlload`): nested aliases would make every later walk endless (a value's
    ``repr`` in a message, the reel's JSON of a rule's error data)."""
    import yaml

    from mcpreel._infra import yamlload

    try:
        doc = yamlload.load(data, getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yamlload.YamlLimitError as exc:
        raise InputError(f"{f'line {exc.line}: ' if exc.line else ''}not read: {exc}", path=shown) from None
    except RecursionError:
        raise InputError("not YAML: nested too deeply", path=shown) from None
    except Exception as exc:  # yaml.YAMLError and its marks, a file that is not UTF-8
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
        raise InputError(f"{where}not YAML: {_one_line(str(problem))[:120]}", path=shown) from None
    return doc



_JSON_SCALARS = (str, int, float, bool, type(None))


def _not_json(doc: Any) -> str | None:
    """The type of the first value in a YAML document that JSON cannot hold (``!!binary`` bytes, a date,
    a set, a key that is not a string), or None: a rule's values end up in JSON-RPC messages and in the
    reel (found by the hostile-rules fuzz family: a ``!!binary`` error data). Walked without recursion;
    the loader has already bounded the depth and the size."""
    stack = [doc]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    return f"a key of type {type(key).__name__}"
                stack.append(item)
        elif isinstance(value, list):
            stack.extend(value)
        elif not isinstance(value, _JSON_SCALARS):
            return type(value).__name__
    return None


def parse_rules(doc: Any, *, source: str = "rules") -> list[Rule]:
    """Rules from an already-read document (a list, or ``{"rules": [...]}``); the pytest marker's way."""
    if isinstance(doc, dict) and set(doc) == {"rules"}:
        doc = doc["rules"]
    if not isinstance(doc, list):
        raise InputError("a rules file is a list of rules (or {rules: [...]}), not "
                         f"{jsonio.type_name(doc)}", path=source)
    rules: list[Rule] = []
    names: set[str] = set()
    for i, raw in enumerate(doc, 1):
        name = raw.get("name") if isinstance(raw, dict) else None
        label = f"rule {i}" + (f" ({_named(name)})" if isinstance(name, str) else "")
        try:
            rule = _rule(i, raw)
        except _Bad as exc:  # what it quotes of the file escaped: the error stays one line
            raise InputError(f"{label}: {_one_line(str(exc))}", path=source) from None
        if rule.name in names:
            raise InputError(f"{label}: a second rule named {rule.name!r} (names tell the reel who decided)",
                             path=source)
        names.add(rule.name)
        rules.append(rule)
    return rules


#: how deep a rule may nest (its ``equals``, ``merge``, ``set`` values, its error's data) and how many steps its
#: paths may take: hand-written rules need far fewer, and the engine compares, merges and follows them
#: recursively, so this keeps every walk it makes far from Python's recursion limit
RULE_DEPTH = 256


def _depth(value: Any) -> int:
    """How deep ``value`` nests (a scalar: 0), walked without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        elif not isinstance(node, list):
            continue
        deepest = max(deepest, depth)
        if depth <= RULE_DEPTH + 1:  # deeper than that is refused anyway: no need to go on
            stack.extend((v, depth + 1) for v in node)
    return deepest


def _rule(index: int, raw: Any) -> Rule:
    if not isinstance(raw, dict):
        raise _Bad(f"a rule is a mapping, not {jsonio.type_name(raw)}")
    if _depth(raw) > RULE_DEPTH:
        raise _Bad(f"nested deeper than {RULE_DEPTH} levels (a rule's values are compared and merged recursively)")
    unknown = sorted(set(map(str, raw)) - _RULE_KEYS)
    if unknown:
        raise _Bad(f"unknown key(s) {', '.join(map(_named, unknown))} (known: {', '.join(sorted(_RULE_KEYS))})")
    name = raw.get("name", f"rule-{index}")
    if not isinstance(name, str) or not name.strip():
        raise _Bad("name must be a non-empty string")
    match = _match(raw.get("match", {}))
    action = _action(raw)
    times = _count(raw, "times", minimum=1)
    after = _count(raw, "after", minimum=0) or 0
    return Rule(index, name.strip(), match, action, times, after)


def _count(raw: dict[str, Any], key: str, *, minimum: int) -> int | None:
    if key not in raw:
        return None
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _Bad(f"{key} must be a whole number >= {minimum}, not {_shown(value)}")
    return value


def _values(raw: Any, key: str) -> tuple[Any, ...]:
    values = tuple(raw) if isinstance(raw, list) else (raw,)
    if not values:
        raise _Bad(f"match.{key} is an empty list (it would match nothing)")
    return values


def _strings(raw: Any, key: str) -> tuple[str, ...]:
    values = _values(raw, key)
    for v in values:
        if not isinstance(v, str) or not v:
            raise _Bad(f"match.{key} takes a string or a list of strings, not {_shown(v)}")
    return values


def _match(raw: Any) -> Match:
    if not isinstance(raw, dict):
        raise _Bad(f"match is a mapping, not {jsonio.type_name(raw)}")
    unknown = sorted(set(map(str, raw)) - set(_MATCH_KEYS))
    if unknown:
        raise _Bad(f"unknown match key(s) {', '.join(map(_named, unknown))} (known: {', '.join(_MATCH_KEYS)})")
    directions: tuple[str, ...] = ()
    if "direction" in raw:
        given = _strings(raw["direction"], "direction")
        bad = [d for d in given if d not in DIRECTIONS]
        if bad:
            raise _Bad(f"match.direction {_shown(bad[0])} is not one of {', '.join(DIRECTIONS)}")
        directions = tuple(DIRECTIONS[d] for d in given)
    kinds = _strings(raw["kind"], "kind") if "kind" in raw else ()
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise _Bad(f"match.kind {_shown(bad[0])} is not one of {', '.join(KINDS)}")
    ids = _values(raw["id"], "id") if "id" in raw else ()
    for v in ids:
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise _Bad(f"match.id is a JSON-RPC id (a string or a number), not {_shown(v)}")
    path = None
    if "path" in raw:
        path = _path(raw["path"], "match.path")
    elif "equals" in raw:
        raise _Bad("match.equals compares what match.path points at: give match.path")
    tokens = None
    if "filter" in raw:
        from mcpreel.control.filters import FilterError, parse

        if not isinstance(raw["filter"], str):
            raise _Bad(f"match.filter is a string of filter tokens, not {_shown(raw['filter'])}")
        try:
            tokens = parse(raw["filter"])
        except FilterError as exc:
            raise _Bad(f"match.filter: {exc}") from None
    return Match(directions, kinds, _strings(raw["method"], "method") if "method" in raw else (),
                 _strings(raw["tool"], "tool") if "tool" in raw else (), ids, path,
                 raw.get("equals", UNSET), tokens)


def _path(text: Any, where: str) -> JsonPath:
    if not isinstance(text, str):
        raise _Bad(f"{where} is a JSONPath string, not {_shown(text)}")
    try:
        path = JsonPath(text)
    except PathSyntaxError as exc:
        raise _Bad(f"{where} {_shown(text)}: {exc}") from None
    if len(path.steps) > RULE_DEPTH:
        raise _Bad(f"{where} takes {len(path.steps)} steps (at most {RULE_DEPTH})")
    return path


def _error(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise _Bad(f"{where} is a JSON-RPC error {{code, message[, data]}}, not {_shown(raw)}")
    unknown = sorted(set(map(str, raw)) - {"code", "message", "data"})
    if unknown:
        raise _Bad(f"{where}: unknown key(s) {', '.join(map(_named, unknown))} (known: code, message, data)")
    code = raw.get("code", -32000)
    if isinstance(code, bool) or not isinstance(code, int):
        raise _Bad(f"{where}.code must be an integer, not {_shown(code)}")
    message = raw.get("message")
    if not isinstance(message, str):
        raise _Bad(f"{where}.message must be a string, not {_shown(message)}")
    return {"code": code, "message": message, **({"data": raw["data"]} if "data" in raw else {})}


def _action(raw: dict[str, Any]) -> Action:
    given = [a for a in ACTIONS if a in raw]
    delay = 0.0
    if "delay" in raw:
        value = raw["delay"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 3600:
            raise _Bad(f"delay is seconds between 0 and 3600, not {_shown(value)}")
        delay = float(value)
    if len(given) > 1:
        raise _Bad(f"one action per rule, not {' and '.join(given)} (delay may come before any)")
    if not given:
        if "delay" not in raw:
            raise _Bad(f"no action: give one of {', '.join(ACTIONS)} or delay")
        return Action("delay", delay)
    kind = given[0]
    value = raw[kind]
    if kind == "rewrite":
        if not isinstance(value, dict) or not value or set(value) - {"merge", "set"}:
            raise _Bad("rewrite is {merge: PATCH} and/or {set: {JSONPATH: VALUE}}")
        sets: list[tuple[JsonPath, Any]] = []
        if "set" in value:
            if not isinstance(value["set"], dict) or not value["set"]:
                raise _Bad("rewrite.set maps JSONPaths to the values to put there")
            sets = [(_path(p, "rewrite.set path"), v) for p, v in value["set"].items()]
        if "merge" in value and not isinstance(value["merge"], dict):
            raise _Bad("rewrite.merge is a JSON merge patch: a mapping")
        return Action(kind, delay, merge=value.get("merge", UNSET), sets=tuple(sets))
    if kind == "error":
        return Action(kind, delay, error=_error(value, "error"))
    if kind == "drop":
        if value is True:
            return Action(kind, delay)
        if isinstance(value, dict) and set(value) == {"error"}:
            return Action(kind, delay, error=_error(value["error"], "drop.error"))
        raise _Bad("drop is true, or {error: {code, message}} to answer a dropped request")
    if kind == "malformed":
        if value is True:
            return Action(kind, delay)
        if isinstance(value, str) and value and "\n" not in value:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise _Bad("malformed text holds a lone surrogate: it cannot be sent as UTF-8") from None
            return Action(kind, delay, text=value)
        raise _Bad("malformed is true (the message cut in half) or the one line of text to send")
    if value is not True:  # timeout, close, disconnect
        raise _Bad(f"{kind} takes true, not {_shown(value)}")
    return Action("close" if kind == "disconnect" else kind, delay)
