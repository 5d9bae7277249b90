"""The ``mcp_session`` fixture as a user meets it: an async test gets the SDK's ClientSession, connected to the
cassette-backed server in the test's era (the SDK's default client, and ``era="legacy"``), recorded once from
the real server and replayed without it."""

from __future__ import annotations

import pytest

from .helpers import DEAD, SDK_SERVER

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.e2e

ISOLATE = ("-p", "no:mcp_recorder", "-p", "no:xdist", "-p", "no:cacheprovider")

SESSION_TESTS = '''
import pytest

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.mark.anyio
@pytest.mark.mcp_cassette(command={command!r})
async def test_default_era(mcp_session):
    assert mcp_session.protocol_version == "2026-07-28"
    assert "echo" in [t.name for t in (await mcp_session.list_tools()).tools]
    got = await mcp_session.call_tool("echo", {{"text": "modern"}})
    print("GOT", mcp_session.protocol_version, got.content[0].text)

@pytest.mark.anyio
@pytest.mark.mcp_cassette(command={command!r}, era="legacy")
async def test_legacy_era(mcp_session):
    assert mcp_session.protocol_version != "2026-07-28"
    got = await mcp_session.call_tool("echo", {{"text": "legacy"}})
    print("GOT", mcp_session.protocol_version, got.content[0].text)

@pytest.mark.anyio
@pytest.mark.mcp_cassette(command={command!r}, era="yesterday")
async def test_bad_era(mcp_session):
    pass
'''


def _file(pytester: pytest.Pytester, command: list[str]) -> None:
    pytester.makepyfile(test_inner=SESSION_TESTS.format(command=command))


def test_mcp_session_records_then_replays_in_both_eras(pytester):
    _file(pytester, [*SDK_SERVER, "stdio"])
    result = pytester.runpytest(*ISOLATE, "-s")
    result.assert_outcomes(passed=2, errors=1)  # a bad era: at setup, before any server
    result.stdout.fnmatch_lines(["*GOT 2026-07-28 modern*", "*GOT 2025-* legacy*"])
    result.stdout.fnmatch_lines(["*mcp_cassette: @pytest.mark.mcp_cassette: era='yesterday': give one of auto, legacy, modern*"])
    folder = pytester.path / "cassettes" / "test_inner"
    assert (folder / "test_default_era.jsonl").is_file() and (folder / "test_legacy_era.jsonl").is_file()

    _file(pytester, DEAD)  # replayed: the real server is never started, each era from its own cassette
    result = pytester.runpytest(*ISOLATE, "-s", "--mcp-record-mode", "none", "-k", "not bad_era")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*GOT 2026-07-28 modern*", "*GOT 2025-* legacy*"])


def test_a_request_the_cassette_lacks_fails_the_test_with_the_miss(pytester):
    """Replayed with a request the cassette never saw: the test fails, saying which request missed and how it
    differs from the closest recorded one (the test's own failure, not an ERROR at teardown)."""
    _file(pytester, [*SDK_SERVER, "stdio"])
    assert pytester.runpytest(*ISOLATE, "-k", "default_era").ret == 0
    pytester.makepyfile(test_inner=SESSION_TESTS.format(command=DEAD).replace('"text": "modern"', '"text": "other"'))
    result = pytester.runpytest(*ISOLATE, "--mcp-record-mode", "none", "-k", "default_era")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(['*_ test_default_era _*',
                                 "tools/call echo was not answered from the cassette *(record mode none)",
                                 '*record mode none*differs at $.params.arguments.text: "modern" -> "other"*',
                                 '*differs:  $.params.arguments.text: "modern" -> "other"',
                                 "*(the test then failed: MCPError: *"])
    assert "ERROR" not in result.stdout.str()


def test_without_the_sdk_the_test_fails_saying_what_to_install(pytester, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` now fails, as where the SDK is not installed
    _file(pytester, DEAD)
    result = pytester.runpytest(*ISOLATE, "-k", "legacy_era")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*mcp_session needs the official MCP Python SDK: pip install mcp*"])
    assert "Traceback" not in result.stdout.str()


def test_on_the_sdk_1x_the_session_is_the_legacy_era(tmp_path):
    """Where the project has the SDK 1.x (the venv beside langchain-mcp-adapters): mcp_session records and
    replays in the handshake era; era="modern" fails in one line naming the SDK it needs."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    venv = ROOT / ".peers" / "langchain"
    if not (venv / ".installed").is_file():
        pytest.skip(f"no venv with the SDK 1.x at {venv}: make langchain-peer")
    server = [sys.executable, *SDK_SERVER[1:], "stdio"]  # the real server: this venv's SDK 2.x
    (tmp_path / "test_inner.py").write_text(SDK1_TESTS.format(command=server))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    for extra in ((), ("--mcp-record-mode", "none")):
        ran = subprocess.run([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-s", *ISOLATE[-2:], *extra],
                             capture_output=True, text=True, timeout=300, cwd=tmp_path)
        out = ran.stdout[-3000:] + ran.stderr[-2000:]
        assert "GOT hi legacy" in ran.stdout and "1 passed, 1 error" in ran.stdout, out
        assert "era='modern' needs the MCP SDK 2.x: pip install" in ran.stdout, out


SDK1_TESTS = '''
import pytest

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.mark.anyio
@pytest.mark.mcp_cassette(command={command!r}, era="legacy")
async def test_legacy(mcp_session):
    got = await mcp_session.call_tool("echo", {{"text": "hi legacy"}})
    print("GOT", got.content[0].text)

@pytest.mark.anyio
@pytest.mark.mcp_cassette(command={command!r}, era="modern")
async def test_modern(mcp_session):
    pass
'''
