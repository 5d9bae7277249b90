"""The ``slow`` list ``make check`` leaves out: read from a durations run, every entry a real test file."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool():  # tools/ is not a package: load the script as the Makefile's users run it
    spec = importlib.util.spec_from_file_location("slow_tests", ROOT / "tools" / "slow_tests.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_durations_sum_setup_call_and_teardown_of_each_test(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text("============ slowest durations ============\n"
                   "12.50s call     tests/a/test_x.py::test_one[legacy]\n"
                   "3.00s setup    tests/a/test_x.py::test_one[legacy]\n"
                   "0.01s teardown tests/a/test_x.py::test_two\n"
                   "........ [ 50%]\n")
    assert _tool().durations(log) == {"tests/a/test_x.py::test_one[legacy]": 15.5, "tests/a/test_x.py::test_two": 0.01}


def test_every_listed_test_is_in_a_test_file_that_exists() -> None:
    listed = [line for line in (ROOT / "tests" / "slow.txt").read_text().splitlines() if line and line[0] != "#"]
    assert listed, "tests/slow.txt lists nothing: make check would run every slow test"
    missing = sorted({n.split("::")[0] for n in listed if not (ROOT / n.split("::")[0]).is_file()})
    assert not missing, f"tests/slow.txt names files that are gone (rewrite it: tools/slow_tests.py): {missing}"


def test_a_listed_test_carries_the_slow_marker(request: pytest.FixtureRequest) -> None:
    listed = {line for line in (ROOT / "tests" / "slow.txt").read_text().splitlines() if line and line[0] != "#"}
    items = [i for i in request.session.items if i.nodeid in listed]
    if not items:
        pytest.skip("no listed test collected in this run (a run of this file alone)")
    assert all(i.get_closest_marker("slow") is not None for i in items)
