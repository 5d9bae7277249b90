"""Every change between two contracts, classed by what it does to a client that relied on the old one.

- **breaking**: a client that worked before can fail now — a tool, prompt, resource or template removed,
  a required argument added, an optional argument made required, an argument removed, an input schema
  narrowed (a type narrowed, an enum value removed however the enumeration is spelled, a bound, a
  length, a pattern or ``additionalProperties: false`` added), an output schema removed or widened so
  that old readers break (a member removed or made optional, a type widened, an enum value added).
- **dangerous**: nothing fails, but what the model reads or is allowed to assume changed — a description
  changed (the shape of tool poisoning and rug pulls), an annotation loosened (``readOnlyHint``
  true -> false, ``destructiveHint`` false -> true, ...) or set to a value that is not a boolean, an
  input enum widened or dropped, a default changed, a schema keyword no rule judges changed.
- **minor**: additions and relaxations — a tool, prompt or optional argument added, an input schema
  widened, an output schema narrowed, an annotation tightened, a title or the server's version changed.

What a schema change does is :mod:`mcpreel.contract.schema`'s business (the table of directions and
roles is there). A tool is compared by its effective values (:mod:`mcpreel.contract.defaults`: the spec's
defaults fill in what a server leaves out -- ``readOnlyHint`` false, ``destructiveHint`` true,
``idempotentHint`` false, ``openWorldHint`` true, ``execution.taskSupport`` ``"forbidden"`` --, so a default
spelled out or left out is no change at all).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpreel.contract.change import BREAKING, CLASSES, DANGEROUS, FAIL_ON, MINOR, RANK, Change, esc, j, same
from mcpreel.contract.defaults import ANNOTATION_DEFAULTS, effective_tool
from mcpreel.contract.schema import schema_changes
from mcpreel.contract.snapshot import KINDS, Contract

__all__ = ["ANNOTATIONS", "BREAKING", "CLASSES", "DANGEROUS", "FAIL_ON", "MINOR", "Change", "ContractDiff", "compare",
           "counts_at"]


#: annotation -> (spec default, the value that is the *safe* one)
ANNOTATIONS = {key: (default, not default) for key, default in ANNOTATION_DEFAULTS.items()}
_SINGULAR = {"tools": "tool", "prompts": "prompt", "resources": "resource", "resourceTemplates": "resource template"}
_DESCRIBING = ("description", "title")


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


def _schema_changes(old: Any, new: Any, path: str, role: str, out: list[Change]) -> None:
    schema_changes(old, new, path, role, out)


# -- entries --------------------------------------------------------------------------------------------

def _annotation_changes(old: Any, new: Any, path: str, out: list[Change]) -> None:
    """A hint moved to its safe value is tightened (minor); moved off it, loosened (dangerous); moved
    between two values neither of which is the safe one (a value that is not a boolean) is dangerous too:
    a client cannot tell what it promises."""
    old = old if isinstance(old, dict) else {}
    new = new if isinstance(new, dict) else {}
    for key, (default, safe) in ANNOTATIONS.items():
        vo, vn = old.get(key, default), new.get(key, default)
        if vo == vn and type(vo) is type(vn):  # the spec's default spelled out or left out: the same promise
            continue
        if vn is safe:
            out.append(Change(MINOR, "annotation-tightened", f"{path}/{key}", f"{key} tightened: {j(vo)} -> {j(vn)}", vo, vn))
        elif vo is safe:
            out.append(Change(DANGEROUS, "annotation-loosened", f"{path}/{key}", f"{key} loosened: {j(vo)} -> {j(vn)}", vo, vn))
        else:
            out.append(Change(DANGEROUS, "annotation-changed", f"{path}/{key}",
                              f"{key} changed: {j(vo)} -> {j(vn)} (not a boolean)", vo, vn))
    for key in sorted((set(old) | set(new)) - set(ANNOTATIONS)):
        if not same(old.get(key), new.get(key)):
            cls = MINOR if key == "title" else DANGEROUS
            out.append(Change(cls, "annotation-changed", f"{path}/{esc(key)}", f"annotation {key!r} changed",
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
    elif not same(oo, on):
        _schema_changes(oo, on, f"{path}/outputSchema", "output", out)
    _annotation_changes(old.get("annotations"), new.get("annotations"), f"{path}/annotations", out)
    for key in sorted((set(old) | set(new)) - {*_DESCRIBING, "name", "inputSchema", "outputSchema", "annotations"}):
        if not same(old.get(key), new.get(key)):
            out.append(Change(DANGEROUS, "member-changed", f"{path}/{esc(key)}", f"{key!r} changed", old.get(key), new.get(key)))


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
        p = f"{path}/arguments/{esc(name)}"
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
            p = f"{path}/arguments/{esc(name)}"
            if b.get("required"):
                out.append(Change(BREAKING, "required-property-added", p, f"required argument {name!r} added", None, b))
            else:
                out.append(Change(MINOR, "property-added", p, f"optional argument {name!r} added", None, b))


def _resource_changes(old: dict[str, Any], new: dict[str, Any], path: str, out: list[Change]) -> None:
    for key in sorted((set(old) | set(new)) - {"uri", "uriTemplate"}):
        if not same(old.get(key), new.get(key)):
            cls = DANGEROUS if key == "description" else MINOR
            out.append(Change(cls, f"{key}-changed" if key in ("description", "title") else "member-changed",
                              f"{path}/{esc(key)}", f"{key!r} changed", old.get(key), new.get(key)))


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
        if kind == "tools":  # a default spelled out is not a change (issue 34)
            olds = {name: effective_tool(t) for name, t in olds.items()}
            news = {name: effective_tool(t) for name, t in news.items()}
        one = _SINGULAR[kind]
        for name in olds:
            if name not in news:
                out.append(Change(BREAKING, f"{one.replace(' ', '-')}-removed", f"/{kind}/{esc(name)}",
                                  f"{one} {name!r} removed", olds[name], None))
        for name in news:
            p = f"/{kind}/{esc(name)}"
            if name not in olds:
                out.append(Change(MINOR, f"{one.replace(' ', '-')}-added", p, f"{one} {name!r} added", None, news[name]))
            elif not same(olds[name], news[name]):
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
    out.sort(key=lambda ch: (RANK[ch.cls], ch.path))
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
