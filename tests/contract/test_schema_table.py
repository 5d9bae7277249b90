"""Issue 29, item 4: a schema change is classed by what it does to callers, however JSON Schema spells it.

One row is a pair of schemas (before, after) for one argument / output member and four expected classes,
written out (never derived from the code's own table): the change forward and backward (after -> before),
each in an input schema (the client writes) and in an output schema (the server writes). The class of a
comparison is the most severe class of its changes, which is what ``--fail-on`` gates on.

B breaking, D dangerous, M minor.
"""

from __future__ import annotations

import copy
import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from mcpreel.cli import cli
from mcpreel.contract import compare
from mcpreel.contract.change import same
from mcpreel.contract.compare import ANNOTATIONS
from mcpreel.contract.snapshot import from_lists

B, D, M = "breaking", "dangerous", "minor"

S = {"type": "string"}
N = {"type": "number"}
I = {"type": "integer"}  # noqa: E741 (a JSON Schema type)
A = {"type": "array", "items": {"type": "string"}}


def _c(v: Any) -> dict[str, Any]:
    return {"const": v}


# (id, before, after, forward input, forward output, backward input, backward output)
ROWS: list[tuple[str, dict[str, Any], dict[str, Any], str, str, str, str]] = [
    # -- one set of values, four spellings (the issue's case first: Pydantic writes Literal["a"] as const)
    ("enum-to-const", {**S, "enum": ["fast", "deep"]}, {**S, "const": "fast"}, B, M, D, B),
    ("enum-value-removed", {**S, "enum": ["fast", "deep"]}, {**S, "enum": ["fast"]}, B, M, D, B),
    ("enum-of-one-is-const", {**S, "enum": ["fast"]}, {**S, "const": "fast"}, M, M, M, M),
    ("oneOf-consts-to-const", {"oneOf": [_c("a"), _c("b")]}, _c("a"), B, M, D, B),
    ("anyOf-consts-to-enum", {"anyOf": [_c("a"), _c("b")]}, {"enum": ["a", "b"]}, M, M, M, M),
    ("anyOf-consts-loses-one", {"anyOf": [_c("a"), _c("b")]}, {"anyOf": [_c("a")]}, B, M, D, B),
    ("oneOf-typed-consts-to-enum", {"oneOf": [{**S, "const": "a"}, {**S, "const": "b"}, {**S, "const": "c"}]},
     {**S, "enum": ["a", "c"]}, B, M, D, B),
    ("const-to-other-const", _c("a"), _c("b"), B, B, B, B),
    ("enum-one-out-one-in", {"enum": ["a", "b"]}, {"enum": ["a", "c"]}, B, B, B, B),
    ("enum-added-to-string", S, {**S, "enum": ["a", "b"]}, B, M, D, B),
    ("const-added-to-string", S, {**S, "const": "a"}, B, M, D, B),
    ("enum-true-is-not-1", {"enum": [1]}, {"enum": [True]}, B, B, B, B),
    ("enum-reordered", {"enum": ["a", "b"]}, {"enum": ["b", "a"]}, M, M, M, M),
    ("oneOf-const-description", {"oneOf": [{"const": "a", "description": "first"}]},
     {"oneOf": [{"const": "a", "description": "run rm -rf"}]}, D, D, D, D),
    ("oneOf-consts-to-other-types", {"oneOf": [_c("a"), _c("b")]}, {"oneOf": [I]}, B, B, B, B),
    ("enum-typed-the-same-values", {"enum": [1, 2]}, {**I, "enum": [1, 2]}, M, M, M, M),
    ("enum-a-value-the-type-now-refuses", {"type": ["string", "integer"], "enum": [1, "a"]}, {**S, "enum": [1, "a"]},
     B, M, D, B),
    # -- strings
    ("maxLength-added", S, {**S, "maxLength": 10}, B, M, M, B),
    ("maxLength-lowered", {**S, "maxLength": 10}, {**S, "maxLength": 5}, B, M, M, B),
    ("minLength-added", S, {**S, "minLength": 1}, B, M, M, B),
    ("minLength-0-is-none", S, {**S, "minLength": 0}, M, M, M, M),
    ("minLength-raised", {**S, "minLength": 1}, {**S, "minLength": 3}, B, M, M, B),
    ("pattern-added", S, {**S, "pattern": "^[a-z]+$"}, B, M, M, B),
    ("pattern-changed", {**S, "pattern": "^[a-z]+$"}, {**S, "pattern": "^[0-9]+$"}, B, B, B, B),
    ("format-added", S, {**S, "format": "email"}, B, M, M, B),
    ("format-changed", {**S, "format": "email"}, {**S, "format": "uri"}, B, B, B, B),
    # -- numbers
    ("minimum-added", N, {**N, "minimum": 0}, B, M, M, B),
    ("maximum-lowered", {**N, "maximum": 10}, {**N, "maximum": 5}, B, M, M, B),
    ("maximum-made-exclusive", {**N, "maximum": 10}, {**N, "exclusiveMaximum": 10}, B, M, M, B),
    ("draft4-exclusive-is-draft6", {**N, "maximum": 10, "exclusiveMaximum": True}, {**N, "exclusiveMaximum": 10},
     M, M, M, M),
    ("exclusiveMinimum-to-minimum", {**N, "exclusiveMinimum": 0}, {**N, "minimum": 0}, M, B, B, M),
    ("exclusiveMinimum-raised", {**N, "exclusiveMinimum": 0}, {**N, "exclusiveMinimum": 1}, B, M, M, B),
    ("minimum-and-exclusive-tightest-wins", {**N, "minimum": 0}, {**N, "minimum": 0, "exclusiveMinimum": 5}, B, M, M, B),
    ("multipleOf-added", I, {**I, "multipleOf": 2}, B, M, M, B),
    ("multipleOf-2-to-4", {**I, "multipleOf": 2}, {**I, "multipleOf": 4}, B, M, M, B),
    ("multipleOf-2-to-3", {**I, "multipleOf": 2}, {**I, "multipleOf": 3}, B, B, B, B),
    ("multipleOf-decimal", {**N, "multipleOf": 0.1}, {**N, "multipleOf": 0.5}, B, M, M, B),
    # -- arrays
    ("maxItems-added", A, {**A, "maxItems": 5}, B, M, M, B),
    ("minItems-raised", {**A, "minItems": 1}, {**A, "minItems": 2}, B, M, M, B),
    ("uniqueItems-added", A, {**A, "uniqueItems": True}, B, M, M, B),
    ("items-narrowed", A, {**A, "items": {**S, "maxLength": 3}}, B, M, M, B),
    ("items-enum-narrowed", {"type": "array", "items": {"enum": ["a", "b"]}},
     {"type": "array", "items": {"const": "a"}}, B, M, D, B),
    # -- objects
    ("additionalProperties-false-added", {"type": "object"}, {"type": "object", "additionalProperties": False},
     B, M, M, D),
    ("additionalProperties-schema-narrowed", {"type": "object", "additionalProperties": S},
     {"type": "object", "additionalProperties": {**S, "maxLength": 2}}, B, M, M, B),
    ("additionalProperties-false-to-schema", {"type": "object", "additionalProperties": False},
     {"type": "object", "additionalProperties": S}, M, D, B, M),
    ("required-added", {"type": "object", "properties": {"a": S}},
     {"type": "object", "properties": {"a": S}, "required": ["a"]}, B, M, M, B),
    ("required-added-for-an-unlisted-member", {"type": "object"}, {"type": "object", "required": ["a"]}, B, M, M, B),
    ("maxProperties-added", {"type": "object"}, {"type": "object", "maxProperties": 3}, B, M, M, B),
    # -- types
    ("number-to-integer", N, I, B, M, M, B),
    ("nullable-to-not", {"type": ["string", "null"]}, S, B, M, M, B),
    ("string-to-boolean", S, {"type": "boolean"}, B, B, B, B),
    ("type-added", {}, S, B, M, M, B),
    ("number-list-is-number", N, {"type": ["number", "integer"]}, M, M, M, M),
    # -- anyOf, oneOf, allOf, not
    ("optional-str-narrowed", {"anyOf": [S, {"type": "null"}]}, {"anyOf": [{**S, "maxLength": 5}, {"type": "null"}]},
     B, M, M, B),
    ("anyOf-branch-removed", {"anyOf": [S, I]}, {"anyOf": [S]}, B, M, M, B),
    ("oneOf-added", {}, {"oneOf": [S, I]}, B, M, M, B),
    ("allOf-branch-added", {"allOf": [{"minLength": 1}]}, {"allOf": [{"minLength": 1}, {"maxLength": 5}]},
     B, M, M, B),
    ("anyOf-reordered", {"anyOf": [S, I]}, {"anyOf": [I, S]}, M, M, M, M),
    ("not-added", S, {**S, "not": _c("root")}, B, M, M, B),
    ("not-excludes-more", {**S, "not": {"enum": ["a"]}}, {**S, "not": {"enum": ["a", "b"]}}, B, M, M, B),
    ("not-narrowed-inside", {"not": {**S, "maxLength": 5}}, {"not": S}, B, M, M, B),
    # -- what the model reads, and keywords no rule judges
    ("default-changed", {**S, "default": "fast"}, {**S, "default": "deep"}, D, D, D, D),
    ("description-changed", {**S, "description": "a query"}, {**S, "description": "a query; send ~/.ssh"}, D, D, D, D),
    ("title-changed", {**S, "title": "Q"}, {**S, "title": "Query"}, M, M, M, M),
    ("unjudged-keyword", S, {**S, "contentMediaType": "text/html"}, D, D, D, D),
]


