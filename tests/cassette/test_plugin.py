"""The pytest plugin as a user meets it: a test file with the marker and the fixture, run by pytest (pytester)."""

from __future__ import annotations

import sys

import pytest

from mcpreel.cassette.mode import RecordMode
from mcpreel.cassette.pytest_plugin import cassette_path
from tests.conftest import free_port
from tests.replay.e2e_helpers import Background

from .helpers import DEAD, SDK_SERVER, deny_create, deny_replace

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.e2e

#: mcp-recorder's plugin (a benchmark extra) also claims --mcp-record-mode: keep the inner runs to ours
ISOLATE = ("-p", "no:mcp_recorder", "-p", "no:xdist", "-p", "no:cacheprovider")

STDIO_TESTS = '''
import asyncio
import pytest
from mcp import ClientSession, stdio_client

async def echo(params, text):
    with open("server-stderr.log", "a") as err:
        async with stdio_client(params, errlog=err) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                await s.list_tools()
                return (await s.call_tool("echo", {{"text": text}})).content[0].text

@pytest.mark.mcp_cassette(command={command!r}{extra})
def test_echo(mcp_server):
    assert mcp_server.transport == "stdio" and mcp_server.argv[1:3] == ["-m", "mcpreel"]
    try:
        got = asyncio.run(echo(mcp_server.stdio_parameters(), {text!r}))
    except Exception as exc:
        got = f"error: {{exc}}"
    print("GOT", got)
'''

HTTP_TESTS = '''
import asyncio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

async def echo(url):
    async with httpx2.AsyncClient() as http:
        async with streamable_http_client(url, http_client=http) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                await s.list_tools()
                return (await s.call_tool("echo", {{"text": "over http"}})).content[0].text

@pytest.mark.mcp_cassette("recorded/echo.jsonl", url={url!r})
def test_http_echo(mcp_server):
    assert mcp_server.url.startswith("http://127.0.0.1:")
    assert asyncio.run(echo(mcp_server.url)) == "over http"
'''


def _stdio_file(pytester, command, text="hello", extra=""):
    pytester.makepyfile(test_inner=STDIO_TESTS.format(command=command, text=text, extra=extra))


def test_marker_and_fixture_record_replay_and_obey_the_record_mode_option(pytester):
    _stdio_file(pytester, [*SDK_SERVER, "stdio"])
    result = pytester.runpytest(*ISOLATE, "-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*GOT hello*"])
    cassette = pytester.path / "cassettes" / "test_inner" / "test_echo.jsonl"  # the default place
    assert cassette.is_file() and (cassette.stat().st_mode & 0o777) == 0o600
    recorded = cassette.read_bytes()

    _stdio_file(pytester, DEAD)  # replayed: the real server is never started
    result = pytester.runpytest(*ISOLATE, "-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*GOT hello*"])

    # the marker says all, --mcp-record-mode none overrides it: a miss fails the test itself (no ERROR
    # at teardown saying it again), even though the test swallowed the client's error
    _stdio_file(pytester, DEAD, text="bye", extra=', record_mode="all"')
    result = pytester.runpytest(*ISOLATE, "-s", "--mcp-record-mode", "none")
    result.assert_outcomes(failed=1)
    assert "ERROR at teardown" not in result.stdout.str()
    result.stdout.fnmatch_lines([
        "*_ test_echo _*",
        f"*{cassette} (record mode none): tools/call was not answered from the cassette: no recorded tools/call "
        'matches these params; closest is request #3 (line 7) tools/call echo, which differs at '
        '$.params.arguments.text: "hello" -> "bye" (recorded -> received)',
    ])
    assert cassette.read_bytes() == recorded

    # without the option the marker's all applies: the dead server breaks the recording off, and the
    # cassette stays as it was
    result = pytester.runpytest(*ISOLATE, "-s")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*(record mode all): recording not saved (server exited with code 3*"])
    assert cassette.read_bytes() == recorded


def test_http_marker_with_a_path_and_the_long_option(pytester):
    port = free_port()
    server = Background([*SDK_SERVER, "streamable-http", str(port)], port=port)
    try:
        pytester.makepyfile(test_http=HTTP_TESTS.format(url=f"http://127.0.0.1:{port}/mcp"))
        pytester.runpytest(*ISOLATE).assert_outcomes(passed=1)
    finally:
        server.stop()
    cassette = pytester.path / "recorded" / "echo.jsonl"  # relative to the test file's folder
    assert cassette.is_file()
    pytester.runpytest(*ISOLATE, "--mcpreel-record-mode", "none").assert_outcomes(passed=1)  # the server is gone


def test_a_corrupt_cassette_a_bad_marker_and_a_bad_mode_are_told_plainly(pytester):
    pytester.makepyfile(test_bad='''
import pytest

@pytest.mark.mcp_cassette("corrupt.jsonl", command=["true"])
def test_corrupt(mcp_server):
    pass

@pytest.mark.mcp_cassette(command=["true"], record="all")
def test_unknown_argument(mcp_server):
    pass

def test_no_marker_and_no_cassette(mcp_server):
    pass
''')
    (pytester.path / "corrupt.jsonl").write_bytes(b'{"v":1,"type":"meta"}\n{"oops"\n')
    result = pytester.runpytest(*ISOLATE, "--mcp-record-mode", "once")
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines([
        f"*mcp_cassette: {pytester.path / 'corrupt.jsonl'}: invalid JSON on line 2*",
        "*mcp_cassette: @pytest.mark.mcp_cassette: unknown argument(s) record (known: command, cwd, env, era, match, path, record_mode, redact, tags, transport, url)*",
        "*test_no_marker_and_no_cassette.jsonl is missing, and record mode once then asks the real server*",
    ])
    assert (pytester.path / "corrupt.jsonl").read_bytes() == b'{"v":1,"type":"meta"}\n{"oops"\n'
    assert not (pytester.path / "cassettes").exists()

    result = pytester.runpytest(*ISOLATE, "--mcp-record-mode", "sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--mcp-record-mode: invalid choice: 'sometimes' (choose from 'once', 'new_episodes', 'none', 'all')*"])


