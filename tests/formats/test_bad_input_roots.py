"""Issue 12's four roots of tracebacks on bad input: each ends in exit 2 or a clean conversion now."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpreel.cli import cli

WRITERS = ("reel", "jsonrpc", "inspector", "streamable-http", "http-sse", "qai", "mcp-recorder",
           "mcp-cassette-pypi", "har", "assay-v2", "simple")
META = {"v": 1, "type": "meta", "startedAt": "2026-05-15T01:00:00.000Z", "label": "x", "command": ["srv"]}
T = "2026-05-15T01:00:01.000Z"
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
PONG = {"jsonrpc": "2.0", "id": 1, "result": {}}


def _reel(tmp_path: Path, *lines: dict) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(obj) + "\n" for obj in lines))
    return path


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output


@pytest.mark.parametrize("to", WRITERS)
def test_a_seq_that_is_not_an_integer_is_not_kept(tmp_path: Path, to: str) -> None:
    src = _reel(tmp_path, META, {"t": T, "type": "stderr", "text": "hi", "seq": "zz"},
                {"t": T, "dir": "in", "raw": PING, "seq": 1.5}, {"t": T, "dir": "out", "raw": PONG})
    code, _ = _run("convert", str(src), str(tmp_path / "out"), "--to", to)
    assert code == 0


@pytest.mark.parametrize("to", WRITERS)
def test_a_ctx_sse_that_is_not_an_object_is_not_kept(tmp_path: Path, to: str) -> None:
    src = _reel(tmp_path, META, {"t": T, "dir": "in", "raw": PING, "ctx": {"method": "POST", "sse": 5}},
                {"t": T, "dir": "out", "raw": PONG, "ctx": {"status": 200, "sse": "x"}},
                {"t": T, "dir": "out", "type": "transport", "ctx": {"sse": [1]}})
    code, _ = _run("convert", str(src), str(tmp_path / "out"), "--to", to)
    assert code == 0


@pytest.mark.parametrize("to", WRITERS)
def test_lone_surrogates_in_session_strings_are_escaped(tmp_path: Path, to: str) -> None:
    src = _reel(tmp_path, dict(META, command=["srv\ud800"], label="l\udc00", url="http://h/\ud800"),
                {"t": T, "dir": "out", "type": "transport", "ctx": {"sse": {"event": "endpoint"}, "data": "/m\ud800"}},
                {"t": T, "dir": "in", "raw": PING}, {"t": T, "dir": "out", "raw": PONG})
    code, _ = _run("convert", str(src), str(tmp_path / "out"), "--to", to)
    assert code == 0
    assert "\\ud800" in (tmp_path / "out").read_text() or to in ("jsonrpc", "assay-v2", "simple", "inspector")


def test_inspect_piped_prints_a_lone_surrogate_escaped(tmp_path: Path) -> None:
    src = _reel(tmp_path, dict(META, command=["srv\ud800"]), {"t": T, "dir": "in", "raw": PING})
    code, out = _run("inspect", str(src))
    assert code == 0 and "srv\\ud800" in out


RECORDER = {"version": "1.0", "metadata": {"server_url": "http://[]:8000"},
            "interactions": [{"type": "jsonrpc_request", "request": PING, "response": PONG}]}


@pytest.mark.parametrize("verb", ["import", "inspect", *WRITERS])
def test_a_malformed_server_url_is_one_line_and_exit_2(tmp_path: Path, verb: str) -> None:
    src = tmp_path / "cassette.json"
    src.write_text(json.dumps(RECORDER))
    out = tmp_path / "out"
    args = {"import": ["import", str(src), "--out-trace", str(out)], "inspect": ["inspect", str(src)]}.get(
        verb, ["convert", str(src), str(out), "--to", verb])
    code, text = _run(*args)
    assert code == 2
    assert "metadata.server_url is not a valid URL" in text and len(text.strip().splitlines()) == 1
    assert not out.exists()
