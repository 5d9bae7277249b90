"""No escape sequence from a session reaches the terminal (issue 40): a hostile server's tool name carrying
OSC 52 (set the clipboard), ``ESC[2J`` (clear the screen) or a window title goes through ``inspect``,
``sessions``, ``query``, ``diff`` and ``serve``'s miss line with every control character escaped by the
one helper, :func:`mcpreel.render.terminal_safe.terminal_safe`."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.text import Text

from mcpreel.cli import cli, output
from mcpreel.corpus.index import index_paths
from mcpreel.render.terminal_safe import terminal_safe
from tests.replay.e2e_helpers import MCPREEL

CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"
CLEAR = "\x1b[2J\x1b[H"
TITLE = "\x1b]0;you have been pwned\x1b\\"
C1 = "\x9b2J\x9d0;t\x9c"
HOSTILE = f"get{CLIPBOARD}{CLEAR}{TITLE}{C1}\x7f\r\x08\u202eweather"
ESCAPED = "\\x1b]52;c;"


def _session(path: Path, tool: str = HOSTILE, text: str = "sunny") -> Path:
    msgs: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": f"c{TITLE}", "version": "1"}}},
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                               "serverInfo": {"name": f"srv{CLEAR}", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": tool, "description": f"d{CLIPBOARD}", "inputSchema": {"type": "object"}}]}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": {"q": CLEAR}}},
        {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": text}], "isError": True}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": tool}},
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -32000, "message": f"boom{CLIPBOARD}"}},
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(m) + "\n" for m in msgs), encoding="utf-8")
    return path


def _no_escapes(text: str) -> None:
    for char in ("\x1b", "\x07", "\x9b", "\x9c", "\x9d", "\x7f", "\r", "\x08", "\u202e"):
        assert char not in text, f"{char!r} reached the terminal: {text!r}"[:300]


def test_the_helper_escapes_every_control_character() -> None:
    assert terminal_safe(HOSTILE) == ("get\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07\\x1b[2J\\x1b[H\\x1b]0;you have been "
                                      "pwned\\x1b\\\\x9b2J\\x9d0;t\\x9c\\x7f\\x0d\\x08\\u202eweather")
    assert terminal_safe("a\nb\tc") == "a\nb\tc"  # deliberate lines stay lines
    assert terminal_safe("a\nb\tc", multiline=False) == "a\\x0ab\\x09c"
    plain = "héllo wörld → ✓ 漢字"
    assert terminal_safe(plain) is plain
    assert terminal_safe("\ud800") == "\\ud800"  # a lone surrogate: printable, never fatal
    assert all(terminal_safe(chr(c)) != chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)] if c not in (9, 10))


def test_inspect_plain(tmp_path: Path) -> None:
    session = _session(tmp_path / "s.jsonrpc.jsonl")
    for extra in ([], ["-v"]):
        result = CliRunner().invoke(cli, ["inspect", str(session), "--no-redact", *extra])
        assert result.exit_code == 0, result.output
        _no_escapes(result.stdout)
        assert ESCAPED in result.stdout


def test_inspect_on_a_terminal_keeps_its_colours_and_escapes_the_data(tmp_path: Path) -> None:
    from mcpreel.formats import open_session
    from mcpreel.inspection import analyze
    from mcpreel.render import inspect as render

    session, _ = open_session(str(_session(tmp_path / "s.jsonrpc.jsonl")), "auto")
    report = analyze(session, payloads=True, rows="spool")
    buffer = io.StringIO()
    console = output.terminal_console(file=buffer, force_terminal=True, color_system="truecolor", width=200)
    output.show(render.renderables(report, verbose=True), console)
    text = buffer.getvalue()
    assert "\x1b[" in text  # rich's own styles still colour it
    for hostile in (CLIPBOARD, CLEAR, TITLE, "\x1b]52", "\x1b[2J", "\x1b]0;", "\x9b", "\x07"):
        assert hostile not in text
    assert ESCAPED in text


def test_the_console_escapes_text_but_not_its_styles() -> None:
    buffer = io.StringIO()
    console = output.terminal_console(file=buffer, force_terminal=True, color_system="standard")
    console.print(Text(f"tool {CLEAR}", style="red"))
    text = buffer.getvalue()
    assert "\x1b[31m" in text and "\x1b[2J" not in text and "\\x1b[2J" in text


#: a carriage return in any indexed text ends the index pass today (DuckDB's CSV reader refuses the spool):
#: a separate bug, reported; the corpus verbs are tried with every other hostile character
INDEXED = HOSTILE.replace("\r", "")


@pytest.fixture
def index(tmp_path: Path) -> Path:
    _session(tmp_path / "s" / "a.jsonrpc.jsonl", tool=INDEXED)
    db = tmp_path / "c.duckdb"
    index_paths([tmp_path / "s"], db)
    return db


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_sessions_and_query(index: Path, fmt: str) -> None:
    for args in (["sessions"], ["query", "SELECT * FROM operations"], ["query", "SELECT * FROM tools"],
                 ["query", "SELECT * FROM sessions"]):
        result = CliRunner().invoke(cli, [*args, "--db", str(index), "--format", fmt])
        assert result.exit_code == 0, result.output
        if fmt == "csv":  # CSV to a file (here: not a terminal) stays the data; on a terminal it is escaped
            continue
        _no_escapes(result.stdout)


def test_csv_on_a_terminal(index: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: Any) -> None:
    import sys

    from mcpreel.cli.query_cmd import write_result
    from mcpreel.corpus.query import run_sql

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    write_result(run_sql(index, "SELECT name, description FROM tools"), "csv")
    out = capsysbinary.readouterr().out.decode()
    _no_escapes(out)
    assert ESCAPED in out


def test_diff(tmp_path: Path) -> None:
    a = _session(tmp_path / "a.jsonrpc.jsonl", text="sunny")
    b = _session(tmp_path / "b.jsonrpc.jsonl", text=f"rainy{CLIPBOARD}")
    result = CliRunner().invoke(cli, ["diff", str(a), str(b), "--no-redact"])
    assert result.exit_code == 1, result.output
    _no_escapes(result.stdout)
    assert "\\x1b" in result.stdout


def test_the_one_line_writers_escape(capsys: Any) -> None:
    output.info(f"serve: miss: {HOSTILE}")
    output.warning(HOSTILE)
    output.error(HOSTILE)
    output.echo(HOSTILE)
    said = capsys.readouterr()
    _no_escapes(said.err)
    _no_escapes(said.out)
    assert said.err.count(ESCAPED) == 3 and said.out.count(ESCAPED) == 1


def test_serves_miss_line(tmp_path: Path) -> None:
    session = _session(tmp_path / "s.jsonrpc.jsonl", tool="get_weather")
    asked = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 7, "method": f"x/{CLIPBOARD}{CLEAR}", "params": {"name": HOSTILE}},
        {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": HOSTILE}},
    ]
    said = subprocess.run([*MCPREEL, "serve", str(session)], input="".join(json.dumps(m) + "\n" for m in asked),
                          capture_output=True, text=True, timeout=120)
    assert "miss" in said.stderr, said.stderr
    _no_escapes(said.stderr)
    assert ESCAPED in said.stderr
