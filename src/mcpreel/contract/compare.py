"""Every change between two contracts, classed by what it does to a client that relied on the old one.

- **breaking**: a client that worked before can fail now — a tool, prompt, resource or template removed,
  a required argument added, an optional argument made required, an argument removed, a type narrowed,
  an enum value removed, an output schema removed or changed so that old readers break (a member
  removed or made optional, a type widened, an enum value added).
- **dangerous**: nothing fails, but what the model reads or is allowed to assume changed — a description
  changed (the shape of tool poisoning and rug pulls), an annotation loosened (``readOnlyHint``
  true -> false, ``destructiveHint`` false -> true, ...), an input enum widened, a default changed,
  any other schema keyword changed.
- **minor**: additions and relaxations — a tool, prompt or optional argument added, a type widened,
  an annotation tightened, a title or the server's version changed.

Annotations are compared by their effective values (the spec's defaults fill in what a server leaves
out: ``readOnlyHint`` false, ``destructiveHint`` true, ``idempotentHint`` false, ``openWorldHint`` true).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpreel.contract.snapshot import KINDS, Contract

__all__ = ["BREAKING", "CLASSES", "DANGEROUS", "MINOR", "Change", "ContractDiff", "compare", "counts_at"]

BREAKING, DANGEROUS, MINOR = "breaking", "dangerous", "minor"
#: most severe first
CLASSES = (BREAKING, DANGEROUS, MINOR)
_RANK = {c: i for i, c in enumerate(CLASSES)}
#: ``--fail-on`` -> the classes that fail
FAIL_ON = {"breaking": (BREAKING,), "dangerous": (BREAKING, DANGEROUS), "any": CLASSES}

#: annotation -> (spec default, the value that is the *safe* one)
ANNOTATIONS = {
    "readOnlyHint": (False, True),
    "destructiveHint": (True, False),
    "idempotentHint": (False, True),
    "openWorldHint": (True, False),
}
_SINGULAR = {"tools": "tool", "prompts": "prompt", "resources": "resource", "resourceTemplates": "resource template"}
_DESCRIBING = ("description", "title")


@dataclass(frozen=True)
class Change:
    """One change: its class, a rule id, where it is (a JSON-pointer-like path), and the two values."""

    cls: str
    rule: str
    path: str
    message: str
    before: Any = None
    after: Any = None

    def to_json(self) -> dict[str, Any]:
        """The change as ``--format json`` and SARIF carry it; before/after only where they exist."""
        out: dict[str, Any] = {"class": self.cls, "rule": self.rule, "path": self.path, "message": self.message}
        if self.before is not None:
            out["before"] = self.before
        if self.after is not None:
            out["after"] = self.after
        return out


@dataclass
class ContractDiff:
    changes: list[Change] = field(default_factory=list)
    fail_on: str = "dangerous"

    def counts(self) -> dict[str, int]:
        """Changes by class (breaking, risky, ...), for the summary."""
        out = dict.fromkeys(CLASSES, 0)
        for ch in self.changes:
            out[ch.cls] += 1
        return out

    @property
    def failing(self) -> list[Change]:
        """The changes at or above ``--fail-on``: what makes the check exit 1."""
        classes = FAIL_ON[self.fail_on]
        return [ch for ch in self.changes if ch.cls in classes]

    @property
    def exit_code(self) -> int:
        """1 when a change fails the check, else 0."""
        return 1 if self.failing else 0

    def summary(self) -> str:
        """One line: how many changes of each class and whether the check passes."""
        c = self.counts()
        if not self.changes:
            return "the contract holds: no changes"
        parts = ", ".join(f"{c[k]} {k}" for k in CLASSES if c[k])
        verdict = "fails" if self.failing else "passes"
        return f"{len(self.changes)} changes ({parts}); {verdict} --fail-on {self.fail_on}"

    def to_json(self) -> dict[str, Any]:
        """The whole check as ``--format json`` writes it."""
        return {"summary": self.summary(), "counts": self.counts(), "failOn": self.fail_on,
                "exitCode": self.exit_code, "changes": [ch.to_json() for ch in self.changes]}


def counts_at(changes: list[Change], fail_on: str) -> int:
    """How many changes a given ``--fail-on`` level would fail on (what a report offers as the alternatives)."""
    return sum(1 for ch in changes if ch.cls in FAIL_ON[fail_on])


def _j(value: Any) -> str:
    """A value as JSON text in a message (true, not True)."""
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


def _esc(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


# -- JSON schemas --------------------------------------------------------------------------------------

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


def _schema_changes(old: Any, new: Any, path: str, role: str, out: list[Change]) -> None:
    """Changes between two JSON schemas. ``role`` is "input" (the client writes values the server reads)
    or "output" (the server writes, the client reads): what is safe for one breaks the other."""
    if old == new:
        return
    if not isinstance(old, dict) or not isinstance(new, dict):
        out.append(Change(DANGEROUS, "schema-changed", path, "schema changed", old, new))
        return
    inp = role == "input"
    handled = {"properties", "required", "type", "enum", "default", "items", "description", "title",
               "additionalProperties", "$schema"}

    # type
    to, tn = _types(old), _types(new)
    if old.get("type") != new.get("type"):
        if to is not None and tn is not None and tn < to:
            cls, what = (BREAKING, "narrowed") if inp else (MINOR, "narrowed")
        elif to is not None and tn is not None and tn > to:
            cls, what = (MINOR, "widened") if inp else (BREAKING, "widened")
        elif tn is None and to is not None:
            cls, what = (MINOR, "unconstrained") if inp else (BREAKING, "unconstrained")
        else:
            cls, what = BREAKING, "changed"
        out.append(Change(cls, f"type-{what}", f"{path}/type", f"type {what}: {_j(old.get('type'))} -> {_j(new.get('type'))}",
                          old.get("type"), new.get("type")))

    # enum
    eo, en = old.get("enum"), new.get("enum")
    if eo != en:
        if isinstance(eo, list) and isinstance(en, list):
            removed = [v for v in eo if v not in en]
            added = [v for v in en if v not in eo]
            if removed:
                out.append(Change(BREAKING if inp else MINOR, "enum-value-removed", f"{path}/enum",
                                  f"enum value(s) removed: {_j(removed)}", eo, en))
            if added:
                out.append(Change(DANGEROUS if inp else BREAKING, "enum-widened", f"{path}/enum",
                                  f"enum value(s) added: {_j(added)}", eo, en))
        elif isinstance(en, list):
            out.append(Change(BREAKING if inp else MINOR, "enum-added", f"{path}/enum", "values now restricted to an enum", eo, en))
        else:
            out.append(Change(DANGEROUS if inp else BREAKING, "enum-dropped", f"{path}/enum", "enum restriction dropped", eo, en))

    # default, descriptions
    if old.get("default") != new.get("default"):
        out.append(Change(DANGEROUS, "default-changed", f"{path}/default",
                          f"default changed: {_j(old.get('default'))} -> {_j(new.get('default'))}", old.get("default"), new.get("default")))
    if old.get("description") != new.get("description"):
        out.append(Change(DANGEROUS, "description-changed", f"{path}/description", "description changed",
                          old.get("description"), new.get("description")))
    if old.get("title") != new.get("title"):
        out.append(Change(MINOR, "title-changed", f"{path}/title", "title changed", old.get("title"), new.get("title")))

    # properties and required
    po = old.get("properties")
    if not isinstance(po, dict):
        po = {}
    pn = new.get("properties")
    if not isinstance(pn, dict):
        pn = {}
    ro = set(old.get("required") or []) if isinstance(old.get("required"), list) else set()
    rn = set(new.get("required") or []) if isinstance(new.get("required"), list) else set()
    for name in po:
        p = f"{path}/properties/{_esc(name)}"
        if name not in pn:
            out.append(Change(BREAKING, "property-removed", p,
                              f"{'argument' if inp else 'output member'} {name!r} removed", po[name], None))
        else:
            _schema_changes(po[name], pn[name], p, role, out)
    for name in pn:
        if name in po:
            continue
        p = f"{path}/properties/{_esc(name)}"
        if name in rn and inp:
            out.append(Change(BREAKING, "required-property-added", p, f"required argument {name!r} added", None, pn[name]))
        else:
            what = "optional argument" if inp else "output member"
            out.append(Change(MINOR, "property-added", p, f"{what} {name!r} added", None, pn[name]))
    for name in sorted((rn - ro) & set(po)):
        if name in pn:
            out.append(Change(BREAKING if inp else MINOR, "property-now-required", f"{path}/required",
                              f"{name!r} is now required", sorted(ro), sorted(rn)))
    for name in sorted((ro - rn) & set(pn)):
        out.append(Change(MINOR if inp else BREAKING, "property-now-optional", f"{path}/required",
                          f"{name!r} is no longer required", sorted(ro), sorted(rn)))

    # additionalProperties: false -> anything else widens what is accepted (input) / may appear (output)
    ao, an = old.get("additionalProperties", True), new.get("additionalProperties", True)
    if ao != an:
        closed_now = an is False
        if inp:
            cls = BREAKING if closed_now else MINOR
        else:
            cls = MINOR if closed_now else DANGEROUS
        out.append(Change(cls, "additional-properties-changed", f"{path}/additionalProperties",
                          f"additionalProperties {_j(ao)} -> {_j(an)}", ao, an))

    if old.get("items") != new.get("items"):
        _schema_changes(old.get("items"), new.get("items"), f"{path}/items", role, out)

    # anything else (minimum, pattern, format, oneOf, $defs ...): not judged finely, but never silent
    for key in sorted((set(old) | set(new)) - handled):
        if old.get(key) != new.get(key):
            out.append(Change(DANGEROUS, "schema-keyword-changed", f"{path}/{_esc(key)}",
                              f"schema keyword {key!r} changed", old.get(key), new.get(key)))


# -- entries --------------------------------------------------------------------------------------------

def _annotation_changes(old: Any, new: Any, path: str, out: list[Change]) -> None:
    old = old if isinstance(old, dict) else {}
    new = new if isinstance(new, dict) else {}
    for key, (default, safe) in ANNOTATIONS.items():
        vo, vn = old.get(key, default), new.get(key, default)
        if vo == vn:
            continue
        if vo == safe and vn != safe:
            out.append(Change(DANGEROUS, "annotation-loosened", f"{path}/{key}", f"{key} loosened: {_j(vo)} -> {_j(vn)}", vo, vn))
        else:
            out.append(Change(MINOR, "annotation-tightened", f"{path}/{key}", f"{key} tightened: {_j(vo)} -> {_j(vn)}", vo, vn))
    for key in sorted((set(old) | set(new)) - set(ANNOTATIONS)):
        if old.get(key) != new.get(key):
            cls = MINOR if key == "title" else DANGEROUS
            out.append(Change(cls, "annotation-changed", f"{path}/{_esc(key)}", f"annotation {key!r} changed",
                              old.get(key), new.get(key)))


def _tool_changes(old: dict[str, Any], new: dict[str, Any], path: str, out: list[Change]) -> None:
    for key in _DESCRIBING:
        if old.get(key) != new.get(key):
            cls = DANGEROUS if key == "description" else MINOR
            out.append(Change(cls, f"{key}-changed", f"{path}/{key}", f"{key} changed", old.get(key), new.get(key)))
    _schema_changes(old.get("inputSchema", {}), new.get("inputSchema", {}), f"{path}/inputSchema", "input", out)
    oo, on = old.get("outputSchema"), new.get("outputSchema")
    if oo is not None and on is None:
        out.append(Change(BREAKING, "output-schema-removed", f"{path}/outputSchema", "output schema removed", oo, None))
    elif oo is None and on is not None:
        out.append(Change(MINOR, "output-schema-added", f"{path}/outputSchema", "output schema added", None, on))
    elif oo != on:
        _schema_changes(oo, on, f"{path}/outputSchema", "output", out)
    _annotation_changes(old.get("annotations"), new.get("annotations"), f"{path}/annotations", out)
    for key in sorted((set(old) | set(new)) - {*_DESCRIBING, "name", "inputSchema", "outputSchema", "annotations"}):
        if old.get(key) != new.get(key):
            out.append(Change(DANGEROUS, "member-changed", f"{path}/{_esc(key)}", f"{key!r} changed", old.get(key), new.get(key)))


def _prompt_changes(old: dict[str, Any], new: dict[str, Any], path: str, out: list[Change]) -> None:
    for key in _DESCRIBING:
        if old.get(key) != new.get(key):
            cls = DANGEROUS if key == "description" else MINOR
            out.append(Change(cls, f"{key}-changed", f"{path}/{key}", f"{key} changed", old.get(key), new.get(key)))

    def args(entry: dict[str, Any]) -> dict[str, dict[str, Any]]:
        raw = entry.get("arguments")
        return {a["name"]: a for a in raw if isinstance(a, dict) and isinstance(a.get("name"), str)} if isinstance(raw, list) else {}

    ao, an = args(old), args(new)
    for name, a in ao.items():
        p = f"{path}/arguments/{_esc(name)}"
        if name not in an:
            out.append(Change(BREAKING, "argument-removed", p, f"argument {name!r} removed", a, None))
            continue
        b = an[name]
        if not a.get("required") and b.get("required"):
            out.append(Change(BREAKING, "property-now-required", p, f"argument {name!r} is now required", a, b))
        elif a.get("required") and not b.get("required"):
            out.append(Change(MINOR, "property-now-optional", p, f"argument {name!r} is no longer required", a, b))
        if a.get("description") != b.get("description"):
            out.append(Change(DANGEROUS, "description-changed", f"{p}/description", "description changed",
                              a.get("description"), b.get("description")))
    for name, b in an.items():
        if name not in ao:
            p = f"{path}/arguments/{_esc(name)}"
            if b.get("required"):
                out.append(Change(BREAKING, "required-property-added", p, f"required argument {name!r} added", None, b))
            else:
                out.append(Change(MINOR, "property-added", p, f"optional argument {name!r} added", None, b))


def _resource_changes(old: dict[str, Any], new: dict[str, Any], path: str, out: list[Change]) -> None:
    for key in sorted((set(old) | set(new)) - {"uri", "uriTemplate"}):
        if old.get(key) != new.get(key):
            cls = DANGEROUS if key == "description" else MINOR
            out.append(Change(cls, f"{key}-changed" if key in ("description", "title") else "member-changed",
                              f"{path}/{_esc(key)}", f"{key!r} changed", old.get(key), new.get(key)))


def compare(old: Contract, new: Contract, *, fail_on: str = "dangerous") -> ContractDiff:
    """Every change from ``old`` (the contract kept in the repository) to ``new`` (what the server offers now).

    A kind the new side never listed is not compared (a recording that never asked for prompts does not
    mean the prompts are gone); a kind the old side never listed has its entries reported as added.
    A schema as deep as the readers accept (1024 levels) is compared again with room to recurse.
    """
    try:
        return _compare(old, new, fail_on)
    except RecursionError:
        from mcpreel._infra.nesting import recursion_room

        with recursion_room():
            return _compare(old, new, fail_on)


def _compare(old: Contract, new: Contract, fail_on: str) -> ContractDiff:
    out: list[Change] = []
    for kind in KINDS:
        if kind not in new.listed:
            continue
        olds, news = old.entries(kind), new.entries(kind)
        one = _SINGULAR[kind]
        for name in olds:
            if name not in news:
                out.append(Change(BREAKING, f"{one.replace(' ', '-')}-removed", f"/{kind}/{_esc(name)}",
                                  f"{one} {name!r} removed", olds[name], None))
        for name in news:
            p = f"/{kind}/{_esc(name)}"
            if name not in olds:
                out.append(Change(MINOR, f"{one.replace(' ', '-')}-added", p, f"{one} {name!r} added", None, news[name]))
            elif olds[name] != news[name]:
                before = len(out)
                if kind == "tools":
                    _tool_changes(olds[name], news[name], p, out)
                elif kind == "prompts":
                    _prompt_changes(olds[name], news[name], p, out)
                else:
                    _resource_changes(olds[name], news[name], p, out)
                if len(out) == before:  # changed in a way no rule names: still never silent
                    out.append(Change(DANGEROUS, "member-changed", p, f"{one} {name!r} changed", olds[name], news[name]))
    so, sn = old.server, new.server
    if so.get("name") != sn.get("name") and so.get("name") and sn.get("name"):
        out.append(Change(MINOR, "server-renamed", "/server/name", "server name changed", so.get("name"), sn.get("name")))
    if so.get("version") != sn.get("version") and so.get("version") and sn.get("version"):
        out.append(Change(MINOR, "server-version-changed", "/server/version", "server version changed",
                          so.get("version"), sn.get("version")))
    out.sort(key=lambda ch: (_RANK[ch.cls], ch.path))
    return ContractDiff(out, fail_on)


def classify_tool_changes(a: Any, b: Any) -> list[Change]:
    """The contract classes of what changed in the *tools* two recordings saw (what ``diff`` reports).

    Only when both listed tools; prompts and resources are the contract check's business.
    """
    from mcpreel.contract.snapshot import from_session

    ca, cb = from_session(a), from_session(b)
    if "tools" not in ca.listed or "tools" not in cb.listed:
        return []
    ca.listed, cb.listed = {"tools"}, {"tools"}
    ca.server, cb.server = {}, {}
    return compare(ca, cb).changes
