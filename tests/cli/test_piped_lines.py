"""No verb breaks a line when its output is not a terminal (CI logs are grepped): the widest verbs (diff, inspect,
sessions, calls, query), given recordings with long names and values, through CliRunner and through a real pipe,
with COLUMNS unset. A long value is on one line wherever a part of it is printed: whole, or (where a verb shows an
excerpt on purpose: diff's values, inspect's error summary) its excerpt with what it is compared to or said of."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.corpus.index import index_paths

TOOL = "lookup_" + "x" * 150
SERVER = "server-" + "s" * 150
ARG_A, ARG_B = "A" + "a" * 300, "B" + "b" * 300
ERROR_A, ERROR_B = "the upstream failed: " + "e" * 300, "the upstream failed: " + "f" * 300
T = "2026-11-25T10:00:00.{:03d}Z"


def _reel(path: Path, argument: str, error: str) -> Path:
    """A handshake, tools/list and one tools/call of a long-named tool on a long-named server that fails with a
    long error."""
    lines: list[dict[str, Any]] = [{"v": 1, "type": "meta", "startedAt": T.format(0), "label": "t",
                                    "command": ["srv"], "transport": "stdio"}]

    def msg(d: str, raw: dict[str, Any]) -> None:
        lines.append({"t": T.format(2 * len(lines)), "dir": d, "raw": raw})

    msg("in", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "tester", "version": "1.0"}}})
    msg("out", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {},
                                                       "serverInfo": {"name": SERVER, "version": "2.0"}}})
    msg("in", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    msg("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    msg("out", {"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": TOOL, "description": "Look it up. " * 20, "inputSchema": {"type": "object"}}]}})
    msg("in", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": TOOL, "arguments": {"query": argument}}})
    msg("out", {"jsonrpc": "2.0", "id": 2, "result": {"isError": True, "content": [{"type": "text", "text": error}]}})
    lines.append({"t": T.format(2 * len(lines)), "type": "end", "exitCode": 0, "durationMs": 2 * len(lines)})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Two recordings, each in a folder whose path is over 200 characters, and their index."""
    a = _reel(tmp_path / ("a-folder-with-a-long-name-" * 8) / "a.jsonl", ARG_A, ERROR_A)
    b = _reel(tmp_path / ("b-folder-with-a-long-name-" * 8) / "b.jsonl", ARG_B, ERROR_B)
    db = tmp_path / "index" / "corpus.duckdb"
    db.parent.mkdir()
    index_paths([a.parent, b.parent], db)
    return a, b, db


@pytest.fixture(autouse=True)
def _no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


def _run(*args: Any) -> str:
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert r.exit_code in (0, 1), r.output
    return r.stdout


def _piped(*args: Any) -> str:
    """The verb in its own process, its stdout a pipe, COLUMNS unset."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    r = subprocess.run([sys.executable, "-m", "mcpreel", *map(str, args)], capture_output=True,  # pipes
                       text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode in (0, 1), r.stderr
    return r.stdout


def _whole(out: str, *values: str) -> list[str]:
    """Each value is printed whole on a line at least once, and wherever a part of it is printed the line holds
    all of it, or its start cut with ``…`` (an excerpt: a line broken by wrapping leaves a part without its
    start). The lines holding them all."""
    lines = out.splitlines()
    for value in values:
        assert any(value in line for line in lines), f"{value[:30]}… is not printed whole:\n{out[:3000]}"
        parts = {value[len(value) // 2: len(value) // 2 + 24], value[-24:]}  # the paths share their start
        seen = [line for line in lines if any(p in line for p in parts)]
        broken = [line for line in seen if value not in line and not (value[:24] in line and "…" in line)]
        assert not broken, f"{value[:30]}… is broken across lines: {broken[0][:200]!r}"
    return [line for line in lines if all(v in line for v in values)]


def _excerpt_then(out: str, value: str, then: str) -> None:
    """A value shown as an excerpt on purpose: its start and ``then`` (what follows it) on one line."""
    lines = [line for line in out.splitlines() if value[:20] in line]
    assert lines and all(then in line for line in lines), (value[:20], then, out[:3000])


def test_diff_keeps_every_line_whole(corpus: tuple[Path, Path, Path]) -> None:
    a, b, _ = corpus
    for out in (_run("diff", a, b), _piped("diff", a, b)):
        assert _whole(out, str(a)) == [f"A: {a}"] and _whole(out, str(b)) == [f"B: {b}"]
        assert any(line.lstrip().startswith("~ tools/call") for line in _whole(out, TOOL))
        # diff shows values as excerpts around their first difference: both sides on the path's line
        _excerpt_then(out, '$.params.arguments.query: "' + ARG_A, '-> "' + ARG_B[:20])
        _excerpt_then(out, '$.result.content[0].text: "' + ERROR_A, '-> "' + ERROR_B[:20])


def test_inspect_keeps_every_line_whole(corpus: tuple[Path, Path, Path]) -> None:
    a, _, _ = corpus
    for out in (_run("inspect", a), _piped("inspect", a)):
        rows = _whole(out, TOOL)
        assert len(rows) >= 3  # its call, the tools table, the errors list
        _excerpt_then(out, f"tools/call {TOOL} id=2: isError: ", ERROR_A[:40])
    verbose = _run("inspect", "-v", a)
    _whole(verbose, TOOL, ARG_A)  # -v prints the payloads: the argument whole on its message's line
    _whole(verbose, ERROR_A)


def test_sessions_and_query_keep_every_cell_whole(corpus: tuple[Path, Path, Path]) -> None:
    a, b, db = corpus
    for out in (_run("sessions", "--db", db), _piped("sessions", "--db", db)):
        assert len(_whole(out, str(a), SERVER)) == 1 and len(_whole(out, str(b), SERVER)) == 1
    sql = ("SELECT o.tool, o.message, s.server_name, s.file FROM operations o JOIN sessions s USING (file, session) "
           "WHERE o.failed ORDER BY s.file")
    for out in (_run("query", sql, "--db", db), _piped("query", sql, "--db", db)):
        assert len(_whole(out, TOOL, ERROR_A, SERVER, str(a))) == 1
        assert len(_whole(out, TOOL, ERROR_B, SERVER, str(b))) == 1


def test_calls_keep_every_line_whole(corpus: tuple[Path, Path, Path]) -> None:
    a, _, db = corpus
    for out in (_run("calls", "--failed", "--since", "2026-01-01", "--db", db),
                _piped("calls", "--failed", "--since", "2026-01-01", "--db", db)):
        assert len(_whole(out, SERVER, TOOL, ERROR_A)) == 1 and len(_whole(out, SERVER, TOOL, ERROR_B)) == 1
        assert any(line.lstrip().startswith("mcpreel show") for line in _whole(out, str(a)))
