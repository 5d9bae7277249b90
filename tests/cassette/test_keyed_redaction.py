"""A cassette redacted with keyed markers still answers a test whose request carries the secret (issues 19, 28).

Recorded by the pytest plugin from the real SDK server (stdio and streamable HTTP, the SDK client's default
2026-07-28 mode and ``mode="legacy"``), written redacted as ``mcpreel redact`` would (issue 28: no manual
step), then replayed with ``--mcp-record-mode none``: the same secret matches (the mock applies the HMAC to
the live value), a different secret is a miss, and without the key the miss says the key is missing.
"""

from __future__ import annotations

import pytest

from tests.conftest import free_port
from tests.replay.e2e_helpers import Background

from .helpers import DEAD, SDK_SERVER
from .test_plugin import ISOLATE

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.e2e

INNER = '''
import asyncio
import os
import pytest
from mcp import Client, stdio_client

async def call(where):
    kwargs = {{}} if {era!r} == "auto" else {{"mode": {era!r}}}
    if not isinstance(where, str):  # stdio: the server's stderr to a file (pytest's capture has no fileno)
        where = stdio_client(where, errlog=open("server-stderr.log", "a"))
    async with Client(where, **kwargs) as client:
        r = await client.call_tool("echo", {{"text": "key " + os.environ["INNER_SECRET"]}})
        return r.content[0].text

@pytest.mark.mcp_cassette("keyed.jsonl", {where})
def test_secret(mcp_server):
    where = mcp_server.stdio_parameters() if mcp_server.transport == "stdio" else mcp_server.url
    print("GOT", asyncio.run(call(where)))
'''

SECRET = "sk-" + "a" * 24
OTHER = "sk-" + "b" * 24


@pytest.mark.parametrize("era", ["auto", "legacy"])
@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
def test_a_keyed_cassette_matches_the_same_secret_and_no_other(pytester, monkeypatch, transport, era):
    monkeypatch.delenv("MCPREEL_REDACT_KEY", raising=False)
    monkeypatch.setenv("INNER_SECRET", SECRET)
    server = None
    if transport == "stdio":
        where = f"command={[*SDK_SERVER, 'stdio']!r}"
        dead = f"command={DEAD!r}"
    else:
        port = free_port()
        server = Background([*SDK_SERVER, "streamable-http", str(port)], port=port)
        where = f"url='http://127.0.0.1:{port}/mcp'"
        dead = f"url='http://127.0.0.1:{free_port()}/mcp'"
    key = pytester.path / "ci.key"
    key.write_text("a key kept out of the cassette, 0123456789")
    key.chmod(0o600)
    monkeypatch.setenv("MCPREEL_REDACT_KEY", str(key))
    try:
        pytester.makepyfile(test_keyed=INNER.format(era=era, where=where))
        result = pytester.runpytest(*ISOLATE, "-s")
        result.assert_outcomes(passed=1)
        result.stdout.fnmatch_lines([f"*GOT key {SECRET}*"])  # the live answer: the test sees the real thing
    finally:
        if server is not None:
            server.stop()
    cassette = pytester.path / "keyed.jsonl"
    text = cassette.read_text()  # written redacted, with no `mcpreel redact` by hand
    assert SECRET not in text and "[REDACTED:sk-key:" in text
    assert not (pytester.path / ".mcpreel").exists()  # the key of $MCPREEL_REDACT_KEY, no other made

    # replayed offline (the real server is gone): the same secret matches through the key
    pytester.makepyfile(test_keyed=INNER.format(era=era, where=dead))
    result = pytester.runpytest(*ISOLATE, "-s", "--mcp-record-mode", "none")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*GOT key [[]REDACTED:sk-key:*[]]*"])

    # another secret is another request: one miss
    monkeypatch.setenv("INNER_SECRET", OTHER)
    result = pytester.runpytest(*ISOLATE, "-s", "--mcp-record-mode", "none")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*tools/call was not answered from the cassette*",
                                 "*differs from the recorded secret*"])
    # the miss never prints the live secret (issue 28): not in the client's error, the report, pytest's output
    assert OTHER not in result.stdout.str() and OTHER not in result.stderr.str()

    # the right secret without the key: a miss that says the key is missing
    monkeypatch.setenv("INNER_SECRET", SECRET)
    monkeypatch.delenv("MCPREEL_REDACT_KEY")
    result = pytester.runpytest(*ISOLATE, "-s", "--mcp-record-mode", "none")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*keyed redaction markers but no key was found*"])
    assert SECRET not in result.stdout.str() and SECRET not in result.stderr.str()