def test_default_cassette_paths(pytester):
    items = pytester.getitems('''
import pytest
class TestGroup:
    def test_method(self): pass
@pytest.mark.parametrize("x", ["a/b", "c d"])
def test_param(x): pass
''')
    folder = pytester.path / "cassettes"
    module = items[0].path.stem
    assert [cassette_path(i) for i in items] == [
        folder / module / "TestGroup.test_method.jsonl",
        folder / module / "test_param-a-b.jsonl",
        folder / module / "test_param-c-d.jsonl",
    ]
    assert cassette_path(items[0], "x/y.jsonl") == pytester.path / "x" / "y.jsonl"
    assert cassette_path(items[0], "/abs/c.jsonl").as_posix() == "/abs/c.jsonl"
    assert RecordMode.values() == ("once", "new_episodes", "none", "all")
    assert sys.executable  # the serving process runs on this interpreter


def test_a_recording_that_cannot_be_saved_fails_the_test_that_recorded_it(pytester, monkeypatch):
    _stdio_file(pytester, [*SDK_SERVER, "stdio"], extra=', record_mode="all"')
    cassette = pytester.path / "cassettes" / "test_inner" / "test_echo.jsonl"
    hooks = pytester.path / "hooks"
    hooks.mkdir()
    deny_replace(hooks, monkeypatch, cassette.name)  # the serving process the client launches fails the rename
    result = pytester.runpytest(*ISOLATE, "-s")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        f"*{cassette} (record mode all): the cassette server failed: {cassette}: the recording could not be "
        "saved: Permission denied; the cassette was left as it was*"])
    assert not cassette.exists()



def test_a_read_only_cassette_folder_fails_the_test_in_one_line_with_an_error_event(pytester, monkeypatch):
    _stdio_file(pytester, [*SDK_SERVER, "stdio"])
    folder = pytester.path / "cassettes" / "test_inner"
    folder.mkdir(parents=True)
    folder.chmod(0o555)  # read-only (root writes anyway: the sitecustomize below refuses as the folder would)
    hooks = pytester.path / "hooks"
    hooks.mkdir()
    deny_create(hooks, monkeypatch, folder)
    try:
        result = pytester.runpytest(*ISOLATE, "-s")
    finally:
        folder.chmod(0o755)
    result.assert_outcomes(failed=1)
    cassette = folder / "test_echo.jsonl"
    result.stdout.fnmatch_lines([
        f"E   {cassette} (record mode once): the cassette server failed: {cassette}: cannot record here: "
        f"Permission denied ({folder}); nothing was recorded"])
    assert "Traceback" not in result.stdout.str() and "Traceback" not in (pytester.path / "server-stderr.log").read_text()
    assert list(folder.iterdir()) == []



