"""A miss never shows a live secret where the cassette holds a redaction marker (issue 28, item 1).

A cassette redacted with keyed markers, a live request that carries another password: the miss says
"differs from the recorded secret" (never the live value), a keyed field whose live value has the marker's
HMAC is no difference ("matches the recorded secret" where the received params are shown), and the
same holds without the key, with plain markers, in the JSON-RPC error's data and in the cassette report's
fields (the text pytest prints and ``--report`` keeps).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpreel.cassette.run import miss_fields
from mcpreel.mock.matcher import DIFFERS, MATCHES, Matcher, Miss, RecordingIndex
from mcpreel.operations.cassette import build
from mcpreel.redact.keys import ENV_VAR, keyed_marker
from tests.replay.helpers import call, handshake, res, session, text

KEY = b"a key of the project, 0123456789"
LIVE_PW = "Other-Secret-PW-2"
LIVE_TOKEN = "sk-live-" + "Z" * 24


@pytest.fixture
def key_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "redact.key"
    path.write_bytes(KEY)
    path.chmod(0o600)
    monkeypatch.setenv(ENV_VAR, str(path))
    return path


def _matcher(arguments: dict) -> Matcher:
    s = session(*handshake(), ("in", call(2, "login", arguments)), ("out", res(2, text("welcome"))))
    return Matcher(RecordingIndex(build(s).exchanges))


def _login(**arguments: object) -> dict:
    return call(9, "login", dict(arguments))


def _everything(miss: Miss) -> str:
    """Every place a miss is written: its reason (client error, serve's stderr), the JSON-RPC error with
    its data, and the cassette report's fields (pytest's output, --report)."""
    return "\n".join([miss.reason, json.dumps(miss.error(9)), json.dumps(miss_fields(miss))])


def test_a_keyed_miss_says_differs_and_leaves_out_the_fields_that_matched(key_file: Path) -> None:
    m = _matcher({"user": keyed_marker(KEY, "key", "alice"), "password": keyed_marker(KEY, "key", "Right-PW-1"),
                  "n": 1})
    miss = m.match(_login(user="alice", password=LIVE_PW, n=1))
    assert isinstance(miss, Miss)
    miss = Miss(miss.method, miss.code, miss.reason, miss.closest, miss.differences,
                params=_login(user="alice", password=LIVE_PW, n=1)["params"], redact_key=miss.redact_key)
    shown = _everything(miss)
    assert LIVE_PW not in shown
    assert f"$.params.arguments.password: \"{keyed_marker(KEY, 'key', 'Right-PW-1')}\" -> ({DIFFERS})" in miss.reason
    # the user matched its marker: not a difference
    assert [d.path for d in miss.differences] == ["$.params.arguments.password"]
    assert "arguments.user" not in miss.reason
    assert miss.shown_params()["arguments"] == {"user": f"[{MATCHES}]", "password": f"[{DIFFERS}]", "n": 1}
    data = miss.error(9)["error"]["data"]["differences"]
    assert data == [{"path": "$.params.arguments.password", "kind": "changed",
                     "recorded": keyed_marker(KEY, "key", "Right-PW-1"), "received": DIFFERS}]


def test_a_secret_inside_a_text_differs_without_the_live_text(key_file: Path) -> None:
    m = _matcher({"text": "key " + keyed_marker(KEY, "sk-key", "sk-" + "a" * 24)})
    miss = m.match(_login(text="key " + LIVE_TOKEN))
    assert isinstance(miss, Miss) and LIVE_TOKEN not in _everything(miss)
    assert DIFFERS in miss.reason


def test_without_the_key_the_live_value_is_not_shown_either(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.chdir(tmp_path)
    m = _matcher({"password": keyed_marker(KEY, "key", "Right-PW-1")})
    found = m.match(_login(password=LIVE_PW))
    assert isinstance(found, Miss)
    miss = Miss(found.method, found.code, found.reason, found.closest, found.differences,
                params=_login(password=LIVE_PW)["params"])
    shown = _everything(miss)
    assert LIVE_PW not in shown
    assert "not compared with the recorded secret" in miss.reason and "no key was found" in miss.reason


def test_a_plain_marker_hides_the_live_value(key_file: Path) -> None:
    m = _matcher({"password": "[REDACTED]"})
    found = m.match(_login(password=LIVE_PW))
    assert isinstance(found, Miss) and LIVE_PW not in found.reason and "recorded secret" in found.reason
    miss = Miss(found.method, found.code, found.reason, found.closest, found.differences,
                params=_login(password=LIVE_PW)["params"])
    assert LIVE_PW not in _everything(miss)


def test_other_received_values_go_through_the_default_redaction(key_file: Path) -> None:
    m = _matcher({"city": "Paris"})
    found = m.match(_login(city="Lyon", api_key=LIVE_TOKEN))
    assert isinstance(found, Miss)
    miss = Miss(found.method, found.code, found.reason, found.closest, found.differences,
                params=_login(city="Lyon", api_key=LIVE_TOKEN)["params"])
    shown = _everything(miss)
    assert LIVE_TOKEN not in shown
    assert '"Paris" -> "Lyon"' in miss.reason  # what is no secret is still shown


def test_the_same_secret_still_matches(key_file: Path) -> None:
    m = _matcher({"password": keyed_marker(KEY, "key", "Right-PW-1")})
    assert not isinstance(m.match(_login(password="Right-PW-1")), Miss)