STDIO_INNER = '''
import asyncio
import os
import pytest
from mcp import Client, stdio_client

@pytest.mark.mcp_cassette("keyed.jsonl", command={command!r}, record_mode={mode!r}{extra})
def test_secret(mcp_server):
    async def call():
        where = stdio_client(mcp_server.stdio_parameters(), errlog=open("server-stderr.log", "a"))
        async with Client(where, mode="legacy") as client:  # forwarding speaks the handshake era to the server
            got = []
            for word in os.environ["INNER_WORDS"].split():
                got.append((await client.call_tool("echo", {{"text": word + " " + os.environ["INNER_SECRET"]}})).content[0].text)
            return got
    print("GOT", asyncio.run(call()))
'''


def test_the_plugin_writes_cassettes_redacted_with_a_key_beside_the_project_unless_told_not_to(pytester, monkeypatch):
    monkeypatch.delenv("MCPREEL_REDACT_KEY", raising=False)
    monkeypatch.setenv("INNER_SECRET", SECRET)
    monkeypatch.setenv("INNER_WORDS", "one")
    cassette = pytester.path / "keyed.jsonl"

    def run(mode, *args, extra="", command=(*SDK_SERVER, "stdio")):
        pytester.makepyfile(test_keyed=STDIO_INNER.format(command=list(command), mode=mode, extra=extra))
        return pytester.runpytest(*ISOLATE, "-s", *args)

    run("once").assert_outcomes(passed=1)
    key = pytester.path / ".mcpreel" / "redact.key"  # pytest's rootdir: the project
    assert key.is_file() and (key.stat().st_mode & 0o777) == 0o600
    assert "\nredact.key\n" in (key.parent / ".gitignore").read_text()  # `git add .` never commits the key
    text = cassette.read_text()
    markers = text.count("[REDACTED:sk-key:")
    assert SECRET not in text and markers >= 2  # the request and the answer

    # the same secret, replayed from another folder: the serving process is given the key, and matches
    sub = pytester.path / "elsewhere"
    sub.mkdir()
    monkeypatch.chdir(sub)
    (pytester.path / "pytest.ini").write_text("[pytest]\n")
    run("none", str(pytester.path)).assert_outcomes(passed=1)
    monkeypatch.chdir(pytester.path)

    # new_episodes: the answer the real server adds is written redacted too
    monkeypatch.setenv("INNER_WORDS", "one two")
    run("new_episodes").assert_outcomes(passed=1)
    text = cassette.read_text()
    assert SECRET not in text and text.count("[REDACTED:sk-key:") == 2 * markers and "two [REDACTED:sk-key:" in text

    # opted out: for one test (the marker), for every test (the option)
    cassette.unlink()
    run("once", extra=", redact=False").assert_outcomes(passed=1)
    assert cassette.read_text().count(SECRET) == 2 * markers and "[REDACTED" not in cassette.read_text()
    cassette.unlink()
    run("once", "--mcp-no-redact").assert_outcomes(passed=1)
    assert cassette.read_text().count(SECRET) == 2 * markers and "[REDACTED" not in cassette.read_text()
    result = run("once", extra=", redact='no'")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.mcp_cassette: redact is True or False, not 'no'*"])
