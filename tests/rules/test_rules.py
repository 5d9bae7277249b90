"""The rules file and the engine: what is refused (one line naming the file, the rule and why) and what is decided."""

from __future__ import annotations

import pytest

from mcpreel.errors import InputError
from mcpreel.rules import RuleSet, load_rules, merge_patch, parse_rules

CALL = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "search", "arguments": {"q": "x"}}}
ANSWER = {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "found"}]}}
NOTE = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}


def rules(*raw: dict) -> RuleSet:
    return RuleSet(parse_rules(list(raw)))


def test_yaml_and_json_files_read_alike(tmp_path):
    y = tmp_path / "r.yaml"
    y.write_text("- name: slow\n  match: {tool: search}\n  delay: 0.5\n")
    j = tmp_path / "r.json"
    j.write_text('{"rules": [{"name": "slow", "match": {"tool": "search"}, "delay": 0.5}]}')
    for path in (y, j):
        (rule,) = load_rules(path)
        assert (rule.name, rule.action.kind, rule.action.delay, rule.match.tools) == ("slow", "delay", 0.5, ("search",))


def test_yaml_is_read_with_the_safe_loader(tmp_path):
    p = tmp_path / "r.yaml"
    p.write_text("- name: !!python/object/apply:os.system ['true']\n  close: true\n")
    with pytest.raises(InputError, match="not YAML"):
        load_rules(p)


@pytest.mark.parametrize(("text", "said"), [
    ("- {name: a, match: {tool: search}}", "rule 1 (a): no action"),
    ("- {close: true}\n- {name: b, error: {code: x, message: m}}", "rule 2 (b): error.code must be an integer"),
    ("- {name: a, drop: true, close: true}", "rule 1 (a): one action per rule, not drop and close"),
    ("- {name: a, match: {path: 'params.q'}, close: true}", "rule 1 (a): match.path 'params.q': a JSONPath starts with $"),
    ("- {name: a, match: {direction: sideways}, close: true}", "rule 1 (a): match.direction 'sideways'"),
    ("- {name: a, times: 0, close: true}", "rule 1 (a): times must be a whole number >= 1"),
    ("- {name: a, colse: true}", "rule 1 (a): unknown key(s) colse"),
    ("- {name: a, close: true}\n- {name: a, close: true}", "rule 2 (a): a second rule named 'a'"),
    ("name: a", "a rules file is a list of rules"),
    ("- [unclosed", "line 2: not YAML"),
])
def test_a_bad_file_is_one_line_naming_file_rule_and_rule_broken(tmp_path, text, said):
    p = tmp_path / "rules.yaml"
    p.write_text(text)
    with pytest.raises(InputError) as info:
        load_rules(p)
    line = str(info.value)
    assert line.startswith(f"{p}: ") and said in line and "\n" not in line, line


def test_match_by_direction_kind_tool_id_and_path():
    rs = rules({"name": "t", "match": {"direction": "out", "tool": "search", "id": "7",
                                       "path": "$.params.arguments.q", "equals": "x"}, "close": True})
    assert rs.decide(CALL, "server_to_client") is None
    assert rs.decide({**CALL, "id": 8}, "client_to_server") is None
    assert rs.decide({**CALL, "params": {"name": "search", "arguments": {"q": "y"}}}, "client_to_server") is None
    v = rs.decide(CALL, "client_to_server")
    assert v is not None and v.action == "close" and v.decided_by == "rules:t"


def test_a_response_is_matched_by_the_request_it_answers():
    rs = rules({"name": "r", "match": {"direction": "in", "method": "tools/call", "tool": "search"},
                "rewrite": {"set": {"$.result.content[0].text": "changed"}}})
    assert rs.decide(ANSWER, "server_to_client") is None  # no request known: method/tool cannot hold
    v = rs.decide(ANSWER, "server_to_client", request=CALL)
    assert v is not None and v.action == "forward" and v.modified
    assert v.message["result"]["content"][0]["text"] == "changed"
    assert v.original is ANSWER and ANSWER["result"]["content"][0]["text"] == "found"


