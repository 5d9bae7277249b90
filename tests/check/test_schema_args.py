"""Arguments made from input schemas: each rule, and a property: what is made validates."""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpreel.check.schema_args import argument_problem, example_arguments, example_value, schema_problem


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "string"}, "example"),
        ({"type": "string", "format": "uri"}, "https://example.com/"),
        ({"type": "string", "format": "date-time"}, "2025-01-01T00:00:00Z"),
        ({"type": "string", "minLength": 10}, "examplexxx"),
        ({"type": "string", "maxLength": 3}, "exa"),
        ({"type": "string", "pattern": "^[0-9]+$"}, "0"),
        ({"type": "integer"}, 1),
        ({"type": "integer", "minimum": 5}, 5),
        ({"type": "integer", "maximum": -3}, -3),
        ({"type": "integer", "exclusiveMinimum": 10}, 11),
        ({"type": "number", "exclusiveMaximum": 1}, 0.5),
        ({"type": "integer", "minimum": 4, "multipleOf": 3}, 6),
        ({"type": "number", "minimum": 1, "maximum": 10}, 1),
        ({"type": "boolean"}, True),
        ({"type": "null"}, None),
        ({"type": ["null", "integer"]}, 1),
        ({"enum": ["error", "success"]}, "error"),
        ({"const": 42}, 42),
        ({"type": "string", "default": "Text"}, "Text"),
        ({"type": "string", "examples": ["cust_1"]}, "cust_1"),
        ({"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 3}]}, 3),
        ({"type": "array", "items": {"type": "integer"}, "minItems": 2}, [1, 1]),
        ({"type": "array", "items": {"type": "integer"}, "minItems": 2, "uniqueItems": True}, [1, 2]),
        ({"type": "array", "items": {"type": "string"}}, ["example"]),
    ],
)
def test_example_value(schema, value):
    assert example_value(schema) == value
    assert argument_problem({"type": "object", "properties": {"x": schema}, "required": ["x"]}, {"x": value}) is None


def test_only_required_properties_are_filled():
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer", "default": 10}},
              "required": ["a"]}
    assert example_arguments(schema) == {"a": "example"}


def test_refs_and_all_of():
    schema = {
        "type": "object",
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}},
        "properties": {"p": {"$ref": "#/$defs/Point"},
                       "q": {"allOf": [{"properties": {"y": {"type": "string"}}, "required": ["y"]},
                                       {"type": "object"}]}},
        "required": ["p", "q"],
    }
    args = example_arguments(schema)
    assert args == {"p": {"x": 1}, "q": {"y": "example"}}
    assert argument_problem(schema, args) is None


def test_a_cyclic_ref_ends():
    schema = {"$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}, "required": ["next"]}},
              "$ref": "#/$defs/N"}
    example_arguments(schema)  # returns (bounded depth) rather than recursing forever


def test_schema_problem():
    assert schema_problem({"type": "object", "properties": {}}) is None
    assert schema_problem({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}) is None
    assert "at properties/a/type" in schema_problem({"type": "object", "properties": {"a": {"type": "nope"}}})
    assert schema_problem(["not", "a", "schema"]) == "is not a JSON object"


def test_argument_problem():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert argument_problem(schema, {"a": 1}) is None
    assert "'a' is a required property" in argument_problem(schema, {})
    assert argument_problem({"type": "object", "properties": {"a": {"type": "nope"}}}, {}) is None  # invalid schema


_leaf = st.one_of(
    st.builds(lambda lo, span: {"type": "integer", "minimum": lo, "maximum": lo + span},
              st.integers(-1000, 1000), st.integers(0, 50)),
    st.builds(lambda lo: {"type": "number", "exclusiveMinimum": lo}, st.floats(-1e6, 1e6, allow_nan=False)),
    st.builds(lambda n, m: {"type": "string", "minLength": n, "maxLength": n + m},
              st.integers(0, 20), st.integers(0, 5)),
    st.sampled_from([{"type": "boolean"}, {"type": "null"}, {"type": "string", "format": "email"},
                     {"type": "string", "pattern": "^[a-z]+$"}, {"type": "string", "pattern": "^[A-Z]{3}$"}]),
    st.lists(st.one_of(st.integers(), st.text(max_size=5)), min_size=1, max_size=4).map(lambda v: {"enum": v}),
)


def _object(children):
    return st.dictionaries(st.from_regex(r"[a-z]{1,8}", fullmatch=True), children, max_size=4).flatmap(
        lambda props: st.lists(st.sampled_from(sorted(props)) if props else st.nothing(), unique=True).map(
            lambda req: {"type": "object", "properties": props, "required": req}))


_schemas = st.recursive(
    _leaf,
    lambda children: st.one_of(
        _object(children),
        st.builds(lambda items, n: {"type": "array", "items": items, "minItems": n}, children, st.integers(0, 3)),
        st.lists(children, min_size=1, max_size=3).map(lambda alts: {"anyOf": alts}),
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(_schemas)
def test_what_is_made_satisfies_the_schema(schema):
    value = example_value(schema)
    jsonschema.validate(value, schema)
