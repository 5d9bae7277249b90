"""Running the real peers and the mcpreel CLI for the end-to-end tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests import peers

HERE = Path(__file__).resolve().parent
PEERS = HERE / "peers"
PY = sys.executable
MCPREEL = [PY, "-m", "mcpreel"]
SDK_SERVER = f"{PY} {peers.SDK_SERVER}"


def run_client(mode: str, target: str, script: str = "peer", timeout: float = 60, era: str | None = None) -> dict:
    """The official SDK client against ``target``; returns what it got. ``era``: None for the low-level
    handshake client, ``auto`` (2026-07-28 with a modern server) or ``legacy`` for ``mcp.Client``."""
    argv = [PY, str(PEERS / "sdk_client.py"), mode, target, script] + (["--era", era] if era else [])
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def mcpreel(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MCPREEL, *args], capture_output=True, text=True, timeout=timeout)


def record(out: Path, server_cmd: str, script: str = "peer", era: str | None = None) -> dict:
    """Record a real session with ``mcpreel record`` between the SDK client and ``server_cmd``."""
    cmd = " ".join([*MCPREEL, "record", "-q", "--out", str(out), "--", server_cmd])
    got = run_client("stdio", cmd, script, era=era)
    assert out.is_file()
    return got


class Background:
    """A process that serves HTTP until stopped; waits for ``ready`` on its stderr (or the port)."""

    def __init__(self, argv: list[str], *, ready: str | None = None, port: int | None = None,
                 env: dict[str, str] | None = None, timeout: float = 20):
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **(env or {})})
        self.stderr_lines: list[str] = []
        deadline = time.monotonic() + timeout
        if ready is not None:
            assert self.proc.stderr is not None
            while time.monotonic() < deadline:
                line = self.proc.stderr.readline()
                if not line:
                    raise AssertionError(f"{argv} exited early: {self.stderr_lines}")
                self.stderr_lines.append(line)
                if ready in line:
                    return
            raise AssertionError(f"{argv} never said {ready!r}")
        if port is not None:
            import socket

            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    return
                except OSError:
                    if self.proc.poll() is not None:
                        raise AssertionError(f"{argv} exited early: {self.proc.stderr.read()}") from None
                    time.sleep(0.05)
            raise AssertionError(f"{argv} never listened on {port}")

    def stop(self) -> tuple[int, str]:
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return self.proc.returncode, "".join(self.stderr_lines) + (err or "")
