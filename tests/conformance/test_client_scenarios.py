"""The conformance suite's client scenarios, with the official Python SDK client, directly and through
``mcpreel record`` (issue 25).

``conformance client --command CMD --scenario NAME`` starts the suite's own test server for the scenario
(an authorization server too for ``auth/*``), runs CMD with that server's URL appended and judges what the
client did on the wire. CMD is ``tests/peers/conformance_client.py`` (the SDK's ``ClientSession`` in the
handshake era, ``mcp.Client`` in its default mode for 2026-07-28) directly, and the same client started by
``tests/peers/through_record.py``, which puts ``mcpreel record --transport streamable-http --target URL``
between them. A transparent proxy leaves every check with the status it has directly.

Scenarios run: 2025-11-25 (suite 0.1.16) ``initialize``, ``tools_call``, ``sse-retry`` (the proxy relays the
SSE ``retry``, the closed stream and the client's ``Last-Event-ID`` reconnection),
``elicitation-sep1034-client-defaults``, ``auth/metadata-default``, ``auth/scope-from-www-authenticate``,
``auth/pre-registration``, ``auth/scope-step-up`` (a 403 ``insufficient_scope`` mid-session, re-authorized
through the proxy); 2026-07-28 (suite 0.2.0-alpha.12, ``--spec-version 2026-07-28``)
``tools_call``, ``request-metadata``, ``auth/metadata-default``.

The exception, written down and asserted: an OAuth flow through the proxy by a client that knows only the
proxy's URL fails. The protected resource metadata names the real server as the resource, and the SDK
refuses to authorize for a resource other than the URL it was given (RFC 8707/9728: the check that stops a
token going to the wrong server). It works, with every check as direct, when the client is configured with
the real server as its OAuth resource while its traffic goes through the proxy (``--resource-from-target``),
as a ready token would; the recorded ``Authorization`` headers are redacted.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.conformance.suite import _SUITE_JS, NODE22, PEERS, _mcpreel_env

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

HERE = Path(__file__).resolve().parents[1] / "peers"
CLIENT = [sys.executable, str(HERE / "conformance_client.py")]
THROUGH = [sys.executable, str(HERE / "through_record.py")]
#: requirement set -> (suite, the arguments that pick it)
SUITES = {"2025-11-25": (PEERS / "conformance-0.1" / _SUITE_JS, ()),
          "2026-07-28": (PEERS / "conformance-0.2" / _SUITE_JS, ("--spec-version", "2026-07-28"))}
SCENARIOS = [("2025-11-25", s) for s in ("initialize", "tools_call", "sse-retry", "elicitation-sep1034-client-defaults",
                                         "auth/metadata-default", "auth/scope-from-www-authenticate",
                                         "auth/pre-registration", "auth/scope-step-up")]
SCENARIOS += [("2026-07-28", s) for s in ("tools_call", "request-metadata", "auth/metadata-default")]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_CHECK = re.compile(r"^\S+\s+\[([\w./:-]+)\s*\]\s+(SUCCESS|FAILURE|WARNING|SKIPPED)\s")
_TOTAL = re.compile(r"^Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings")


def verdict(output: str) -> tuple[Counter[tuple[str, str]], tuple[int, ...], bool]:
    """The checks (id, status) with how often each was reported, the totals line, and the overall verdict."""
    checks: Counter[tuple[str, str]] = Counter()
    totals: tuple[int, ...] = ()
    for line in _ANSI.sub("", output).splitlines():
        line = line.strip()
        if m := _CHECK.match(line):
            checks[(m.group(1), m.group(2))] += 1
        elif m := _TOTAL.match(line):
            totals = tuple(int(g) for g in m.groups())
    assert totals, output[-3000:]
    return checks, totals, "OVERALL: PASSED" in output


def test_a_verdict_is_read_from_the_suites_output() -> None:
    out = ("Checks:\n\x1b[90m2026-11-26T06:04:57.855Z\x1b[0m [tool-add-numbers ] \x1b[32mSUCCESS\x1b[0m Validates\n"
           "2026-11-26T06:04:57.855Z [server-info   ] INFO    Test server info\n"
           "2026-11-26T06:04:57.855Z [token-request] FAILURE Expected Check Missing\n"
           "Test Results:\nPassed: 1/2, 1 failed, 0 warnings\n❌ OVERALL: FAILED\n")
    checks, totals, passed = verdict(out)
    assert checks == Counter({("tool-add-numbers", "SUCCESS"): 1, ("token-request", "FAILURE"): 1})
    assert totals == (1, 2, 1, 0) and not passed


def _run(era: str, scenario: str, command: list[str], env: dict[str, str] | None = None) -> str:
    suite, args = SUITES[era]
    proc = subprocess.run([str(NODE22), str(suite), "client", "--command", " ".join(command), "--scenario",
                           scenario, *args, "--timeout", "60000"],
                          capture_output=True, text=True, timeout=150, env={**_mcpreel_env(), **(env or {})})
    return proc.stdout + proc.stderr


def _peers(era: str) -> None:
    if not NODE22.exists() or not SUITES[era][0].exists():
        pytest.fail(f"the conformance suite for {era} is not installed under {PEERS}: run `make peers`")


@pytest.mark.parametrize(("era", "scenario"), SCENARIOS, ids=[f"{e}-{s}" for e, s in SCENARIOS])
def test_a_client_scenario_gets_the_same_verdict_through_the_recording_proxy(tmp_path: Path, era: str,
                                                                             scenario: str) -> None:
    _peers(era)
    direct = verdict(_run(era, scenario, CLIENT))
    assert direct[2], f"{scenario} fails directly: {direct}"  # the baseline: the SDK client passes each one
    reel = tmp_path / "reel.jsonl"
    client = [*CLIENT, "--resource-from-target"] if scenario.startswith("auth/") else CLIENT
    recorded = verdict(_run(era, scenario, [*THROUGH, *client], {"MCPREEL_REEL": str(reel)}))
    assert recorded == direct
    # and the session went through the proxy, whole
    messages = [json.loads(line) for line in reel.read_text().splitlines()]
    methods = [m["raw"].get("method") for m in messages if m.get("dir") == "in" and isinstance(m.get("raw"), dict)]
    assert "tools/list" in methods
    assert ("initialize" in methods) == (era == "2025-11-25")
    if scenario == "tools_call":
        assert "tools/call" in methods
    if scenario.startswith("auth/"):
        text = reel.read_text()
        assert '"authorization":"[REDACTED]"' in text.replace(" ", "")
        assert not re.search(r'"authorization":\s*"bearer', text, re.IGNORECASE)  # no token kept
    assert os.stat(reel).st_mode & 0o777 == 0o600


def test_an_oauth_flow_through_the_proxy_fails_for_a_client_that_knows_only_the_proxy(tmp_path: Path) -> None:
    _peers("2025-11-25")
    reel = tmp_path / "reel.jsonl"
    out = _run("2025-11-25", "auth/metadata-default", [*THROUGH, *CLIENT], {"MCPREEL_REEL": str(reel)})
    checks, _, passed = verdict(out)
    assert not passed and ("token-request", "FAILURE") in checks  # it never asked for a token
    assert re.search(r"Protected resource http://localhost:\d+/mcp does not match expected http://127\.0\.0\.1:\d+/mcp",
                     out), out[-3000:]
