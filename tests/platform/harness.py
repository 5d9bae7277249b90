"""Run mcpreel in a child Python made to look like macOS or Windows (``sim/sitecustomize.py``).

:func:`run` starts ``python -m mcpreel ARGS`` with the simulation first on ``PYTHONPATH`` (so the servers it
starts, Python ones, are simulated too), bounded in time, and returns what a person would see: the exit
code, stdout and stderr. :func:`assert_clean` is what every verb must show on every platform: no traceback,
and each of mcpreel's notes at most once.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SIM = Path(__file__).resolve().parent / "sim"
RAW_SERVER = ROOT / "tests" / "record" / "stdio" / "servers" / "raw_server.py"
PLATFORMS = ("windows", "macos")
#: the one line a system without a control channel says
NO_LIVE_VIEW = "live view is not available here"


@dataclass
class Result:
    code: int
    out: str
    err: str


def environ(platform: str, tmp: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SIM), str(ROOT / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["MCPREEL_SIMULATE"] = platform
    env.pop("MCPREEL_RUNTIME_DIR", None)
    env.pop("XDG_RUNTIME_DIR", None)  # neither macOS nor Windows has one
    if platform in ("macos", "bsd"):  # a per-user temporary folder, 0700 (the runtime directory goes there)
        private = tmp / "var-folders"
        private.mkdir(mode=0o700, exist_ok=True)
        env["TMPDIR"] = str(private)
    else:
        env["LOCALAPPDATA"] = str(tmp / "AppData" / "Local")
    env["PYTHONUNBUFFERED"] = "1"
    if extra:
        env.update(extra)
    return env


def popen(platform: str, tmp: Path, args: list[str], **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "mcpreel", *args], env=environ(platform, tmp), cwd=tmp,
                            text=True, **kwargs)  # type: ignore[call-overload]


def run(platform: str, tmp: Path, args: list[str], stdin: str = "", timeout: float = 90.0) -> Result:
    proc = popen(platform, tmp, args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return Result(proc.returncode, out, err)


def assert_clean(result: Result) -> None:
    """No traceback anywhere, and every note or warning of mcpreel said once at most."""
    assert "Traceback" not in result.err, result.err
    assert "Traceback" not in result.out, result.out
    notes = Counter(line for line in result.err.splitlines()
                    if line.startswith(("mcpreel: note:", "warning:")) or NO_LIVE_VIEW in line)
    assert all(n == 1 for n in notes.values()), notes


def python_server(*args: str) -> list[str]:
    """A stdio server command line (the test's raw server, simulated too)."""
    return [sys.executable, str(RAW_SERVER), *args]
