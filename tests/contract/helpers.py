"""Running the contract peers and the mcpreel CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable
SERVER = f"{PY} {HERE / 'peers' / 'contract_server.py'}"


def mcpreel(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "mcpreel", *args], capture_output=True, text=True, timeout=timeout)


def record_era(mode: str, out: Path, server: str = SERVER) -> dict:
    """The SDK ``Client`` in ``mode`` (auto = 2026-07-28, legacy = handshake) through ``mcpreel record``."""
    wrapped = f"{PY} -m mcpreel record -q --out {out} -- {server}"
    proc = subprocess.run([PY, str(HERE / "peers" / "era_client.py"), mode, wrapped], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert out.is_file()
    return json.loads(proc.stdout)