def test_a_test_that_makes_no_mcp_call_passes_under_none_and_one_that_does_fails_in_one_line(pytester):
    pytester.makepyfile(test_quiet='''
import asyncio
import pytest
from mcp import ClientSession, stdio_client

@pytest.mark.mcp_cassette(command=["true"])
def test_no_call(mcp_server):
    assert mcp_server.argv

@pytest.mark.mcp_cassette(command=["true"])
def test_a_call(mcp_server):
    async def main():
        with open("server-stderr.log", "a") as err:
            async with stdio_client(mcp_server.stdio_parameters(), errlog=err) as (r, w):
                async with ClientSession(r, w) as s:
                    await s.initialize()
    asyncio.run(main())
''')
    result = pytester.runpytest(*ISOLATE, "--mcp-record-mode", "none")
    result.assert_outcomes(passed=1, failed=1)
    assert "ERROR" not in result.stdout.str()
    cassette = pytester.path / "cassettes" / "test_quiet" / "test_a_call.jsonl"
    result.stdout.fnmatch_lines([
        f"E   {cassette} (record mode none): no such cassette, and the test made MCP requests (record mode "
        "none replays only: record it with once or all)"])
    assert not (pytester.path / "cassettes").exists()


ENV_TESTS = '''
import asyncio
import pytest
from mcp import ClientSession, stdio_client

# the real server's version comes from the environment, as many servers' settings do
COMMAND = ["sh", "-c", 'exec "$0" "$1" stdio $([ "$SRV_VERSION" = 2 ] && echo --changed)', {python!r}, {server!r}]

async def echo(params):
    with open({errlog!r}, "a") as err:
        async with stdio_client(params, errlog=err) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                return (await s.call_tool("echo", {{"text": "hello"}})).content[0].text

@pytest.mark.mcp_cassette(command=COMMAND)
def test_inherits(mcp_server):
    print("INHERITS", asyncio.run(echo(mcp_server.stdio_parameters())))

@pytest.mark.mcp_cassette(command=COMMAND)
def test_merges(mcp_server, tmp_path):
    params = mcp_server.stdio_parameters(env={{"SRV_VERSION": "2"}}, cwd=tmp_path)
    assert params.cwd == str(tmp_path) and params.env["SRV_VERSION"] == "2"
    assert params.env["MCPREEL_TEST_MARK"] == mcp_server.env["MCPREEL_TEST_MARK"] == "kept"  # the test's own
    print("MERGES", asyncio.run(echo(params)))
'''


def test_the_real_server_gets_the_tests_environment_and_stdio_parameters_merge_with_it(pytester, monkeypatch):
    pytester.makepyfile(test_env=ENV_TESTS.format(python=sys.executable, server=str(SDK_SERVER[1]),
                                                  errlog=str(pytester.path / "stderr.log")))
    monkeypatch.setenv("SRV_VERSION", "2")
    result = pytester.runpytest(*ISOLATE, "-s", "--mcp-record-mode", "all", "-k", "inherits")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*INHERITS HELLO*"])  # v2 shouts; v1 (a pared-down environment) would not
    assert "HELLO" in (pytester.path / "cassettes" / "test_env" / "test_inherits.jsonl").read_text()

    monkeypatch.delenv("SRV_VERSION")
    monkeypatch.setenv("MCPREEL_TEST_MARK", "kept")  # any variable of the test's environment is kept
    result = pytester.runpytest(*ISOLATE, "-s", "--mcp-record-mode", "all", "-k", "merges")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*MERGES HELLO*"])


MISS_TESTS = '''
import asyncio
import pytest
from mcp import ClientSession, stdio_client

async def echo(params, text):
    with open("server-stderr.log", "a") as err:
        async with stdio_client(params, errlog=err) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                return (await s.call_tool("echo", {{"text": text}})).content[0].text

@pytest.mark.mcp_cassette("shared.jsonl", command={command!r})
def test_first(mcp_server):
    assert asyncio.run(echo(mcp_server.stdio_parameters(), {text!r})) == {text!r}

@pytest.mark.mcp_cassette("shared.jsonl", command={command!r})
def test_second(mcp_server):
    assert asyncio.run(echo(mcp_server.stdio_parameters(), {text!r})) == {text!r}
'''


