"""Issue 13: the verbs that stream keep the same peak memory on a session ten times longer.

Each verb runs as a CLI child on a reel of 5,000 and of 50,000 messages (bench/scale.py builds both);
its own peak RSS (``os.wait4``) on the long one must be within 1.3x of the short one. Holding the
session (or its rows, entries or interactions) costs 1 to 3 kB a message: 50,000 messages would add
50 to 150 MB to a child of about 30 MB, far past the bound. Timings are benchmarks (bench/scale.py), not
tests.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMALL, LARGE = 5_000, 50_000

VERBS = {
    "inspect": ["inspect", "{src}"],
    "inspect --json -v": ["inspect", "--json", "-v", "{src}"],
    "inspect --summary": ["inspect", "--summary", "{src}"],
    "convert har": ["convert", "{src}", "{out}.har", "--to", "har"],
    "convert inspector": ["convert", "{src}", "{out}.json", "--to", "inspector"],
    "convert streamable-http": ["convert", "{src}", "{out}.json", "--to", "streamable-http"],
    "convert mcp-recorder": ["convert", "{src}", "{out}.json", "--to", "mcp-recorder"],
    "convert mcp-cassette-pypi": ["convert", "{src}", "{out}.json", "--to", "mcp-cassette-pypi"],
    "convert qai": ["convert", "{src}", "{out}.json", "--to", "qai"],
    "merge": ["merge", "{src}", "{copy}", "-o", "{out}.reel.jsonl"],
    "redact": ["redact", "{src}", "{out}.reel.jsonl"],
}


def _build() -> object:
    spec = importlib.util.spec_from_file_location("scale_bench", ROOT / "bench" / "scale.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module.build


def _peak_mb(argv: list[str], ok: tuple[int, ...] = (0,)) -> float:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.Popen([sys.executable, "-m", "mcpreel", *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode in ok, err.decode(errors="replace")
    return usage.ru_maxrss / 1024


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    build = _build()
    out = {}
    for n in (SMALL, LARGE):
        d = tmp_path_factory.mktemp(f"n{n}")
        src = d / "session.reel.jsonl"
        build(src, n)  # type: ignore[operator]
        (d / "copy.reel.jsonl").write_bytes(src.read_bytes())
        out[n] = src
    return out


@pytest.mark.timeout(300)
@pytest.mark.parametrize("verb", list(VERBS))
def test_peak_memory_is_flat_in_the_session_length(verb: str, sessions: dict[int, Path]) -> None:
    peaks = {}
    for n, src in sessions.items():
        argv = [a.format(src=src, copy=src.parent / "copy.reel.jsonl", out=src.parent / "out") for a in VERBS[verb]]
        peaks[n] = _peak_mb(argv)
    assert peaks[LARGE] <= 1.3 * peaks[SMALL], f"{verb}: {peaks[SMALL]:.0f} MB at {SMALL:,}, {peaks[LARGE]:.0f} MB at {LARGE:,}"


#: verbs on the same session as a qai file (one JSON document): its messages array is read as a stream
QAI_VERBS = {
    "inspect --summary": (["inspect", "--summary", "{qai}"], (0,)),
    "diff (reel vs qai)": (["diff", "{src}", "{qai}"], (0, 1)),
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("verb", list(QAI_VERBS))
def test_peak_memory_reading_a_qai_file_is_flat(verb: str, sessions: dict[int, Path]) -> None:
    argv_of, ok = QAI_VERBS[verb]
    peaks = {}
    for n, src in sessions.items():
        qai = src.parent / "session.qai.json"
        if not qai.exists():
            _peak_mb(["convert", str(src), str(qai)])
        peaks[n] = _peak_mb([a.format(src=src, qai=qai) for a in argv_of], ok)
    assert peaks[LARGE] <= 1.3 * peaks[SMALL], f"{verb}: {peaks[SMALL]:.0f} MB at {SMALL:,}, {peaks[LARGE]:.0f} MB at {LARGE:,}"