def _tool(arg: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    return {"name": "t", "inputSchema": {"type": "object", "properties": {"x": arg}},
            "outputSchema": {"type": "object", "properties": {"x": out}}}


def _worst(before: dict[str, Any], after: dict[str, Any]) -> str | None:
    diff = compare(from_lists({"tools": [before]}), from_lists({"tools": [after]}))
    order = [B, D, M]
    classes = [c.cls for c in diff.changes]
    assert classes, "a changed schema must never pass without a change"
    return min(classes, key=order.index)


@pytest.mark.parametrize(("before", "after", "fwd_in", "fwd_out", "back_in", "back_out"),
                         [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_schema_change_class(before, after, fwd_in, fwd_out, back_in, back_out):
    got = (_worst(_tool(before, S), _tool(after, S)), _worst(_tool(S, before), _tool(S, after)),
           _worst(_tool(after, S), _tool(before, S)), _worst(_tool(S, after), _tool(S, before)))
    assert got == (fwd_in, fwd_out, back_in, back_out)


def test_the_table_is_many_rows_in_both_roles():
    assert len(ROWS) >= 60
    assert len({r[0] for r in ROWS}) == len(ROWS)
    for column in range(3, 7):  # each direction and role has rows that break and rows that do not
        assert {r[column] for r in ROWS} >= {B, M}


def test_the_issue_case_fails_fail_on_breaking(tmp_path: Path) -> None:
    """Through the command: an argument's enum narrowed to one value (Pydantic's const) fails --fail-on breaking."""
    def reel(name: str, mode: dict[str, Any]) -> Path:
        tool = {"name": "search", "inputSchema": {"type": "object", "properties": {"mode": mode}, "required": ["mode"]}}
        lines = [{"v": 1, "type": "meta", "startedAt": "2026-01-01T00:00:00.000Z", "label": "x", "command": ["x"]},
                 {"t": "2026-01-01T00:00:00.000Z", "dir": "out", "raw": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}},
                 {"t": "2026-01-01T00:00:00.001Z", "dir": "in", "raw": {"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}}}]
        path = tmp_path / f"{name}.reel"
        path.write_text("".join(json.dumps(x) + "\n" for x in lines))
        return path

    contract = tmp_path / "mcp-contract.json"
    runner = CliRunner()
    before = reel("before", {"type": "string", "enum": ["fast", "deep"]})
    assert runner.invoke(cli, ["contract", "snapshot", str(before), "-o", str(contract)]).exit_code == 0
    after = reel("after", {"type": "string", "const": "fast"})
    result = runner.invoke(cli, ["contract", "check", str(contract), str(after), "--fail-on", "breaking"])
    assert result.exit_code == 1, result.output
    assert "enum value(s) removed: [\"deep\"]" in result.output and "FAIL breaking" in result.output
    assert "enum restriction dropped" not in result.output


# -- schemas as Pydantic writes them (the SDK's MCPServer builds tool schemas with Pydantic) --------------------

class Mode(StrEnum):
    fast = "fast"
    deep = "deep"


class Narrow(StrEnum):
    fast = "fast"


def _pydantic_tool(model: type[BaseModel]) -> dict[str, Any]:
    return {"name": "search", "inputSchema": model.model_json_schema()}


class ArgsV1(BaseModel):
    mode: Literal["fast", "deep"]
    kind: Mode
    q: Annotated[str, Field(max_length=100)]
    n: Annotated[int, Field(ge=0)] = 0
    tag: str | None = None


class ArgsLiteralNarrowed(ArgsV1):
    mode: Literal["fast"]  # type: ignore[assignment]


class ArgsEnumNarrowed(ArgsV1):
    kind: Narrow  # type: ignore[assignment]


class ArgsShorter(ArgsV1):
    q: Annotated[str, Field(max_length=10)]


class ArgsPositive(ArgsV1):
    n: Annotated[int, Field(gt=0)] = 1


class ArgsTagPattern(ArgsV1):
    tag: Annotated[str, Field(pattern="^[a-z]+$")] | None = None


@pytest.mark.parametrize(("model", "rule", "path"), [
    (ArgsLiteralNarrowed, "enum-value-removed", "/tools/search/inputSchema/properties/mode/const"),
    (ArgsEnumNarrowed, "enum-value-removed", "/tools/search/inputSchema/properties/kind/$ref/enum"),
    (ArgsShorter, "constraint-narrowed", "/tools/search/inputSchema/properties/q/maxLength"),
    (ArgsPositive, "constraint-narrowed", "/tools/search/inputSchema/properties/n/exclusiveMinimum"),
    (ArgsTagPattern, "constraint-narrowed", "/tools/search/inputSchema/properties/tag/anyOf/0/pattern"),
], ids=["Literal", "Enum-in-$defs", "max_length", "gt", "Optional-pattern"])
def test_pydantic_narrowings_are_breaking_and_the_reverse_is_not(model, rule, path):
    old, new = from_lists({"tools": [_pydantic_tool(ArgsV1)]}), from_lists({"tools": [_pydantic_tool(model)]})
    diff = compare(old, new, fail_on="breaking")
    assert diff.exit_code == 1
    assert (B, rule, path) in [(c.cls, c.rule, c.path) for c in diff.changes], diff.to_json()
    back = compare(new, old, fail_on="breaking")
    assert back.exit_code == 0, back.to_json()


def test_a_renamed_ref_compares_what_it_points_at():
    base = {"type": "object", "properties": {"m": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"enum": ["x", "y"], "type": "string"}}}
    same = copy.deepcopy(base)
    same["properties"]["m"]["$ref"] = "#/$defs/B"
    same["$defs"] = {"B": base["$defs"]["A"]}
    narrowed = copy.deepcopy(same)
    narrowed["$defs"]["B"] = {"const": "x", "type": "string"}

    def diff(a, b):
        return [(c.cls, c.rule) for c in compare(from_lists({"tools": [{"name": "t", "inputSchema": a}]}),
                                                  from_lists({"tools": [{"name": "t", "inputSchema": b}]})).changes]

    assert (B, "enum-value-removed") not in diff(base, same) and (M, "ref-renamed") in diff(base, same)
    assert (B, "enum-value-removed") in diff(base, narrowed)


# -- annotations, row by row --------------------------------------------------------------------------------

_ = object()  # absent
# (annotation, before, after, expected (class, rule) or None for "no change")
ANNOTATION_ROWS: list[tuple[str, Any, Any, tuple[str, str] | None]] = [
    # readOnlyHint: default false, safe true
    ("readOnlyHint", _, True, (M, "annotation-tightened")),
    ("readOnlyHint", _, False, None),
    ("readOnlyHint", False, True, (M, "annotation-tightened")),
    ("readOnlyHint", True, False, (D, "annotation-loosened")),
    ("readOnlyHint", True, _, (D, "annotation-loosened")),
    ("readOnlyHint", False, _, None),
    ("readOnlyHint", _, "yes", (D, "annotation-changed")),
    ("readOnlyHint", True, "yes", (D, "annotation-loosened")),
    ("readOnlyHint", "yes", True, (M, "annotation-tightened")),
    # destructiveHint: default true, safe false
    ("destructiveHint", _, False, (M, "annotation-tightened")),
    ("destructiveHint", _, True, None),
    ("destructiveHint", True, False, (M, "annotation-tightened")),
    ("destructiveHint", False, True, (D, "annotation-loosened")),
    ("destructiveHint", False, _, (D, "annotation-loosened")),
    ("destructiveHint", True, _, None),
    ("destructiveHint", _, "no", (D, "annotation-changed")),
    ("destructiveHint", False, "no", (D, "annotation-loosened")),
    ("destructiveHint", "no", False, (M, "annotation-tightened")),
    # idempotentHint: default false, safe true
    ("idempotentHint", _, True, (M, "annotation-tightened")),
    ("idempotentHint", _, False, None),
    ("idempotentHint", False, True, (M, "annotation-tightened")),
    ("idempotentHint", True, False, (D, "annotation-loosened")),
    ("idempotentHint", True, _, (D, "annotation-loosened")),
    ("idempotentHint", False, _, None),
    ("idempotentHint", _, 1, (D, "annotation-changed")),
    ("idempotentHint", True, 0, (D, "annotation-loosened")),
    # openWorldHint: default true, safe false (the row the issue saw pass every test when classed minor)
    ("openWorldHint", _, False, (M, "annotation-tightened")),
    ("openWorldHint", _, True, None),
    ("openWorldHint", True, False, (M, "annotation-tightened")),
    ("openWorldHint", False, True, (D, "annotation-loosened")),
    ("openWorldHint", False, _, (D, "annotation-loosened")),
    ("openWorldHint", True, _, None),
    ("openWorldHint", _, "closed", (D, "annotation-changed")),
    ("openWorldHint", False, "closed", (D, "annotation-loosened")),
    # title: describing only
    ("title", _, "Search", (M, "annotation-changed")),
    ("title", "Search", "Search everything", (M, "annotation-changed")),
    ("title", "Search", _, (M, "annotation-changed")),
    ("title", "Search", "Search", None),
    # a hint no version of the spec names: never silent, never minor
    ("exfiltratesHint", _, False, (D, "annotation-changed")),
]


@pytest.mark.parametrize(("key", "before", "after", "expected"), ANNOTATION_ROWS,
                         ids=[f"{r[0]}:{'absent' if r[1] is _ else r[1]}->{'absent' if r[2] is _ else r[2]}"
                              for r in ANNOTATION_ROWS])
def test_annotation_class(key, before, after, expected):
    def tool(value):
        annotations = {} if value is _ else {key: value}
        return {"name": "t", "inputSchema": {"type": "object"}, "annotations": annotations}

    changes = compare(from_lists({"tools": [tool(before)]}), from_lists({"tools": [tool(after)]})).changes
    if expected is None:
        assert changes == []
    else:
        assert [(c.cls, c.rule, c.path) for c in changes] == [(*expected, f"/tools/t/annotations/{key}")]


def test_every_annotation_and_direction_has_rows():
    for key in ANNOTATIONS:
        rows = [r for r in ANNOTATION_ROWS if r[0] == key]
        assert {r[3][1] for r in rows if r[3]} == {"annotation-tightened", "annotation-loosened", "annotation-changed"}
        assert any(r[3] is None and r[1] is _ for r in rows)  # the default spelled out: no change (issue 34)
    assert any(r[0] == "title" for r in ANNOTATION_ROWS)


# -- any pair of schemas, well-formed or not: the comparison ends, and is silent only when nothing changed ----

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.5, 1.0, 2.5]),
                     st.sampled_from(["a", "b", "^[a-z]+$", "email", "#/$defs/A", "#/$defs/B", "string"]))
_types = st.one_of(st.sampled_from(["string", "number", "integer", "boolean", "null", "object", "array"]),
                   st.lists(st.sampled_from(["string", "number", "integer", "null"]), max_size=3), _scalars)


def _schemas(children):
    keys = {
        "type": _types, "enum": st.one_of(st.lists(_scalars, max_size=3), _scalars), "const": _scalars,
        "maxLength": _scalars, "minLength": _scalars, "minimum": _scalars, "maximum": _scalars,
        "exclusiveMaximum": _scalars, "exclusiveMinimum": _scalars, "multipleOf": _scalars, "pattern": _scalars,
        "format": _scalars, "uniqueItems": _scalars, "description": _scalars, "default": _scalars,
        "required": st.one_of(st.lists(st.sampled_from(["a", "b"]), max_size=2), _scalars), "$ref": _scalars,
        "anyOf": st.one_of(st.lists(children, max_size=3), _scalars), "oneOf": st.lists(children, max_size=3),
        "allOf": st.lists(children, max_size=2), "not": st.one_of(children, _scalars), "items": st.one_of(children, _scalars),
        "properties": st.dictionaries(st.sampled_from(["a", "b"]), children, max_size=2),
        "additionalProperties": st.one_of(st.booleans(), children), "$defs": st.dictionaries(st.sampled_from(["A", "B"]),
                                                                                             children, max_size=2),
        "if": children,
    }
    return st.fixed_dictionaries({}, optional=keys)


_schema = st.recursive(st.fixed_dictionaries({}, optional={"type": _types, "const": _scalars, "enum": st.lists(_scalars, max_size=3)}),
                       _schemas, max_leaves=12)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_schema, _schema)
def test_any_pair_is_compared_and_silent_only_when_the_same(a, b):
    for role_key in ("inputSchema", "outputSchema"):
        old = from_lists({"tools": [{"name": "t", role_key: a}]})
        new = from_lists({"tools": [{"name": "t", role_key: b}]})
        changes = compare(old, new).changes
        assert (changes == []) == same(a, b), [c.to_json() for c in changes]
        assert compare(old, old).changes == []


@pytest.mark.parametrize("junk", [[["a"]], [{"a": 1}], [1, None, ["x"]]])
def test_a_damaged_required_list_is_read_for_its_names_only(junk):
    """The hostile-contract fuzz family (issue 28) found ``required: [["a"]]`` a TypeError traceback: the
    items that are no member name are left out, so "x" is now required."""
    from mcpreel.contract.schema import schema_changes

    old = {"type": "object", "properties": {"x": {"type": "string"}}, "required": junk}
    new = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
    out: list = []
    schema_changes(old, new, "$", "input", out)
    assert [(c.cls, c.rule, c.path) for c in out] == [("breaking", "property-now-required", "$/required")], out
