"""Issue 11 against real peers: recordings of both protocol eras, and reels holding several sessions.

The official SDK 2.3 ``mcp.Client`` in its default mode speaks 2026-07-28 to a modern server
(``server/discover``, per-request ``_meta``, no session id); ``mode="legacy"`` speaks the handshake era.
Each recording is replayed against the unchanged server (expect "same", exit 0) and a changed one (expect
the change named, exit 1), in its own era and in the other one; served by ``mcpreel serve`` to a client
of the other era.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from tests.conftest import free_port
from tests.replay.e2e_helpers import MCPREEL, PY, SDK_SERVER, Background, mcpreel, record, run_client

pytestmark = pytest.mark.e2e

CHANGED = f"{SDK_SERVER} --changed"
ERA_LINE = {"auto": "replayed in the modern era (stateless, 2026-07-28), as recorded",
            "legacy": "replayed in the legacy era (handshake), as recorded"}


def _http_server(port: int, *extra: str) -> Background:
    return Background([PY, SDK_SERVER.split()[-1], "streamable-http", str(port), *extra], port=port)


def _http_recorder(target_port: int, listen: int, out) -> Background:
    return Background([*MCPREEL, "record", "-q", "--transport", "streamable-http", "--target",
                       f"http://127.0.0.1:{target_port}/mcp", "--listen", f"127.0.0.1:{listen}", "--out", str(out)],
                      port=listen)


def _record_http(tmp_path, eras: list[str]):
    """Record one SDK client per era in ``eras`` through one HTTP recording proxy (one reel)."""
    port, listen = free_port(), free_port()
    out = tmp_path / "http.jsonl"
    server = _http_server(port)
    try:
        proxy = _http_recorder(port, listen, out)
        try:
            got = [run_client("streamable-http", f"http://127.0.0.1:{listen}/mcp", era=era) for era in eras]
        finally:
            proxy.stop()
    finally:
        server.stop()
    return out, got


def _assert_same(r: subprocess.CompletedProcess[str], n: int) -> None:
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{n} requests replayed: {n} same, 0 changed" in r.stdout, r.stdout


def _assert_changed(r: subprocess.CompletedProcess[str]) -> None:
    assert r.returncode == 1, r.stdout + r.stderr
    assert '$.result.content[0].text: "hello" -> "HELLO"' in r.stdout  # echo shouts in the new version
    assert "$.result.content[0].text.note: added" in r.stdout  # add answers one member more


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_stdio_recording_of_each_client_mode_replays_same_and_names_a_change(tmp_path, era):
    out = tmp_path / "s.jsonl"
    got = record(out, SDK_SERVER, era=era)
    assert got["protocol"] == ("2026-07-28" if era == "auto" else "2025-11-25")
    r = mcpreel("replay", str(out), "--target-command", SDK_SERVER, "--timeout", "10")
    _assert_same(r, 5)
    assert ERA_LINE[era] in r.stdout
    assert "performed the handshake" not in r.stdout
    _assert_changed(mcpreel("replay", str(out), "--target-command", CHANGED, "--timeout", "10"))


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_http_recording_of_each_client_mode_replays_same_and_names_a_change(tmp_path, era):
    out, got = _record_http(tmp_path, [era])
    assert got[0]["protocol"] == ("2026-07-28" if era == "auto" else "2025-11-25")
    port = free_port()
    server = _http_server(port)
    try:
        r = mcpreel("replay", str(out), "--target-url", f"http://127.0.0.1:{port}/mcp", "--timeout", "10")
        _assert_same(r, 5)
        assert ERA_LINE[era] in r.stdout
    finally:
        server.stop()
    changed = _http_server(port, "--changed")
    try:
        _assert_changed(mcpreel("replay", str(out), "--target-url", f"http://127.0.0.1:{port}/mcp", "--timeout", "10"))
    finally:
        changed.stop()


def test_a_reel_of_three_clients_of_both_eras_replays_session_by_session(tmp_path):
    out, _ = _record_http(tmp_path, ["auto", "legacy", "auto"])
    listing = mcpreel("inspect", str(out), "--summary")
    assert listing.returncode == 0
    assert "3 client sessions" in listing.stdout
    port = free_port()
    server = _http_server(port)
    try:
        t0 = time.monotonic()
        r = mcpreel("replay", str(out), "--target-url", f"http://127.0.0.1:{port}/mcp", "--timeout", "45",
                    "--output", str(tmp_path / "r.json"))
        elapsed = time.monotonic() - t0
        _assert_same(r, 15)
        # a request that waited out its timeout would take the whole run past it (a loaded machine may be
        # slow, never that slow): the timeout is long so that only a wait, not the load, can cross it
        assert elapsed < 45, f"no request may wait out a timeout ({elapsed:.1f} s)"
        report = json.loads((tmp_path / "r.json").read_text())
        assert [s["era"] for s in report["sessions"]] == ["modern", "legacy", "modern"]
        assert {r["session"] for r in report["results"]} == {1, 2, 3}
        one = mcpreel("replay", str(out), "--session", "2", "--target-url", f"http://127.0.0.1:{port}/mcp")
        _assert_same(one, 5)
        bad = mcpreel("replay", str(out), "--session", "4", "--target-url", f"http://127.0.0.1:{port}/mcp")
        assert bad.returncode == 2 and "holds 3 sessions" in bad.stderr
        # the whole reel said in one era, whatever each session's own
        for era in ("legacy", "modern"):
            r = mcpreel("replay", str(out), "--era", era, "--target-url", f"http://127.0.0.1:{port}/mcp",
                        "--timeout", "10")
            # the translated handshakes are not rows: legacy sends no server/discover, modern no initialize
            _assert_same(r, 13 if era == "legacy" else 14)
    finally:
        server.stop()


@pytest.mark.parametrize("recorded,asked", [("auto", "legacy"), ("legacy", "modern")])
def test_a_recording_replays_in_the_other_era(tmp_path, recorded, asked):
    out = tmp_path / "s.jsonl"
    record(out, SDK_SERVER, era=recorded)
    r = mcpreel("replay", str(out), "--era", asked, "--target-command", SDK_SERVER, "--timeout", "10")
    _assert_same(r, 4)  # the translated handshake is not a row
    assert ("replayed in the legacy era" if asked == "legacy" else "replayed in the modern era") in r.stdout


def test_an_http_error_is_reported_at_once_with_its_status_and_body(tmp_path):
    """Issue 11 item 3: what the server said, never "no response within N s"."""
    out, _ = _record_http(tmp_path, ["legacy"])
    port = free_port()
    server = _http_server(port)
    try:
        t0 = time.monotonic()
        r = mcpreel("replay", str(out), "--target-url", f"http://127.0.0.1:{port}/mcp", "--timeout", "45",
                    "--header", "Mcp-Session-Id: no-such-session")
        assert time.monotonic() - t0 < 45  # at once: never after the request's timeout
        assert r.returncode == 2, r.stdout + r.stderr
        assert "HTTP 404" in r.stderr and "Session not found" in r.stderr and "no response within" not in r.stderr
    finally:
        server.stop()


@pytest.mark.parametrize("recorded", ["auto", "legacy"])
def test_serve_answers_a_client_of_the_other_era_over_stdio(tmp_path, recorded):
    out = tmp_path / "s.jsonl"
    original = record(out, SDK_SERVER, era=recorded)
    other = "legacy" if recorded == "auto" else "auto"
    got = run_client("stdio", " ".join([*MCPREEL, "serve", str(out)]), era=other)
    assert got["protocol"] == ("2026-07-28" if other == "auto" else "2025-11-25")
    for key in ("tools", "echo", "add", "fail"):
        assert got[key] == original[key]


@pytest.mark.parametrize("recorded", ["auto", "legacy"])
def test_serve_answers_a_client_of_the_other_era_over_http(tmp_path, recorded):
    out, original = _record_http(tmp_path, [recorded])
    port = free_port()
    mock = Background([*MCPREEL, "serve", str(out), "--transport", "streamable-http", "--port", str(port)], port=port)
    try:
        other = "legacy" if recorded == "auto" else "auto"
        got = run_client("streamable-http", f"http://127.0.0.1:{port}/mcp", era=other)
        assert got["protocol"] == ("2026-07-28" if other == "auto" else "2025-11-25")
        for key in ("tools", "echo", "add", "fail"):
            assert got[key] == original[0][key]
    finally:
        mock.stop()
