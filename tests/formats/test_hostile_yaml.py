"""Issue 28, item 7: YAML that expands without end ("billion laughs") or refers to itself is refused in
one line naming the file, the line and the rule, by every verb that reads an MCP-VCR transcript and by
the ``--rules`` loader; YAML that shares a value legitimately still reads."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from mcpreel._infra import yamlload
from mcpreel._infra.nesting import MAX_DEPTH
from mcpreel.cli import cli
from mcpreel.errors import InputError
from mcpreel.formats import open_session
from mcpreel.rules.load import load_rules

META = "meta: {version: 1, session_id: s1, server_command: [python, server.py], schema_version: '1.0'}\n"


def laughs(levels: int = 9, width: int = 9) -> str:
    """Anchors a0..a{levels-1}, each a list of ``width`` aliases of the one before: width**levels values."""
    out = f"a0: &a0 [{', '.join(['lol'] * width)}]\n"
    for i in range(1, levels):
        out += f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]\n"
    return out


def transcript_with(params: str, head: str = "") -> str:
    return (META + head + "messages:\n"
            f"  - {{t: 0, dir: c2s, payload: {{jsonrpc: '2.0', id: 1, method: tools/call, params: {params}}}}}\n")


@pytest.fixture
def bomb(tmp_path: Path) -> Path:
    path = tmp_path / "laughs.yaml"
    path.write_text(transcript_with("*a8", laughs()))
    assert path.stat().st_size < 1000  # the file was 679 bytes
    return path


def _one_line_exit_2(args: list[str]) -> str:
    started = time.monotonic()
    result = CliRunner().invoke(cli, args)
    assert time.monotonic() - started < 10, "the refusal must not walk the expansion"
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, result.output
    said = result.stderr.rstrip("\n").split("\n")
    assert len(said) == 1 and said[0].startswith("error:"), result.stderr
    return said[0]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("verb", ["inspect", "inspect -v", "convert", "import", "serve"])
def test_billion_laughs_is_one_line_exit_2_for_every_verb(bomb: Path, tmp_path: Path, verb: str) -> None:
    out = tmp_path / "out"
    args = {"inspect": ["inspect", str(bomb)], "inspect -v": ["inspect", "-v", str(bomb)],
            "convert": ["convert", str(bomb), str(out), "--to", "reel"],
            "import": ["import", str(bomb), "--out-trace", str(out)],
            "serve": ["serve", str(bomb), "--transport", "streamable-http", "--port", "0"]}[verb]
    line = _one_line_exit_2(args)
    assert str(bomb) in line and "line " in line and "aliases expand" in line, line
    assert not out.exists()


@pytest.mark.timeout(30)
def test_an_alias_inside_its_own_anchor_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text(transcript_with("&me {again: [*me]}"))
    line = _one_line_exit_2(["inspect", str(path)])
    assert "an alias inside its own anchor" in line and "line 3" in line, line


@pytest.mark.timeout(30)
def test_aliases_that_nest_past_the_readers_depth_are_refused(tmp_path: Path) -> None:
    # each anchor nests the one before 300 levels deeper: 4 of them reach past MAX_DEPTH in a small file
    head = "d0: &d0 x\n" + "".join(f"d{i}: &d{i} {'[' * 300}*d{i - 1}{']' * 300}\n" for i in range(1, 5))
    path = tmp_path / "deep.yaml"
    path.write_text(transcript_with("{deep: *d4}", head))
    line = _one_line_exit_2(["convert", str(path), str(tmp_path / "out"), "--to", "jsonrpc"])
    assert f"nested deeper than {MAX_DEPTH} levels" in line, line


def test_shared_values_within_the_budget_still_read(tmp_path: Path) -> None:
    path = tmp_path / "shared.yaml"
    path.write_text(transcript_with("{name: t, arguments: &args {q: [1, 2, 3]}, again: *args}", laughs(4)))
    session, _ = open_session(path)
    (message,) = list(session)
    assert message.raw["params"]["again"] == {"q": [1, 2, 3]}


def test_the_measure_does_not_expand(monkeypatch: pytest.MonkeyPatch) -> None:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    started = time.monotonic()
    with pytest.raises(yamlload.YamlLimitError):
        yamlload.load(laughs(30, 9), loader)  # 9**30 values: expanded, this would never end
    assert time.monotonic() - started < 30  # (0.01 s here; generous for a loaded machine)
    # a big document without aliases is never refused for its size: with the budget made small (the same
    # rule at a thousandth of the size, so the test costs no million-node document), a list past it loads
    monkeypatch.setattr(yamlload, "ALIAS_NODES", 1_000)
    big = "[" + ", ".join(["1"] * (yamlload.ALIAS_NODES + 10)) + "]"
    assert len(yamlload.load(big, loader)) == yamlload.ALIAS_NODES + 10
    with pytest.raises(yamlload.YamlLimitError):
        yamlload.load(laughs(4, 9), loader)  # 9**4 = 6,561 values from a few aliases: over the small budget


@pytest.mark.timeout(30)
def test_rules_file_with_nested_aliases_is_refused(tmp_path: Path) -> None:
    anchors = "[x, &a0 [x, x, x, x, x, x, x, x, x]" + "".join(
        f", &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)) + "]"
    path = tmp_path / "rules.yaml"
    path.write_text(f"- name: boom\n  match:\n    tool: [{anchors}]\n  drop: true\n")
    started = time.monotonic()
    with pytest.raises(InputError) as err:
        load_rules(path)
    assert time.monotonic() - started < 5
    assert str(err.value).startswith(f"{path}: line 3: ") and "aliases expand" in str(err.value)


def test_a_rules_value_is_shown_short(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text('[{"name": "r", "match": {"tool": [[' + ",".join(["1"] * 100_000) + ']]}, "drop": true}]')
    with pytest.raises(InputError) as err:
        load_rules(path)
    assert "match.tool takes a string" in str(err.value) and len(str(err.value)) < 300


@pytest.mark.timeout(60)
@pytest.mark.parametrize("verb", ["serve", "record"])
def test_a_rules_bomb_given_to_a_verb_is_one_line_exit_2(tmp_path: Path, verb: str) -> None:
    anchors = "[x, &a0 [x, x, x, x, x, x, x, x, x]" + "".join(
        f", &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)) + "]"
    rules = tmp_path / "rules.yaml"
    rules.write_text(f"- name: boom\n  match:\n    tool: [{anchors}]\n  drop: true\n")
    session = tmp_path / "s.yaml"
    session.write_text(transcript_with("{name: t}"))
    args = (["serve", str(session), "--rules", str(rules)] if verb == "serve"
            else ["record", "--rules", str(rules), "--out", str(tmp_path / "out.jsonl"), "--", "true"])
    line = _one_line_exit_2(args)
    assert line.startswith(f"error: {rules}: line 3: ") and "aliases expand" in line
    assert not (tmp_path / "out.jsonl").exists()


def string_bomb(length: int, aliases: int) -> str:
    """One anchored string of ``length`` characters aliased ``aliases`` times: few nodes, many bytes."""
    return transcript_with("{name: t, arguments: {many: *big}}",
                           f"big: &big {'x' * length}\nrefs: [{', '.join(['*big'] * aliases)}]\n"
                           ).replace("{many: *big}", "{many: [*big, *big]}")


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("length", "aliases"), [(100_000, 200_000), (100_000, 5_000)])
def test_a_long_string_aliased_many_times_is_refused_by_bytes(tmp_path: Path, length: int,
                                                              aliases: int) -> None:
    # issue 40: the node budget let 200,000 aliases of a 100 KB string through (a 20 GB document: the
    # OOM killer); 5,000 of them (a 115 KB file... here 120 KB) wrote 500 MB
    import tracemalloc

    path = tmp_path / "strings.yaml"
    path.write_text(string_bomb(length, aliases))
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    tracemalloc.start()
    try:
        started = time.monotonic()
        with pytest.raises(yamlload.YamlLimitError, match="MB beyond what the file holds"):
            yamlload.load(path.read_bytes(), loader)
        assert time.monotonic() - started < 10
        assert tracemalloc.get_traced_memory()[1] < 200 << 20
    finally:
        tracemalloc.stop()
    out = tmp_path / "out.jsonl"
    line = _one_line_exit_2(["convert", str(path), str(out), "--to", "jsonrpc"])
    assert str(path) in line and "aliases expand" in line, line
    assert not out.exists()


def test_a_long_string_shared_a_few_times_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "few.yaml"
    path.write_text(string_bomb(100_000, 20))
    session, _ = open_session(path)
    (message,) = list(session)
    assert len(message.raw["params"]["arguments"]["many"][0]) == 100_000
