"""Noise end to end: a real SDK server whose answers hold a timestamp, a UUID, a random pick and an object
address, recorded by the SDK's own client in both eras and replayed against itself.

``--repeat 3`` alone: 0 changed (what varies is flaky); ``--learn-noise`` then ``--noise``: 0 changed and 0
flaky; the server's next version, whose ``add`` really changed, is still ``changed`` and named, with the
learned noise and against a baseline of the old release; a recording that caught no answer exits 2;
``--fail-on flaky`` fails on flaky; a bad noise file is one line, exit 2. Over stdio, and over Streamable HTTP
(the target, and the baseline by ``--baseline-url``).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.conftest import free_port
from tests.replay.e2e_helpers import MCPREEL, PEERS, PY, Background
from tests.replay.e2e_helpers import mcpreel as run_mcpreel

# a recording and up to six replays of a real server, each of --repeat K running it K times: minutes when loaded
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

SERVER = f"{PY} {PEERS / 'volatile_server.py'}"
CHANGED = f"{SERVER} --changed"
VOLATILE = ("now", "ticket", "pick", "where")


#: what the SDK's client asks (``peers/script_client.py``): each volatile tool twice, ``add`` once between
SCRIPT = {"calls": [*([name, {}] for name in VOLATILE), ["add", {"a": 2, "b": 3}], *([name, {}] for name in VOLATILE)]}


def _record(out: Path, era: str) -> dict:
    cmd = " ".join([*MCPREEL, "record", "-q", "--out", str(out), "--", SERVER])
    proc = subprocess.run([PY, str(PEERS / "script_client.py"), "stdio", cmd, json.dumps(SCRIPT), "--era", era],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert out.is_file()
    return json.loads(proc.stdout)


def _last_session(reel: Path) -> list[str]:
    """``--session N`` of the client session that called the tools, when the recording holds more: on a
    loaded machine the SDK's client may give up on a slow first handshake and start again (a session of its
    own), which is not what these tests are about."""
    from mcpreel.formats import open_session
    from mcpreel.operations.sessions import split_sessions_streaming

    parts = split_sessions_streaming(open_session(reel)[0])
    return [] if len(parts) == 1 else ["--session", str(parts[-1].index)]


def mcpreel(*args: str, timeout: float = 60):
    """``mcpreel`` with, after a recording's path, the ``--session`` of its tools' client session."""
    argv = list(args)
    if argv[0] == "replay":
        argv[2:2] = _last_session(Path(argv[1]))
    return run_mcpreel(*argv, timeout=timeout)


@pytest.fixture(scope="module", params=["auto", "legacy"])
def reel(request, tmp_path_factory) -> Path:
    """A recording of the volatile server by the SDK's default client (2026-07-28) or in the handshake era."""
    out = tmp_path_factory.mktemp(f"volatile-{request.param}") / "volatile.jsonl"
    got = _record(out, request.param)
    assert got["protocol"] == ("2026-07-28" if request.param == "auto" else "2025-11-25"), got
    now = [call["text"] for call in got["calls"] if call["tool"] == "now"]
    assert len(now) == 2 and now[0] != now[1]  # it does vary
    return out


def _doc(path: Path) -> dict:
    return json.loads(path.read_text())


