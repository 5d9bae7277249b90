"""Normalization (what "the same" means) and the path-level JSON diff."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpreel.compare.jsondiff import diff
from mcpreel.compare.normalize import IgnorePath, canonical_params, comparable, strip_volatile_meta
from mcpreel.errors import UsageError

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


def test_volatile_meta_is_dropped_and_the_rest_kept():
    params = {"name": "x", "_meta": {"progressToken": 7, "traceparent": "00-a", "tracestate": "b", "baggage": "c",
                                     "custom": 1}}
    assert strip_volatile_meta(params) == {"name": "x", "_meta": {"custom": 1}}
    assert strip_volatile_meta({"name": "x", "_meta": {"progressToken": 1}}) == {"name": "x"}


def test_canonical_params_ignore_member_order_and_missing_params():
    assert canonical_params({"b": 1, "a": {"d": 1, "c": 2}}) == canonical_params({"a": {"c": 2, "d": 1}, "b": 1})
    assert canonical_params(None) == canonical_params({})
    assert canonical_params({"x": 1, "_meta": {"progressToken": 1}}) == canonical_params({"x": 1})
    assert canonical_params({"x": 1, "_meta": {"progressToken": 1}}, strict=True) != canonical_params({"x": 1}, strict=True)


def test_comparable_drops_id_and_meta_everywhere_and_parses_json_text():
    a = {"jsonrpc": "2.0", "id": 1, "result": {"_meta": {"x": 1}, "content": [
        {"type": "text", "text": '{"b": 2, "a": [1, {"_meta": 5, "c": 3}]}', "_meta": {"y": 2}}]}}
    b = {"jsonrpc": "2.0", "id": "other", "result": {"content": [{"type": "text", "text": '{"a":[1,{"c":3}],"b":2}'}]}}
    assert comparable(a) == comparable(b)
    assert comparable(a)["result"]["content"][0]["text"] == {"b": 2, "a": [1, {"c": 3}]}


def test_text_that_is_not_json_stays_text():
    view = comparable({"result": {"content": [{"type": "text", "text": "{not json"}, {"type": "text", "text": "42"}]}})
    assert view["result"]["content"] == [{"type": "text", "text": "{not json"}, {"type": "text", "text": "42"}]


def test_error_where_a_result_was_recorded_is_a_difference():
    found = diff(comparable({"id": 1, "result": {"ok": True}}), comparable({"id": 1, "error": {"code": -1, "message": "x"}}))
    assert {(d.path, d.kind) for d in found} == {("$.result", "removed"), ("$.error", "added")}


@pytest.mark.parametrize("path", [
    "$.result.content[0].text.timestamp", "result.content[0].text.timestamp", "$.result.content[*].text.timestamp",
    "$.result.*[0].text.timestamp", "$['result'][\"content\"][0].text['timestamp']",
])
def test_ignore_paths_reach_into_json_text(path):
    rec = {"result": {"content": [{"type": "text", "text": '{"timestamp": 1, "v": 2}'}]}}
    new = {"result": {"content": [{"type": "text", "text": '{"timestamp": 99, "v": 2}'}]}}
    ignore = [IgnorePath(path)]
    assert diff(comparable(rec), comparable(new)) != []
    assert diff(comparable(rec, ignore), comparable(new, ignore)) == []


def test_ignore_path_deletes_array_items_and_keys_with_dots():
    doc = {"result": {"a.b": 1, "list": [1, 2, 3]}}
    IgnorePath("$.result['a.b']").delete(doc)
    IgnorePath("$.result.list[1]").delete(doc)
    assert doc == {"result": {"list": [1, 3]}}


@pytest.mark.parametrize("bad", ["$", "$.a[", "$.a b", "$[name=]"])
def test_unreadable_ignore_paths_are_usage_errors(bad):
    with pytest.raises(UsageError, match="--ignore-path"):
        IgnorePath(bad)


def test_ignore_paths_descend_and_name_list_items():
    doc = {"result": {"at": 1, "items": [{"name": "a", "at": 2, "v": 1}, {"name": "b c", "v": 2}], "x": [5, 6]}}
    IgnorePath("$..at").delete(doc)
    assert doc == {"result": {"items": [{"name": "a", "v": 1}, {"name": "b c", "v": 2}], "x": [5, 6]}}
    IgnorePath('$.result.items[name="b c"].v').delete(doc)
    IgnorePath("$.result.items[name=a]").delete(doc)
    IgnorePath("$.result.x[-1]").delete(doc)
    assert doc == {"result": {"items": [{"name": "b c"}], "x": [5]}}


def test_a_long_changed_text_shows_a_window_around_its_first_difference():
    head = "x" * 200
    d = diff({"t": head + "created 2026-01-01T00:00:00Z" + "y" * 200}, {"t": head + "created 2026-01-01T00:00:09Z" + "y" * 200})[0]
    line = d.describe(100)
    assert line.count("…") == 4 and "00:00:00Z" in line and "00:00:09Z" in line
    assert line.endswith("(first difference at character 227)")
    short = diff({"t": "abc"}, {"t": "abd"})[0]
    assert short.describe(100) == '$.t: "abc" -> "abd"'


def test_list_results_are_compared_by_key_and_other_lists_by_position():
    a = {"result": {"resources": [{"uri": "r://1", "n": 1}, {"uri": "r://2", "n": 2}], "content": [1, 2]}}
    b = {"result": {"resources": [{"uri": "r://2", "n": 2}, {"uri": "r://1", "n": 9}], "content": [2, 1]}}
    assert [(d.path, d.recorded, d.new) for d in diff(a, b)] == [
        ("$.result.resources[uri=r://1].n", 1, 9), ("$.result.content[0]", 1, 2), ("$.result.content[1]", 2, 1)]
    # items that do not all carry a distinct key are compared by position
    dup = {"result": {"tools": [{"name": "a", "v": 1}, {"name": "a", "v": 2}]}}
    flip = {"result": {"tools": [{"name": "a", "v": 2}, {"name": "a", "v": 1}]}}
    assert [d.path for d in diff(dup, flip)] == ["$.result.tools[0].v", "$.result.tools[1].v"]


def test_diff_paths_and_kinds():
    found = diff({"a": 1, "b": [1, 2], "c": {"x": True}, "weird key": 1},
                 {"a": 2, "b": [1], "c": {"x": 1}, "d": None, "weird key": 1})
    assert [(d.path, d.kind) for d in found] == [
        ("$.a", "changed"), ("$.b[1]", "removed"), ("$.c.x", "changed"), ("$.d", "added")]
    assert found[0].describe() == "$.a: 1 -> 2"
    assert diff({"k k": 1}, {"k k": 2})[0].path == '$["k k"]'


def test_numbers_compare_as_json_numbers():
    assert diff({"n": 1}, {"n": 1.0}) == []
    assert diff({"n": True}, {"n": 1}) != []
    assert diff({"n": 0}, {"n": False}) != []


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_a_value_never_differs_from_itself(value):
    assert diff(value, value) == []


@settings(max_examples=200, deadline=None)
@given(json_values, json_values)
def test_diff_is_empty_exactly_when_values_are_equal_json(a, b):
    def same(x, y):
        if type(x) is bool or type(y) is bool:
            return type(x) is type(y) and x == y
        if isinstance(x, (int, float)) and isinstance(y, (int, float)):
            return x == y
        if isinstance(x, dict) and isinstance(y, dict):
            return x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
        if isinstance(x, list) and isinstance(y, list):
            return len(x) == len(y) and all(same(p, q) for p, q in zip(x, y, strict=True))
        return type(x) is type(y) and x == y

    assert (diff(a, b) == []) == same(a, b)
    # swapping sides swaps added and removed, and finds the same paths
    assert sorted(d.path for d in diff(a, b)) == sorted(d.path for d in diff(b, a))
