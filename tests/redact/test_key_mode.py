"""A redaction key that others may read or write is refused, as ssh refuses such a private key (issue 28,
item 5): one line naming the file, its mode and the fix, exit 2; the mock says why its markers match nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.errors import InputError
from mcpreel.mock.matcher import Matcher, Miss, RecordingIndex
from mcpreel.operations.cassette import build
from mcpreel.redact.keys import ENV_VAR, find_key, keyed_marker, read_key
from tests.replay.helpers import call, handshake, res, session, text

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
KEY = b"k" * 32


def _key(tmp_path: Path, mode: int) -> Path:
    path = tmp_path / "redact.key"
    path.write_bytes(KEY)
    path.chmod(mode)
    return path


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o602, 0o660, 0o666])
def test_a_key_others_may_read_or_write_is_refused(tmp_path: Path, monkeypatch, mode: int) -> None:
    path = _key(tmp_path, mode)
    with pytest.raises(InputError) as err:
        read_key(path)
    line = str(err.value)
    assert line.startswith(f"{path}: permissions {mode:04o} are too open") and f"chmod 600 {path}" in line
    assert "\n" not in line
    monkeypatch.setenv(ENV_VAR, str(path))  # by the environment too
    with pytest.raises(InputError, match="too open"):
        find_key()
    monkeypatch.delenv(ENV_VAR)
    (tmp_path / ".mcpreel").mkdir()
    default = tmp_path / ".mcpreel" / "redact.key"
    path.rename(default)
    with pytest.raises(InputError, match="too open"):  # and the project's own file
        find_key(cwd=tmp_path)


@pytest.mark.parametrize("mode", [0o600, 0o400])
def test_a_key_of_its_owner_only_is_used(tmp_path: Path, mode: int) -> None:
    assert read_key(_key(tmp_path, mode)) == KEY


def test_redact_refuses_it_in_one_line_with_exit_2(tmp_path: Path) -> None:
    path = _key(tmp_path, 0o644)
    src = tmp_path / "in.jsonl"
    src.write_text('{"type":"session","version":1,"transport":"stdio"}\n')
    r = CliRunner().invoke(cli, ["redact", str(src), str(tmp_path / "out.jsonl"), "--redact-key", str(path)])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [f"error: {path}: permissions 0644 are too open: a redaction key must be "
                                             f"readable and writable by its owner only; run chmod 600 {path}"]
    assert not (tmp_path / "out.jsonl").exists()


def test_the_mock_says_the_key_was_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(ENV_VAR, str(_key(tmp_path, 0o644)))
    s = session(*handshake(), ("in", call(2, "login", {"pw": keyed_marker(KEY, "key", "right")})),
                ("out", res(2, text("ok"))))
    found = Matcher(RecordingIndex(build(s).exchanges)).match(call(3, "login", {"pw": "right"}))
    assert isinstance(found, Miss)
    assert "the key was refused" in found.reason and "permissions 0644 are too open" in found.reason