def _by_status(doc: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in doc["results"]:
        out.setdefault(r["status"], []).append(r["tool"] or r["method"])
    return out


def test_a_plain_replay_cries_wolf_where_repeat_3_says_flaky_and_nothing_changed(reel, tmp_path) -> None:
    plain = mcpreel("replay", str(reel), "--target-command", SERVER, timeout=180)
    assert plain.returncode == 1 and " changed" in plain.stdout  # the noise the issue is about
    out = tmp_path / "r.json"
    r = mcpreel("replay", str(reel), "--target-command", SERVER, "--repeat", "3", "-o", str(out), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = _doc(out)
    assert doc["summary"]["changed"] == 0 and doc["summary"]["flaky"] == 8, doc["summary"]
    assert doc["summary"]["samples"] == {"target": 3, "baseline": 0}
    assert sorted(set(_by_status(doc)["flaky"])) == sorted(VOLATILE)
    assert "0 changed, 8 flaky" in r.stdout and "varies: $.result.content[0].text" in r.stdout
    failing = mcpreel("replay", str(reel), "--target-command", SERVER, "--repeat", "2", "--fail-on", "flaky",
                      timeout=300)
    assert failing.returncode == 1 and " 0 changed" in failing.stdout, failing.stdout + failing.stderr


def test_noise_learned_once_then_applied_gives_no_change_and_no_flaky_and_a_real_change_stays_changed(reel, tmp_path) -> None:
    noise = tmp_path / "noise.json"
    learn = mcpreel("replay", str(reel), "--target-command", SERVER, "--learn-noise", str(noise), timeout=300)
    assert learn.returncode == 0, learn.stdout + learn.stderr
    assert f"written to {noise}" in learn.stderr
    assert stat.S_IMODE(os.stat(noise).st_mode) == 0o600
    doc = _doc(noise)
    assert doc["kind"] == "mcpreel noise" and doc["learned"]["server"] == "volatile-peer"
    entries = {(e["tool"], e["path"]): e for e in doc["noise"]}
    assert {tool for tool, _ in entries} == set(VOLATILE)
    text = "$.result.content[0].text"
    assert entries[("now", text)]["looks"] == "a timestamp" and "mask" in entries[("now", text)]
    assert entries[("where", text)]["looks"] == "a hex address"
    assert entries[("ticket", text + ".id")]["looks"] == "a UUID"  # JSON inside the text, one member
    assert "mask" not in entries[("pick", text)]  # the whole value varies: left out whole
    assert all(e["varied"] == e["samples"] == 6 for e in doc["noise"]), doc["noise"]

    out = tmp_path / "gate.json"
    gate = mcpreel("replay", str(reel), "--target-command", SERVER, "--noise", str(noise), "-o", str(out), timeout=180)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    summary = _doc(out)["summary"]
    assert summary["changed"] == 0 and summary["flaky"] == 0 and summary["same"] == summary["requests"], summary

    out = tmp_path / "changed.json"
    changed = mcpreel("replay", str(reel), "--target-command", CHANGED, "--noise", str(noise), "-o", str(out),
                      timeout=180)
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert _by_status(_doc(out)).get("changed") == ["add"]
    assert '$.result.content[0].text: "5" -> "6"' in changed.stdout

    # learned noise and --repeat together: still nothing flaky, the change still named
    both = mcpreel("replay", str(reel), "--target-command", CHANGED, "--noise", str(noise), "--repeat", "2",
                   "-o", str(out), timeout=300)
    assert both.returncode == 1 and _by_status(_doc(out)) == {"same": _by_status(_doc(out))["same"], "changed": ["add"]}


def test_against_a_baseline_of_the_old_release_only_the_real_change_is_changed(reel, tmp_path) -> None:
    out = tmp_path / "b.json"
    # two runs a side: a random pick out of 900 that the one baseline run drew as recorded would look stable
    r = mcpreel("replay", str(reel), "--target-command", CHANGED, "--baseline-command", SERVER, "--repeat", "2",
                "-o", str(out), timeout=600)
    assert r.returncode == 1, r.stdout + r.stderr
    doc = _doc(out)
    statuses = _by_status(doc)
    assert statuses["changed"] == ["add"] and sorted(set(statuses["flaky"])) == sorted(VOLATILE)
    assert doc["summary"]["samples"] == {"target": 2, "baseline": 2}
    same = mcpreel("replay", str(reel), "--target-command", SERVER, "--baseline-command", SERVER, timeout=300)
    assert same.returncode == 0 and " 0 changed" in same.stdout, same.stdout + same.stderr


def test_a_recording_that_caught_no_answer_exits_2_instead_of_green(reel, tmp_path) -> None:
    records = [json.loads(line) for line in reel.read_text().splitlines()]
    handshake = {json.dumps(r["raw"]["id"]) for r in records if isinstance(r.get("raw"), dict)
                 and r["raw"].get("method") in ("initialize", "server/discover")}
    kept = []
    for rec in records:  # keep the handshake's answer, drop every other answer
        raw = rec.get("raw")
        answer = rec.get("dir") == "out" and isinstance(raw, dict) and "id" in raw and "method" not in raw
        if answer and json.dumps(raw["id"]) not in handshake:
            continue
        kept.append(json.dumps(rec))
    hollow = tmp_path / "hollow.jsonl"
    hollow.write_text("\n".join(kept) + "\n")
    r = mcpreel("replay", str(hollow), "--target-command", SERVER, timeout=180)
    assert r.returncode == 2, r.stdout + r.stderr
    said = " ".join(r.stdout.split())
    assert "nothing was judged: the recording holds no answer to any request beyond the handshake" in said


def test_a_bad_noise_file_is_one_line_and_exit_2(reel, tmp_path) -> None:
    bad = tmp_path / "noise.json"
    bad.write_text('{"version": 1, "noise": [{"path": "$.result", "mask": "("}]}')
    r = mcpreel("replay", str(reel), "--target-command", SERVER, "--noise", str(bad))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [f"error: {bad}: entry 1: mask '(' is not a regular expression: "
                                             "missing ), unterminated subpattern at position 0"], r.stderr


def test_over_streamable_http_the_learned_noise_applies_too(reel, tmp_path) -> None:
    noise = tmp_path / "noise.json"
    port = free_port()
    server = Background([PY, str(PEERS / "volatile_server.py"), "streamable-http", str(port)], port=port,
                        timeout=60)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        learn = mcpreel("replay", str(reel), "--target-url", url, "--learn-noise", str(noise), timeout=300)
        assert learn.returncode == 0, learn.stdout + learn.stderr
        gate = mcpreel("replay", str(reel), "--target-url", url, "--noise", str(noise), timeout=180)
        assert gate.returncode == 0 and " 0 changed" in gate.stdout and "flaky" not in gate.stdout, gate.stdout
        out = tmp_path / "b.json"
        against = mcpreel("replay", str(reel), "--target-command", CHANGED, "--baseline-url", url, "-o", str(out),
                          timeout=300)
        assert against.returncode == 1 and _by_status(_doc(out))["changed"] == ["add"], against.stdout
    finally:
        server.stop()
