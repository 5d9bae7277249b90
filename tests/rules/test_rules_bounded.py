"""Issue 28, item 8 for rules: a rule's values and paths are bounded when the file is read (one line naming
the file and the rule), and a rule set decides on a message as deep as the readers accept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpreel._infra import jsonio
from mcpreel._infra.nesting import MAX_DEPTH
from mcpreel.errors import InputError
from mcpreel.rules.engine import RuleSet
from mcpreel.rules.load import RULE_DEPTH, load_rules


def nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def rules_file(tmp: Path, rules: str) -> Path:
    path = tmp / "rules.json"
    path.write_text(rules)
    return path


@pytest.mark.parametrize("where", ["equals", "merge", "set", "data"])
def test_a_rule_nested_past_the_bound_is_one_line(tmp_path: Path, where: str) -> None:
    deep = nested(RULE_DEPTH + 5)
    rule = {"equals": '{"match": {"path": "$.params", "equals": @}, "drop": true}',
            "merge": '{"rewrite": {"merge": {"params": @}}}',
            "set": '{"rewrite": {"set": {"$.params.x": @}}}',
            "data": '{"error": {"code": 1, "message": "m", "data": @}}'}[where]
    path = rules_file(tmp_path, '[{"name": "ok", "drop": true}, ' + rule.replace("@", deep) + "]")
    with pytest.raises(InputError) as err:
        load_rules(path)
    assert str(err.value) == (f"{path}: rule 2: nested deeper than {RULE_DEPTH} levels (a rule's values are "
                              "compared and merged recursively)")


def test_a_path_of_too_many_steps_is_one_line(tmp_path: Path) -> None:
    path = rules_file(tmp_path, json.dumps([{"name": "long", "match": {"path": "$" + ".a" * (RULE_DEPTH + 1)},
                                             "drop": True}]))
    with pytest.raises(InputError, match=r"rule 1 \(long\): match.path takes 257 steps"):
        load_rules(path)


def test_rules_at_the_bound_decide_on_the_deepest_message(tmp_path: Path) -> None:
    value = nested(RULE_DEPTH - 3)
    path = rules_file(tmp_path, '[{"name": "r", "match": {"path": "$..a", "equals": ' + value + '}, '
                                '"rewrite": {"merge": {"params": ' + value + '}, "set": {"$.params.b": ' + value + "}}}]")
    rules = RuleSet(load_rules(path))
    deep = MAX_DEPTH - 4  # the message's line: the reel's line object and raw around it
    message = jsonio.loads('{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":' + nested(deep - 3) + "}}")
    inner = message["params"]
    for _ in range(deep - 3 - RULE_DEPTH + 3):  # put the rule's value somewhere down there
        inner = inner["a"]
    inner["a"] = jsonio.loads(value)
    verdict = rules.decide(message, "client_to_server")
    assert verdict is not None and verdict.action == "forward" and verdict.modified
    assert jsonio.dumps(verdict.message["params"]["b"]) == value.replace(" ", "").encode()
