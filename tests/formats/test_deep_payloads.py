"""Issue 28, item 8: a value nested as deep as the readers accept (orjson's 1024 levels a line) passes
every verb, ``inspect -v`` (its row spool pickles payloads) and ``convert``'s URL-secret pass (it walks
the session's metadata) included; a deeper line is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpreel._infra import jsonio
from mcpreel._infra.nesting import MAX_DEPTH
from mcpreel.cli import cli
from mcpreel.inspection import Row, RowSpool
from mcpreel.redact.urls import redact_urls_in_value

SECRET = "Deep-Secret-77"
#: a reel line holds the payload 5 levels down (line, raw, result, deep, ...): the deepest a reader takes
DEEPEST = MAX_DEPTH - 6


def nested(depth: int, leaf: str = "x") -> str:
    return '{"a":' * depth + json.dumps(leaf) + "}" * depth


def deep_reel(tmp: Path, depth: int, *, in_metadata: bool = False) -> Path:
    meta = {"v": 1, "type": "meta", "startedAt": "2026-01-01T00:00:00.000Z", "label": "deep", "command": ["srv"]}
    head = json.dumps(meta)
    if in_metadata:
        head = head[:-1] + ', "metadata": ' + nested(depth, f"see https://h/mcp?api_key={SECRET}&x=1") + "}"
    lines = [head,
             '{"t":"2026-01-01T00:00:00.000Z","dir":"out","raw":{"jsonrpc":"2.0","id":1,"method":"tools/call",'
             '"params":{"name":"t","arguments":{"q":' + nested(depth - 2) + '}}}}',
             '{"t":"2026-01-01T00:00:00.001Z","dir":"in","raw":{"jsonrpc":"2.0","id":1,"result":{"deep":'
             + nested(depth) + '}}}']
    path = tmp / f"deep{depth}{'m' if in_metadata else ''}.reel"
    path.write_text("\n".join(lines) + "\n")
    return path


def _ok(args: list[str]) -> str:
    result = CliRunner().invoke(cli, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 0, result.output[-500:]
    return result.output


@pytest.mark.parametrize("depth", [600, DEEPEST])
def test_inspect_verbose_shows_a_deep_payload(tmp_path: Path, depth: int) -> None:
    out = _ok(["inspect", "-v", str(deep_reel(tmp_path, depth))])
    # both payloads whole (the request's is 2 levels less); indented to jsonio.INDENT_LEVELS, compact past
    assert out.count('"a":') == 2 * depth - 2


@pytest.mark.parametrize("depth", [600, DEEPEST])
@pytest.mark.parametrize("to", ["reel", "jsonrpc", "har", "qai", "inspector"])
def test_convert_redacts_urls_in_deep_metadata(tmp_path: Path, depth: int, to: str) -> None:
    src = deep_reel(tmp_path, depth, in_metadata=True)
    out = tmp_path / "out"
    _ok(["convert", str(src), str(out), "--to", to])
    assert SECRET not in out.read_text()


@pytest.mark.parametrize("verb", ["audit", "diff", "import"])
def test_other_verbs_take_the_deepest_payload(tmp_path: Path, verb: str) -> None:
    src = deep_reel(tmp_path, DEEPEST, in_metadata=True)
    args = {"audit": ["audit", str(src)], "diff": ["diff", str(src), str(src.with_suffix(".b.reel"))],
            "import": ["import", str(src), "--out-trace", str(tmp_path / "t.json")]}[verb]
    if verb == "diff":
        src.with_suffix(".b.reel").write_bytes(src.read_bytes())
    _ok(args)


def test_a_line_deeper_than_the_readers_take_is_one_line_exit_2(tmp_path: Path) -> None:
    src = deep_reel(tmp_path, MAX_DEPTH + 10)
    result = CliRunner().invoke(cli, ["inspect", "-v", str(src)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "nested too deeply" in result.stderr


def test_the_url_pass_is_iterative_and_copies_only_what_changed() -> None:
    value: object = f"https://h/?token={SECRET}"
    for _ in range(20 * MAX_DEPTH):
        value = {"k": [value]}
    out = redact_urls_in_value(value)
    assert _leaf(out) == "https://h/?token=[REDACTED]" and _leaf(value) == f"https://h/?token={SECRET}"
    untouched = {"a": [{"b": "no url"}], "c": 1}
    assert redact_urls_in_value(untouched) is untouched
    mixed = {"keep": {"x": [1]}, "change": ["/p?password=pw"]}
    red = redact_urls_in_value(mixed)
    assert red["keep"] is mixed["keep"] and red["change"] == ["/p?password=[REDACTED]"]
    assert mixed["change"] == ["/p?password=pw"]  # the input is not changed in place


def _leaf(value: object) -> object:
    while isinstance(value, dict):
        value = value["k"][0]
    return value


def test_the_row_spool_keeps_a_payload_at_the_readers_depth() -> None:
    payload = jsonio.loads(nested(MAX_DEPTH - 1))
    spool = RowSpool()
    try:
        for i in range(3):
            spool.append(Row(index=i, kind="message", dir="in", label="(response)", payload=payload))
        back = list(spool)
        assert [r.index for r in back] == [0, 1, 2] and jsonio.dumps(back[1].payload) == jsonio.dumps(payload)
    finally:
        spool.close()


def test_redact_takes_the_deepest_payload_and_redacts_inside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`mcpreel redact` walks a payload at the readers' depth (its walk recurses: it is given room) and a
    secret at the bottom is still redacted, counted once."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MCPREEL_REDACT_KEY", str(tmp_path / "k"))
    (tmp_path / "k").write_text("0" * 64)
    (tmp_path / "k").chmod(0o600)
    src = tmp_path / "deep.reel"
    src.write_text(deep_reel(tmp_path, DEEPEST).read_text().replace('"x"', '"sk-live-' + "a" * 40 + '"'))
    out = tmp_path / "out.reel"
    _ok(["redact", str(src), str(out)])
    assert "sk-live-" + "a" * 40 not in out.read_text() and out.read_text().count('"a":') == 2 * DEEPEST - 2
