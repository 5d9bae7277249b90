"""Issue 25: a mock that answers every client as the recorded server would have, in both eras.

Each finding of the issue is a rule tested in memory and against the real client the issue names:

1. a stateless 2026 request is answered from the recording's requests of its era, whatever client session
   they came in (the conformance suite's 2026 run against ``serve``: tests/conformance);
2. a 2026 multi-round-trip answer (``input_required``) said to a handshake-era client: the recorded input
   requests go to it mid-call, then the final result (the official SDK client, ``mode="legacy"``);
3. a recorded refusal of ``server/discover`` is what the mock answers (the SDK ``Client`` then falls back to
   ``initialize`` as it did against server-everything);
4. the 2026 header and version rules on the HTTP mock (``mcpreel check --era modern``);
5. ``replay --era modern`` leaves out ``logging/setLevel`` and ``ping`` and says so (the Inspector CLI).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcpreel._infra import jsonio
from mcpreel.eras import LEGACY, MODERN, absent_in_era
from mcpreel.mock.engine import Mock
from mcpreel.mock.server import http_app
from mcpreel.model import Session
from mcpreel.operations.cassette import build
from mcpreel.operations.sessions import split_sessions
from mcpreel.replay.results import ReplayOptions
from tests.conftest import free_port
from tests.mock.test_mock_engine import run
from tests.replay.e2e_helpers import MCPREEL, PEERS, PY, SDK_SERVER, Background, mcpreel, run_client
from tests.replay.helpers import INIT, err, note, replay_against_mock, req, res, session, text

V = "2026-07-28"
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def envelope(client: str = "c", version: str = V) -> dict[str, Any]:
    return {"io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}


def modern(id_: Any, method: str, params: dict[str, Any] | None = None, *, client: str = "c",
           version: str = V) -> dict[str, Any]:
    return req(id_, method, {**(params or {}), "_meta": envelope(client, version)})


DISCOVERED = {"supportedVersions": [V], "capabilities": {"tools": {}}, "resultType": "complete",
              "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}


def served(recording: Session) -> Mock:
    """The mock ``serve`` makes of a recording: one cassette, and its client sessions when there are several."""
    parts = split_sessions(recording)
    sessions = [(build(p.as_session(recording.info)), p.era, p.client) for p in parts] if len(parts) > 1 else None
    return Mock(build(recording), sessions=sessions)


# -- 1: stateless requests, many sessions -----------------------------------------------------------


def test_a_stateless_request_is_answered_from_whichever_session_recorded_it() -> None:
    # the conformance suite's shape: a scenario that only discovers, then one that discovers and calls
    recording = session(
        ("in", modern(1, "server/discover")), ("out", res(1, DISCOVERED)),
        ("in", modern(1, "server/discover")), ("out", res(1, DISCOVERED)),
        ("in", modern(2, "tools/call", {"name": "echo", "arguments": {"t": "x"}})),
        ("out", res(2, {**text("x"), "resultType": "complete"})),
        ("in", INIT), ("out", res(1, {"protocolVersion": "2025-11-25", "capabilities": {},
                                      "serverInfo": {"name": "s", "version": "1"}})),
        ("in", req(2, "tools/call", {"name": "echo", "arguments": {"t": "legacy"}})), ("out", res(2, text("legacy"))))
    mock = served(recording)
    assert len(mock.sessions) == 3
    out = run(mock, modern(1, "server/discover"), modern(2, "server/discover"),
              modern(3, "tools/call", {"name": "echo", "arguments": {"t": "x"}}),
              modern(4, "server/discover"), modern(5, "tools/call", {"name": "echo", "arguments": {"t": "x"}}))
    assert not mock.stats.misses, mock.stats.misses[0].reason
    assert [m["id"] for m in out] == [1, 2, 3, 4, 5]
    assert out[2]["result"]["content"][0]["text"] == out[4]["result"]["content"][0]["text"] == "x"


def test_a_stateless_request_the_recording_lacks_is_a_miss_naming_every_recorded_method() -> None:
    recording = session(("in", modern(1, "server/discover")), ("out", res(1, DISCOVERED)),
                        ("in", modern(1, "server/discover")), ("out", res(1, DISCOVERED)),
                        ("in", modern(2, "tools/list")), ("out", res(2, {"tools": []})))
    mock = served(recording)
    out = run(mock, modern(1, "server/discover"), modern(2, "server/discover"), modern(3, "prompts/get", {"name": "p"}))
    assert out[2]["error"]["code"] == -32601
    assert "the recording has: server/discover, tools/list" in out[2]["error"]["message"]


# -- 3: a refused server/discover -------------------------------------------------------------------


def test_a_recorded_refusal_of_discover_is_what_the_mock_answers() -> None:
    recording = session(("in", modern(1, "server/discover")), ("out", err(1, -32601, "Method not found")),
                        ("in", INIT), ("out", res(1, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                                      "serverInfo": {"name": "everything", "version": "2"}})),
                        ("in", note("notifications/initialized")))
    mock = served(recording)
    out = run(mock, modern(7, "server/discover"), req(8, "initialize", INIT["params"]))
    assert out[0] == {"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "Method not found"}}
    assert out[1]["result"]["serverInfo"]["name"] == "everything"


def test_a_handshake_recording_without_discover_still_gets_one_made_up() -> None:
    recording = session(("in", INIT), ("out", res(1, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                                      "serverInfo": {"name": "s", "version": "1"}})))
    out = run(served(recording), modern(1, "server/discover"))
    assert out[0]["result"]["supportedVersions"] == [V]


# -- 4: the version rule (engine: stdio and HTTP alike) ---------------------------------------------


def test_an_unsupported_version_gets_32022_with_the_recorded_supported_versions() -> None:
    recording = session(("in", modern(1, "server/discover")),
                        ("out", res(1, {**DISCOVERED, "supportedVersions": [V, "2026-12-01"]})))
    out = run(served(recording), modern(5, "server/discover", version="2099-01-01"),
              modern(6, "tools/list", version="2099-01-01"))
    for answer, id_ in zip(out, (5, 6), strict=True):
        assert answer["id"] == id_
        assert answer["error"]["code"] == -32022
        assert answer["error"]["data"] == {"supported": [V, "2026-12-01"], "requested": "2099-01-01"}


# -- 4: the header rules on the HTTP mock -----------------------------------------------------------


def _post(app: Any, message: dict[str, Any], headers: dict[str, str]) -> httpx2.Response:
    async def main() -> httpx2.Response:
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app)) as c:
            return await c.post("http://127.0.0.1:1/mcp", content=jsonio.dumps(message), headers={**ACCEPT, **headers})

    return asyncio.run(main())


def test_the_http_mock_refuses_a_2026_post_whose_routing_headers_are_missing_or_differ() -> None:
    recording = session(("in", modern(1, "server/discover")), ("out", res(1, DISCOVERED)),
                        ("in", modern(2, "tools/call", {"name": "echo", "arguments": {}})),
                        ("out", res(2, text("ok"))))
    app = http_app(served(recording))
    call = modern(3, "tools/call", {"name": "echo", "arguments": {}})
    good = {"mcp-protocol-version": V, "mcp-method": "tools/call", "mcp-name": "echo"}
    cases = {
        "no Mcp-Method": {k: v for k, v in good.items() if k != "mcp-method"},
        "another Mcp-Method": {**good, "mcp-method": "tools/list"},
        "no Mcp-Name": {k: v for k, v in good.items() if k != "mcp-name"},
        "another Mcp-Name": {**good, "mcp-name": "other"},
        "no MCP-Protocol-Version": {k: v for k, v in good.items() if k != "mcp-protocol-version"},
    }
    for what, headers in cases.items():
        r = _post(app, call, headers)
        assert r.status_code == 400, what
        assert r.json()["error"]["code"] == -32020 and r.json()["id"] == 3, what
    ok = _post(app, call, good)
    assert ok.status_code == 200 and "ok" in ok.text
    # the name as the SDK encodes a non-ASCII one
    uni = modern(4, "tools/call", {"name": "é", "arguments": {}})
    r = _post(app, uni, {**good, "mcp-name": "=?base64?w6k=?="})
    assert r.status_code == 400 and r.json()["error"]["code"] == -32602  # past the headers: a miss, not -32020
    # a field value is read without the whitespace around it (RFC 9110 5.5), as FastMCP reads it
    spaced = _post(app, call, {**good, "mcp-name": "echo \t"})
    assert spaced.status_code == 200 and "ok" in spaced.text
    version = _post(app, modern(5, "server/discover", version="2099-01-01"),
                    {**good, "mcp-protocol-version": "2099-01-01", "mcp-method": "server/discover"})
    assert version.status_code == 400
    assert version.json()["error"]["code"] == -32022 and version.json()["error"]["data"]["supported"] == [V]


def test_a_2026_error_alone_has_the_eras_http_status() -> None:
    """404 for -32601 (a method the server lacks, a miss too), 400 for invalid params: as the SDK server
    sends them and the conformance suite's server-stateless scenario asks; a handshake-era error stays 200."""
    recording = session(("in", modern(1, "server/discover")), ("out", res(1, DISCOVERED)),
                        ("in", modern(2, "ping")), ("out", err(2, -32601, "Method not found")),
                        ("in", modern(3, "tools/call", {"name": "echo"})), ("out", err(3, -32602, "bad")),
                        ("in", modern(4, "initialize")), ("out", err(4, -32601, "Method not found")),
                        ("in", INIT), ("out", res(1, {"protocolVersion": "2025-11-25", "capabilities": {},
                                                      "serverInfo": {"name": "s", "version": "1"}})),
                        ("in", req(2, "nope/legacy")), ("out", err(2, -32601, "Method not found")))
    app = http_app(served(recording))

    def headers(method: str, name: str | None = None) -> dict[str, str]:
        return {"mcp-protocol-version": V, "mcp-method": method, **({"mcp-name": name} if name else {})}

    ping = _post(app, modern(5, "ping"), headers("ping"))
    assert ping.status_code == 404 and ping.json()["error"]["code"] == -32601 and ping.json()["id"] == 5
    bad = _post(app, modern(6, "tools/call", {"name": "echo"}), headers("tools/call", "echo"))
    assert bad.status_code == 400 and bad.json()["error"]["message"] == "bad"
    missed = _post(app, modern(7, "prompts/list"), headers("prompts/list"))
    assert missed.status_code == 404 and missed.json()["error"]["code"] == -32601
    # a 2026 initialize the server refused is refused as recorded (never an answer made from discover)
    init = _post(app, modern(8, "initialize"), headers("initialize"))
    assert init.status_code == 404 and init.json()["error"]["code"] == -32601
    legacy = _post(app, INIT, {})
    sid = legacy.headers["mcp-session-id"]
    r = _post(app, req(9, "nope/legacy"), {"mcp-session-id": sid})
    assert r.status_code == 200 and '"code":-32601' in r.text


