"""Fuzz the loaders of the files people hand mcpreel besides recordings (issue 28): hostile YAML
transcripts (MCP-VCR), rules files, contract snapshots and client configs.

Each family starts from real files (the hub's MCP-VCR transcripts, the rules the docs show, contracts
snapshotted from the shared fixtures, the client configs of ``tests/clientconfig/configs.py``), damages
them as the readers' fuzz does (a value's type changed, a member deleted, a truncation, bytes flipped)
and as an attacker would (nested aliases, an alias inside its own anchor, nesting past the readers'
depth, YAML tags JSON has no word for, keys that are not strings, duplicate keys, several documents,
lone surrogates) and runs the verbs that read such a file in-process through the CLI's click entry.
Every case ends in exit 0 (or 1 where the verb says "found something"), or exit 2 with one line and no
output left behind, within :data:`HANG_SECONDS` (a case that runs longer is a hang, and fails).

``MCPREEL_FUZZ_N`` and ``MCPREEL_FUZZ_REPORT`` work as in :mod:`tests.fuzz.test_fuzz_readers`.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel.cli import cli
from mcpreel.errors import InputError
from tests.clientconfig.configs import CASES
from tests.conftest import FIXTURES, needs_shared
from tests.fuzz.test_fuzz_readers import ODD_VALUES, _at, _nodes

pytestmark = needs_shared

N = int(os.environ.get("MCPREEL_FUZZ_N") or 200)
#: a case that runs longer than this is a hang (the readers read these files in milliseconds)
HANG_SECONDS = 30
PLACE = "zzplacezz"  # a plain scalar the YAML dumper writes as it is: replaced by hostile text afterwards
#: YAML that JSON has no word for, or that the safe loader refuses, put where a value was
TAGGED = ["!!binary aGVsbG8=", "!!binary '%%%'", "!!set {a, b}", "!!python/object:os.system ls",
          "!!python/name:os.system", "!!timestamp 2001-12-14t21:59:43.10-05:00", "2001-12-14", "!!float .nan",
          ".inf", "-.inf", "!!int 0b1010", "0o17", "0x1F", "1_000", "!!omap [a: 1, b: 2]", "!!pairs [a: 1, a: 2]",
          "!custom x", "!!str", "!!null ''", "{? [a, b] : c}", "{1: a, 2.5: b, null: c, true: d}",
          "{<<: {a: 1}, b: 2}", "{<<: [{a: 1}, {b: 2}], c: 3}", "{a: 1, a: 2}", '"\\ud800"', '"a\\udc00b"',
          "&x [1, *x]", "*undefined", "|\n  block\n  text", "~", "yes", "NO", "=", "<<", "9" * 40,
          "'" + "x" * 5000 + "'", "[" * 1100 + "]" * 1100, "{a: " * 300 + "1" + "}" * 300]


class Hang(Exception):
    pass


@contextmanager
def hang_after(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` in this (the main) thread when the block runs longer than ``seconds``."""

    def ring(signum: int, frame: Any) -> None:
        raise Hang(f"no answer in {seconds} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# -- damaging a document -----------------------------------------------------------------------------------


def laughs(levels: int, width: int) -> Any:
    """``width`` ** ``levels`` values in ``levels`` shared lists: the YAML dumper writes them as aliases."""
    node: Any = ["lol"] * width
    for _ in range(levels - 1):
        node = [node] * width
    return node


@st.composite
def damaged(draw: st.DrawFn, doc: Any, *, yaml_ok: bool) -> tuple[Any, list[str]]:
    """``doc`` (a copy) with 1-3 of its values changed or deleted, and the hostile texts to put at the
    :data:`PLACE` markers (a YAML-only damage, or a deep nesting when ``yaml_ok`` is false)."""
    doc = copy.deepcopy(doc)
    texts: list[str] = []
    hows = ["type", "type", "delete", "deep"] + (["laughs", "self", "share", "tag", "tag"] if yaml_ok else [])
    for _ in range(draw(st.integers(1, 3))):
        paths = _nodes(doc)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = _at(doc, path[:-1])
        how = draw(st.sampled_from(hows))
        if how == "delete":
            del parent[path[-1]]
        elif how == "type":
            parent[path[-1]] = copy.deepcopy(draw(st.sampled_from(ODD_VALUES) | st.text(max_size=6) | st.integers()))
        elif how == "laughs":
            parent[path[-1]] = laughs(draw(st.integers(2, 14)), draw(st.integers(2, 12)))
            break  # the document now shares values: its paths are no longer a tree to walk
        elif how == "self":  # an alias inside its own anchor
            loop: list[Any] = [1]
            loop.append(loop)
            parent[path[-1]] = loop
            break
        elif how == "share":  # an alias to another value of the document (an ancestor: a loop)
            parent[path[-1]] = _at(doc, draw(st.sampled_from(paths))[:-1])
            break
        elif how == "deep":
            depth = draw(st.sampled_from([200, 600, 1000, 1017, 1020, 1024, 1025, 1500, 5000]))
            opener, closer = draw(st.sampled_from([("[", "]"), ("{\"a\": ", "}")]))
            parent[path[-1]] = PLACE
            texts.append(opener * depth + "0" + closer * depth)
        else:  # tag
            parent[path[-1]] = PLACE
            texts.append(draw(st.sampled_from(TAGGED)))
    return doc, texts


def _fill(text: str, texts: list[str]) -> str:
    for hostile in texts:
        text = text.replace(PLACE, hostile, 1)
    return text


def as_yaml(doc: Any) -> str:
    try:
        return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=120)
    except (yaml.YAMLError, RecursionError, ValueError):
        return yaml.safe_dump(doc, sort_keys=False, allow_unicode=False, width=120)


