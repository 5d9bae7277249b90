"""``mcpreel record --out-dir`` (what wrapped entries use): the default-named reel in that folder, and the bad mixes."""

from __future__ import annotations

import subprocess
import sys

from tests.record.stdio.helpers import RAW

PY = sys.executable


def test_out_dir_gets_a_default_named_reel(tmp_path):
    folder = tmp_path / "sessions" / "cursor" / "raw"
    proc = subprocess.run([PY, "-m", "mcpreel", "record", "-q", "--label", "raw", "--out-dir", str(folder), "--",
                           PY, RAW], input=b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', capture_output=True,
                          timeout=30)
    assert proc.returncode == 0, proc.stderr
    reels = list(folder.glob("raw-*.jsonl"))
    assert len(reels) == 1 and b'"method":"ping"' in reels[0].read_bytes()


def test_out_dir_bad_mixes(tmp_path):
    both = subprocess.run([PY, "-m", "mcpreel", "record", "--out", str(tmp_path / "a.jsonl"), "--out-dir", str(tmp_path),
                           "--", PY, RAW], capture_output=True, text=True, timeout=30)
    assert both.returncode == 2 and "not both" in both.stderr
    http = subprocess.run([PY, "-m", "mcpreel", "record", "--transport", "sse", "--target", "http://127.0.0.1:1/sse",
                           "--out-dir", str(tmp_path)], capture_output=True, text=True, timeout=30)
    assert http.returncode == 2 and "--out-dir is for stdio" in http.stderr
    assert list(tmp_path.iterdir()) == []