def test_recorded_refusals_by_the_era_rules_are_passed_over_for_requests_that_pass_them() -> None:
    """The conformance suite's http-header-validation: the same tools/list sent with good and with bad headers;
    the mock refuses the bad ones itself, so the good ones get the recorded answers, not the refusals."""
    listed = {"tools": [], "resultType": "complete"}
    recording = session(("in", modern(1, "server/discover")), ("out", res(1, DISCOVERED)),
                        ("in", modern(2, "tools/list")), ("out", res(2, listed)),
                        ("in", modern(3, "tools/list")), ("out", err(3, -32020, "mcp-method header does not match")),
                        ("in", modern(4, "tools/list")), ("out", res(4, listed)),
                        ("in", modern(5, "tools/call", {"name": "echo"})), ("out", err(5, -32020, "mcp-name differs")))
    mock = served(recording)
    out = run(mock, modern(1, "tools/list"), modern(2, "tools/list"), modern(3, "tools/list"),
              modern(4, "tools/call", {"name": "echo"}))
    assert [("result" in m) for m in out[:3]] == [True, True, True]
    # where the recording holds nothing but the refusal, the refusal is what the server answered
    assert out[3]["error"]["code"] == -32020


def test_handshake_era_posts_need_no_routing_headers() -> None:
    recording = session(("in", INIT), ("out", res(1, {"protocolVersion": "2025-11-25", "capabilities": {},
                                                      "serverInfo": {"name": "s", "version": "1"}})))
    r = _post(http_app(served(recording)), INIT, {})
    assert r.status_code == 200 and "2025-11-25" in r.text


