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


@pytest.mark.parametrize("verb", [["inspect"], ["inspect", "-v"], ["redact", "--plain"], ["convert"]])
def test_a_reel_command_word_nested_to_the_readers_limit_is_shown_not_a_traceback(tmp_path: Path,
                                                                                  verb: list[str]) -> None:
    """Found by the drafts family (issue 40, the fuzz harness): a reel whose ``meta.command`` holds a value
    nested 1,018 levels deep (under the readers' 1,024) made ``str()`` recurse past the interpreter's limit
    in the reel reader: a RecursionError in every verb. The word is now its cut repr."""
    from mcpreel._infra.nesting import recursion_room

    value: object = "x"
    for _ in range(1018):
        value = [value]
    meta = {"v": 1, "type": "meta", "startedAt": "2023-11-14T22:13:20.000Z", "command": ["srv", value]}
    ping = {"t": "2023-11-14T22:13:20.000Z", "dir": "in", "raw": {"jsonrpc": "2.0", "id": 1, "method": "ping"}}
    with recursion_room(per_level=3):
        text = json.dumps(meta) + "\n" + json.dumps(ping) + "\n"
    src = tmp_path / "deep.jsonl"
    src.write_text(text)
    args = [verb[0], *verb[1:], str(src)] if verb[0] == "inspect" else [verb[0], str(src), str(tmp_path / "o.jsonl"), *verb[1:]]
    result = CliRunner().invoke(cli, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 0, result.output[-300:]


def _nested(depth: int) -> object:
    value: object = "x"
    for _ in range(depth):
        value = [value]
    return value


def test_a_qai_command_word_nested_deep_is_shown_not_a_traceback(tmp_path: Path) -> None:
    """Found by the stacked family (issue 40): ``server_command`` as a list holding a value nested 1,018
    levels deep: ``str()`` of it recursed past the interpreter's limit in the qai reader."""
    from mcpreel._infra.nesting import recursion_room

    doc = json.loads((FIXTURES / "qai" / "qai_session_minimal.json").read_text())
    doc["server_command"] = ["python", _nested(1018)]
    src = tmp_path / "deep.json"
    with recursion_room(per_level=3):
        src.write_text(json.dumps(doc))
    session, _ = open_session(src)
    assert session.info.command[0] == "python" and session.info.command[1].startswith("[[[")


def test_diff_of_a_result_nested_to_the_readers_limit_is_compared_not_a_traceback(tmp_path: Path) -> None:
    """Found by the stacked family (issue 40): ``diff`` copied each result recursively
    (``compare.normalize._clean``): a result nested 1,000 levels deep was a RecursionError, in the CLI too."""
    from mcpreel.compare.normalize import comparable

    deep = {"result": {"content": [{"type": "text", "text": "[1]"}], "x": _nested(1015)}}
    view = comparable(deep)
    assert view["result"]["content"][0]["text"] == [1]
    node = view["result"]["x"]
    for _ in range(1015):
        node = node[0]
    assert node == "x"


def test_a_qai_id_nested_deep_is_shown_not_a_traceback(tmp_path: Path) -> None:
    """Found by the otlp family (issue 40): a qai ``id`` that is a value nested 1,018 levels deep: ``str()``
    of it recursed past the interpreter's limit (``export otlp``, ``convert``)."""
    from mcpreel._infra.nesting import recursion_room

    doc = json.loads((FIXTURES / "qai" / "qai_session_minimal.json").read_text())
    doc["id"] = _nested(1018)
    src = tmp_path / "deep.json"
    with recursion_room(per_level=3):
        src.write_text(json.dumps(doc))
    session, _ = open_session(src)
    assert session.info.id is not None and session.info.id.startswith("[[[")


def test_inspect_of_an_http_record_whose_context_is_nested_deep_is_not_a_traceback(tmp_path: Path) -> None:
    """Found by the drafts family (issue 40): ``inspect`` (no ``-v``) redacts an HTTP record's transport
    context, not its payload, by a walk that recursed without the room the other walks of the redactor
    take: a context nested 1,000 levels deep was a RecursionError."""
    from mcpreel._infra.nesting import recursion_room

    meta = {"v": 1, "type": "meta", "startedAt": "2023-11-14T22:13:20.000Z", "transport": "streamable-http"}
    line = {"t": "2023-11-14T22:13:20.000Z", "dir": "out", "raw": {"jsonrpc": "2.0", "id": 1, "result": {}},
            "ctx": {"status": 200, "exchange": 1, "sse": {"event": "message", "data": _nested(1000)}}}
    src = tmp_path / "deep.jsonl"
    with recursion_room(per_level=3):
        src.write_text(json.dumps(meta) + "\n" + json.dumps(line) + "\n")
    result = CliRunner().invoke(cli, ["inspect", str(src)])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 0, result.output[-300:]


def _deep_file(path: Path, lines: list[object]) -> Path:
    from mcpreel._infra.nesting import recursion_room

    with recursion_room(per_level=3):
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_mcpspy_pids_nested_deep_are_not_compared_recursively(tmp_path: Path) -> None:
    """Found by the stacked family (issue 40, ``report``): MCPSpy events whose ``from_pid`` is the same value
    nested 1,000 levels deep: the client's pid was compared with each event's, recursively."""
    events = [json.loads(line) for line in (FIXTURES / "hub" / "mcpspy").glob("*.jsonl").__next__().read_text()
              .splitlines()[:4]]
    for event in events:
        event["stdio_transport"]["from_pid"] = _nested(1000)
    src = _deep_file(tmp_path / "spy.jsonl", events)
    session, _ = open_session(src)
    assert len(list(session)) == 4


def test_a_reel_kind_nested_deep_is_a_note_not_a_traceback(tmp_path: Path) -> None:
    """Found by the otlp family (issue 40): a reel ``meta.kind`` nested 1,018 levels deep was quoted with
    ``!r`` in the note that the file holds no MCP messages."""
    meta = {"v": 1, "type": "meta", "startedAt": "2023-11-14T22:13:20.000Z", "kind": _nested(1018)}
    ping = {"t": "2023-11-14T22:13:20.000Z", "dir": "in", "raw": {"jsonrpc": "2.0", "id": 1, "method": "ping"}}
    session, _ = open_session(_deep_file(tmp_path / "k.jsonl", [meta, ping]))
    assert any(note.startswith("kind [[[") for note in session.info.notes)


@pytest.mark.parametrize("nanos", ["-1000000", 10**59])
def test_export_otlp_of_a_time_out_of_range_is_not_a_traceback(tmp_path: Path, nanos: object) -> None:
    """Found by the otlp family (issue 40): OTLP mcpreel wrote, read back with a span's start before 1970
    or past what 64 bits of nanoseconds hold, reached the protobuf encoder of ``export otlp`` ("Value out of
    range"). Now at the nearest end."""
    spans = tmp_path / "spans.json"
    first = CliRunner().invoke(cli, ["export", "otlp", str(FIXTURES / "qai" / "qai_session_minimal.json"), "-o",
                                     str(spans), "--include-content"])
    assert first.exit_code == 0, first.output
    doc = json.loads(spans.read_text())
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["startTimeUnixNano"] = nanos
    spans.write_text(json.dumps(doc))
    result = CliRunner().invoke(cli, ["export", "otlp", str(spans), "-o", str(tmp_path / "again.json")])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 0, result.output[-300:]


# -- found by a 15,000-input run of the new families on the engine of issue 40 (each failed before its fix) --


def test_glassport_sniffing_a_direction_that_is_an_object_is_not_a_traceback() -> None:
    """``dir`` holding an object was looked up in a dict (unhashable: a TypeError in ``inspect``'s sniffing)."""
    from mcpreel.formats.glassport import looks_like_glassport

    assert looks_like_glassport({"dir": {"a": 1}, "seq": 1, "ts": 1, "frame": 1, "raw": 1}) is False


def test_http_envelope_lists_nested_deep_are_looked_at_without_recursing() -> None:
    from mcpreel.formats.http_envelope import _looks_jsonrpc

    assert _looks_jsonrpc(_nested(5000)) is False
    deep: object = {"jsonrpc": "2.0"}
    for _ in range(5000):
        deep = [deep]
    assert _looks_jsonrpc(deep) is True


def test_inspect_v_of_a_time_past_year_9999_shows_milliseconds() -> None:
    from mcpreel.render.inspect import _shown_time

    assert _shown_time(10**21) == f"{10**21} ms (outside years 1 to 9999)"
    assert _shown_time(0).startswith("1970-01-01")


def test_the_redactor_walks_a_command_word_of_deep_json_with_room() -> None:
    """An argv word that is JSON text nested 1,000 levels deep: the redactor parses JSON in a text and
    walked it without the room its other entry points take (``export otlp``'s command attribute)."""
    from mcpreel._infra.nesting import recursion_room
    from mcpreel.redact import Redactor

    with recursion_room(per_level=3):
        word = json.dumps(_nested(1000))
    assert Redactor().command(["srv", word]) == ["srv", word]
    assert Redactor().text(word) == word


def test_mcpspy_transport_type_nested_deep_is_no_transport(tmp_path: Path) -> None:
    events = [json.loads(line) for line in (FIXTURES / "hub" / "mcpspy").glob("*.jsonl").__next__().read_text()
              .splitlines()[:2]]
    events[0]["transport_type"] = _nested(1018)
    session, _ = open_session(_deep_file(tmp_path / "spy.jsonl", events))
    assert session.info.transport is None


def test_a_har_of_sse_words_nested_deep_is_written_not_a_traceback(tmp_path: Path) -> None:
    """An SSE event name and id nested 1,000 levels deep in a reel's transport context reached ``str()`` and
    an f-string in the HAR writer."""
    meta = {"v": 1, "type": "meta", "startedAt": "2023-11-14T22:13:20.000Z", "transport": "streamable-http",
            "url": "http://127.0.0.1:9/mcp"}
    call = {"t": "2023-11-14T22:13:20.000Z", "dir": "in", "ctx": {"exchange": 1, "method": "POST"},
            "raw": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}}
    answer = {"t": "2023-11-14T22:13:20.100Z", "dir": "out", "raw": {"jsonrpc": "2.0", "id": 1, "result": {}},
              "ctx": {"exchange": 1, "status": 200, "headers": {"content-type": "text/event-stream"},
                      "sse": {"event": _nested(1000), "id": _nested(1000)}}}
    src = _deep_file(tmp_path / "s.jsonl", [meta, call, answer])
    result = CliRunner().invoke(cli, ["convert", str(src), str(tmp_path / "out.har"), "--to", "har"])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 2), result.output[-300:]



