"""Rules without a person (``--rules rules.json|yaml``): fault injection for tests, written down once.

A rules file (:mod:`.load`) says which messages to act on (direction, kind, method, tool, id, a JSONPath)
and what to do with them: rewrite, drop, time out, delay, answer with an error, send malformed JSON or
close the connection. :mod:`.engine` decides, free of I/O; ``mcpreel serve`` applies the decisions to
what the mock answers and the recording proxies to what they relay, where each action is recorded as a
person's decision would be (``decided_by: "rules:NAME"``).
"""

from __future__ import annotations

from mcpreel.rules.engine import RuleSet, Verdict, merge_patch, message_kind
from mcpreel.rules.load import ACTIONS, Rule, load_rules, parse_rules

__all__ = ["ACTIONS", "Rule", "RuleSet", "Verdict", "load_rules", "merge_patch", "message_kind", "parse_rules"]
