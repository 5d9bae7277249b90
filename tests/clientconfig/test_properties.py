"""Property tests: whatever bytes a config, contract or rules file holds, the readers end in one clear error
(or a value), never a traceback; and the JSONC parser agrees with the json module on plain JSON."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel.clientconfig import ConfigDocument
from mcpreel.clientconfig.clients import ClientFile
from mcpreel.clientconfig.jsonc import JsoncError, parse
from mcpreel.errors import InputError
from tests.clientconfig.configs import CASES

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
FILES = [ClientFile("vscode", "user", Path("/x/mcp.json"), "jsonc", "servers"),
         ClientFile("claude-desktop", "user", Path("/x/c.json"), "json", "mcpServers"),
         ClientFile("codex", "user", Path("/x/config.toml"), "toml", "mcp_servers")]
SAMPLES = [text for _, text, _, _ in CASES.values()]


@settings(max_examples=150, deadline=None)
@given(JSON, st.sampled_from([None, 2, "\t"]))
def test_jsonc_agrees_with_json(value, indent):
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    assert parse(text).value == value


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_jsonc_random_text_is_a_value_or_a_clear_error(text):
    try:
        parse(text)
    except JsoncError as exc:
        assert exc.line >= 1 and exc.column >= 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SAMPLES), st.integers(0, 2000), st.integers(0, 40), st.sampled_from(FILES))
def test_truncated_or_damaged_configs_load_or_fail_clearly(sample, cut, damage, file):
    text = sample[: cut % (len(sample) + 1)]
    if damage and text:
        pos = damage % len(text)
        text = text[:pos] + "}{=[\"#"[damage % 6] + text[pos:]
    try:
        doc = ConfigDocument.load(file, text)
    except InputError as exc:
        assert str(file.path) in str(exc)
        return
    for name in doc.servers():
        try:
            start, end = doc.span(name)
        except InputError as exc:  # a TOML server written as an inline table: named, not a traceback
            assert "inline tables" in str(exc)
            continue
        assert 0 <= start <= end <= len(text)


def test_deep_nesting_is_a_clear_error():
    try:
        parse("[" * 100000)
    except JsoncError as exc:
        assert "nested too deeply" in str(exc) or "end of file" in str(exc)
    else:
        raise AssertionError("parsed an unterminated array")


@settings(max_examples=100, deadline=None)
@given(JSON)
def test_contract_and_rules_readers_never_crash(value):
    from mcpreel.audit.rules import _parse
    from mcpreel.contract.snapshot import Contract

    for read in (lambda v: Contract.from_json(v, path="c.json"), lambda v: _parse(v, "r.json")):
        try:
            read(value)
        except InputError:
            pass
    doc = {"mcpreel_contract": 1, "tools": value}
    try:
        Contract.from_json(doc, path="c.json")
    except InputError:
        pass


ODD_NAMES = st.text(max_size=6) | st.sampled_from(["..", "../x", "-r", "a\ud800", "\udfff", "a/b", "", "a\x00"])
ENTRY = st.fixed_dictionaries({}, optional={"command": JSON | st.text(max_size=6), "args": JSON | st.lists(
    st.text(max_size=4), max_size=3), "env": JSON, "url": JSON, "type": st.sampled_from(["stdio", "http", "sse", 3])})


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.dictionaries(ODD_NAMES, ENTRY | JSON, max_size=4))
def test_any_servers_wrap_and_unwrap_without_a_traceback_and_come_back_byte_for_byte(tmp_path, servers):
    from click.testing import CliRunner

    from mcpreel.cli import cli

    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir(exist_ok=True)
    project.mkdir(exist_ok=True)
    path = project / ".mcp.json"
    original = json.dumps({"mcpServers": servers}, indent=2)  # ASCII: lone surrogates as escapes
    path.write_text(original)
    for state in project.glob(".mcp.json.*"):
        state.unlink()
    where = ["--home", str(home), "--project", str(project)]
    for args in (["wrap", "--list"], ["wrap", "--all"], ["unwrap"]):
        r = CliRunner().invoke(cli, [*args, *where])
        assert r.exception is None or isinstance(r.exception, SystemExit), (args, r.exception)
        assert r.exit_code in (0, 2), (args, r.output)
    assert path.read_text() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "project"]


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=8))
def test_jsonc_reads_ascii_escaped_text_as_json_does(text):
    escaped = json.dumps(text)  # astral characters as surrogate pairs, which are one character each
    assert parse(escaped).value == json.loads(escaped) == text
