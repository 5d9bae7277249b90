"""The ``mcp_session`` fixture over every transport a cassette is served on (stdio, Streamable HTTP, the legacy
HTTP+SSE transport of 2024-11-05), in both protocol eras: recorded from the official SDK's server, then replayed
with the real server gone; and a request the cassette lacks fails the test that made it, in one line naming
the request and the cassette (the test's own FAILED, not an ERROR at teardown)."""

from __future__ import annotations

import pytest

from tests.conftest import free_port
from tests.replay.e2e_helpers import Background

from .helpers import DEAD, SDK_SERVER

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.e2e

ISOLATE = ("-p", "no:mcp_recorder", "-p", "no:xdist", "-p", "no:cacheprovider")
MODERN = "2026-07-28"

HEAD = '''
import pytest

@pytest.fixture
def anyio_backend():
    return "asyncio"
'''

#: one test per transport and era; {where} is the marker's target (command=... or url=...)
SESSION_TEST = '''
@pytest.mark.anyio
@pytest.mark.mcp_cassette({where}, era={era!r})
async def test_{name}_{era}(mcp_session, mcp_server):
    assert mcp_server.transport == {transport!r}
    assert "echo" in [t.name for t in (await mcp_session.list_tools()).tools]
    got = await mcp_session.call_tool("echo", {{"text": "{name} {era}"}})
    print("GOT", mcp_server.action, mcp_session.protocol_version, got.content[0].text)
'''

#: replayed from the cassette the test above recorded, with a request it never saw
MISS_TEST = '''
@pytest.mark.anyio
@pytest.mark.mcp_cassette("cassettes/test_inner/test_{name}_{era}.jsonl", {where}, era={era!r})
async def test_miss_{name}_{era}(mcp_session):
    await mcp_session.call_tool("echo", {{"text": "never recorded"}})
    print("NOT REACHED")
'''

ERAS = ("legacy", "modern")


def _write(pytester: pytest.Pytester, targets: dict[str, tuple[str, str]]) -> None:
    """The test file: a session test and a miss test for each (name: (marker target, transport)) and era."""
    parts = [HEAD]
    for name, (where, transport) in targets.items():
        for era in ERAS:
            parts.append(SESSION_TEST.format(where=where, era=era, name=name, transport=transport))
            parts.append(MISS_TEST.format(where=where, era=era, name=name))
    pytester.makepyfile(test_inner="".join(parts))


@pytest.fixture
def real_http():
    """The official SDK's server over Streamable HTTP and over legacy SSE, each on its own port."""
    ports = {"streamable-http": free_port(), "sse": free_port()}
    servers = [Background([*SDK_SERVER, transport, str(port)], port=port, timeout=60)
               for transport, port in ports.items()]
    yield f"http://127.0.0.1:{ports['streamable-http']}/mcp", f"http://127.0.0.1:{ports['sse']}/sse"
    for server in servers:
        server.stop()


def test_mcp_session_records_and_replays_over_stdio_http_and_sse_in_both_eras(pytester, real_http):
    http, sse = real_http
    _write(pytester, {"stdio": (f"command={[*SDK_SERVER, 'stdio']!r}", "stdio"),
                      "http": (f"url={http!r}", "streamable-http"),
                      "sse": (f"url={sse!r}", "sse")})
    result = pytester.runpytest(*ISOLATE, "-s", "-k", "not miss")
    result.assert_outcomes(passed=6)
    for name in ("stdio", "http", "sse"):
        result.stdout.fnmatch_lines([f"*GOT record 2025-* {name} legacy*"])
        result.stdout.fnmatch_lines([f"*GOT record {MODERN} {name} modern*"])
    folder = pytester.path / "cassettes" / "test_inner"
    recorded = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert sorted(recorded) == sorted(f"test_{n}_{e}.jsonl" for n in ("stdio", "http", "sse") for e in ERAS)

    # replayed with every real server gone: nothing listens at either URL, and the command would fail
    gone = f"http://127.0.0.1:{free_port()}"
    _write(pytester, {"stdio": (f"command={DEAD!r}", "stdio"),
                      "http": (f"url={gone + '/mcp'!r}", "streamable-http"),
                      "sse": (f"url={gone + '/sse'!r}", "sse")})
    result = pytester.runpytest(*ISOLATE, "-s", "-vv", "--mcp-record-mode", "none")
    result.assert_outcomes(passed=6, failed=6)  # every miss is the failure of the test that made it
    out = result.stdout.str()
    for name in ("stdio", "http", "sse"):
        result.stdout.fnmatch_lines([f"*GOT replay 2025-* {name} legacy*"])
        result.stdout.fnmatch_lines([f"*GOT replay {MODERN} {name} modern*"])
        for era in ERAS:
            # the short summary's one line: the test, the request that missed and the cassette
            result.stdout.fnmatch_lines([f"FAILED test_inner.py::test_miss_{name}_{era} - tools/call echo was not "
                                         f"answered from the cassette cassettes/test_inner/test_{name}_{era}.jsonl "
                                         "(record mode none)"])
    assert "ERROR" not in out and "NOT REACHED" not in out and "Traceback" not in out
    result.stdout.fnmatch_lines(['*received: tools/call {"arguments": {"text": "never recorded"}, "name": "echo"}*',
                                 '*differs:  $.params.arguments.text: "sse modern" -> "never recorded"*'])
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == recorded  # replay wrote nothing


