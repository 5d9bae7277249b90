"""What a change to a JSON Schema does to the values it admits, and so to the callers of a tool.

Every restriction JSON Schema can spell is read for its direction: **narrowed** (a value valid before may
be refused now), **widened** (every value valid before still is, and more are), **changed** (neither
admits all the other admits) or **rewritten** (the same values, spelled differently). One restriction has
several spellings, and they are compared by what they admit, not as text: ``enum`` of one value,
``const``, and ``oneOf``/``anyOf`` of consts are one set of values (Pydantic writes ``Literal["a"]`` as
``const`` and ``Literal["a", "b"]`` as ``enum``: narrowing the one to the other is a value removed);
``maximum`` with a draft-4 ``exclusiveMaximum: true`` is the bound a numeric ``exclusiveMaximum`` is.

The direction becomes a class by the schema's role:

- an **input** schema (the client writes, the server reads): narrowed is **breaking** (a call that worked
  may be refused), widened is **minor** -- except enumerated values: a value added, or the enumeration
  dropped, is **dangerous** (a new mode the model may now pick: ``exec`` beside ``fast`` and ``deep``);
- an **output** schema (the server writes, the client reads): widened is **breaking** (a reader may get
  what it cannot handle), narrowed is **minor** -- except members: an output member added is minor and
  ``additionalProperties`` opened is dangerous, as readers pass over members they do not know;
- changed is **breaking** in both roles; rewritten is **minor** (the contract file changed, callers not).

``not`` flips the direction of what it holds; ``$defs`` are compared by name and a changed ``$ref`` by
what it points at. Keywords not judged here (``if``/``then``/``else``, ``patternProperties``,
``dependentRequired``, ...) are **dangerous** ``schema-keyword-changed``: never silent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from mcpreel.contract.change import BREAKING, DANGEROUS, MINOR, Change, esc, j, same

__all__ = ["CHANGED", "NARROWED", "REWRITTEN", "WIDENED", "schema_changes"]

NARROWED, WIDENED, CHANGED, REWRITTEN = "narrowed", "widened", "changed", "rewritten"

#: an upper bound on a count: lower is narrower
_COUNT_MAX = ("maxLength", "maxItems", "maxProperties", "maxContains")
#: a lower bound on a count: higher is narrower (absent is 0)
_COUNT_MIN = ("minLength", "minItems", "minProperties", "minContains")
#: present narrows, absent admits all; two different values admit different sets
_PRESENT_NARROWS = ("pattern", "format")
#: the keys a branch of a ``oneOf``/``anyOf`` of consts may carry besides its value
_BRANCH_KEYS = frozenset({"const", "enum", "type", "title", "description", "$comment"})
_COMBINATORS = ("anyOf", "oneOf", "allOf")
_DEFS = ("$defs", "definitions")
_HANDLED = frozenset({
    "properties", "required", "type", "enum", "const", "default", "items", "prefixItems", "description", "title",
    "additionalProperties", "$schema", "maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum", "multipleOf",
    "uniqueItems", "not", "$ref", *_COUNT_MAX, *_COUNT_MIN, *_PRESENT_NARROWS, *_COMBINATORS, *_DEFS,
})


def schema_changes(old: Any, new: Any, path: str, role: str, out: list[Change]) -> None:
    """Append to ``out`` every change between two JSON schemas. ``role`` is "input" (the client writes
    values the server reads) or "output" (the server writes, the client reads)."""
    _Walk(out, old, new).schema(old, new, path, role == "input")


def direction_class(direction: str, inp: bool) -> str:
    """The class of a change in ``direction`` to an input (``inp``) or output schema."""
    if direction == CHANGED:
        return BREAKING
    if direction == REWRITTEN:
        return MINOR
    if direction == NARROWED:
        return BREAKING if inp else MINOR
    return MINOR if inp else BREAKING


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _value_identity(v: Any) -> tuple[str, Any]:
    """A value's identity as JSON Schema sees it (1 and 1.0 are one value; true is not 1)."""
    if isinstance(v, bool):
        return ("b", v)
    if _num(v):
        return ("n", v)
    return ("j", json.dumps(v, sort_keys=True, ensure_ascii=False, default=str))


