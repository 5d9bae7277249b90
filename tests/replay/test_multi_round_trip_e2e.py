"""Multi-round-trip requests against the official SDK (issue 11): in the 2026-07-28 era a tool that needs
input answers ``input_required`` and the client retries under a new id with the ``requestState``; in
the handshake era the server asks ``elicitation/create`` mid-call. One logical request either way:
correlated by ``inspect``, replayed with the live server's own ``requestState``, served by the mock."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.replay.e2e_helpers import MCPREEL, PEERS, PY, mcpreel

pytestmark = pytest.mark.e2e

SERVER = f"{PY} {PEERS / 'mrtr_server.py'}"


def _client(target: str, era: str) -> dict:
    proc = subprocess.run([PY, str(PEERS / "mrtr_client.py"), target, era], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_a_request_that_needs_input_records_replays_and_serves(tmp_path, era):
    out = tmp_path / "m.jsonl"
    got = _client(" ".join([*MCPREEL, "record", "-q", "--out", str(out), "--", SERVER]), era)
    assert got["text"] == "hello Bob"
    shown = mcpreel("inspect", str(out))
    if era == "auto":
        assert "[INPUT_REQUIRED]" in shown.stdout and "retry of #" in shown.stdout
    else:
        assert "elicitation/create" in shown.stdout
    same = mcpreel("replay", str(out), "--target-command", SERVER, "--timeout", "10")
    assert same.returncode == 0, same.stdout + same.stderr
    assert " 0 changed" in same.stdout
    changed = mcpreel("replay", str(out), "--target-command", f"{SERVER} --changed", "--timeout", "10")
    assert changed.returncode == 1 and '"hello Bob" -> "hi Bob"' in changed.stdout, changed.stdout
    served = _client(" ".join([*MCPREEL, "serve", str(out)]), era)
    assert served["text"] == "hello Bob"
