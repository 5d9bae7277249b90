"""Rules people write (issue 34): the rules file, its one-line errors, applying rules to a view, and the
rule suggested for a difference that looks volatile."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel.cli import cli
from mcpreel.compare.jsondiff import Difference, diff
from mcpreel.compare.normalize import MASK, comparable
from mcpreel.compare.rules import CompareRule, CompareRules, load_compare_rules, parse_compare_rules, suggest
from mcpreel.errors import InputError, UsageError

GOOD_YAML = """\
version: 1
rules:
  - path: "$.result.content[0].text"
    method: tools/call
    tool: get_current_time
    mask: '\\d{4}-\\d{2}-\\d{2}T[\\d:.]+(Z|[+-]\\d{2}:\\d{2})?'
  - path: "$..createdAt"
    note: stamped by the server
"""


def test_a_yaml_and_a_json_rules_file_load_alike(tmp_path):
    y = tmp_path / "rules.yaml"
    y.write_text(GOOD_YAML)
    rules = load_compare_rules(y)
    assert [r.path for r in rules] == ["$.result.content[0].text", "$..createdAt"]
    first = rules.rules[0]
    assert (first.method, first.tool, first.origin) == ("tools/call", "get_current_time", f"{y} entry 1")
    j = tmp_path / "rules.json"
    j.write_text(json.dumps({"rules": [r.to_entry() for r in rules]}))
    assert [r.to_entry() for r in load_compare_rules(j)] == [r.to_entry() for r in rules]


@pytest.mark.parametrize(("text", "says"), [
    ("", "the rules file is empty"),
    ("- path: $.a\n", "a rules file is a mapping with a rules: list, not an array"),
    ("version: 2\nrules: []\n", "version 2 is not one this mcpreel reads (1)"),
    ("rules: []\nignore: [a]\n", 'unknown member "ignore" (a rules file has version and rules)'),
    ("rules: {path: a}\n", "rules is a list of rules, not an object"),
    ("rules:\n  - 3\n", "entry 1: a rule is a mapping with a path, not a number"),
    ("rules:\n  - {method: tools/call}\n", "entry 1: a rule needs a path"),
    ("rules:\n  - {path: $.a}\n  - {path: '$.a b'}\n", "entry 2: path '$.a b': cannot read the path at ' b'"),
    ("rules:\n  - {path: $}\n", "entry 1: path '$': the whole message cannot be ignored"),
    ("rules:\n  - {path: $.a, mask: '('}\n", "entry 1: mask '(' is not a regular expression"),
    ("rules:\n  - {path: $.a, mask: 'x*'}\n", "entry 1: mask 'x*' matches the empty string"),
    ("rules:\n  - {path: $.a, tool: 3}\n", "entry 1: tool is a string, not 3"),
    ("rules:\n  - {path: $.a, pattern: x}\n", 'entry 1: unknown member "pattern" (a rule has path, method, tool, mask, note)'),
    ("rules: [\n", "line 2: not YAML"),
    ('{"rules": [', "not JSON"),
])
def test_every_bad_rules_file_is_one_line_naming_the_file_and_entry(tmp_path, text, says):
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_compare_rules(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and says in message, message
    assert "\n" not in message


def test_a_missing_rules_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot read the rules file"):
        load_compare_rules(tmp_path / "absent.yaml")


_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
_docs = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.sampled_from(["version", "rules", "path", "method", "tool", "mask", "note", "x"])
                                       | st.text(max_size=6), inner, max_size=5), max_leaves=25)
_paths = st.sampled_from(["$.a", "$..b", "$.result.tools[name=add]", "$[", "$", "a.b", "$.a[*].b", "$.x y"])
_entries = st.fixed_dictionaries({"path": _paths | _scalars}, optional={
    "method": st.text(max_size=8), "tool": st.text(max_size=8) | st.integers(),
    "mask": st.text(max_size=8) | st.sampled_from(["(", "x*", "\\d+", "[", "a|"]), "other": st.just(1)})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_docs, st.fixed_dictionaries({"rules": st.lists(_entries | _docs, max_size=4)},
                                              optional={"version": _scalars})))
def test_the_loader_never_raises_anything_but_one_input_error_line(doc):
    try:
        rules = parse_compare_rules(doc, source="r.yaml")
    except InputError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("r.yaml: ")
        return
    view = {"result": {"a": "x1", "b": ["y"], "tools": [{"name": "add"}]}}
    rules.apply(view, "tools/call", "t")  # a loaded rule always applies without raising


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_the_loader_never_raises_a_traceback_on_any_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "rules.yaml"
    path.write_bytes(data)
    try:
        load_compare_rules(path)
    except InputError as exc:
        assert "\n" not in str(exc)


def _view(text: str) -> dict:
    return comparable({"result": {"content": [{"type": "text", "text": text}]}})


def test_descent_wildcards_and_keyed_items_in_rule_paths():
    view = comparable({"result": {"tools": [{"name": "add", "meta": {"at": 1}}, {"name": "echo", "meta": {"at": 2}}],
                                  "at": 3}})
    out = CompareRules([CompareRule("$..at")]).apply(view, "tools/list", None)
    assert out == {"result": {"tools": [{"name": "add", "meta": {}}, {"name": "echo", "meta": {}}]}}
    assert view["result"]["at"] == 3  # the view given is left as it was
    keyed = CompareRules([CompareRule("$.result.tools[name=echo].meta")]).apply(view, "tools/list", None)
    assert keyed["result"]["tools"] == [{"name": "add", "meta": {"at": 1}}, {"name": "echo"}]


def test_method_and_tool_scope_with_wildcards():
    rules = CompareRules([CompareRule("$.result", method="tools/*", tool="git_*")])
    view = _view("x")
    assert rules.apply(view, "tools/call", "git_show") == {}
    assert rules.apply(view, "tools/call", "fetch") is view
    assert rules.apply(view, "prompts/get", "git_show") is view
    assert rules.apply(view, "tools/call", None) is view


def test_a_mask_changes_only_what_it_matches_inside_json_text():
    rules = CompareRules([CompareRule("$.result.content[0].text", mask=r"0x[0-9a-f]+")])
    a = rules.apply(_view('{"show": "<Commit at 0x7f00aa>", "author": "ann"}'), "tools/call", "git_show")
    b = rules.apply(_view('{"show": "<Commit at 0x7f11bb>", "author": "bob"}'), "tools/call", "git_show")
    assert a["result"]["content"][0]["text"]["show"] == f"<Commit at {MASK}>"
    assert [d.path for d in diff(a, b)] == ["$.result.content[0].text.author"]


def test_rules_add_up_and_bad_ones_given_in_code_are_usage_errors():
    one, two = CompareRules([CompareRule("$.a")]), CompareRules([CompareRule("$.b", mask="x")])
    assert [r.path for r in one + two] == ["$.a", "$.b"] and len(one + two) == 2
    with pytest.raises(UsageError, match="noise.json: mask '\\(' is not a regular expression"):
        CompareRules([CompareRule("$.a", mask="(", origin="noise.json")])


@pytest.mark.parametrize(("a", "b", "origin"), [
    ("2026-11-28T12:00:00Z", "2026-11-28T12:00:07.5+01:00", "a timestamp"),
    ("at 2026-11-28 12:00:00 now", "at 2026-11-29 08:00:01 now", "a timestamp"),
    ("123e4567-e89b-12d3-a456-426614174000", "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", "a UUID"),
    ("<git.Commit at 0x7f3a2c1b9d90>", "<git.Commit at 0x7f3a2c1c0e50>", "a hex address"),
    ("took 1764331200123", "took 1764331299999", "an epoch time"),
    ("run 5f2b9c0e1a7d4c3b", "run a1b2c3d4e5f60718", "a hex id"),
    ("created at 2:22:32 PM", "created at 2:22:34 PM", "a time of day"),
])
def test_suggestions_name_the_token_and_absorb_the_difference(a, b, origin):
    d = Difference("$.result.content[0].text", "changed", a, b)
    rule = suggest(d, "tools/call", "t")
    assert rule is not None and rule.origin == origin and rule.mask is not None
    rules = CompareRules([rule])
    assert rules.apply(_view(a), "tools/call", "t") == rules.apply(_view(b), "tools/call", "t")


def test_no_suggestion_for_a_real_change():
    for a, b in [("hello", "world"), ("2026-11-28T12:00:00Z yes", "2026-11-28T12:00:01Z no"), (3, 4)]:
        assert suggest(Difference("$.x", "changed", a, b), "tools/call", None) is None
    assert suggest(Difference("$.x", "added", new="2026-11-28T12:00:00Z"), "m", None) is None
    epoch = suggest(Difference("$.result.t", "changed", 1764331200123, 1764331200999), "m", None)
    assert epoch is not None and epoch.mask is None  # a number: the value is ignored


# -- the command line -----------------------------------------------------------------------------

def _reel(path: Path, at: str) -> Path:
    """A recorded session of a clock tool (a handshake, then one call)."""
    lines = [{"v": 1, "type": "meta", "startedAt": "2026-01-01T00:00:00.000Z", "label": "x", "command": []}]
    messages = [
        ("in", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}),
        ("out", {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                                        "serverInfo": {"name": "clock", "version": at[:4]}}}),
        ("in", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ("in", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "now", "arguments": {}}}),
        ("out", {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": f"It is {at} here"}]}}),
    ]
    for i, (direction, raw) in enumerate(messages):
        lines.append({"t": f"2026-01-01T00:00:00.{i:03d}Z", "dir": direction, "raw": raw})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_replay_takes_a_rules_file_and_a_bad_one_is_exit_2(tmp_path):
    recorded = _reel(tmp_path / "recorded.jsonl", "2026-01-01T10:00:00Z")
    served = _reel(tmp_path / "served.jsonl", "2027-02-02T11:11:11Z")
    target = f"{sys.executable} -m mcpreel serve {served}"
    runner = CliRunner()
    plain = runner.invoke(cli, ["replay", str(recorded), "--target-command", target, "--timeout", "20"])
    assert plain.exit_code == 1, plain.output
    assert "looks volatile (a timestamp)" in plain.output and '"tool": "now"' in plain.output
    assert "the server names itself clock 2027 (recorded: clock 2026)" in plain.output
    rules = tmp_path / "rules.yaml"
    rules.write_text("version: 1\nrules:\n  - {method: tools/call, tool: now, path: '$.result.content[0].text', "
                     "mask: '\\d{4}-\\d{2}-\\d{2}T[\\d:]+Z'}\n")
    ok = runner.invoke(cli, ["replay", str(recorded), "--target-command", target, "--timeout", "20",
                             "--compare-rules", str(rules)])
    assert ok.exit_code == 0, ok.output
    assert "2 requests replayed: 2 same" in ok.output
    rules.write_text("rules:\n  - {path: '$.result', mask: '('}\n")
    bad = runner.invoke(cli, ["replay", str(recorded), "--target-command", target, "--compare-rules", str(rules)])
    assert bad.exit_code == 2
    lines = [line for line in bad.output.splitlines() if line.strip()]
    assert len(lines) == 1 and f"{rules}: entry 1: mask '(' is not a regular expression" in lines[0], bad.output
    assert "Traceback" not in bad.output


def test_the_docs_rules_example_loads(tmp_path):
    from tests.docs.pages import topic

    text = topic("compare")  # the docs' "Comparison rules and noise" page, and `mcpreel help compare`
    block = text.split("## Judged by meaning; rules you write", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "rules.yaml"
    path.write_text(block)
    rules = load_compare_rules(path)
    assert [(r.path, r.mask is None) for r in rules] == [("$.result.content[0].text", False), ("$..createdAt", True)]


def test_no_suggestion_for_a_new_protocol_version():
    # "2025-11-25" reads like a date, but a server that now negotiates another revision changed for real
    d = Difference("$.result.protocolVersion", "changed", "2025-06-18", "2025-11-25")
    assert suggest(d, "initialize", None) is None
