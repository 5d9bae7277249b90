"""A clone without ../shared runs every test that does not need the spec's fixtures, and says how many it
skipped and why: a small subset of the suite, run with ``MCPREEL_SHARED`` pointing at an empty folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.conftest import ROOT

#: a module that mixes tests that read the fixtures (marked) with tests that do not, a module that reads them
#: through the ``fixtures_dir`` fixture, and one whose parametrization is computed from them at import time
SUBSET = ["tests/cli/test_formats_cli.py", "tests/toolcalls/test_fixtures_and_t1.py", "tests/formats/test_qai.py"]


def test_a_clone_without_shared_skips_only_what_needs_it_and_says_so(tmp_path):
    env = {**os.environ, "MCPREEL_SHARED": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "pytest", *SUBSET, "-p", "no:randomly", "-n", "0", "-rs"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=110)
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:] + proc.stderr[-2000:]
    reason = (f"../shared/fixtures not found at {tmp_path / 'fixtures'}: "
              "the spec's fixtures are beside the project in CI")
    skips = re.findall(r"^SKIPPED \[(\d+)\] \S+: (.*)$", out, re.M)
    assert skips and {why for _, why in skips} == {reason}  # every skip, and only for this one reason
    skipped = sum(int(n) for n, _ in skips)
    assert f"\n{skipped} tests skipped: {reason}\n" in out  # the one line that sums it up
    counts = re.search(r"^(\d+) passed, (\d+) skipped in ", out, re.M)
    assert counts, out[-2000:]
    assert int(counts.group(2)) == skipped and int(counts.group(1)) >= 15  # the rest ran, no collection error
