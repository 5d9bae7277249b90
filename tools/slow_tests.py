"""Write ``tests/slow.txt``: the tests ``make check`` leaves out, from the durations of a whole run.

``make check`` is the inner loop: ruff, mypy and the tests that need no peers, in a few minutes. The
tests that need peers say so themselves (``@pytest.mark.e2e``); the ones that need none but take long
(a property test of hundreds of sessions, a Spark session, a memory test at 100,000 messages, a CLI
started as a process many times) are not marked by hand, where a new one would be forgotten: a whole run's
``--durations=0`` says which they are, and this script writes them down.

    make test PYTEST_ARGS=--durations=0 > run.log
    python tools/slow_tests.py run.log            # --seconds S (default 4: a run on a loaded machine)

A test in the list gets the ``slow`` marker at collection (``tests/conftest.py``); ``make check`` runs
``-m "not e2e and not slow"``, ``make test`` runs everything. Ids the run did not see (a test since
renamed) drop out the next time the list is written; an id that no longer exists marks nothing.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIST = ROOT / "tests" / "slow.txt"
_LINE = re.compile(r"\s*([\d.]+)s (?:call|setup|teardown)\s+(\S+::\S+)")
HEADER = """\
# Tests `make check` leaves out (the `slow` marker, given at collection by tests/conftest.py): tests that need
# no peer (not `e2e`) and took {seconds:g} s or more, setup and teardown included, in a whole run. Written by
# `python tools/slow_tests.py RUN.log` from `make test PYTEST_ARGS=--durations=0`; do not edit by hand.
"""


def durations(log: Path) -> dict[str, float]:
    """Seconds of each test id (setup, call and teardown summed) in a pytest ``--durations=0`` output."""
    seen: dict[str, float] = {}
    for line in log.read_text(errors="replace").splitlines():
        m = _LINE.match(line)
        if m:
            seen[m.group(2)] = seen.get(m.group(2), 0.0) + float(m.group(1))
    return seen


def not_e2e() -> set[str]:
    """The ids of the tests that need no peer, as pytest collects them here."""
    out = subprocess.run([sys.executable, "-m", "pytest", "-m", "not e2e", "--collect-only", "-q", "-o", "addopts=",
                          "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True, check=False)
    return {line.strip() for line in out.stdout.splitlines() if "::" in line}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log", type=Path, help="the output of a whole run with --durations=0")
    ap.add_argument("--seconds", type=float, default=4.0, help="a test this long or longer is slow (default 4)")
    args = ap.parse_args()
    seen = durations(args.log)
    if not seen:
        print(f"error: {args.log}: no durations in it (run pytest with --durations=0)", file=sys.stderr)
        return 2
    keep = not_e2e()
    slow = sorted(n for n, s in seen.items() if s >= args.seconds and n in keep)
    LIST.write_text(HEADER.format(seconds=args.seconds) + "".join(f"{n}\n" for n in slow))
    print(f"{LIST.relative_to(ROOT)}: {len(slow)} slow tests of {len(keep)} that need no peer "
          f"({sum(seen[n] for n in slow):,.0f} of {sum(s for n, s in seen.items() if n in keep):,.0f} s in that run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
