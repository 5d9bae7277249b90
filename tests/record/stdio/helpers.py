"""Shared helpers for the stdio proxy tests: where the test servers are, how to run the recorder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.peers import SDK_SERVER

HERE = Path(__file__).resolve().parent
PY = sys.executable
RAW = str(HERE / "servers" / "raw_server.py")
#: the shared official-SDK server, as the proxy tests want it (progress, big answers, a crash, stderr)
SDK = [PY, str(SDK_SERVER), "--as", "proxy"]


def record_argv(out: Path, *options: str) -> list[str]:
    """``mcpreel record -q --out OUT [options] --`` (the server command goes after it)."""
    return [PY, "-m", "mcpreel", "record", "-q", "--out", str(out), *options, "--"]


def run_record(out: Path, server: list[str], stdin: bytes = b"", *options: str, timeout: float = 30,
               ) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(record_argv(out, *options) + server, input=stdin, capture_output=True, timeout=timeout)


def reel_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a reel, parsed (a torn line fails the test)."""
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def messages(lines: list[dict[str, Any]], direction: str | None = None) -> list[Any]:
    return [x["raw"] for x in lines if "raw" in x and (direction is None or x["dir"] == direction)]


def of_type(lines: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [x for x in lines if x.get("type") == kind]