# -- 2: input_required to a handshake-era client ----------------------------------------------------

ASK = {"method": "elicitation/create", "params": {"message": "Your name?", "requestedSchema": {"type": "object"}}}
#: a handshake-era client that can be asked for input (the mock asks no other: a server may not)
ELICITING = req(1, "initialize", {**INIT["params"], "capabilities": {"elicitation": {}}})


def _mrtr_recording() -> Session:
    first = {"inputRequests": {"k": ASK}, "requestState": "s1", "resultType": "input_required"}
    retry = {"name": "greet", "arguments": {}, "inputResponses": {"k": {"action": "accept", "content": {"name": "Bob"}}},
             "requestState": "s1"}
    # the recorded client declared elicitation in its envelope (the SDK Client given an elicitation callback)
    return session(("in", _eliciting(1, "server/discover")), ("out", res(1, DISCOVERED)),
                   ("in", _eliciting(2, "tools/call", {"name": "greet", "arguments": {}})), ("out", res(2, first)),
                   ("in", _eliciting(3, "tools/call", retry)),
                   ("out", res(3, {**text("hello Bob"), "resultType": "complete"})))


def test_input_required_goes_to_a_handshake_client_as_a_request_mid_call_then_the_result() -> None:
    mock = served(_mrtr_recording())
    out = run(mock, ELICITING, req(2, "tools/call", {"name": "greet", "arguments": {}}),
              answers={"elicitation/create": {"action": "accept", "content": {"name": "Bob"}}})
    asked, final = out[1], out[2]
    assert asked["method"] == "elicitation/create" and asked["params"] == ASK["params"]
    assert final["id"] == 2 and final["result"] == text("hello Bob")  # no resultType for this era
    assert not mock.stats.misses