def test_import_refusing_a_later_line_says_one_line_not_its_warnings_first(tmp_path: Path) -> None:
    """The drafts family (seed 10165951870787142155): ``import`` of a file out of time order (its sorted pass)
    said its warnings as it read, then the ``error:`` of a later line, three lines for one refusal. The
    warnings now wait for the file to be read whole."""
    lines = [
        {"v": 1, "type": "meta", "startedAt": "2026-11-01T00:00:00.000Z"},
        {"t": "2026-11-01T00:00:05.000Z", "dir": "in",  # no arguments: a warning
         "raw": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}},
        {"t": "2026-11-01T00:00:01.000Z", "dir": "out", "raw": {"jsonrpc": "2.0", "id": 7, "result": {}}},  # orphan
        {"t": "2026-11-01T00:00:06.000Z", "dir": "in", "raw": "not a message"},
    ]
    bad = tmp_path / "s.jsonl"
    bad.write_text("".join(json.dumps(x) + "\n" for x in lines))
    result = CliRunner().invoke(cli, ["import", str(bad), "-o", str(tmp_path / "t.jsonl")])
    assert result.exit_code == 2, result.output
    said = [line for line in result.output.splitlines() if line.strip()]
    assert len(said) == 1 and said[0].startswith("error:") and "source line 4" in said[0], said
    assert not (tmp_path / "t.jsonl").exists()
    good = tmp_path / "g.jsonl"
    good.write_text("".join(json.dumps(x) + "\n" for x in lines[:3]))
    result = CliRunner().invoke(cli, ["import", str(good), "-o", str(tmp_path / "g.trace")])
    assert result.exit_code == 0, result.output
    assert "orphan response" in result.output and "params.arguments" in result.output  # said once read
