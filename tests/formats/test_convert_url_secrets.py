"""Issue 12, secrets: ``convert`` redacts the secret query parameters another tool left in a session's URLs
(a cassette's ``server_url?api_key=…``) in every writer, as ``record`` does; ``--keep-secrets`` keeps them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.formats.support import fixture

KEY = "cass3tte-S3CRET-77"


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    doc = json.loads(fixture("mcp-recorder/mcp-recorder_mock_session.json").read_text())
    doc["metadata"]["server_url"] = f"http://127.0.0.1:8000/mcp?api_key={KEY}&v=2"
    path = tmp_path / "cassette.json"
    path.write_text(json.dumps(doc))
    return path


def _convert(src: Path, dst: Path, *extra: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "convert", str(src), str(dst), *extra],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert KEY not in proc.stdout + proc.stderr


@pytest.mark.parametrize("to", ["reel", "qai", "har", "streamable-http", "mcp-recorder"])
def test_convert_redacts_secret_url_parameters(cassette: Path, tmp_path: Path, to: str) -> None:
    out = tmp_path / f"out.{to}"
    _convert(cassette, out, "--to", to)
    text = out.read_text()
    assert KEY not in text
    if to != "streamable-http":  # the envelope keeps no session URL (convert's warning says so)
        assert "api_key=[REDACTED]&v=2" in text


def test_convert_keep_secrets_keeps_them(cassette: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "convert", str(cassette), str(out), "--keep-secrets"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"api_key={KEY}&v=2" in out.read_text()
