"""The one fan-out (``mcpreel._infra.pool``): order, bounds, errors, Ctrl-C, and jobs=1 in process.

The workers are spawned: they import this module by name to run its functions (pytest put the project's
root on ``sys.path``, which spawn hands to the children).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from mcpreel._infra.pool import Pool, default_jobs

WAIT_S = 60.0  # generous: the machine is shared


def square_with_pid(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


def fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError(f"item {x} is bad")
    return x


def wait_for_flag_or_raise(job: tuple[str, str, str]) -> str:
    """``("wait", flag, _)`` waits until ``flag`` exists (at most :data:`WAIT_S`); ``("set", flag, _)`` creates it."""
    what, flag, name = job
    if what == "set":
        Path(flag).write_text("x")
        return name
    deadline = time.monotonic() + WAIT_S
    while not Path(flag).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return name


def pid_then_sleep(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def test_default_jobs_is_the_cores_this_process_may_use() -> None:
    assert 1 <= default_jobs() <= (os.cpu_count() or 1)
    assert Pool().jobs == default_jobs() and Pool(3).window == 6


def test_map_gives_results_in_the_items_order_from_worker_processes() -> None:
    with Pool(2) as pool:
        results = list(pool.map(square_with_pid, range(20)))
    assert [r for r, _ in results] == [x * x for x in range(20)]
    pids = {pid for _, pid in results}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2


def test_completed_gives_each_result_as_it_finishes_with_its_position(tmp_path: Path) -> None:
    flag = tmp_path / "taken"
    jobs = [("wait", str(flag), "first item"), ("set", str(tmp_path / "unused"), "second item")]
    got = []
    with Pool(2) as pool:
        for position, name in pool.completed(wait_for_flag_or_raise, jobs):
            got.append((position, name))
            flag.write_text("x")  # the first item waits until a result was taken here
    assert got == [(1, "second item"), (0, "first item")]


def test_an_error_in_a_worker_is_raised_at_its_position() -> None:
    seen: list[int] = []
    with pytest.raises(ValueError, match="item 3 is bad"), Pool(2) as pool:
        for result in pool.map(fail_on_three, range(6)):
            seen.append(result)
    assert seen == [0, 1, 2]


def test_items_are_taken_lazily_within_the_window() -> None:
    pulled: list[int] = []

    def items():
        for i in range(1000):
            pulled.append(i)
            yield i

    with Pool(2, window=3) as pool:
        results = pool.map(square_with_pid, items())
        first = next(results)
        assert first[0] == 0
        assert len(pulled) <= 4  # the window, and the one taken to refill it
        assert sum(1 for _ in results) == 999
    assert len(pulled) == 1000


def test_one_job_runs_in_this_process_one_item_at_a_time() -> None:
    calls: list[int] = []

    def here(x: int) -> int:  # a closure: it could not be pickled to a worker
        calls.append(x)
        return os.getpid()

    with Pool(1) as pool:
        results = pool.map(here, range(5))
        assert next(results) == os.getpid() and calls == [0]
        assert list(results) == [os.getpid()] * 4
        assert [p for p, _ in pool.completed(here, "ab")] == [0, 1]


def test_ctrl_c_leaves_the_block_and_stops_every_worker_at_once() -> None:
    """Workers ignore SIGINT (a terminal sends it to them too); the parent's KeyboardInterrupt stops them."""
    with pytest.raises(KeyboardInterrupt), Pool(2) as pool:
        results = pool.map(pid_then_sleep, [0.0, 0.0, 90.0, 90.0, 90.0])
        pids = {next(results), next(results)}
        t0 = time.monotonic()
        for pid in pids:  # a Ctrl-C in a terminal reaches the workers too: they go on
            os.kill(pid, signal.SIGINT)
        raise KeyboardInterrupt
    assert time.monotonic() - t0 < WAIT_S  # not the 90 s sleeps
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_nothing_starts_before_the_first_item() -> None:
    pool = Pool(2)
    assert pool._executor is None
    pool.close()
    empty = Pool(2)
    assert list(empty.map(square_with_pid, [])) == [] and empty._executor is None