# -- enumerations: enum, const, oneOf/anyOf of consts ------------------------------------------------------

@dataclass
class _Enumeration:
    values: list[Any]
    keyword: str  # where it is spelled (the first of enum, const, oneOf, anyOf present)
    keys: frozenset[str]  # the keywords that spell it
    branches: dict[tuple[str, Any], tuple[int, dict[str, Any]]] = field(default_factory=dict)


def _const_branches(branches: Any) -> bool:
    return (isinstance(branches, list) and bool(branches)
            and all(isinstance(b, dict) and set(b) <= _BRANCH_KEYS
                    and ("const" in b or isinstance(b.get("enum"), list)) for b in branches))


def _branch_values(branch: dict[str, Any]) -> list[Any]:
    if "const" in branch:
        c = branch["const"]
        enum = branch.get("enum")
        return [c] if not isinstance(enum, list) or _value_identity(c) in {_value_identity(v) for v in enum} else []
    return list(branch["enum"])


def _enumeration(schema: dict[str, Any]) -> _Enumeration | None:
    """The values ``schema`` is restricted to, however spelled (several spellings: what all admit)."""
    sets: list[list[Any]] = []
    keys: list[str] = []
    branches: dict[tuple[str, Any], tuple[int, dict[str, Any]]] = {}
    if isinstance(schema.get("enum"), list):
        sets.append(list(schema["enum"]))
        keys.append("enum")
    if "const" in schema:
        sets.append([schema["const"]])
        keys.append("const")
    for kw in ("oneOf", "anyOf"):
        if _const_branches(schema.get(kw)):
            values: list[Any] = []
            for i, b in enumerate(schema[kw]):
                for v in _branch_values(b):
                    values.append(v)
                    branches.setdefault(_value_identity(v), (i, b))
            sets.append(values)
            keys.append(kw)
    if not sets:
        return None
    others = [{_value_identity(v) for v in s} for s in sets[1:]]
    seen: set[tuple[str, Any]] = set()
    values = []
    for v in sets[0]:
        k = _value_identity(v)
        if k not in seen and all(k in o for o in others):
            seen.add(k)
            values.append(v)
    return _Enumeration(values, keys[0], frozenset(keys), branches)


def _admitted(schema: dict[str, Any], values: list[Any]) -> list[Any]:
    """The ``values`` ``schema`` admits; a value is kept where that cannot be told (an invalid schema, a
    ``$ref`` out of reach: no evidence of a refusal). One validator for them all."""
    try:
        from jsonschema.validators import validator_for

        validator = validator_for(schema)(schema)
    except Exception:
        return list(values)
    kept = []
    for v in values:
        try:
            ok = bool(validator.is_valid(v))
        except Exception:
            ok = True
        if ok:
            kept.append(v)
    return kept


# -- numeric bounds -----------------------------------------------------------------------------------------

def _bound(schema: dict[str, Any], upper: bool) -> tuple[Any, ...] | None | bool:
    """The tightest bound ``schema`` sets on a number, as a tuple where greater is tighter; None: no
    bound; False: a bound this reading does not understand (a value that is not a number)."""
    inclusive, exclusive = ("maximum", "exclusiveMaximum") if upper else ("minimum", "exclusiveMinimum")
    m: Any = schema.get(inclusive)
    x: Any = schema.get(exclusive)
    if (m is not None and not _num(m)) or (x is not None and not _num(x) and not isinstance(x, bool)):
        return False
    found: list[tuple[Any, ...]] = []
    if m is not None:
        found.append((-m if upper else m, 1 if x is True else 0))  # draft 4: exclusiveMaximum true
    if _num(x):
        found.append((-x if upper else x, 1))
    return max(found) if found else None


def _compare_bounds(a: tuple[Any, ...] | None, b: tuple[Any, ...] | None) -> str | None:
    if a == b:
        return None
    if a is None:
        return NARROWED
    if b is None:
        return WIDENED
    return NARROWED if b > a else WIDENED


