"""Issue 40, item 5: the indented writers (qai, mcp-recorder, mcp-cassette-pypi, and so ``record
--session-file``, which writes qai) indent a value to :data:`~mcpreel._infra.jsonio.INDENT_LEVELS` levels
and write what is nested deeper compact: indenting a value nested 1,000 levels deep whole costs a
megabyte of spaces, so a 1 MB session of such values became 437 MB of qai in two minutes. The values are
unchanged; the output grows with the input, not with the square of its depth."""

from __future__ import annotations

import json
import time
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from mcpreel._infra import jsonio
from mcpreel.cli import cli
from mcpreel.formats import open_session

META = '{"v": 1, "type": "meta", "startedAt": "2026-01-01T00:00:00.000Z", "label": "deep", "command": ["srv"]}'


def deep_reel(path: Path, depth: int, size: int) -> Path:
    lines = [META]
    total = 0
    i = 0
    while total < size:
        i += 1
        deep = "[" * depth + '"x"' + "]" * depth
        for line in (
                '{"t":"2026-01-01T00:00:00.000Z","dir":"in","raw":{"jsonrpc":"2.0","id":' + str(i)
                + ',"method":"tools/call","params":{"name":"t","arguments":{"a":' + deep + "}}}}",
                '{"t":"2026-01-01T00:00:00.001Z","dir":"out","raw":{"jsonrpc":"2.0","id":' + str(i)
                + ',"result":{"content":[],"deep":{"b":' + deep + "}}}}"):
            lines.append(line)
            total += len(line)
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.timeout(120)
@pytest.mark.parametrize("to", ["qai", "mcp-recorder", "mcp-cassette-pypi"])
@pytest.mark.parametrize("depth", [240, 1000])
def test_deep_members_are_written_compact_in_linear_time(tmp_path: Path, to: str, depth: int) -> None:
    src = deep_reel(tmp_path / "deep.reel", depth, 300_000)
    out = tmp_path / f"out.{to}"
    started = time.monotonic()
    result = CliRunner().invoke(cli, ["convert", str(src), str(out), "--to", to])
    took = time.monotonic() - started
    assert result.exit_code == 0, result.output[-500:]
    assert out.stat().st_size < 10 * src.stat().st_size, f"{out.stat().st_size:,} bytes written"
    assert took < 30, f"{took:.1f} s"
    # the values are the same: read back, the deep arguments are whole
    session, _ = open_session(out)
    deep = next(m.raw for m in session if m.raw and m.raw.get("method") == "tools/call")["params"]["arguments"]["a"]
    for _ in range(depth):
        assert isinstance(deep, list) and len(deep) == 1
        deep = deep[0]
    assert deep == "x"


def test_indented_bytes_are_orjsons_where_it_reaches_and_compact_past_the_levels() -> None:
    shallow = {"a": [1, 2.5, {"b": None, "c": "é"}], "d": {}, "e": [], "f": True, "g": {"h": [[["i"]]]}}
    assert jsonio.dumps_indented(shallow) == orjson.dumps(shallow, option=orjson.OPT_INDENT_2)
    big = {"n": 10**30, "s": "\ud800", "l": [1, 2]}  # what orjson refuses: the standard library's bytes
    assert jsonio.dumps_indented(big) == json.dumps(big, indent=2).encode()
    value: object = "leaf"
    for _ in range(1000):
        value = {"k": [value]}
    started = time.monotonic()
    text = jsonio.dumps_indented(value)
    assert time.monotonic() - started < 2
    assert len(text) < 40_000  # indented whole: 4 MB of spaces
    assert _same(text, value)
    lines = text.split(b"\n")
    assert max(len(ln) - len(ln.lstrip(b" ")) for ln in lines) == 2 * jsonio.INDENT_LEVELS


def _same(text: bytes, value: object) -> bool:
    # orjson reads 1024 levels and this value has 2000: the standard library, with room to recurse
    from mcpreel._infra.nesting import recursion_room

    with recursion_room(per_level=4):
        return bool(json.loads(text) == value)