@st.composite
def damaged_text(draw: st.DrawFn, data: bytes) -> bytes:
    """The text-level damages of the readers' fuzz: a truncation, flipped bytes, a BOM, a second document."""
    how = draw(st.sampled_from(["truncate", "bytes", "bom", "twice", "tabs"]))
    if how == "truncate":
        return data[:draw(st.integers(0, max(0, len(data) - 1)))]
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "twice":
        return data + b"\n---\n" + data
    if how == "tabs":
        return data.replace(b"\n  ", b"\n\t", draw(st.integers(1, 3)))
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        if out:
            out[draw(st.integers(0, len(out) - 1))] = draw(st.integers(0, 255))
    return bytes(out)


@st.composite
def hostile_file(draw: st.DrawFn, seeds: list[Any], *, form: str) -> bytes:
    """A damaged seed document as ``form`` (``yaml``, ``json``, or ``either``) bytes."""
    doc = draw(st.sampled_from(seeds))
    if draw(st.integers(0, 4)) == 0:  # a damage to the text itself
        data = as_yaml(doc).encode() if form == "yaml" else json.dumps(doc, indent=2).encode()
        return draw(damaged_text(data))
    as_json = form == "json" or (form == "either" and draw(st.booleans()))
    doc, texts = draw(damaged(doc, yaml_ok=not as_json))
    if as_json:
        return _fill(json.dumps(doc, indent=1), texts).encode("utf-8", "surrogatepass")
    return _fill(as_yaml(doc), texts).encode("utf-8", "surrogatepass")


# -- running a verb ------------------------------------------------------------------------------------------


def run_cli(args: list[str], tmp: Path, keep: set[str], *, found: bool = False) -> int:
    """Run ``args``; exit 0 (or 1 when ``found``: the verb found something), or 2 with one line and nothing
    left in ``tmp`` but the files named in ``keep``. A traceback or a hang fails."""
    started = time.monotonic()
    with hang_after(HANG_SECONDS):
        result = CliRunner().invoke(cli, args)
    if isinstance(result.exception, Hang):
        raise AssertionError(f"{args[:2]}: hang (no answer in {HANG_SECONDS} s)")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{' '.join(args[:2])}: traceback") from result.exception
    allowed = (0, 1, 2) if found else (0, 2)
    assert result.exit_code in allowed, (args[:2], result.exit_code, result.output[-500:])
    if result.exit_code == 2:
        said = result.stderr.rstrip("\n").split("\n")
        assert len(said) == 1 and said[0].startswith("error:"), (args[:2], result.stderr[-500:])
        left = {p.name for p in tmp.iterdir()} - keep
        assert not left, f"{args[:2]} left {sorted(left)} behind after exit 2"
    assert time.monotonic() - started < HANG_SECONDS
    return result.exit_code


