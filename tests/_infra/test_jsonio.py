"""Faithful JSON: what orjson alone would change."""

from __future__ import annotations

import math

import pytest

from mcpreel._infra import jsonio


@pytest.mark.parametrize("text", [
    b'{"a":123456789012345678901234567890}',
    b'{"a":-9223372036854775809}',
    b'{"a":18446744073709551616}',
    b'[NaN,Infinity,-Infinity]',
    b'{"s":"\\ud800"}',
    b'{"b":"\xc3\xa9","c":1.5,"d":-0.0,"e":[true,null]}',
])
def test_round_trip_is_faithful(text):
    assert jsonio.dumps(jsonio.loads(text)) == text


def test_big_ints_stay_ints():
    v = jsonio.loads(b'{"a":123456789012345678901234567890}')["a"]
    assert isinstance(v, int) and v == 123456789012345678901234567890


def test_nan_reads_as_a_float_constant():
    v = jsonio.loads("[NaN]")[0]
    assert math.isnan(v) and isinstance(v, jsonio.JSONConstant)


def test_dumps_is_compact_and_keeps_order():
    assert jsonio.dumps({"z": 1, "a": [1, {"y": "é"}]}) == '{"z":1,"a":[1,{"y":"é"}]}'.encode()


def test_strict_refuses_duplicate_members():
    assert jsonio.loads('{"a":1,"a":2}') == {"a": 2}
    with pytest.raises(ValueError, match="duplicate object member 'a'"):
        jsonio.loads_strict('{"a":1,"a":2}')


def test_deep_nesting_is_a_value_error():
    with pytest.raises(ValueError):
        jsonio.loads("[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize("bad", [b"{", b'{"a":}', b"\xff", b"", b"nul"])
def test_invalid_raises_value_error(bad):
    with pytest.raises(ValueError):
        jsonio.loads(bad)


def test_dumps_line_is_dumps_and_a_newline_in_one_buffer() -> None:
    from mcpreel._infra import jsonio

    for value in ({"a": [1, "é", None]}, {"s": "x\ud800y"}, [1.5, True], {"big": "z" * 100_000}):
        assert jsonio.dumps_line(value) == jsonio.dumps(value) + b"\n"
