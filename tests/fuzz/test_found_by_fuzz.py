"""Cases the big fuzz run found (issue 12), kept as plain regression tests.

`make fuzz N=100000` (2026-11-24) found a lone surrogate in the recorded server command of a qai file
and of an agent-vcr file reaching the HAR writer's ``stdio://`` URL, which ``quote`` cannot encode
(two tracebacks among 1.1 million inputs). Every session header is now escaped once, after any reader
(:func:`mcpreel.formats._source.encodable_header`, called by ``open_session``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.formats import open_session
from tests.conftest import FIXTURES, needs_shared

pytestmark = needs_shared


def _with_command(tmp: Path, fixture: Path, key: str, value: object) -> Path:
    doc = json.loads(fixture.read_text())
    doc[key] = value
    out = tmp / fixture.name
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize(("fixture", "key", "value"), [
    (FIXTURES / "qai" / "qai_session_minimal.json", "server_command", "\ud800"),
    (FIXTURES / "qai" / "qai_session_minimal.json", "server_command", "python \udc80server.py"),
])
@pytest.mark.parametrize("to", ["har", "reel", "qai", "mcp-cassette-pypi", "mcp-recorder"])
def test_a_lone_surrogate_in_the_command_is_escaped_for_every_writer(tmp_path: Path, fixture: Path, key: str,
                                                                     value: object, to: str) -> None:
    src = _with_command(tmp_path, fixture, key, value)
    result = CliRunner().invoke(cli, ["convert", str(src), str(tmp_path / "out"), "--to", to])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0, result.output
    session, _ = open_session(src)
    assert all(c.encode("utf-8") for c in session.info.command)  # nothing a writer cannot encode
    assert "\\ud800" in " ".join(session.info.command) or "\\udc80" in " ".join(session.info.command)


def test_agent_vcr_command_with_a_lone_surrogate(tmp_path: Path) -> None:
    fixture = FIXTURES / "hub" / "agent-vcr" / "examples__recordings__calculator-v1.vcr"
    doc = json.loads(fixture.read_text())
    found = []

    def poison(node: object) -> None:  # every string member named like a command
        if isinstance(node, dict):
            for k, v in node.items():
                if "command" in k and isinstance(v, str):
                    node[k] = v + "\ud800"
                    found.append(k)
                poison(v)
        elif isinstance(node, list):
            for v in node:
                poison(v)

    poison(doc)
    assert found, "the agent-vcr fixture names its command"
    src = tmp_path / fixture.name
    src.write_text(json.dumps(doc))
    result = CliRunner().invoke(cli, ["convert", str(src), str(tmp_path / "out.har"), "--to", "har"])
    assert result.exit_code == 0, (result.output, result.exception)


# -- issue 28: the hostile families' finds (2026-11-26) ---------------------------------------------------------

VCR_ERROR = FIXTURES / "hub" / "mcp-vcr" / "fixtures__jsonrpc_error_response.yaml"


@pytest.mark.parametrize(("value", "said"), [
    (".inf", "t must be a number of milliseconds >= 0, found inf"),  # int(inf): OverflowError
    ("!!binary aGVsbG8=", "t: a YAML bytes value has no JSON form"),  # the message quoted bytes: TypeError
])
@pytest.mark.parametrize("verb", ["inspect", "import"])
def test_an_mcp_vcr_time_that_is_no_number(tmp_path: Path, value: str, said: str, verb: str) -> None:
    src = tmp_path / "t.yaml"
    src.write_text(VCR_ERROR.read_text().replace("  - t: 20\n", f"  - t: {value}\n", 1))
    assert src.read_text() != VCR_ERROR.read_text()
    args = ["inspect", str(src)] if verb == "inspect" else ["import", str(src), "--out-trace", str(tmp_path / "o")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and (result.exception is None or isinstance(result.exception, SystemExit))
    assert result.stderr == f"error: {src}: message 2: {said}\n"


def test_an_infinite_offset_in_a_json_cassette(tmp_path: Path) -> None:
    fixture = FIXTURES / "hub" / "mcp-cassette-pypi" / "examples__cassettes__tools.mcp.json"
    src = tmp_path / fixture.name
    src.write_text(fixture.read_text().replace('"t_offset_ms": 125', '"t_offset_ms": Infinity', 1))
    result = CliRunner().invoke(cli, ["inspect", str(src)])
    assert result.exit_code == 2 and "t_offset_ms must be a number of milliseconds >= 0, found inf\n" in result.stderr


def test_an_http_server_url_urllib_refuses_is_listed_and_pointed_at(tmp_path: Path) -> None:
    """The client-config family (2 of 2,000): a host with a stray ``[`` made ``urlsplit`` raise in
    ``wrap --all`` (the client URL it suggests): the path and query are read past the host."""
    home, project = tmp_path / "home", tmp_path / "project"
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir(parents=True)
    project.mkdir()
    config.write_text('{"mcpServers": {"linear": {"url": "http://localhost:300[[]]0/mcp?team=x"}}}')
    for args in (["wrap", "--list"], ["wrap", "--all", "--dry-run"], ["wrap", "--all", "--http"]):
        result = CliRunner().invoke(cli, [*args, "--home", str(home), "--project", str(project)])
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        assert result.exit_code in (0, 2) and "/mcp?team=x" in result.output, result.output


@pytest.mark.parametrize("where", ["tool name", "property name"])
def test_a_lone_surrogate_in_a_contract_snapshot_is_printed_escaped(tmp_path: Path, where: str) -> None:
    """The hostile-contract family (issue 28, 2026-11-26) found ``contract check`` printing a change whose
    tool or property name held a lone surrogate: a ``UnicodeEncodeError`` traceback instead of the line."""
    from mcpreel.contract.snapshot import from_session

    source = FIXTURES / "qai" / "qai_session_fastmcp.json"
    doc = json.loads(from_session(open_session(source)[0]).dumps())
    first = next(iter(doc["tools"]))
    if where == "tool name":
        doc["tools"]["\udc00x"] = doc["tools"].pop(first)
    else:
        doc["tools"][first]["inputSchema"] = {"type": "object", "properties": {"\udc00": {"type": "string"}}}
    contract = tmp_path / "contract.json"
    contract.write_text(json.dumps(doc))
    result = CliRunner().invoke(cli, ["contract", "check", str(contract), str(source), "--fail-on", "any"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 1, result.output
    assert "\\udc00" in result.output


@pytest.mark.parametrize("name", ["two\nlines", "tab\there", "c1\x96control"])
def test_a_rule_name_that_is_not_one_line_is_escaped_in_the_error(tmp_path: Path, name: str) -> None:
    """The hostile-rules family at 100,000 cases (issue 28, 2026-11-26) found a rule named with a newline or
    a control character making its error two lines (9 of 100,000)."""
    from mcpreel.errors import InputError
    from mcpreel.rules import load_rules

    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"name": name, "match": {"method": "tools/call"}, "action": "no-such-action"}]))
    with pytest.raises(InputError) as caught:
        load_rules(rules)
    text = str(caught.value)
    assert "\n" not in text and text.startswith(str(rules)) and "rule 1 (" in text
    assert repr(name)[1:-1] in text


@pytest.mark.parametrize(("text", "said"), [
    ("- match: {}\n  drop:\n    error: {code: 1, message: m, data: !!binary aGVsbG8=}\n", "a value JSON cannot hold (bytes)"),
    ("- match: {}\n  malformed: 2026-11-26\n", "a value JSON cannot hold (date)"),
    ("- match: {1: x}\n  close: true\n", "a value JSON cannot hold (a key of type int)"),
    ('[{"match": {}, "malformed": "\\ud800"}]', "malformed text holds a lone surrogate"),
])
def test_a_rules_file_json_cannot_carry_is_one_line(tmp_path: Path, text: str, said: str) -> None:
    """The hostile-rules family at 100,000 (issue 28, 2026-11-26): YAML's ``!!binary`` error data reached the
    reel's JSON (a TypeError), and a lone surrogate as malformed text the wire (a UnicodeEncodeError)."""
    from mcpreel.errors import InputError
    from mcpreel.rules import load_rules

    rules = tmp_path / ("rules.json" if text.startswith("[") else "rules.yaml")
    rules.write_text(text)
    with pytest.raises(InputError) as caught:
        load_rules(rules)
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_an_unknown_match_key_with_a_newline_is_escaped(tmp_path: Path) -> None:
    """The second 100,000 of the hostile-rules family: an unknown key quoted in the error with its newline."""
    from mcpreel.errors import InputError
    from mcpreel.rules import load_rules

    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"name": "r", "match": {"k\nx": 1}, "close": True}]))
    with pytest.raises(InputError) as caught:
        load_rules(rules)
    assert "\n" not in str(caught.value) and "k\\nx" in str(caught.value)
