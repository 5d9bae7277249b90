"""Issue 28, item 8 for contracts: a tool schema as deep as the readers accept is snapshotted, checked and
updated (the contract's indented writer and the comparison recurse), not a RecursionError."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpreel._infra import jsonio
from mcpreel.cli import cli

#: schema levels of two JSON levels each: the tools/list line is then 2 * 509 + 6 = 1024 levels deep (the readers' limit)
LEVELS = 509


def recording(tmp: Path, name: str, leaf: str, levels: int = LEVELS) -> Path:
    schema = '{"type":"' + leaf + '"}'
    for _ in range(levels):
        schema = '{"type":"object","required":["a"],"properties":{"a":' + schema + "}}"
    meta = json.dumps({"v": 1, "type": "meta", "startedAt": "2026-01-01T00:00:00.000Z", "label": "x", "command": ["x"]})
    lines = [meta, '{"t":"2026-01-01T00:00:00.000Z","dir":"out","raw":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}',
             '{"t":"2026-01-01T00:00:00.001Z","dir":"in","raw":{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t",'
             '"inputSchema":' + schema + "}]}}}"]
    path = tmp / f"{name}.reel"
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(cli, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output


def test_the_recording_is_as_deep_as_a_reader_takes(tmp_path: Path) -> None:
    assert _run(["inspect", str(recording(tmp_path, "ok", "string"))])[0] == 0
    code, out = _run(["inspect", str(recording(tmp_path, "too", "string", LEVELS + 1))])
    assert code == 2 and "nested too deeply" in out


@pytest.mark.parametrize("form", ["text", "json", "sarif"])
def test_a_deep_schema_is_snapshotted_and_checked(tmp_path: Path, form: str) -> None:
    contract = tmp_path / "contract.json"
    code, out = _run(["contract", "snapshot", str(recording(tmp_path, "before", "string")), "-o", str(contract)])
    assert code == 0, out
    assert jsonio.loads(contract.read_text())["tools"]["t"]["inputSchema"]["type"] == "object"
    after = recording(tmp_path, "after", "integer")  # the deepest argument's type changed
    args = ["contract", "check", str(contract), str(after)]
    if form == "sarif":
        args += ["--sarif", str(tmp_path / "r.sarif")]
    elif form == "json":
        args += ["--format", "json"]
    code, out = _run(args)
    assert code == 1 and "breaking" in out, out[-300:]
    assert ("/properties/a" * 3) in (out if form != "sarif" else (tmp_path / "r.sarif").read_text())
    code, out = _run(["contract", "check", str(contract), str(after), "--update"])
    assert code == 0 and '"integer"' in contract.read_text()
