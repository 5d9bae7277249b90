"""A cassette redacted with keyed markers still answers a test whose request carries the secret (issue 19).

Recorded by the pytest plugin from the real SDK server (stdio and streamable HTTP, the SDK client's default
2026-07-28 mode and ``mode="legacy"``), redacted by ``mcpreel redact --redact-key``, then replayed with
``--mcp-record-mode none``: the same secret matches (the mock applies the HMAC to the live value), a
different secret is a miss, and without the key the miss says the key is missing.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
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
    try:
        pytester.makepyfile(test_keyed=INNER.format(era=era, where=where))
        result = pytester.runpytest(*ISOLATE, "-s")
        result.assert_outcomes(passed=1)
        result.stdout.fnmatch_lines([f"*GOT key {SECRET}*"])
    finally:
        if server is not None:
            server.stop()
    cassette = pytester.path / "keyed.jsonl"
    key = pytester.path / "ci.key"
    key.write_text("a key kept out of the cassette, 0123456789")
    key.chmod(0o600)
    r = CliRunner().invoke(cli, ["redact", str(cassette), str(pytester.path / "red.jsonl"), "--redact-key", str(key)])
    assert r.exit_code == 0, r.output
    (pytester.path / "red.jsonl").replace(cassette)
    text = cassette.read_text()
    assert SECRET not in text and "[REDACTED:sk-key:" in text

    # replayed offline (the real server is gone): the same secret matches through the key
    monkeypatch.setenv("MCPREEL_REDACT_KEY", str(key))
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
