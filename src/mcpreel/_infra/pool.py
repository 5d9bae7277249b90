"""One fan-out of work over the machine's cores: a pool of worker processes, used by every verb that does
the same thing to many inputs (``mcpreel index`` reads files through it; the replay fleet replays through it).

Why processes and not threads: reading a session and walking it is pure Python, so threads share one core
(the GIL); a process per core is the only way a pass gets the machine. Why one module: the rules that make
a pool safe to use from a CLI are the same for every verb, and easy to get wrong one verb at a time.

Interface::

    from mcpreel._infra.pool import Pool, default_jobs

    with Pool(jobs) as pool:                       # jobs=None: one per core (default_jobs())
        for result in pool.map(fn, items):          # results in the items' order
            ...
        for position, result in pool.completed(fn, items):   # as they finish, with the item's position
            ...

- ``fn`` is a module-level function (workers import it by name: the pool is *spawn-safe*, it starts its
  workers with the ``spawn`` method by default, as macOS and Windows do, so nothing of the parent's state
  is inherited and a parent with threads, DuckDB's included, is never forked); items and results are pickled.
  As with any spawn pool, a script run as a file that starts one needs the ``if __name__ == "__main__":``
  guard (each worker imports the main module); ``python -m mcpreel``, the ``mcpreel`` script, ``python -c``
  and pytest need nothing.
- **Bounded**: at most ``window`` items (default twice the workers) are handed out and not yet taken back by
  the caller; ``items`` is consumed lazily, so an iterator of a million items costs nothing up front and a
  slow consumer holds the workers back instead of piling results up in memory.
- **Errors**: an exception raised by ``fn`` is raised in the parent where its result would have come (at its
  position for :meth:`Pool.map`); a worker that dies (killed, out of memory) raises
  ``concurrent.futures.process.BrokenProcessPool``.
- **Ctrl-C**: workers ignore SIGINT (a terminal sends it to the whole process group); the parent gets the
  ``KeyboardInterrupt``, and leaving the ``with`` block on any exception stops the workers at once (SIGTERM)
  and drops what was queued. Leaving it normally waits for nothing (every result was taken) and shuts down.
- **jobs == 1** runs ``fn`` in the calling process, lazily, one item at a time (no process is started: the
  same code path without the cost of a child, and monkeypatches and callbacks still apply).
- **No work on import**, and none before the first item: the workers start with the first :meth:`Pool.map`
  or :meth:`Pool.completed` (each costs an interpreter start and the imports of ``fn``'s module).
"""

from __future__ import annotations

import os
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from types import TracebackType
from typing import Any, TypeVar

__all__ = ["Pool", "default_jobs"]

T = TypeVar("T")
R = TypeVar("R")


def default_jobs() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it, else the CPU count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def _worker_start(initializer: Callable[[], None] | None) -> None:
    """In each worker, first: Ctrl-C is the parent's to handle (it stops the workers itself)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer()


class Pool:
    """A pool of ``jobs`` worker processes (see the module doc for the whole contract).

    ``window``: items handed out at once (default ``2 * jobs``); ``context``: the multiprocessing start
    method (default ``spawn``); ``initializer``: a module-level function each worker runs once at its start.
    """

    def __init__(self, jobs: int | None = None, *, window: int | None = None, context: str = "spawn",
                 initializer: Callable[[], None] | None = None) -> None:
        self.jobs = max(1, jobs if jobs is not None else default_jobs())
        self.window = max(1, window if window is not None else 2 * self.jobs)
        self._context = context
        self._initializer = initializer
        self._executor: ProcessPoolExecutor | None = None
        self._pending: set[Future[Any]] = set()

    # -- life -------------------------------------------------------------------------------------

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if kind is None:
            self.close()
        else:
            self.terminate()

    def _start(self) -> ProcessPoolExecutor:
        if self._executor is None:
            import multiprocessing

            self._executor = ProcessPoolExecutor(self.jobs, mp_context=multiprocessing.get_context(self._context),
                                                 initializer=_worker_start, initargs=(self._initializer,))
        return self._executor

    def close(self) -> None:
        """Shut the workers down once what they run has finished (what is queued and not started is dropped)."""
        executor, self._executor = self._executor, None
        self._pending.clear()
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)

    def terminate(self) -> None:
        """Stop the workers now (SIGTERM), whatever they run; what was queued is dropped."""
        executor, self._executor = self._executor, None
        for future in self._pending:
            future.cancel()
        self._pending.clear()
        if executor is None:
            return
        stop = getattr(executor, "terminate_workers", None)  # Python 3.14
        if stop is not None:
            stop()
            return
        processes = dict(getattr(executor, "_processes", None) or {})
        for process in processes.values():
            try:
                process.terminate()
            except (OSError, ValueError, AttributeError):
                pass
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes.values():
            try:
                process.join(5)
            except (OSError, ValueError, AttributeError, AssertionError):
                pass

    # -- work -------------------------------------------------------------------------------------

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """``fn(item)`` for every item, fanned out; the results in the items' order."""
        if self.jobs == 1:
            yield from (fn(item) for item in items)
            return
        queue: deque[Future[R]] = deque()
        source = iter(items)
        done = False
        while True:
            while not done and len(queue) < self.window:
                try:
                    item = next(source)
                except StopIteration:
                    done = True
                    break
                future = self._start().submit(fn, item)
                self._pending.add(future)
                queue.append(future)
            if not queue:
                return
            future = queue.popleft()
            try:
                result = future.result()
            finally:
                self._pending.discard(future)
            yield result

    def completed(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[tuple[int, R]]:
        """``fn(item)`` for every item, fanned out; ``(position of the item, result)`` as each finishes."""
        if self.jobs == 1:
            yield from ((i, fn(item)) for i, item in enumerate(items))
            return
        positions: dict[Future[R], int] = {}
        source = enumerate(items)
        done = False
        while True:
            while not done and len(positions) < self.window:
                try:
                    position, item = next(source)
                except StopIteration:
                    done = True
                    break
                future = self._start().submit(fn, item)
                self._pending.add(future)
                positions[future] = position
            if not positions:
                return
            finished, _ = wait(positions, return_when=FIRST_COMPLETED)
            for future in sorted(finished, key=positions.__getitem__):
                position = positions.pop(future)
                self._pending.discard(future)
                yield position, future.result()