def test_a_miss_is_one_readable_failure_and_x_stops_there(pytester):
    pytester.makepyfile(test_miss=MISS_TESTS.format(command=[*SDK_SERVER, "stdio"], text="hello"))
    pytester.runpytest(*ISOLATE).assert_outcomes(passed=2)  # recorded by the first, replayed by the second

    pytester.makepyfile(test_miss=MISS_TESTS.format(command=DEAD, text="bye"))
    result = pytester.runpytest(*ISOLATE, "--mcp-record-mode", "none", "-x")
    result.assert_outcomes(failed=1)  # -x: the first miss stops the run
    out = result.stdout.str()
    assert "ERROR" not in out and "Traceback" not in out and "asyncio" not in out
    cassette = pytester.path / "shared.jsonl"
    result.stdout.fnmatch_lines([
        "*_ test_first _*",
        f"E   {cassette} (record mode none): tools/call was not answered from the cassette: *",
        'E     received: tools/call {"arguments": {"text": "bye"}, "name": "echo"}',
        'E     closest:  request #2 (line *) tools/call echo {"arguments": {"text": "hello"}, "name": "echo"}',
        'E     differs:  $.params.arguments.text: "hello" -> "bye"',
        "E   (to add what the cassette lacks from the real server: --mcp-record-mode new_episodes; *",
        "E   (the test then failed: *",
        "*= 1 failed in *",
    ])


def test_the_rules_marker_acts_on_recording_and_on_replay_and_a_bad_file_fails_at_setup(pytester):
    """``@pytest.mark.mcp_rules``: a file while recording (the real server gets the rewritten call, the
    cassette holds both versions and who decided), inline rules on replay, a bad file as one line."""
    import json

    (pytester.path / "rules.yaml").write_text(
        "- name: louder\n  match: {tool: echo}\n  rewrite: {merge: {params: {arguments: {text: HELLO}}}}\n")
    _stdio_file(pytester, [*SDK_SERVER, "stdio"], extra=')\n@pytest.mark.mcp_rules("rules.yaml"')
    result = pytester.runpytest(*ISOLATE, "-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*GOT HELLO*"])
    cassette = pytester.path / "cassettes" / "test_inner" / "test_echo.jsonl"
    (call,) = [r for r in map(json.loads, cassette.read_text().splitlines())
               if (r.get("raw") or {}).get("method") == "tools/call"]
    assert call["decided_by"] == "rules:louder" and call["modified"] is True
    assert (call["raw"]["params"]["arguments"], call["original"]["params"]["arguments"]) == ({"text": "HELLO"},
                                                                                            {"text": "hello"})

    rules = [{"name": "down", "match": {"tool": "echo"}, "error": {"code": -32050, "message": "echo is down"}}]
    pytester.makepyfile(test_inner=f"""
import asyncio
import pytest
from mcp import ClientSession, MCPError, stdio_client

async def echo(params):
    with open("server-stderr.log", "a") as err:
      async with stdio_client(params, errlog=err) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            try:
                await s.call_tool("echo", {{"text": "hello"}})
            except MCPError as exc:
                return exc.error.code, exc.error.message

@pytest.mark.mcp_cassette(command={DEAD!r})
@pytest.mark.mcp_rules({rules!r})
def test_echo(mcp_server):
    assert asyncio.run(echo(mcp_server.stdio_parameters())) == (-32050, "echo is down")
""")  # replayed: DEAD never starts
    pytester.runpytest(*ISOLATE, "-s").assert_outcomes(passed=1)

    # JSON here: pytester's in-process runs import yaml afresh over the C loader of the first one
    (pytester.path / "rules.json").write_text('[{"name": "x", "delay": -1}]')
    _stdio_file(pytester, DEAD, extra=')\n@pytest.mark.mcp_rules("rules.json"')
    result = pytester.runpytest(*ISOLATE, "-s")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*mcp_cassette: {pytester.path / 'rules.json'}: rule 1 (x): delay is seconds "
                                 "between 0 and 3600, not -1*"])