def fuzz(family: str, cases: Any, run: Callable[..., str]) -> None:
    """Run ``run`` on N cases of ``cases`` (a strategy of keyword arguments); report the verdicts.

    With ``MCPREEL_FUZZ_KEEP_GOING`` set, a failing case is counted (by its first line) and the run goes
    on, so a big run reports how many cases of each kind fail; the test still fails at the end.
    """
    verdicts: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    keep_going = bool(os.environ.get("MCPREEL_FUZZ_KEEP_GOING"))
    started = time.monotonic()

    @settings(max_examples=N, deadline=None, database=None, derandomize="MCPREEL_FUZZ_N" not in os.environ,
              suppress_health_check=list(HealthCheck))
    @given(case=cases)
    def each(case: dict[str, Any]) -> None:
        try:
            verdicts[run(**case)] += 1
        except AssertionError as exc:
            if not keep_going:
                raise
            cause = exc.__cause__
            failures[f"{str(exc).splitlines()[0][:100]}{f' ({type(cause).__name__}: {str(cause)[:80]})' if cause else ''}"] += 1

    each()
    report = os.environ.get("MCPREEL_FUZZ_REPORT")
    if report:
        hangs = sum(n for what, n in failures.items() if "hang" in what)
        line = {"family": family, "cases": sum(verdicts.values()) + sum(failures.values()), **dict(sorted(verdicts.items())),
                "tracebacks": sum(failures.values()) - hangs, "hangs": hangs,
                "seconds": round(time.monotonic() - started, 1), **({"failures": dict(failures)} if failures else {})}
        with open(report, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")
    assert not failures, dict(failures)


# -- the families ------------------------------------------------------------------------------------------

VCR = sorted((FIXTURES / "hub" / "mcp-vcr").glob("*.yaml")) if FIXTURES.is_dir() else []
VCR_WRITERS = ("reel", "jsonrpc", "har", "qai", "inspector")


def test_hostile_mcp_vcr_yaml() -> None:
    seeds = [yaml.safe_load(p.read_bytes()) for p in VCR]
    assert seeds, "the hub's MCP-VCR fixtures"
    verbs = ("import", "inspect", "inspect -v", *(f"convert:{w}" for w in VCR_WRITERS))

    def run(data: bytes, verb: str) -> str:
        with tempfile.TemporaryDirectory() as tmp:
            src, out = Path(tmp) / "t.yaml", Path(tmp) / "out"
            src.write_bytes(data)
            if verb == "import":
                args = ["import", str(src), "--out-trace", str(out)]
            elif verb.startswith("inspect"):
                args = ["inspect", *verb.split()[1:], str(src)]
            else:
                args = ["convert", str(src), str(out), "--to", verb.split(":", 1)[1]]
            return f"exit {run_cli(args, Path(tmp), {src.name})}"

    fuzz("hostile/mcp-vcr-yaml", st.fixed_dictionaries(
        {"data": hostile_file(seeds, form="yaml"), "verb": st.sampled_from(verbs)}), run)


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
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / f"rules{suffix}"
            src.write_bytes(data)
            with hang_after(HANG_SECONDS):
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

    fuzz("hostile/rules", st.fixed_dictionaries(
        {"data": hostile_file(RULES_SEEDS, form="either"), "suffix": st.sampled_from([".yaml", ".json", ".yml"])}),
        run)


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
        with tempfile.TemporaryDirectory() as tmp:
            contract, sarif = Path(tmp) / "contract.json", Path(tmp) / "report.sarif"
            contract.write_bytes(data)
            args = ["contract", "check", str(contract), str(CONTRACT_SOURCES[source]), "--fail-on", "any"]
            args += {"text": [], "json": ["--format", "json"], "sarif": ["--sarif", str(sarif)],
                     "update": ["--update"]}[how]
            code = run_cli(args, Path(tmp), {contract.name}, found=True)
            return f"exit {code}"

    fuzz("hostile/contract", st.fixed_dictionaries(
        {"data": hostile_file(docs, form="json"), "source": st.integers(0, len(CONTRACT_SOURCES) - 1),
         "how": st.sampled_from(["text", "json", "sarif", "update"])}), run)


def _config_seeds() -> list[tuple[str, str]]:
    return [(where, text) for where, text, _, _ in CASES.values()]


@st.composite
def hostile_config(draw: st.DrawFn) -> tuple[str, bytes]:
    where, text = draw(st.sampled_from(_config_seeds()))
    data = text.encode()
    if not where.endswith(".toml"):
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None  # JSONC (comments): damaged as text only
        if doc is not None and draw(st.integers(0, 2)) > 0:
            doc, texts = draw(damaged(doc, yaml_ok=False))
            return where, _fill(json.dumps(doc, indent=2), texts).encode("utf-8", "surrogatepass")
    how = draw(st.sampled_from(["text", "surrogate", "deep", "bigint", "dupkey"]))
    if how == "text":
        return where, draw(damaged_text(data))
    at = draw(st.integers(0, len(text)))
    insert = {"surrogate": '"\\ud800"', "deep": "[" * 1500 + "]" * 1500, "bigint": "9" * 5000,
              "dupkey": '"mcpServers": {}, "mcpServers": {"x": {"command": 1, "args": {"a": 1}}}'}[how]
    return where, (text[:at] + insert + text[at:]).encode("utf-8", "surrogatepass")


def test_hostile_client_configs() -> None:
    def run(config: tuple[str, bytes], verb: str) -> str:
        where, data = config
        with tempfile.TemporaryDirectory() as tmp:
            home, project = Path(tmp) / "home", Path(tmp) / "project"
            rel = where.split(":", 1)[1] if where.startswith("project:") else where
            path = (project if where.startswith("project:") else home) / rel
            path.parent.mkdir(parents=True)
            project.mkdir(exist_ok=True)
            path.write_bytes(data)
            common = ["--home", str(home), "--project", str(project)]
            args = {"list": ["wrap", "--list", *common],
                    "dry-run": ["wrap", "--all", "--dry-run", *common],
                    "wrap": ["wrap", "--all", *common, "--sessions-dir", str(Path(tmp) / "sessions"),
                             "--mcpreel", "mcpreel"],
                    "unwrap": ["unwrap", "--all", *common]}[verb]
            started = time.monotonic()
            with hang_after(HANG_SECONDS):
                result = CliRunner().invoke(cli, args)
            if isinstance(result.exception, Hang):
                raise AssertionError(f"{verb}: hang")
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                raise AssertionError(f"{verb} on a damaged {rel}: traceback") from result.exception
            assert result.exit_code in (0, 1, 2), (verb, result.exit_code, result.output[-500:])
            if result.exit_code == 2:  # a file or entry refused: said in one error line each, the others go on
                said = result.stderr.rstrip("\n").split("\n")
                assert said[-1].startswith("error:") and "Traceback" not in result.stderr, (verb, result.stderr[-500:])
                if verb in ("list", "dry-run"):
                    assert path.read_bytes() == data, f"{verb} changed {rel}"
            left = [p.name for p in path.parent.iterdir() if p.name.endswith(".part")]
            assert not left, f"{verb} left {left} behind"
            assert time.monotonic() - started < HANG_SECONDS
            return f"exit {result.exit_code}"

    fuzz("hostile/client-config", st.fixed_dictionaries(
        {"config": hostile_config(), "verb": st.sampled_from(["list", "dry-run", "wrap", "unwrap"])}), run)


@pytest.mark.parametrize("levels", [9, 30])
def test_the_laughs_damage_is_what_the_issue_saw(levels: int) -> None:
    """The YAML family's ``laughs`` damage writes nested aliases (a check that the family can find the
    issue's hang: a file of a few hundred bytes that expands to width ** levels values)."""
    text = as_yaml({"meta": {}, "x": laughs(levels, 9)})
    assert text.count("*id") >= levels and len(text) < 40_000
