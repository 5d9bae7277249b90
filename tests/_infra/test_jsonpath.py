"""_infra.jsonpath: the one JSONPath parser, its steps, and the copy-on-write rewrite."""

from __future__ import annotations

import pytest

from mcpreel._infra.jsonpath import JsonPath, PathSyntaxError, Step, parse


def test_jsonpath_subset():
    doc = {"a": [{"b": 1}, {"b": 2}], "c": {"b": 3}, "d e": 4}
    hits = []

    def seen(v):
        hits.append(v)
        return v, 0

    for text, expected in [("$.a[*].b", [1, 2]), ("$..b", [1, 2, 3]), ("$.a[-1].b", [2]), ("$['d e']", [4]),
                           ("$.c.*", [3]), ("$", [doc])]:
        hits.clear()
        JsonPath(text).apply(doc, seen)
        assert hits == expected, text


def test_steps_say_what_and_where() -> None:
    assert parse(" $.a[0]['b c'][*]..d.* ") == (Step("key", "a", 1), Step("index", 0, 3), Step("key", "b c", 6),
                                                 Step("wild", None, 13), Step("desc", "d", 16), Step("wild", None, 19))
    assert parse("$[ -2 ]") == (Step("index", -2, 1),)


@pytest.mark.parametrize(("text", "key"), [("$['it\\'s']", "it's"), ('$["a\\"b"]', 'a"b'), ("$['\\u00e9']", "é"),
                                           ("$['a\\\\b']", "a\\b"), ("$['a\\.b']", "a.b")])
def test_quoted_names_and_their_escapes(text: str, key: str) -> None:
    assert parse(text) == (Step("key", key, 1),)


@pytest.mark.parametrize(("text", "rest"), [("a.b", "a.b"), ("$.a[", "["), ("$.a b", " b"), ("$[?]", "[?]")])
def test_unreadable_paths_say_where(text: str, rest: str) -> None:
    with pytest.raises(PathSyntaxError) as err:
        parse(text)
    assert err.value.rest == rest


def test_apply_copies_only_along_the_changed_paths() -> None:
    doc = {"a": {"x": 1}, "b": {"x": 2}}
    new, n = JsonPath("$.a.x").apply(doc, lambda v: (v + 10, 1))
    assert n == 1 and new == {"a": {"x": 11}, "b": {"x": 2}}
    assert new["b"] is doc["b"] and doc["a"]["x"] == 1
    same, n = JsonPath("$.c").apply(doc, lambda v: (v, 1))
    assert same is doc and n == 0


def test_a_keyed_step_names_the_items_of_a_list_by_a_member() -> None:
    assert parse("$.t[name=add].d") == (Step("key", "t", 1), Step("keyed", ("name", "add"), 3), Step("key", "d", 13))
    assert parse('$.r[uri="a b]c"]') == (Step("key", "r", 1), Step("keyed", ("uri", "a b]c"), 3))
    assert parse("$.r[ uri = x://1/2 ]") == (Step("key", "r", 1), Step("keyed", ("uri", "x://1/2"), 3))
    doc = {"t": [{"name": "add", "d": 1}, {"name": "echo", "d": 2}, "add"]}
    new, n = JsonPath("$.t[name=add].d").apply(doc, lambda v: (v + 10, 1))
    assert n == 1 and new["t"][0]["d"] == 11 and new["t"][1] is doc["t"][1]
