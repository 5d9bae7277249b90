"""Fuzz the loaders of the files people hand mcpreel besides recordings (issue 28): hostile YAML
transcripts (MCP-VCR), rules files, contract snapshots and client configs.

Each family starts from real files (the hub's MCP-VCR transcripts, the rules the docs show, contracts
snapshotted from the shared fixtures, the client configs of ``tests/clientconfig/configs.py``), damages
them as the readers' fuzz does (a value's type changed, a member deleted, a truncation, bytes flipped)
and as an attacker would (nested aliases, an alias inside its own anchor, nesting past the readers'
depth, YAML tags JSON has no word for, keys that are not strings, duplicate keys, several documents,
lone surrogates) and runs the verbs that read such a file in-process (:mod:`tests.fuzz.harness`).
Every case ends in exit 0 (or 1 where the verb says "found something"), or exit 2 with one line and no
output left behind, within :data:`HANG_SECONDS` (a case that runs longer is a hang, and fails).

``MCPREEL_FUZZ_N`` and ``MCPREEL_FUZZ_REPORT`` work as in :mod:`tests.fuzz.test_fuzz_readers`.
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcpreel.errors import InputError
from tests.clientconfig.configs import CASES
from tests.conftest import FIXTURES, needs_shared
from tests.fuzz.harness import HANG_SECONDS, Draw, Hang, count, fuzz, hang_after, invoke, run_cli, scratch
from tests.fuzz.test_fuzz_readers import _at, _nodes, odd_value

pytestmark = needs_shared

N = count(200)
__all__ = ["Hang", "fuzz", "hang_after", "run_cli"]  # (the names other fuzz modules took from here)
PLACE = "zzplacezz"  # a plain scalar the YAML dumper writes as it is: replaced by hostile text afterwards
#: YAML that JSON has no word for, or that the safe loader refuses, put where a value was
TAGGED = ["!!binary aGVsbG8=", "!!binary '%%%'", "!!set {a, b}", "!!python/object:os.system ls",
          "!!python/name:os.system", "!!timestamp 2001-12-14t21:59:43.10-05:00", "2001-12-14", "!!float .nan",
          ".inf", "-.inf", "!!int 0b1010", "0o17", "0x1F", "1_000", "!!omap [a: 1, b: 2]", "!!pairs [a: 1, a: 2]",
          "!custom x", "!!str", "!!null ''", "{? [a, b] : c}", "{1: a, 2.5: b, null: c, true: d}",
          "{<<: {a: 1}, b: 2}", "{<<: [{a: 1}, {b: 2}], c: 3}", "{a: 1, a: 2}", '"\\ud800"', '"a\\udc00b"',
          "&x [1, *x]", "*undefined", "|\n  block\n  text", "~", "yes", "NO", "=", "<<", "9" * 40,
          "'" + "x" * 5000 + "'", "[" * 1100 + "]" * 1100, "{a: " * 300 + "1" + "}" * 300]


# -- damaging a document -----------------------------------------------------------------------------------


def laughs(levels: int, width: int) -> Any:
    """``width`` ** ``levels`` values in ``levels`` shared lists: the YAML dumper writes them as aliases."""
    node: Any = ["lol"] * width
    for _ in range(levels - 1):
        node = [node] * width
    return node


def damaged(d: Draw, doc: Any, *, yaml_ok: bool) -> tuple[Any, list[str]]:
    """``doc`` (a copy) with 1-3 of its values changed or deleted, and the hostile texts to put at the
    :data:`PLACE` markers (a YAML-only damage, or a deep nesting when ``yaml_ok`` is false)."""
    doc = copy.deepcopy(doc)
    texts: list[str] = []
    hows = ["type", "type", "delete", "deep"] + (["laughs", "self", "share", "tag", "tag"] if yaml_ok else [])
    for _ in range(d.int(1, 3)):
        paths = _nodes(doc)
        if not paths:
            break
        path = d.pick(paths)
        parent = _at(doc, path[:-1])
        how = d.pick(hows)
        if how == "delete":
            del parent[path[-1]]
        elif how == "type":
            parent[path[-1]] = odd_value(d)
        elif how == "laughs":
            parent[path[-1]] = laughs(d.int(2, 14), d.int(2, 12))
            break  # the document now shares values: its paths are no longer a tree to walk
        elif how == "self":  # an alias inside its own anchor
            loop: list[Any] = [1]
            loop.append(loop)
            parent[path[-1]] = loop
            break
        elif how == "share":  # an alias to another value of the document (an ancestor: a loop)
            parent[path[-1]] = _at(doc, d.pick(paths)[:-1])
            break
        elif how == "deep":
            depth = d.pick([200, 600, 1000, 1017, 1020, 1024, 1025, 1500, 5000])
            opener, closer = d.pick([("[", "]"), ("{\"a\": ", "}")])
            parent[path[-1]] = PLACE
            texts.append(opener * depth + "0" + closer * depth)
        else:  # tag
            parent[path[-1]] = PLACE
            texts.append(d.pick(TAGGED))
    return doc, texts


def _fill(text: str, texts: list[str]) -> str:
    for hostile in texts:
        text = text.replace(PLACE, hostile, 1)
    return text


#: libyaml's emitter when PyYAML has it (the pure-Python one cost a third of this family's run)
_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def as_yaml(doc: Any) -> str:
    """``doc`` as YAML (shared values as anchors and aliases); a lone surrogate, which libyaml cannot write,
    written escaped by the pure-Python emitter."""
    try:
        return yaml.dump(doc, Dumper=_DUMPER, sort_keys=False, allow_unicode=True, width=120)
    except (yaml.YAMLError, RecursionError, ValueError):
        pass
    try:
        return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=120)
    except (yaml.YAMLError, RecursionError, ValueError):
        return yaml.safe_dump(doc, sort_keys=False, allow_unicode=False, width=120)


def damaged_text(d: Draw, data: bytes) -> bytes:
    """The text-level damages of the readers' fuzz: a truncation, flipped bytes, a BOM, a second document."""
    how = d.pick(["truncate", "bytes", "bom", "twice", "tabs"])
    if how == "truncate":
        return data[:d.int(0, max(0, len(data) - 1))]
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "twice":
        return data + b"\n---\n" + data
    if how == "tabs":
        return data.replace(b"\n  ", b"\n\t", d.int(1, 3))
    out = bytearray(data)
    for _ in range(d.int(1, 4)):
        if out:
            out[d.int(0, len(out) - 1)] = d.int(0, 255)
    return bytes(out)