def test_with_no_cassette_the_first_request_fails_the_test_in_one_line(pytester):
    """Record mode none and no cassette: the handshake is answered (there is nothing to compare it with), the
    test's first request is not, and that fails the test itself, once (no ERROR at teardown, no traceback)."""
    pytester.makepyfile(test_inner=HEAD + SESSION_TEST.format(where=f"command={DEAD!r}", era="legacy", name="stdio",
                                                             transport="stdio"))
    result = pytester.runpytest(*ISOLATE, "-vv", "--mcp-record-mode", "none")
    result.assert_outcomes(failed=1)
    cassette = pytester.path / "cassettes" / "test_inner" / "test_stdio_legacy.jsonl"
    result.stdout.fnmatch_lines(["FAILED test_inner.py::test_stdio_legacy - tools/list: no cassette "
                                 "cassettes/test_inner/test_stdio_legacy.jsonl to answer it (record mode none)"])
    out = result.stdout.str()
    assert "ERROR" not in out and "Traceback" not in out and not cassette.exists()


def test_a_server_that_cannot_start_fails_the_setup_in_one_line(pytester):
    """Recording, with a real server command that does not exist: the fixture's handshake is what fails; the
    test stops at setup with the cassette server's own words, once (no second ERROR at teardown)."""
    missing = str(pytester.path / "no-such-server")
    pytester.makepyfile(test_inner=HEAD + SESSION_TEST.format(where=f"command=[{missing!r}]", era="legacy",
                                                             name="stdio", transport="stdio"))
    result = pytester.runpytest(*ISOLATE, "-vv")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*record mode once): the cassette server failed: *no-such-server*",
                                 "*(the handshake then failed: *"])
    out = result.stdout.str()
    assert "ERROR at teardown" not in out and "Traceback" not in out


SDK1_TESTS = '''
import pytest

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.mark.anyio
@pytest.mark.mcp_cassette(url={http!r}, era="legacy")
async def test_http(mcp_session, mcp_server):
    got = await mcp_session.call_tool("echo", {{"text": "http on 1.x"}})
    print("GOT", mcp_server.action, mcp_server.transport, got.content[0].text)

@pytest.mark.anyio
@pytest.mark.mcp_cassette(url={sse!r}, era="legacy")
async def test_sse(mcp_session, mcp_server):
    got = await mcp_session.call_tool("echo", {{"text": "sse on 1.x"}})
    print("GOT", mcp_server.action, mcp_server.transport, got.content[0].text)
'''


def test_on_the_sdk_1x_the_session_records_and_replays_over_http_and_sse(tmp_path, real_http):
    """Where the project has the SDK 1.x (the venv beside langchain-mcp-adapters): the handshake era over
    Streamable HTTP and legacy SSE, recorded from the real servers, then replayed with them gone."""
    import subprocess

    from tests.conftest import ROOT

    venv = ROOT / ".peers" / "langchain"
    if not (venv / ".installed").is_file():
        pytest.skip(f"no venv with the SDK 1.x at {venv}: make langchain-peer")
    http, sse = real_http
    gone = f"http://127.0.0.1:{free_port()}"
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    for action, targets, extra in (("record", (http, sse), ()),
                                   ("replay", (gone + "/mcp", gone + "/sse"), ("--mcp-record-mode", "none"))):
        (tmp_path / "test_inner.py").write_text(SDK1_TESTS.format(http=targets[0], sse=targets[1]))
        ran = subprocess.run([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-s", *ISOLATE[-2:], *extra],
                             capture_output=True, text=True, timeout=300, cwd=tmp_path)
        out = ran.stdout[-3000:] + ran.stderr[-2000:]
        assert "2 passed" in ran.stdout, out
        assert f"GOT {action} streamable-http http on 1.x" in ran.stdout, out
        assert f"GOT {action} sse sse on 1.x" in ran.stdout, out
