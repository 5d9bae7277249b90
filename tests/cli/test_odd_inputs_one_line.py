"""Issue 40, item 2: inputs the fuzz found tracebacks with, each through the CLI: a value nested 950-1021
levels deep (under the readers' 1,024) where a name, an id, an error or metadata belongs; a list where an
object belongs (``transport_context.headers``, ``ctx.exchange``); a lone surrogate through ``export otlp``
and ``diff``; ``show`` with a 49-digit id. Each ends in exit 0 (1 where the verb found something), or one
line and exit 2: never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpreel.cli import cli

META = '{"v": 1, "type": "meta", "startedAt": "2026-01-01T00:00:00.000Z", "label": "odd", "command": ["srv"]}'


def nested(depth: int) -> str:
    return '{"a":' * depth + '"x"' + "}" * depth


def listed(depth: int) -> str:
    return "[" * depth + '"x"' + "]" * depth


def reel(request: str, answer: str, meta: str = META) -> str:
    return "\n".join([meta, '{"t":"2026-01-01T00:00:00.000Z","dir":"in","raw":' + request + "}",
                      '{"t":"2026-01-01T00:00:00.001Z","dir":"out","raw":' + answer + "}"]) + "\n"


def deep_case(where: str, depth: int) -> str:
    d, ls = nested(depth), listed(depth)
    ok = '{"jsonrpc":"2.0","id":1,"result":{}}'
    return {
        "method": reel('{"jsonrpc":"2.0","id":1,"method":' + d + "}", ok),
        "method-list": reel('{"jsonrpc":"2.0","id":1,"method":' + ls + "}", ok),
        "id": reel('{"jsonrpc":"2.0","id":' + d + ',"method":"tools/call","params":{}}',
                   '{"jsonrpc":"2.0","id":' + d + ',"result":{}}'),
        "error": reel('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":' + d + "}}",
                      '{"jsonrpc":"2.0","id":1,"error":{"code":' + ls + ',"message":' + d + "}}"),
        "notification": reel('{"jsonrpc":"2.0","method":"notifications/progress","params":' + d + "}",
                             '{"jsonrpc":"2.0","method":' + ls + "}"),
        "metadata": reel('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', ok,
                         META[:-1] + ', "metadata": ' + d + "}"),
    }[where]


VERBS = {
    "inspect": lambda src, out: ["inspect", str(src)],
    "inspect -v": lambda src, out: ["inspect", "-v", str(src)],
    "report": lambda src, out: ["report", str(src), "-o", str(out)],
    "export otlp": lambda src, out: ["export", "otlp", str(src), "-o", str(out), "--include-content"],
    "diff": lambda src, out: ["diff", str(src), str(src)],
    "audit": lambda src, out: ["audit", str(src)],
    "convert qai": lambda src, out: ["convert", str(src), str(out), "--to", "qai"],
    "redact": lambda src, out: ["redact", str(src), str(out), "--plain"],
}


def one_line_or_ok(args: list[str]) -> int:
    result = CliRunner().invoke(cli, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.output[-300:])
    if result.exit_code == 2:
        said = result.stderr.rstrip("\n").split("\n")
        assert len(said) == 1 and said[0].startswith("error:"), result.stderr[-500:]
    return result.exit_code


def _deeper_stack(frames: int, args: list[str]) -> int:
    """The verb run ``frames`` Python frames further down (a test runner, a caller's own stack)."""
    return _deeper_stack(frames - 1, args) if frames else one_line_or_ok(args)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("depth", [960, 1021])
@pytest.mark.parametrize("where", ["method", "method-list", "id", "error", "notification", "metadata"])
@pytest.mark.parametrize("verb", sorted(VERBS))
def test_a_deep_value_anywhere_is_never_a_traceback(tmp_path: Path, verb: str, where: str, depth: int) -> None:
    src = tmp_path / "deep.reel"
    src.write_text(deep_case(where, depth))
    code = _deeper_stack(100, VERBS[verb](src, tmp_path / "out"))
    if verb in ("inspect", "inspect -v", "report", "export otlp", "convert qai", "redact"):
        assert code == 0


ENVELOPE = {"transport": "streamable-http", "transport_context": {"headers": ["a", "b"]}, "entries": [
    {"timestamp_ms": 1, "transport_context": {"headers": ["x"], "status": {"a": 1}},
     "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}},
    {"timestamp_ms": 2, "response": {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}}]}


@pytest.mark.parametrize("verb", ["inspect", "inspect -v", "report", "redact", "convert qai", "export otlp"])
def test_a_list_where_the_headers_object_belongs(tmp_path: Path, verb: str) -> None:
    src = tmp_path / "envelope.json"
    src.write_text(json.dumps(ENVELOPE))
    assert one_line_or_ok(VERBS[verb](src, tmp_path / "out")) == 0


@pytest.mark.parametrize("exchange", [[1], {"n": 1}, [[2]]])
def test_a_list_where_the_exchange_number_belongs(tmp_path: Path, exchange: object) -> None:
    src = tmp_path / "x.reel"
    lines = [json.loads(META),
             {"t": "2026-01-01T00:00:00.000Z", "dir": "in", "raw": {"jsonrpc": "2.0", "id": 1, "method": "ping"},
              "ctx": {"exchange": exchange, "status": 200, "headers": {"a": "b"}}},
             {"t": "2026-01-01T00:00:00.001Z", "dir": "out", "type": "transport",
              "ctx": {"exchange": exchange, "status": 202, "event": ["open"]}}]
    src.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "out.jsonl"
    assert one_line_or_ok(["convert", str(src), str(out), "--to", "mcp-conformance"]) == 0
    assert out.read_text().count('"kind": "http"') + out.read_text().count('"kind":"http"') == 2


SURROGATES = reel('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t\\ud800",'
                  '"arguments":{"k\\udc00":"\\ud800a"}}}',
                  '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\\udfffb"}]}}',
                  META.replace('"odd"', '"odd\\ud800"'))


@pytest.mark.parametrize("verb", ["export otlp", "diff", "diff --json", "inspect", "report"])
def test_a_lone_surrogate_is_written_not_a_traceback(tmp_path: Path, verb: str) -> None:
    src = tmp_path / "s.reel"
    src.write_text(SURROGATES)
    other = tmp_path / "o.reel"
    other.write_text(SURROGATES.replace("\\udfffb", "\\ud801c"))
    if verb.startswith("diff"):
        args = ["diff", str(src), str(other), *verb.split()[1:]]
    else:
        args = VERBS[verb](src, tmp_path / "out")
    assert one_line_or_ok(args) in (0, 1)
    if verb == "export otlp":
        doc = json.loads((tmp_path / "out").read_text().splitlines()[0])
        assert "\ufffd" in json.dumps(doc, ensure_ascii=False)  # protobuf holds UTF-8: the surrogate replaced


@pytest.mark.parametrize("op_id", ["1" * 49, "-" + "9" * 49, str(2**63)])
def test_show_with_an_id_no_bigint_holds(tmp_path: Path, op_id: str) -> None:
    src = tmp_path / "c" / "a.reel"
    src.parent.mkdir()
    src.write_text(deep_case("method", 3))
    db = tmp_path / "i.duckdb"
    assert one_line_or_ok(["index", str(src.parent), "--db", str(db), "-j", "1"]) == 0
    result = CliRunner().invoke(cli, ["show", "--db", str(db), "--", op_id])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.stderr.strip() == f"error: {db}: no operation {int(op_id)} in the index", result.stderr


@pytest.mark.parametrize("resource_spans", [
    [{"resource": ["x"], "scopeSpans": 3}], [{"scopeSpans": [{"spans": 7}]}], [{"scopeSpans": [[1], "s", None]}],
    [{"scopeSpans": {"spans": []}}]])
@pytest.mark.parametrize("verb", ["inspect -v", "export otlp"])
def test_otlp_with_a_number_where_its_spans_belong(tmp_path: Path, resource_spans: list, verb: str) -> None:
    src = tmp_path / "t.otlp.json"
    src.write_text(json.dumps({"resourceSpans": resource_spans}))
    one_line_or_ok(VERBS[verb](src, tmp_path / "out"))


def test_otlp_export_of_a_number_past_int64(tmp_path: Path) -> None:
    src = tmp_path / "big.reel"
    src.write_text(reel('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":1}}}',
                        '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}').replace(
        "\n", '\n{"t":"2026-01-01T00:00:00.000Z","dir":"out","raw":{"jsonrpc":"2.0","method":"notifications/progress",'
        '"params":{"progressToken":1,"progress":' + "9" * 30 + ',"total":-' + "9" * 25 + "}}}\n", 2).replace("\n\n", "\n"))
    out = tmp_path / "out"
    assert one_line_or_ok(["export", "otlp", str(src), "-o", str(out)]) == 0
    assert "9" * 30 in out.read_text()  # past int64: written as its digits