def hostile_file(d: Draw, seeds: list[Any], *, form: str) -> bytes:
    """A damaged seed document as ``form`` (``yaml``, ``json``, or ``either``) bytes."""
    doc = d.pick(seeds)
    if d.int(0, 4) == 0:  # a damage to the text itself
        data = as_yaml(doc).encode() if form == "yaml" else json.dumps(doc, indent=2).encode()
        return damaged_text(d, data)
    as_json = form == "json" or (form == "either" and d.bool())
    doc, texts = damaged(d, doc, yaml_ok=not as_json)
    if as_json:
        return _fill(json.dumps(doc, indent=1), texts).encode("utf-8", "surrogatepass")
    return _fill(as_yaml(doc), texts).encode("utf-8", "surrogatepass")


# -- the families ------------------------------------------------------------------------------------------

VCR = sorted((FIXTURES / "hub" / "mcp-vcr").glob("*.yaml")) if FIXTURES.is_dir() else []
VCR_WRITERS = ("reel", "jsonrpc", "har", "qai", "inspector")


def test_hostile_mcp_vcr_yaml() -> None:
    seeds = [yaml.safe_load(p.read_bytes()) for p in VCR]
    assert seeds, "the hub's MCP-VCR fixtures"
    verbs = ("import", "inspect", "inspect -v", *(f"convert:{w}" for w in VCR_WRITERS))

    def run(data: bytes, verb: str) -> str:
        tmp = scratch().case
        src, out = tmp / "t.yaml", tmp / "out"
        src.write_bytes(data)
        if verb == "import":
            args = ["import", str(src), "--out-trace", str(out)]
        elif verb.startswith("inspect"):
            args = ["inspect", *verb.split()[1:], str(src)]
        else:
            args = ["convert", str(src), str(out), "--to", verb.split(":", 1)[1]]
        return f"exit {run_cli(args, tmp, {src.name})}"

    fuzz("hostile/mcp-vcr-yaml", lambda d: {"data": hostile_file(d, seeds, form="yaml"), "verb": d.pick(verbs)},
         run, N)