def test_a_handshake_client_gets_no_2026_server_info_in_a_result() -> None:
    """The 2026 era names the server in every result's ``_meta``; a handshake-era server does not."""
    named = {**text("hi"), "resultType": "complete",
             "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}, "keep": 1}}
    alone = {**text("hi"), "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}
    recording = session(("in", modern(1, "server/discover")), ("out", res(1, DISCOVERED)),
                        ("in", modern(2, "tools/call", {"name": "a"})), ("out", res(2, named)),
                        ("in", modern(3, "tools/call", {"name": "b"})), ("out", res(3, alone)))
    out = run(served(recording), req(1, "initialize", INIT["params"]), req(2, "tools/call", {"name": "a"}),
              req(3, "tools/call", {"name": "b"}))
    assert out[1]["result"] == {**text("hi"), "_meta": {"keep": 1}}
    assert out[2]["result"] == text("hi")
    modern_out = run(served(recording), modern(2, "tools/call", {"name": "a"}))
    assert modern_out[0]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "s", "version": "1"}


def test_a_handshake_client_that_answers_otherwise_gets_a_miss() -> None:
    mock = served(_mrtr_recording())
    out = run(mock, ELICITING, req(2, "tools/call", {"name": "greet", "arguments": {}}),
              answers={"elicitation/create": {"action": "accept", "content": {"name": "Eve"}}})
    assert out[-1]["id"] == 2 and out[-1]["error"]["code"] == -32602
    assert "otherwise than the recording did" in out[-1]["error"]["message"]
    assert len(mock.stats.misses) == 1


def test_a_handshake_client_that_did_not_declare_the_capability_is_not_asked() -> None:
    """The MCP Inspector CLI declares roots, not elicitation: the SDK server refuses it the call (-32021)
    instead of asking; the mock neither asks it, and the miss says which capability was missing."""
    mock = served(_mrtr_recording())
    rooted = req(1, "initialize", {**INIT["params"], "capabilities": {"roots": {"listChanged": True}}})
    out = run(mock, rooted, req(2, "tools/call", {"name": "greet", "arguments": {}}), answers={})
    assert [m.get("method") for m in out] == [None, None]  # the initialize answer, then the refusal: no request
    assert out[1]["id"] == 2 and out[1]["error"]["code"] == -32021
    assert "needs the client's elicitation capability, which this client did not declare" in out[1]["error"]["message"]
    assert len(mock.stats.misses) == 1


def _eliciting(id_: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A 2026 request whose envelope declares elicitation."""
    message = modern(id_, method, params)
    message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = {"elicitation": {}}
    return message


def test_a_2026_client_still_gets_input_required_and_retries() -> None:
    mock = served(_mrtr_recording())
    first = run(mock, _eliciting(1, "server/discover"), _eliciting(2, "tools/call", {"name": "greet", "arguments": {}}))[1]
    assert first["result"]["resultType"] == "input_required"
    assert not mock.stats.misses


def test_a_2026_client_that_did_not_declare_the_capability_is_refused_not_asked() -> None:
    """The SDK server answers -32021 to a 2026 request whose envelope lacks the capability (the SDK Client
    without an elicitation callback): the mock does so too, not the recorded input_required."""
    mock = served(_mrtr_recording())
    out = run(mock, modern(1, "server/discover"), modern(2, "tools/call", {"name": "greet", "arguments": {}}))
    assert out[1]["id"] == 2 and out[1]["error"]["code"] == -32021
    assert "elicitation capability, which this client did not declare" in out[1]["error"]["message"]
    assert len(mock.stats.misses) == 1


def test_a_recording_whose_own_request_lacked_the_capability_is_served_as_recorded() -> None:
    """The recorded server asked for input although the recorded request declared no capability: that is
    what it did, so the mock does it too (the assay era-parity vector ``modern-input-required``)."""
    first = {"inputRequests": {"k": ASK}, "requestState": "s1", "resultType": "input_required"}
    recording = session(("in", modern(1, "tools/call", {"name": "greet", "arguments": {}})), ("out", res(1, first)))
    mock = served(recording)
    out = run(mock, modern(1, "tools/call", {"name": "greet", "arguments": {}}))
    assert out[0]["id"] == 1 and out[0]["result"]["resultType"] == "input_required"
    assert not mock.stats.misses


# -- against the real clients -----------------------------------------------------------------------

@pytest.mark.e2e
def test_the_sdk_client_in_legacy_mode_gets_the_elicitation_from_a_2026_recording(tmp_path: Path) -> None:
    out = tmp_path / "m.jsonl"
    server = f"{PY} {PEERS / 'mrtr_server.py'}"

    def client(target: str, era: str) -> dict[str, Any]:
        proc = subprocess.run([PY, str(PEERS / "mrtr_client.py"), target, era], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout)

    recorded = client(" ".join([*MCPREEL, "record", "-q", "--out", str(out), "--", server]), "auto")
    assert recorded == {"protocol": V, "text": "hello Bob"}
    assert "input_required" in out.read_text()
    got = client(" ".join([*MCPREEL, "serve", str(out)]), "legacy")
    assert got == {"protocol": "2025-11-25", "text": "hello Bob"}


@pytest.mark.e2e
def test_the_sdk_client_falls_back_from_a_mock_of_a_server_that_refused_discover(tmp_path: Path,
                                                                                 everything_js: Path) -> None:
    out = tmp_path / "ev.jsonl"
    cmd = " ".join([*MCPREEL, "record", "-q", "--out", str(out), "--", "node", str(everything_js), "stdio"])
    recorded = run_client("stdio", cmd, "everything", era="auto")
    assert recorded["protocol"] == "2025-11-25"  # server-everything refused server/discover
    assert '"error":{"code":-32601' in out.read_text().replace(" ", "")
    got = run_client("stdio", " ".join([*MCPREEL, "serve", str(out)]), "everything", era="auto")
    assert got == recorded


@pytest.mark.e2e
def test_check_era_modern_passes_against_the_http_mock_of_a_2026_recording(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    cmd = " ".join([*MCPREEL, "record", "-q", "--out", str(out), "--", f"{SDK_SERVER} stdio"])
    assert run_client("stdio", cmd, era="auto")["protocol"] == V
    port = free_port()
    mock = Background([*MCPREEL, "serve", str(out), "--transport", "streamable-http", "--port", str(port)], port=port)
    try:
        r = mcpreel("check", f"http://127.0.0.1:{port}/mcp", "--profile", "mcp", "--era", "modern", timeout=120)
    finally:
        mock.stop()
    assert r.returncode == 0, r.stdout + r.stderr
    lines = {line.split()[0]: line.split()[1] for line in r.stdout.splitlines() if len(line.split()) > 1}
    assert lines.get("routing-headers") == "pass" and lines.get("unsupported-version") == "pass", r.stdout


@pytest.mark.e2e
def test_replay_era_modern_leaves_out_what_2026_lacks_in_an_inspector_session(tmp_path: Path,
                                                                              inspector_cli: Path) -> None:
    out = tmp_path / "inspector.jsonl"
    server = f"{PY} {Path(__file__).resolve().parents[1] / 'peers' / 'sdk_logging_server.py'}"
    record = [*MCPREEL, "record", "-q", "--out", str(out), "--", *server.split()]
    if os.environ.get("PYTHONPATH"):  # the Inspector gives its server a clean environment
        record = ["env", f"PYTHONPATH={os.environ['PYTHONPATH']}", *record]
    r = subprocess.run([str(inspector_cli), "--cli", *record, "--method", "tools/list"], capture_output=True,
                       text=True, timeout=90)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert '"method":"logging/setLevel"' in out.read_text().replace(" ", "")  # the Inspector's, after connecting
    same = mcpreel("replay", str(out), "--target-command", server, "--timeout", "10")
    assert same.returncode == 0, same.stdout + same.stderr
    assert "3 requests replayed: 3 same, 0 changed" in same.stdout  # initialize, logging/setLevel, tools/list
    modern_run = mcpreel("replay", str(out), "--era", "modern", "--target-command", server, "--timeout", "10")
    assert modern_run.returncode == 0, modern_run.stdout + modern_run.stderr
    said = modern_run.stdout + modern_run.stderr
    assert "left out 1 logging/setLevel: the modern era (stateless, 2026-07-28) has no such method (--era modern)" in said
    assert "1 request replayed: 1 same, 0 changed" in said


def test_replay_era_legacy_leaves_out_subscriptions_listen() -> None:
    recording = session(("in", modern(1, "server/discover")), ("out", res(1, DISCOVERED)),
                        ("in", modern(2, "tools/list")), ("out", res(2, {"tools": [], "resultType": "complete"})),
                        ("in", modern(3, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})),
                        ("out", res(3, {"resultType": "complete"})))
    report, _ = asyncio.run(replay_against_mock(recording, options=ReplayOptions(
        era="legacy", timeout=2, unrecorded_grace=0.05)))
    assert [r.method for r in report.results] == ["tools/list"]
    assert "left out 1 subscriptions/listen: the legacy era (handshake) has no such method (--era legacy)" in report.notes
    assert report.count("same") == 1


def test_the_era_rules_hold_for_both_eras() -> None:
    assert absent_in_era("ping", MODERN) and absent_in_era("logging/setLevel", MODERN)
    assert not absent_in_era("ping", LEGACY) and not absent_in_era("tools/call", MODERN)
    assert absent_in_era("subscriptions/listen", LEGACY) and not absent_in_era(None, MODERN)