def _openness(v: Any) -> int | None:
    """additionalProperties as an order: 0 none, 1 some (a schema), 2 any; None not understood."""
    if v is None or v is True or v == {}:
        return 2
    if v is False:
        return 0
    return 1 if isinstance(v, dict) else None


def _ref_target(root: Any, ref: Any) -> Any:
    """The schema a local ``#/$defs/Name`` (or ``#/definitions/Name``) points at in ``root``; None elsewhere."""
    if not isinstance(ref, str) or not isinstance(root, dict):
        return None
    for defs in _DEFS:
        prefix = f"#/{defs}/"
        if ref.startswith(prefix):
            name = ref[len(prefix):].replace("~1", "/").replace("~0", "~")
            table = root.get(defs)
            return table.get(name) if isinstance(table, dict) else None
    return None


class _Walk:
    """One comparison of two schemas: the roots (for ``$ref``), where changes go, the references followed."""

    def __init__(self, out: list[Change], root_old: Any, root_new: Any) -> None:
        self.out = out
        self.roots = (root_old, root_new)
        self.followed: set[tuple[Any, Any]] = set()
        self.negated = False  # inside a `not`: what it holds is excluded, so its values are not new choices

    def add(self, cls: str, rule: str, path: str, message: str, before: Any = None, after: Any = None) -> None:
        self.out.append(Change(cls, rule, path, message, before, after))

    def restriction(self, direction: str, path: str, key: str, before: Any, after: Any, inp: bool) -> None:
        """One restriction keyword narrowed, widened, changed or rewritten."""
        said = {NARROWED: "a value valid before may be refused now", WIDENED: "admits more values",
                CHANGED: "admits other values", REWRITTEN: "the same values"}[direction]
        shown = [("absent" if v is None else j(v)) for v in (before, after)]
        self.add(direction_class(direction, inp), f"constraint-{direction}", path,
                 f"{key} {direction}: {shown[0]} -> {shown[1]} ({said})", before, after)

    def schema(self, old: Any, new: Any, path: str, inp: bool) -> None:
        if same(old, new):
            return
        if not isinstance(old, dict) or not isinstance(new, dict):
            self.add(DANGEROUS, "schema-changed", path, "schema changed", old, new)
            return
        before = len(self.out)
        enum_keys = self.enumerations(old, new, path, inp)
        if "type" not in enum_keys:
            self.types(old, new, path, inp)
        self.describing(old, new, path)
        self.members(old, new, path, inp)
        self.bounds(old, new, path, inp)
        self.combinators(old, new, path, inp, enum_keys)
        self.structure(old, new, path, inp)
        for key in sorted((set(old) | set(new)) - _HANDLED):
            if not same(old.get(key), new.get(key)):
                self.add(DANGEROUS, "schema-keyword-changed", f"{path}/{esc(key)}", f"schema keyword {key!r} changed",
                         old.get(key), new.get(key))
        if len(self.out) == before:  # e.g. a key moved between spellings no rule names: never silent
            self.add(MINOR, "schema-rewritten", path, "schema rewritten (the same values admitted)", old, new)

    # -- type -----------------------------------------------------------------------------------------------

    def types(self, old: dict[str, Any], new: dict[str, Any], path: str, inp: bool) -> None:
        if old.get("type") == new.get("type"):
            return
        to, tn = _types(old), _types(new)
        if to is not None and tn is not None and to == tn:
            direction = REWRITTEN
        elif to is not None and tn is not None and tn < to:
            direction = NARROWED
        elif to is not None and tn is not None and tn > to:
            direction = WIDENED
        elif tn is None and to is not None and "type" not in new:
            direction = WIDENED  # unconstrained
        elif to is None and tn is not None and "type" not in old:
            direction = NARROWED  # a type where there was none
        else:
            direction = CHANGED
        what = "unconstrained" if direction == WIDENED and "type" not in new else direction
        self.add(direction_class(direction, inp), f"type-{what}", f"{path}/type",
                 f"type {what}: {j(old.get('type'))} -> {j(new.get('type'))}", old.get("type"), new.get("type"))

    # -- enumerated values ----------------------------------------------------------------------------------

    def enumerations(self, old: dict[str, Any], new: dict[str, Any], path: str, inp: bool) -> frozenset[str]:
        """Compare the values each side is restricted to; return the keywords that spelled them."""
        eo, en = _enumeration(old), _enumeration(new)
        if eo is None and en is None:
            return frozenset()
        keys = (eo.keys if eo else frozenset()) | (en.keys if en else frozenset())
        if eo is not None and en is not None:
            # both sides list their values: what each admits of them (its type, bounds, ...) says it all
            keys |= {"type"}
            # (each side's own enumeration admits its values by construction: leave it out, an enum of n
            # values checked n times is n * n comparisons)
            eo.values = _admitted({k: v for k, v in old.items() if k not in eo.keys}, eo.values)
            en.values = _admitted({k: v for k, v in new.items() if k not in en.keys}, en.values)
        spelled_old = {k: old[k] for k in sorted(keys) if k in old}
        spelled_new = {k: new[k] for k in sorted(keys) if k in new}
        if same(spelled_old, spelled_new):
            return keys
        # a value added to an input is a new choice (dangerous); inside `not` it is one fewer (the class of a
        # narrowing of the role outside, where the flipped `inp` is the other one)
        added_cls = direction_class(NARROWED, not inp) if self.negated else DANGEROUS if inp else BREAKING
        if eo is not None and en is not None:
            ko, kn = {_value_identity(v) for v in eo.values}, {_value_identity(v) for v in en.values}
            at = f"{path}/{en.keyword}"
            removed = [v for v in eo.values if _value_identity(v) not in kn]
            added = [v for v in en.values if _value_identity(v) not in ko]
            respelled = "" if eo.keyword == en.keyword else f" ({eo.keyword} -> {en.keyword})"
            if removed:
                self.add(direction_class(NARROWED, inp), "enum-value-removed", at,
                         f"enum value(s) removed: {j(removed)}{respelled}", spelled_old, spelled_new)
            if added:
                self.add(added_cls, "enum-widened", at, f"enum value(s) added: {j(added)}{respelled}",
                         spelled_old, spelled_new)
            self.branch_texts(eo, en, at)
            if not removed and not added and not self.branch_texts(eo, en, None):
                self.add(MINOR, "enum-rewritten", at, f"the same values, spelled differently{respelled}",
                         spelled_old, spelled_new)
        elif en is not None:
            self.add(direction_class(NARROWED, inp), "enum-added", f"{path}/{en.keyword}",
                     f"values now restricted to {j(en.values)}", None, spelled_new)
            admitted = {_value_identity(v) for v in _admitted(old, en.values)}
            new_values = [v for v in en.values if _value_identity(v) not in admitted]
            if new_values:
                self.add(added_cls, "enum-widened", f"{path}/{en.keyword}",
                         f"enum value(s) not admitted before: {j(new_values)}", None, spelled_new)
        elif eo is not None:
            admitted = {_value_identity(v) for v in _admitted(new, eo.values)}
            refused = [v for v in eo.values if _value_identity(v) not in admitted]
            if refused:
                self.add(direction_class(NARROWED, inp), "enum-value-removed", f"{path}/{eo.keyword}",
                         f"enum value(s) no longer admitted: {j(refused)}", spelled_old, None)
            self.add(added_cls, "enum-dropped", f"{path}/{eo.keyword}", "enum restriction dropped", spelled_old, None)
        return keys

    def branch_texts(self, eo: _Enumeration, en: _Enumeration, at: str | None) -> bool:
        """The description and title of each value's ``oneOf``/``anyOf`` branch; report them unless ``at``
        is None (then only say whether any differ)."""
        differ = False
        for k, (i, b) in en.branches.items():
            if k not in eo.branches:
                continue
            a = eo.branches[k][1]
            for text in ("description", "title"):
                if a.get(text) != b.get(text):
                    differ = True
                    if at is not None:
                        self.add(DANGEROUS if text == "description" else MINOR, f"{text}-changed",
                                 f"{at}/{i}/{text}", f"{text} changed", a.get(text), b.get(text))
        return differ

    # -- what the model reads ---------------------------------------------------------------------------------

    def describing(self, old: dict[str, Any], new: dict[str, Any], path: str) -> None:
        if not same(old.get("default"), new.get("default")):
            self.add(DANGEROUS, "default-changed", f"{path}/default",
                     f"default changed: {j(old.get('default'))} -> {j(new.get('default'))}",
                     old.get("default"), new.get("default"))
        if old.get("description") != new.get("description"):
            self.add(DANGEROUS, "description-changed", f"{path}/description", "description changed",
                     old.get("description"), new.get("description"))
        if old.get("title") != new.get("title"):
            self.add(MINOR, "title-changed", f"{path}/title", "title changed", old.get("title"), new.get("title"))

    # -- object members -------------------------------------------------------------------------------------

    def members(self, old: dict[str, Any], new: dict[str, Any], path: str, inp: bool) -> None:
        po: dict[str, Any] = old["properties"] if isinstance(old.get("properties"), dict) else {}
        pn: dict[str, Any] = new["properties"] if isinstance(new.get("properties"), dict) else {}
        ro, rn = _required(old), _required(new)
        for name in po:
            p = f"{path}/properties/{esc(name)}"
            if name not in pn:
                self.add(BREAKING, "property-removed", p,
                         f"{'argument' if inp else 'output member'} {name!r} removed", po[name], None)
            else:
                self.schema(po[name], pn[name], p, inp)
        for name in pn:
            if name in po:
                continue
            p = f"{path}/properties/{esc(name)}"
            if name in rn and inp:
                self.add(BREAKING, "required-property-added", p, f"required argument {name!r} added", None, pn[name])
            else:
                what = "optional argument" if inp else "output member"
                self.add(MINOR, "property-added", p, f"{what} {name!r} added", None, pn[name])
        for name in sorted(rn - ro):
            if name in pn and name not in po:
                continue  # a new member: said above
            self.add(direction_class(NARROWED, inp), "property-now-required", f"{path}/required",
                     f"{name!r} is now required", sorted(ro), sorted(rn))
        for name in sorted(ro - rn):
            if name in po and name not in pn:
                continue  # removed: said above
            self.add(MINOR if inp else BREAKING, "property-now-optional", f"{path}/required",
                     f"{name!r} is no longer required", sorted(ro), sorted(rn))
        self.additional(old, new, path, inp)

    def additional(self, old: dict[str, Any], new: dict[str, Any], path: str, inp: bool) -> None:
        ao, an = old.get("additionalProperties"), new.get("additionalProperties")
        if same(ao, an):
            return
        p = f"{path}/additionalProperties"
        oo, on = _openness(ao), _openness(an)
        if oo == 1 and on == 1:
            self.schema(ao, an, p, inp)
            return
        if oo is None or on is None:
            self.add(DANGEROUS, "schema-keyword-changed", p, "schema keyword 'additionalProperties' changed", ao, an)
            return
        shown = [True if v is None else v for v in (ao, an)]
        if oo == on:
            cls = MINOR
        elif on < oo:
            cls = direction_class(NARROWED, inp)
        else:
            cls = MINOR if inp else DANGEROUS  # output: readers pass over members they do not know
        self.add(cls, "additional-properties-changed", p, f"additionalProperties {j(shown[0])} -> {j(shown[1])}",
                 shown[0], shown[1])

    # -- bounds, patterns, formats ------------------------------------------------------------------------------

    def bounds(self, old: dict[str, Any], new: dict[str, Any], path: str, inp: bool) -> None:
        for key in (*_COUNT_MAX, *_COUNT_MIN):
            a, b = old.get(key), new.get(key)
            if a == b:
                continue
            if (a is not None and not _num(a)) or (b is not None and not _num(b)):
                self.add(DANGEROUS, "schema-keyword-changed", f"{path}/{key}", f"schema keyword {key!r} changed", a, b)
                continue
            if key in _COUNT_MAX:
                ta: tuple[Any, ...] | None = None if a is None else (-a,)
                tb: tuple[Any, ...] | None = None if b is None else (-b,)
            else:
                ta, tb = (a or 0,), (b or 0,)
            self.restriction(_compare_bounds(ta, tb) or REWRITTEN, f"{path}/{key}", key, a, b, inp)
        for upper, keys in ((True, ("maximum", "exclusiveMaximum")), (False, ("minimum", "exclusiveMinimum"))):
            if all(old.get(k) == new.get(k) for k in keys):
                continue
            differ = [k for k in keys if old.get(k) != new.get(k)]
            key = next((k for k in differ if k in new), differ[0])
            ba, bb = _bound(old, upper), _bound(new, upper)
            if ba is False or bb is False:
                self.add(DANGEROUS, "schema-keyword-changed", f"{path}/{key}", f"schema keyword {key!r} changed",
                         old.get(key), new.get(key))
                continue
            direction = _compare_bounds(ba if isinstance(ba, tuple) else None, bb if isinstance(bb, tuple) else None)
            spelled = [{k: s[k] for k in keys if k in s} or None for s in (old, new)]
            self.restriction(direction or REWRITTEN, f"{path}/{key}", "/".join(k for k in keys if old.get(k) != new.get(k)),
                             spelled[0], spelled[1], inp)
        self.multiple_of(old, new, path, inp)
        for key in _PRESENT_NARROWS:
            a, b = old.get(key), new.get(key)
            if a != b:
                direction = NARROWED if a is None else WIDENED if b is None else CHANGED
                self.restriction(direction, f"{path}/{key}", key, a, b, inp)
        a, b = bool(old.get("uniqueItems")), bool(new.get("uniqueItems"))
        if old.get("uniqueItems") != new.get("uniqueItems"):
            direction = REWRITTEN if a == b else NARROWED if b else WIDENED
            self.restriction(direction, f"{path}/uniqueItems", "uniqueItems", old.get("uniqueItems"),
                             new.get("uniqueItems"), inp)

    def multiple_of(self, old: dict[str, Any], new: dict[str, Any], path: str, inp: bool) -> None:
        a, b = old.get("multipleOf"), new.get("multipleOf")
        if a == b:
            return
        p = f"{path}/multipleOf"
        if (a is not None and not (_num(a) and a > 0)) or (b is not None and not (_num(b) and b > 0)):
            self.add(DANGEROUS, "schema-keyword-changed", p, "schema keyword 'multipleOf' changed", a, b)
            return
        if a is None:
            direction = NARROWED
        elif b is None:
            direction = WIDENED
        else:
            fa, fb = Fraction(str(a)), Fraction(str(b))
            if fa == fb:
                direction = REWRITTEN
            elif (fb / fa).denominator == 1:
                direction = NARROWED  # every multiple of the new step is a multiple of the old one
            elif (fa / fb).denominator == 1:
                direction = WIDENED
            else:
                direction = CHANGED
        self.restriction(direction, p, "multipleOf", a, b, inp)

    # -- anyOf, oneOf, allOf, not ---------------------------------------------------------------------------

    def combinators(self, old: dict[str, Any], new: dict[str, Any], path: str, inp: bool,
                    enum_keys: frozenset[str]) -> None:
        for kw in _COMBINATORS:
            lo, ln = old.get(kw), new.get(kw)
            if same(lo, ln) or kw in enum_keys:
                continue
            p = f"{path}/{kw}"
            if any(x is not None and not (isinstance(x, list) and all(isinstance(b, dict) for b in x)) for x in (lo, ln)):
                self.add(DANGEROUS, "schema-keyword-changed", p, f"schema keyword {kw!r} changed", lo, ln)
                continue
            union = kw != "allOf"  # more branches admit more for anyOf/oneOf, fewer for allOf
            if lo is None or ln is None:
                self.restriction(NARROWED if lo is None else WIDENED, p, kw, lo, ln, inp)
                continue
            rest_o = [b for b in lo if b not in ln]
            rest_n = [(i, b) for i, b in enumerate(ln) if b not in lo]
            for a, (i, b) in zip(rest_o, rest_n, strict=False):
                self.schema(a, b, f"{p}/{i}", inp)
            for i, b in rest_n[len(rest_o):]:
                self.restriction(WIDENED if union else NARROWED, f"{p}/{i}", f"{kw} branch added", None, b, inp)
            for a in rest_o[len(rest_n):]:
                self.restriction(NARROWED if union else WIDENED, p, f"{kw} branch removed", a, None, inp)
            if not rest_o and not rest_n:  # the same branches, reordered or repeated
                self.restriction(REWRITTEN, p, kw, lo, ln, inp)
        no, nn = old.get("not"), new.get("not")
        if not same(no, nn):
            p = f"{path}/not"
            if isinstance(no, dict) and isinstance(nn, dict):
                self.negated = not self.negated
                try:
                    self.schema(no, nn, p, not inp)  # what `not` holds admits the reverse
                finally:
                    self.negated = not self.negated
            elif no is None or nn is None:
                self.restriction(NARROWED if no is None else WIDENED, p, "not", no, nn, inp)
            else:
                self.add(DANGEROUS, "schema-keyword-changed", p, "schema keyword 'not' changed", no, nn)

    # -- items, $defs, $ref -----------------------------------------------------------------------------------

    def structure(self, old: dict[str, Any], new: dict[str, Any], path: str, inp: bool) -> None:
        for key in ("items", "prefixItems"):
            io, in_ = old.get(key), new.get(key)
            if same(io, in_):
                continue
            p = f"{path}/{key}"
            if isinstance(io, list) and isinstance(in_, list) and len(io) == len(in_):
                for i, (a, b) in enumerate(zip(io, in_, strict=True)):
                    self.schema(a, b, f"{p}/{i}", inp)
            elif io is None or in_ is None or (isinstance(io, dict) and isinstance(in_, dict)):
                self.schema({} if io is None else io, {} if in_ is None else in_, p, inp)
            else:
                self.add(DANGEROUS, "schema-keyword-changed", p, f"schema keyword {key!r} changed", io, in_)
        for key in _DEFS:
            do, dn = old.get(key), new.get(key)
            if same(do, dn):
                continue
            if not isinstance(do, dict) or not isinstance(dn, dict):
                self.add(DANGEROUS, "schema-keyword-changed", f"{path}/{key}", f"schema keyword {key!r} changed", do, dn)
                continue
            for name in do:
                p = f"{path}/{key}/{esc(name)}"
                if name in dn:
                    self.schema(do[name], dn[name], p, inp)
                else:
                    self.add(DANGEROUS, "definition-removed", p, f"definition {name!r} removed", do[name], None)
            for name in dn:
                if name not in do:
                    self.add(MINOR, "definition-added", f"{path}/{key}/{esc(name)}", f"definition {name!r} added",
                             None, dn[name])
        ro, rn = old.get("$ref"), new.get("$ref")
        if ro != rn:
            p = f"{path}/$ref"
            to, tn = _ref_target(self.roots[0], ro), _ref_target(self.roots[1], rn)
            if isinstance(to, dict) and isinstance(tn, dict) and isinstance(ro, str) and isinstance(rn, str) \
                    and (ro, rn) not in self.followed:
                self.followed.add((ro, rn))
                before = len(self.out)
                self.schema(to, tn, p, inp)
                if len(self.out) == before:
                    self.add(MINOR, "ref-renamed", p, f"$ref {j(ro)} -> {j(rn)} (the same schema)", ro, rn)
            elif ro is None or rn is None:
                self.restriction(NARROWED if ro is None else WIDENED, p, "$ref", ro, rn, inp)
            else:
                self.add(DANGEROUS, "schema-keyword-changed", p, "schema keyword '$ref' changed", ro, rn)


def _required(schema: dict[str, Any]) -> set[str]:
    """The member names ``required`` lists (a damaged list's other items -- numbers, lists, objects -- name
    no member and are left out, found by the hostile-contract fuzz family)."""
    names = schema.get("required")
    return {n for n in names if isinstance(n, str)} if isinstance(names, list) else set()


def _types(schema: dict[str, Any]) -> set[str] | None:
    t = schema.get("type")
    if isinstance(t, str):
        out = {t}
    elif isinstance(t, list) and all(isinstance(x, str) for x in t):
        out = set(t)
    else:
        return None
    if "number" in out:
        out.add("integer")  # an integer is a number: number -> integer narrows, integer -> number widens
    return out
