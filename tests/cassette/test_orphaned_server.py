"""Issue 34: the cassette is on disk when the test session ends, whatever the client did with its server.

pydantic-ai's stdio client can leave the server process (mcpreel's serving process) running past the test
and past pytest itself: the recording was then saved only when pytest's exit closed the pipes, 1.7 s after
pytest had ended, by an orphan, and what was on disk at the end was a hidden temporary file. The plugin now
ends such a recording itself when the test ends (the serving process is told to stop, saves what it
recorded and says so), so the cassette is there, complete, the moment pytest returns.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from .helpers import SDK_SERVER

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600),
              pytest.mark.skipif(os.name != "posix", reason="POSIX signals end the orphan")]

ISOLATE = ("-p", "no:mcp_recorder", "-p", "no:xdist", "-p", "no:cacheprovider")

#: a client that talks to the cassette's serving process, then leaves it running, past the test and past
#: pytest (its pipes close only when the pytest process exits), as a client that never closes its server does
LEAVES_IT_RUNNING = '''
import json, subprocess
import pytest

KEPT = []

def ask(proc, message):
    proc.stdin.write((json.dumps(message) + "\\n").encode())
    proc.stdin.flush()
    if "id" in message:
        return json.loads(proc.stdout.readline())

@pytest.mark.mcp_cassette(command={command!r})
def test_echo(mcp_server):
    proc = subprocess.Popen(mcp_server.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=open("serve.log", "ab"), env=mcp_server.env, cwd=mcp_server.cwd)
    KEPT.append(proc)  # never closed, never waited for
    hello = ask(proc, {{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {{
        "protocolVersion": "2025-11-25", "capabilities": {{}}, "clientInfo": {{"name": "t", "version": "1"}}}}}})
    assert "result" in hello
    ask(proc, {{"jsonrpc": "2.0", "method": "notifications/initialized"}})
    got = ask(proc, {{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {{"name": "echo", "arguments": {{"text": "kept"}}}}}})
    assert got["result"]["content"][0]["text"] == "kept"
'''


def test_the_cassette_is_saved_when_the_client_leaves_its_server_running(pytester):
    pytester.makepyfile(test_inner=LEAVES_IT_RUNNING.format(command=[*SDK_SERVER, "stdio"]))
    result = pytester.runpytest_subprocess(*ISOLATE, timeout=120)
    result.assert_outcomes(passed=1)
    folder = pytester.path / "cassettes" / "test_inner"
    # at once, when pytest has returned: the cassette, complete, and no temporary file beside it
    assert sorted(p.name for p in folder.iterdir()) == ["test_echo.jsonl"]
    lines = [json.loads(line) for line in (folder / "test_echo.jsonl").read_text().splitlines()]
    sent = [line["raw"].get("method") for line in lines if line.get("dir") == "in" and "raw" in line]
    assert sent == ["initialize", "notifications/initialized", "tools/call"]
    answers = [line["raw"] for line in lines if line.get("dir") == "out" and "raw" in line]
    assert answers[-1]["result"]["content"][0]["text"] == "kept"
    assert lines[-1].get("type") == "end"
    # and it replays: the next run, with the real server gone, is answered from it
    pytester.makepyfile(test_inner=LEAVES_IT_RUNNING.format(command=[sys.executable, "-c", "raise SystemExit(3)"]))
    pytester.runpytest_subprocess(*ISOLATE, "--mcp-record-mode", "none", timeout=120).assert_outcomes(passed=1)