def test_rewrite_by_merge_patch_and_by_setting_a_missing_member():
    rs = rules({"name": "m", "rewrite": {"merge": {"params": {"arguments": {"q": None, "limit": 3}}},
                                         "set": {"$.params._meta": {"who": "rules"}}}})
    v = rs.decide(CALL, "client_to_server")
    assert v is not None
    assert v.message["params"] == {"name": "search", "arguments": {"limit": 3}, "_meta": {"who": "rules"}}
    assert merge_patch({"a": [1]}, {"a": {"b": 1}}) == {"a": {"b": 1}}


def test_error_drop_and_timeout_answer_as_the_contract_says():
    err = {"code": -32050, "message": "search is down"}
    v = rules({"name": "e", "error": err}).decide(CALL, "client_to_server")
    assert v is not None and v.action == "error" and v.answer == {"jsonrpc": "2.0", "id": 7, "error": err}
    v = rules({"name": "e", "error": err}).decide(ANSWER, "server_to_client", request=CALL)
    assert v is not None and v.action == "forward" and v.modified and v.message["error"] == err
    v = rules({"name": "d", "drop": True}).decide(CALL, "client_to_server")
    assert v is not None and v.action == "drop" and v.answer["error"]["message"] == "dropped by rule d"
    v = rules({"name": "d", "drop": {"error": err}}).decide(CALL, "client_to_server")
    assert v is not None and v.answer["error"] == err
    v = rules({"name": "d", "drop": True}).decide(NOTE, "server_to_client")
    assert v is not None and v.action == "drop" and v.answer is None
    v = rules({"name": "t", "timeout": True}).decide(CALL, "client_to_server")
    assert v is not None and v.action == "drop" and v.answer is None


def test_malformed_sends_the_message_cut_in_half_or_the_given_text():
    v = rules({"name": "m", "malformed": True}).decide(ANSWER, "server_to_client")
    assert v is not None and v.action == "malformed" and v.raw and b"\n" not in v.raw
    with pytest.raises(ValueError):
        __import__("json").loads(v.raw)
    v = rules({"name": "m", "delay": 0.2, "malformed": "{oops"}).decide(ANSWER, "server_to_client")
    assert v is not None and (v.raw, v.delay) == (b"{oops", 0.2)


def test_times_and_after_count_matches_deterministically_and_the_next_rule_gets_the_rest():
    rs = rules({"name": "third", "match": {"method": "tools/call"}, "after": 2, "times": 1, "close": True},
               {"name": "slow", "match": {"method": "tools/call"}, "delay": 0.1})
    got = [(v.rule.name, v.action) for v in (rs.decide(CALL, "client_to_server") for _ in range(4)) if v]
    assert got == [("slow", "forward"), ("slow", "forward"), ("third", "close"), ("slow", "forward")]


@pytest.mark.parametrize(("word", "same_as"), [("c2s", "client_to_server"), ("s2c", "server_to_client"),
                                              ("out", "client_to_server"), ("in", "server_to_client")])
def test_a_rule_direction_takes_the_filter_tokens_words(word, same_as):
    rs = rules({"name": "d", "match": {"direction": word}, "delay": 0.1})
    other = "server_to_client" if same_as == "client_to_server" else "client_to_server"
    assert rs.decide(CALL, same_as) is not None and rs.decide(CALL, other) is None


def test_match_by_the_filter_tokens_of_the_contract():
    rs = rules({"name": "f", "match": {"filter": "dir:in status:error"}, "delay": 0.1})
    failed = {"jsonrpc": "2.0", "id": 7, "error": {"code": -1, "message": "x"}}
    assert rs.decide(failed, "client_to_server") is None  # dir:in is server -> client
    assert rs.decide(ANSWER, "server_to_client") is None
    v = rs.decide(failed, "server_to_client")
    assert v is not None and v.rule.name == "f"
    with pytest.raises(InputError, match=r"rule 1 \(g\): match.filter: filter token 'colour:red': unknown key"):
        parse_rules([{"name": "g", "match": {"filter": "colour:red"}, "close": True}], source="r.yaml")
