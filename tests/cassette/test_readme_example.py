"""The README's testing section, run as a user pastes it (issue 19): the pytest example records once, replays
offline with ``none``, and a miss looks as the README shows; the literal ``check --target-command`` line passes on
an ordinary server; ``--session-file`` also leaves a reel under ./mcpreel-sessions/."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from .test_plugin import ISOLATE

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.e2e

DOCS = Path(__file__).resolve().parents[2] / "docs"

#: an ordinary server as the README's example assumes one: a read-only tool that answers plain text
SERVER = '''
import os
from mcp.server import MCPServer
from mcp.types import ToolAnnotations

mcp = MCPServer("weather")

@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
def forecast(city: str) -> str:
    """The weather in a city."""
    return f"{city}: sunny, 21 degrees ({os.environ.get('UNITS', 'imperial')})"

if __name__ == "__main__":
    mcp.run()
'''


def _section(page: str) -> str:
    """A guide of the docs, whole (its first python, sh and text blocks are the example)."""
    return (DOCS / "guides" / page).read_text()


def _block(section: str, lang: str) -> str:
    m = re.search(rf"```{lang}\n(.*?)```", section, re.DOTALL)
    assert m is not None, f"no {lang} block"
    return m.group(1)


def test_the_pytest_example_records_replays_offline_and_fails_a_miss_as_shown(pytester) -> None:
    section = _section("pytest-cassettes.md")
    example = _block(section, "python")
    pytester.path.joinpath("server.py").write_text(SERVER)
    tests = pytester.mkdir("tests")
    (tests / "test_weather.py").write_text(example)
    commands = [line.split("#")[0].split() for line in _block(section, "sh").splitlines() if line.strip()]
    assert commands == [["pytest", "tests/test_weather.py"], ["pytest", "tests/test_weather.py", "--mcp-record-mode", "none"]]

    pytester.runpytest(*ISOLATE, *commands[0][1:]).assert_outcomes(passed=1)
    cassette = tests / "cassettes" / "test_weather" / "test_forecast.jsonl"
    assert cassette.is_file() and "metric" in cassette.read_text()  # stdio_parameters(env=…) reached the server

    pytester.path.joinpath("server.py").unlink()  # offline, as in CI
    pytester.runpytest(*ISOLATE, *commands[1][1:]).assert_outcomes(passed=1)

    (tests / "test_weather.py").write_text(example.replace('"Paris" in asyncio.run(forecast(params, "Paris"))',
                                                           '"Lyon" in asyncio.run(forecast(params, "Lyon"))'))
    result = pytester.runpytest(*ISOLATE, *commands[1][1:])
    result.assert_outcomes(failed=1)
    shown = _block(section, "text").splitlines()
    # the failure's first line (what the short summary shows) names the request and the cassette; the
    # lines under it are laid out as a failed assertion's
    assert shown and shown[0].startswith("tools/call forecast was not answered from the cassette")
    assert all(line.startswith("E ") for line in shown[1:])
    result.stdout.fnmatch_lines([re.sub(r"[\[\]]", lambda m: f"[{m.group(0)}]", line).replace("…", "*")
                                 for line in shown])


def test_the_literal_check_command_line_passes_on_an_ordinary_server(tmp_path: Path) -> None:
    line = next(ln for ln in _section("check-a-server.md").splitlines() if "check --target-command" in ln)
    args = line.split("#")[0].split()
    assert args[:3] == ["mcpreel", "check", "--target-command"] and args[3:5] == ['"python', 'my_server.py"']
    (tmp_path / "my_server.py").write_text(SERVER)
    argv = [sys.executable, "-m", "mcpreel", "check", "--target-command", f"{sys.executable} my_server.py", *args[5:]]
    p = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "tools-call:forecast" in p.stdout and "pass" in p.stdout


def test_a_session_file_recording_also_leaves_a_reel_under_mcpreel_sessions(tmp_path: Path, monkeypatch) -> None:
    from tests.replay.e2e_helpers import run_client

    (tmp_path / "my_server.py").write_text(SERVER)
    monkeypatch.chdir(tmp_path)  # the client starts the recorder here: ./mcpreel-sessions/ is this folder's
    run_client("stdio", f"{sys.executable} -m mcpreel record -q --session-file session.json -- "
                        f"{sys.executable} my_server.py")
    assert (tmp_path / "session.json").is_file()
    reels = list((tmp_path / "mcpreel-sessions").glob("*.jsonl"))
    assert len(reels) == 1 and "forecast" in reels[0].read_text()
