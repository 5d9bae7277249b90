"""The replay's detail lines count their differences in words that agree with the count."""

from __future__ import annotations

from mcpreel.compare.jsondiff import Difference
from mcpreel.render.replay import _detail


def _result(n: int):
    from mcpreel.replay.results import RequestResult

    diff = [Difference(f"$.result.content[{i}].text", "changed", "a", "b") for i in range(n)]
    return RequestResult(2, "tools/call", "echo", "changed", {"jsonrpc": "2.0", "id": 2}, diff=diff)


def test_one_difference_is_singular_and_two_are_plural() -> None:
    assert _detail(_result(1))[0] == "#2 tools/call echo: 1 difference"
    assert _detail(_result(2))[0] == "#2 tools/call echo: 2 differences"
