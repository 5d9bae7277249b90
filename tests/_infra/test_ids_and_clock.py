"""One copy of each primitive: the two id rules (and why they differ) and the one clock."""

from __future__ import annotations

import ast
import time
from pathlib import Path

from mcpreel._infra.correlation import Correlator, correlation_key, verbatim_key
from mcpreel._infra.timeutil import now_ms

SRC = Path(__file__).resolve().parents[2] / "src" / "mcpreel"


def test_correlation_key_only_strings_and_numbers_correlate():
    assert correlation_key(1) != correlation_key("1")
    assert correlation_key(1) == correlation_key(1.0)
    for not_an_id in (None, True, False, {"a": 1}, [1]):
        assert correlation_key(not_an_id) is None
    c: Correlator[str] = Correlator()
    assert c.request("in", 1, "req") and not c.request("in", True, "bad")
    assert c.response("out", "1") is None and c.response("out", 1) == "req"


def test_verbatim_key_keys_every_value_and_keeps_types_apart():
    keys = [verbatim_key(v) for v in (1, "1", 1.0, True, None, {"a": 1}, [1], [True])]
    assert len(set(keys)) == len(keys)
    assert verbatim_key({"a": [1, 2]}) == verbatim_key({"a": [1, 2]})


def test_now_ms_is_the_wall_clock_in_integer_milliseconds():
    before = int(time.time() * 1000)
    t = now_ms()
    assert isinstance(t, int) and before - 1 <= t <= int(time.time() * 1000) + 1


def test_one_definition_of_each_primitive():
    defined: dict[str, list[str]] = {}
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name in ("now_ms", "_now_ms", "id_key", "_key",
                                                                    "correlation_key", "verbatim_key"):
                defined.setdefault(node.name, []).append(str(path.relative_to(SRC)))
    assert defined == {"now_ms": ["_infra/timeutil.py"], "correlation_key": ["_infra/correlation.py"],
                       "verbatim_key": ["_infra/correlation.py"]}


def test_correlator_queues_a_reused_id_first_in_first_out_and_keeps_its_place():
    c: Correlator[str] = Correlator()
    for rid, token in ((1, "a"), ("x", "b"), (1.0, "c"), (1, "d")):
        assert c.request("in", rid, token)
    assert len(c) == 4
    assert c.response("out", 1) == "a"  # 1 and 1.0 are one id, answered in the order asked
    assert c.pending() == ["c", "d", "b"]  # the key of id 1 keeps its place while requests wait under it
    assert c.response("in", 1) is None  # a response going in answers a request that went out
    assert [c.response("out", 1), c.response("out", 1), c.response("out", 1)] == ["c", "d", None]
    assert c.request("in", 1, "e") and c.pending() == ["b", "e"]
    assert c.request("out", None, "f") is False and len(c) == 2