RULES_SEEDS: list[Any] = [
    [{"name": "search-fails", "match": {"direction": "client_to_server", "kind": "request", "method": "tools/call",
                                        "tool": "search"}, "error": {"code": -32000, "message": "search is down"},
      "times": 1, "after": 0}],
    {"rules": [{"match": {"path": "$.params.arguments.q", "equals": "boom"}, "drop": True},
               {"name": "slow", "match": {"kind": ["request", "notification"]}, "delay": 0}]},
    [{"match": {"method": ["tools/list", "ping"]}, "rewrite": {"merge": {"result": {"tools": []}},
                                                               "set": {"$.params.name": "x"}}},
     {"match": {"id": [1, "a"], "filter": "status:error"}, "drop": {"error": {"code": 1, "message": "m", "data": {}}}},
     {"match": {"direction": "out"}, "malformed": True, "after": 2},
     {"match": {"direction": "in", "kind": "response"}, "malformed": "not json"},
     {"match": {"tool": "t"}, "timeout": True}, {"match": {}, "close": True}, {"disconnect": True, "delay": 0.5}],
]
#: the messages each loaded rule set decides on (a request, its answer, a notification, a batch)
RULE_MESSAGES = [
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search", "arguments": {"q": "boom"}}},
     "client_to_server", None),
    ({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": True}}, "server_to_client",
     {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search"}}),
    ({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}, "server_to_client", None),
    ({"jsonrpc": "2.0", "id": "a", "error": {"code": -1, "message": "x"}}, "server_to_client", None),
]


def test_hostile_rules_files() -> None:
    from mcpreel._infra import jsonio
    from mcpreel.rules.engine import RuleSet
    from mcpreel.rules.load import load_rules

    def run(data: bytes, suffix: str) -> str:
        src = scratch().case / f"rules{suffix}"
        src.write_bytes(data)
        try:
            rules = load_rules(src)
        except InputError as exc:
            assert "\n" not in str(exc) and str(exc).startswith(str(src)), str(exc)[:300]
            return "refused"
        except Hang:
            raise AssertionError("load_rules: hang") from None
        try:
            ruleset = RuleSet(rules, str(src))
            for message, direction, request in RULE_MESSAGES:
                verdict = ruleset.decide(copy.deepcopy(message), direction, request)
                if verdict is not None:
                    jsonio.dumps(verdict.message)  # what the recorder writes in the reel
                    if verdict.answer is not None:
                        jsonio.dumps(verdict.answer)
        except Hang:
            raise AssertionError("a loaded rule set: hang") from None
        return "loaded"

    fuzz("hostile/rules", lambda d: {"data": hostile_file(d, RULES_SEEDS, form="either"),
                                     "suffix": d.pick([".yaml", ".json", ".yml"])}, run, N)


CONTRACT_SOURCES = [FIXTURES / "qai" / "qai_session_fastmcp.json",
                    FIXTURES / "hub" / "mcp-cassette-pypi" / "examples__cassettes__tools.mcp.json",
                    FIXTURES / "hub" / "mcp-vcr" / "mcp_vcr__community__filesystem__initialize_and_tools_list.yaml"]


def _contract_seeds() -> list[tuple[Path, Any]]:
    from mcpreel.contract.snapshot import from_session
    from mcpreel.formats import open_session

    out = []
    for path in CONTRACT_SOURCES:
        session, _ = open_session(path)
        doc = json.loads(from_session(session).dumps())
        for entry in doc.get("tools", {}).values():  # a schema with every keyword the comparison reads
            entry.setdefault("inputSchema", {}).update({"required": ["a"], "properties": {
                "a": {"type": ["string", "null"], "enum": ["x", "y"], "default": "x",
                      "items": {"type": "object", "properties": {"b": {"type": "integer"}}}}}})
            entry["annotations"] = {"readOnlyHint": True, "destructiveHint": False}
            entry["outputSchema"] = {"type": "object", "properties": {"r": {"type": "string"}}, "required": ["r"]}
        out.append((path, doc))
    return out


def test_hostile_contract_snapshots() -> None:
    seeds = _contract_seeds()
    assert seeds and all(doc.get("tools") for _, doc in seeds), "contracts with tools to damage"
    docs = [doc for _, doc in seeds]

    def run(data: bytes, source: int, how: str) -> str:
        tmp = scratch().case
        contract, sarif = tmp / "contract.json", tmp / "report.sarif"
        contract.write_bytes(data)
        args = ["contract", "check", str(contract), str(CONTRACT_SOURCES[source]), "--fail-on", "any"]
        args += {"text": [], "json": ["--format", "json"], "sarif": ["--sarif", str(sarif)],
                 "update": ["--update"]}[how]
        code = run_cli(args, tmp, {contract.name}, found=True)
        return f"exit {code}"

    fuzz("hostile/contract", lambda d: {"data": hostile_file(d, docs, form="json"),
                                        "source": d.int(0, len(CONTRACT_SOURCES) - 1),
                                        "how": d.pick(["text", "json", "sarif", "update"])}, run, N)


def _config_seeds() -> list[tuple[str, str]]:
    return [(where, text) for where, text, _, _ in CASES.values()]


def hostile_config(d: Draw) -> tuple[str, bytes]:
    where, text = d.pick(_config_seeds())
    data = text.encode()
    if not where.endswith(".toml"):
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None  # JSONC (comments): damaged as text only
        if doc is not None and d.int(0, 2) > 0:
            doc, texts = damaged(d, doc, yaml_ok=False)
            return where, _fill(json.dumps(doc, indent=2), texts).encode("utf-8", "surrogatepass")
    how = d.pick(["text", "surrogate", "deep", "bigint", "dupkey"])
    if how == "text":
        return where, damaged_text(d, data)
    at = d.int(0, len(text))
    insert = {"surrogate": '"\\ud800"', "deep": "[" * 1500 + "]" * 1500, "bigint": "9" * 5000,
              "dupkey": '"mcpServers": {}, "mcpServers": {"x": {"command": 1, "args": {"a": 1}}}'}[how]
    return where, (text[:at] + insert + text[at:]).encode("utf-8", "surrogatepass")


def test_hostile_client_configs() -> None:
    def run(config: tuple[str, bytes], verb: str) -> str:
        where, data = config
        tmp = scratch().case
        home, project = tmp / "home", tmp / "project"
        rel = where.split(":", 1)[1] if where.startswith("project:") else where
        path = (project if where.startswith("project:") else home) / rel
        path.parent.mkdir(parents=True)
        project.mkdir(exist_ok=True)
        path.write_bytes(data)
        common = ["--home", str(home), "--project", str(project)]
        args = {"list": ["wrap", "--list", *common],
                "dry-run": ["wrap", "--all", "--dry-run", *common],
                "wrap": ["wrap", "--all", *common, "--sessions-dir", str(tmp / "sessions"),
                         "--mcpreel", "mcpreel"],
                "unwrap": ["unwrap", "--all", *common]}[verb]
        started = time.monotonic()
        result = invoke(args)
        if result.exception is not None:
            raise AssertionError(f"{verb} on a damaged {rel}: traceback") from result.exception
        assert result.code in (0, 1, 2), (verb, result.code, result.stderr[-500:])
        if result.code == 2:  # a file or entry refused: said in one error line each, the others go on
            said = result.stderr.rstrip("\n").split("\n")
            assert said[-1].startswith("error:") and "Traceback" not in result.stderr, (verb, result.stderr[-500:])
            if verb in ("list", "dry-run"):
                assert path.read_bytes() == data, f"{verb} changed {rel}"
        left = [p.name for p in path.parent.iterdir() if p.name.endswith(".part")]
        assert not left, f"{verb} left {left} behind"
        assert time.monotonic() - started < HANG_SECONDS
        return f"exit {result.code}"

    fuzz("hostile/client-config", lambda d: {"config": hostile_config(d),
                                             "verb": d.pick(["list", "dry-run", "wrap", "unwrap"])}, run, N)


@pytest.mark.parametrize("levels", [9, 30])
def test_the_laughs_damage_is_what_the_issue_saw(levels: int) -> None:
    """The YAML family's ``laughs`` damage writes nested aliases (a check that the family can find the
    issue's hang: a file of a few hundred bytes that expands to width ** levels values)."""
    text = as_yaml({"meta": {}, "x": laughs(levels, 9)})
    assert text.count("*id") >= levels and len(text) < 40_000
