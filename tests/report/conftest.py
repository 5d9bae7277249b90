"""Recordings the report tests read: real sessions made with ``mcpreel record`` (both protocol eras)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def recordings(tmp_path_factory) -> dict:
    """``{"legacy": Path, "modern": Path, "seen": {...}}``: the SDK client driving ``peers/server.py``
    through ``mcpreel record``, once with ``mode="legacy"`` and once in its default (2026-07-28) mode."""
    out = tmp_path_factory.mktemp("recorded")
    proc = subprocess.run([sys.executable, str(HERE / "peers" / "drive.py"), str(out)], capture_output=True, timeout=90)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    seen = json.loads(proc.stdout)
    return {"legacy": out / "legacy.jsonl", "modern": out / "modern.jsonl", "seen": seen}
