"""The fuzz families' engine: an input costs what its verb costs, so that ``make fuzz N=100000`` can run
whole (issue 40; BENCHMARKS.md has the rates).

Why not hypothesis: at 100,000 inputs a family its engine (the choice tree, mutations of earlier examples,
the draws of every ``sampled_from``) cost as much as the verb under test, and a fuzz run never shrinks.
Here every input comes from its own 64-bit seed (:class:`Draw`, a :class:`random.Random`): a failing input
is reported with its seed and replayed alone with ``MCPREEL_FUZZ_CASE=SEED``; ``MCPREEL_FUZZ_SEED`` replays
a whole run. ``make test`` (``MCPREEL_FUZZ_N`` unset) runs each family from a fixed seed: derandomized.

Why not a whole CLI run per input: click's parsing and ``CliRunner``'s isolation are a third of a small
verb's cost, and a temporary folder on the disk another third. So each input is written to one scratch
folder on tmpfs (``/dev/shm`` when there is one; ``MCPREEL_FUZZ_TMP`` names another), its arguments are
parsed once (the paths never change) and the verb's own callback runs: the same code after parsing, the
one exit path (:func:`mcpreel.cli.output.run_command`) included, its output to in-memory streams. Every
:data:`CLI_EVERY`-th input still runs through ``CliRunner`` with the whole command line.

Every input is bounded by :data:`HANG_SECONDS` (``SIGALRM``, raised in the verb as :class:`Hang`).
"""

from __future__ import annotations

import io
import json
import marshal
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

#: inputs a family when the big run sets ``MCPREEL_FUZZ_N`` (else each family's own default)
BIG_N = int(os.environ.get("MCPREEL_FUZZ_N") or 0)
#: one input in this many runs through the whole command line (``CliRunner``); the others call the verb
CLI_EVERY = int(os.environ.get("MCPREEL_FUZZ_CLI_EVERY") or (1000 if BIG_N else 5))
#: an input that runs longer than this is a hang
HANG_SECONDS = 30


def count(default: int) -> int:
    """The inputs a family runs: ``MCPREEL_FUZZ_N`` when set, else the family's ``default``."""
    return BIG_N or default


class Hang(Exception):
    """An input ran longer than its limit (raised by ``SIGALRM`` in the main thread)."""


@contextmanager
def hang_after(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` in this (the main) thread when the block runs longer than ``seconds``."""

    def ring(signum: int, frame: Any) -> None:
        raise Hang(f"no answer in {seconds} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# -- drawing ----------------------------------------------------------------------------------------------

#: characters of the short texts drawn (ASCII, Latin-1, CJK, an emoji, controls, NEL and the line separator)
_ALPHABET = "abcXYZ019 _-./:\"'\\{}[]\té\u00ff\u4e2d\u6587\U0001f600\x00\x1b\x7f\x85\u2028"


class Draw:
    """One input's choices, from its seed (the few kinds of draw the families make)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def pick(self, seq: Any) -> Any:
        """One element of a sequence."""
        return seq[self.rng.randrange(len(seq))]

    def int(self, lo: int, hi: int) -> int:
        """An integer from ``lo`` to ``hi`` (both included)."""
        return self.rng.randint(lo, hi)

    def bool(self) -> bool:
        return self.rng.random() < 0.5

    def text(self, max_size: int) -> str:
        """A short text of mixed scripts and control characters."""
        return "".join(self.pick(_ALPHABET) for _ in range(self.rng.randint(0, max_size)))

    def integer(self) -> int:
        """Any integer: mostly small, now and then past 32, 53 and 64 bits."""
        bits = self.pick([4, 8, 16, 31, 32, 53, 63, 64, 65, 128])
        value = self.rng.getrandbits(bits)
        return -value if self.bool() else value

    def sample(self, seq: Any, lo: int, hi: int) -> list[Any]:
        """``lo`` to ``hi`` distinct elements of ``seq``."""
        return self.rng.sample(list(seq), min(len(seq), self.int(lo, hi)))


# -- the fixtures, read once --------------------------------------------------------------------------------


@dataclass
class Seed:
    """A fixture read once: its bytes, and (when it is JSON or JSON Lines) its document, kept marshalled
    (a fresh copy per input costs less than parsing again or ``deepcopy``) with every path in it."""

    path: Path
    data: bytes
    kind: str | None = None
    frozen: bytes = b""
    paths: list[tuple[Any, ...]] = field(default_factory=list)

    def doc(self) -> Any:
        """A fresh copy of the document (to damage)."""
        return marshal.loads(self.frozen)


#: a fixture of JSON Lines longer than this is fuzzed as windows of its lines (its first line, the header,
#: and the lines that follow it up to this size): a damaged input's cost is the verb's, not the fixture's
WINDOW_BYTES = 16 * 1024

_SEEDS: dict[Path, list[Seed]] = {}


def _windows(data: bytes) -> list[bytes]:
    lines = data.splitlines(keepends=True)
    if len(data) <= WINDOW_BYTES or len(lines) < 3:
        return [data]
    head, out, piece, size = lines[0], [], [lines[0]], len(lines[0])
    for line in lines[1:]:
        if size + len(line) > WINDOW_BYTES and len(piece) > 1:
            out.append(b"".join(piece))
            piece, size = [head], len(head)
        piece.append(line)
        size += len(line)
    out.append(b"".join(piece))
    return out


def seeds_of(path: Path, parse: Callable[[bytes], tuple[str, Any] | None],
             nodes: Callable[[Any], list[tuple[Any, ...]]]) -> list[Seed]:
    """The :class:`Seed` of a fixture, or of each window of a long JSON Lines fixture (:data:`WINDOW_BYTES`),
    read, parsed and walked on first use."""
    found = _SEEDS.get(path)
    if found is None:
        data = path.read_bytes()
        found = []
        for piece in _windows(data) if _is_lines(data, parse) else [data]:
            seed = Seed(path, piece)
            parsed = parse(piece)
            if parsed is not None:
                try:
                    seed.frozen = marshal.dumps(parsed[1])
                    seed.kind = parsed[0]
                    seed.paths = nodes(parsed[1])
                except ValueError:  # a value marshal cannot hold: damaged as bytes only
                    seed.kind = None
            found.append(seed)
        _SEEDS[path] = found
    return found


def seed_of(d: Draw, path: Path, parse: Callable[[bytes], tuple[str, Any] | None],
            nodes: Callable[[Any], list[tuple[Any, ...]]]) -> Seed:
    """One :class:`Seed` of ``path`` (a window of it, drawn, when it is long)."""
    return d.pick(seeds_of(path, parse, nodes))


def _is_lines(data: bytes, parse: Callable[[bytes], tuple[str, Any] | None]) -> bool:
    if len(data) <= WINDOW_BYTES:
        return False
    parsed = parse(data)
    return parsed is None or parsed[0] == "jsonl"


def resolve(doc: Any, path: tuple[Any, ...]) -> Any | None:
    """The parent of ``path`` in ``doc`` when ``path`` still names a member or element of it (an earlier
    damage may have deleted or replaced it), else None."""
    node = doc
    for key in path[:-1]:
        if isinstance(node, dict) and isinstance(key, str) and key in node:
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
            node = node[key]
        else:
            return None
    last = path[-1]
    if isinstance(node, dict) and isinstance(last, str) and last in node:
        return node
    if isinstance(node, list) and isinstance(last, int) and 0 <= last < len(node):
        return node
    return None


def random_path(d: Draw, doc: Any, limit: int = 64) -> tuple[Any, ...] | None:
    """A path into ``doc`` by a random descent (for the values a damage made, which no cached list knows)."""
    path: tuple[Any, ...] = ()
    node = doc
    while len(path) < limit:
        keys = list(node) if isinstance(node, dict) else list(range(len(node))) if isinstance(node, list) else []
        if not keys:
            break
        key = d.pick(keys)
        path = (*path, key)
        node = node[key]
        if d.int(0, 2) == 0:
            break
    return path or None


def damage_site(d: Draw, doc: Any, paths: list[tuple[Any, ...]]) -> tuple[Any, Any, int] | None:
    """Where the next damage goes: (parent, key, the path's length), a path of the fixture that is still
    there (uniform over its members and elements, as a full walk per damage drew), or now and then one
    found by descent."""
    for _ in range(6):
        if not paths or d.int(0, 7) == 0:
            path = random_path(d, doc)
            if path is None:
                return None
        else:
            path = d.pick(paths)
        parent = resolve(doc, path)
        if parent is not None:
            return parent, path[-1], len(path)
    return None


# -- the scratch folder and the verbs --------------------------------------------------------------------------


class Scratch:
    """The folder every input of this process is written in (tmpfs when there is one), emptied after each."""

    def __init__(self) -> None:
        base = os.environ.get("MCPREEL_FUZZ_TMP") or ("/dev/shm" if os.access("/dev/shm", os.W_OK) else None)
        self.root = Path(tempfile.mkdtemp(prefix="mcpreel-fuzz-", dir=base))
        self.case = self.root / "case"
        self.case.mkdir()
        self.spool = self.root / "tmp"  # the verbs' own temporary files (inspect's row spool, ...)
        self.spool.mkdir()

    def clear(self) -> None:
        for entry in os.scandir(self.case):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass
class State:
    """The run in progress: its scratch folder and whether this input goes through the whole CLI."""

    scratch: Scratch | None = None
    via_cli: bool = True


STATE = State()


def scratch() -> Scratch:
    """This run's scratch folder (one made for a test that calls a verb outside :func:`fuzz`)."""
    if STATE.scratch is None:
        STATE.scratch = Scratch()
    return STATE.scratch


_PARSED: dict[tuple[str, ...], tuple[click.Command, str, dict[str, Any], click.Context]] = {}


def _parsed(args: tuple[str, ...]) -> tuple[click.Command, str, dict[str, Any], click.Context]:
    """The verb and its parameters for ``args`` (parsed once: the paths in them never change)."""
    found = _PARSED.get(args)
    if found is None:
        from mcpreel.cli import cli

        parent = click.Context(cli, info_name="mcpreel")
        command: click.Command = cli
        rest = list(args)
        name = "mcpreel"
        while isinstance(command, click.Group):
            name = rest.pop(0)
            sub = command.get_command(parent, name)
            assert sub is not None, f"no verb {name}"
            command = sub
            if isinstance(command, click.Group):
                parent = click.Context(command, info_name=name, parent=parent)
        ctx = command.make_context(name, rest, parent=parent)
        found = (command, name, dict(ctx.params), parent)
        _PARSED[args] = found
    return found


@dataclass
class Outcome:
    """What a verb ended with: its exit code and what it said on stderr."""

    code: int
    stderr: str
    exception: BaseException | None = None


def call_verb(args: list[str]) -> Outcome:
    """Run the verb of ``args`` in this process past click's parsing, its output to memory. A traceback
    (any exception but the one exit path's ``SystemExit``) is returned in :attr:`Outcome.exception`."""
    command, name, params, parent = _parsed(tuple(args))
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    stderr = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    sys.stdout, sys.stderr = stdout, stderr
    code, exception = 0, None
    try:
        ctx = click.Context(command, info_name=name, parent=parent)
        ctx.params = dict(params)
        assert command.callback is not None
        ctx.invoke(command.callback, **ctx.params)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except Hang:
        raise
    except Exception as exc:  # a traceback: what the fuzz looks for
        code, exception = 1, exc
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    stderr.flush()
    said = stderr.buffer.getvalue().decode("utf-8", "replace")  # type: ignore[attr-defined]
    return Outcome(code, said, exception)


def invoke(args: list[str]) -> Outcome:
    """Run ``args``: through ``CliRunner`` with the whole command line for one input in :data:`CLI_EVERY`
    (and outside :func:`fuzz`), else by :func:`call_verb`. A hang raises ``AssertionError``."""
    if not STATE.via_cli:
        return call_verb(args)
    from click.testing import CliRunner

    from mcpreel.cli import cli

    with hang_after(HANG_SECONDS):
        result = CliRunner().invoke(cli, args)
    if isinstance(result.exception, Hang):
        raise AssertionError(f"{args[:2]}: hang (no answer in {HANG_SECONDS} s)")
    exception = result.exception if not isinstance(result.exception, SystemExit) else None
    return Outcome(result.exit_code, result.stderr, exception)


def run_cli(args: list[str], tmp: Path, keep: set[str], *, found: bool = False) -> int:
    """Run ``args`` (:func:`invoke`); exit 0 (or 1 when ``found``: the verb found something), or 2 with one
    line and nothing left in ``tmp`` but the files named in ``keep``. A traceback or a hang fails."""
    started = time.monotonic()
    outcome = invoke(args)
    if outcome.exception is not None:
        raise AssertionError(f"{' '.join(args[:2])}: traceback") from outcome.exception
    allowed = (0, 1, 2) if found else (0, 2)
    assert outcome.code in allowed, (args[:2], outcome.code, outcome.stderr[-500:])
    if outcome.code == 2:
        said = outcome.stderr.rstrip("\n").split("\n")
        assert len(said) == 1 and said[0].startswith("error:"), (args[:2], outcome.stderr[-500:])
        left = {p.name for p in tmp.iterdir()} - keep
        assert not left, f"{args[:2]} left {sorted(left)} behind after exit 2"
    assert time.monotonic() - started < HANG_SECONDS, f"{args[:2]}: hang (over {HANG_SECONDS} s)"
    return outcome.code


# -- the loop -----------------------------------------------------------------------------------------------


def _master_seed(family: str) -> int:
    given = os.environ.get("MCPREEL_FUZZ_SEED")
    if given:
        return int(given)
    if not BIG_N:
        return zlib.crc32(family.encode())  # make test: the same inputs every run
    return random.SystemRandom().getrandbits(63)


def _attempt(run: Callable[..., Any], cases: list[dict[str, Any]] | dict[str, Any]) -> tuple[Any, str | None,
                                                                                       BaseException | None]:
    """``run`` on one input (or a batch), within :data:`HANG_SECONDS`: (its verdicts, None, None), or (None,
    what failed, the exception)."""
    try:
        signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
        try:
            return (run(cases) if isinstance(cases, list) else run(**cases)), None, None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except Hang as exc:
        return None, f"hang (over {HANG_SECONDS} s)", exc
    except AssertionError as exc:
        cause = exc.__cause__
        what = (str(exc).splitlines()[0][:100] if str(exc) else "assertion") + (
            f" ({type(cause).__name__}: {str(cause)[:80]})" if cause else "")
        return None, what, exc
    except Exception as exc:  # a traceback outside the verb's own exit path
        return None, f"traceback ({type(exc).__name__}: {str(exc)[:80]})", exc
    finally:
        scratch().clear()


def fuzz(family: str, make: Callable[[Draw], dict[str, Any]], run: Callable[..., Any], n: int, *,
         batch: int = 1) -> None:
    """Run ``run(**make(Draw(seed)))`` on ``n`` inputs, each within :data:`HANG_SECONDS`; report the verdicts.

    A case passes when ``run`` returns (its verdict, counted); an ``AssertionError`` is a failure, a
    :class:`Hang` a hang, any other exception a traceback. With ``batch`` over 1, ``run`` takes a list of
    up to ``batch`` inputs and returns a verdict for each (a verb that reads many files in one pass); a batch
    that fails is run again an input at a time, so that each failure is the input's. With
    ``MCPREEL_FUZZ_KEEP_GOING`` set the run counts each kind of failure (by its first line, with the seed of
    its first input) and goes on; the test still fails at the end. ``MCPREEL_FUZZ_REPORT`` names the file
    that gets one JSON line a family.
    """
    verdicts: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    first_seed: dict[str, int] = {}
    keep_going = bool(os.environ.get("MCPREEL_FUZZ_KEEP_GOING"))
    master = _master_seed(family)
    rng = random.Random(master)
    only = os.environ.get("MCPREEL_FUZZ_CASE")
    seeds = [int(only)] if only else [rng.getrandbits(64) for _ in range(n)]
    started, cpu = time.monotonic(), time.process_time()
    via_cli = 0
    saved_tempdir = tempfile.tempdir
    own = STATE.scratch is None
    box = scratch()
    tempfile.tempdir = str(box.spool)

    def ring(signum: int, frame: Any) -> None:
        raise Hang(f"no answer in {HANG_SECONDS} s")

    def failed(what: str, seed: int, cause: BaseException | None) -> None:
        failures[what] += 1
        first_seed.setdefault(what, seed)
        if not keep_going:
            raise AssertionError(f"{family}: {what} (replay: MCPREEL_FUZZ_CASE={seed})") from cause

    old = signal.signal(signal.SIGALRM, ring)
    try:
        for at in range(0, len(seeds), batch):
            chunk = seeds[at:at + batch]
            STATE.via_cli = any(i % CLI_EVERY == 0 for i in range(at, at + len(chunk)))
            via_cli += STATE.via_cli
            cases: list[dict[str, Any]] = []
            for seed in chunk:
                try:
                    cases.append(make(Draw(seed)))
                except Exception as exc:  # a bug of the generator: said, never hidden
                    raise AssertionError(f"{family}: making input {seed} failed") from exc
            if batch == 1:
                said, what, cause = _attempt(run, cases[0])
                if what is None:
                    verdicts[said] += 1
                else:
                    failed(what, chunk[0], cause)
                continue
            said, what, cause = _attempt(run, cases)
            if what is None:
                assert len(said) == len(chunk), f"{family}: {len(said)} verdicts for {len(chunk)} inputs"
                verdicts.update(said)
                continue
            for seed, case in zip(chunk, cases, strict=True):  # which input (or inputs) it was
                said, what, cause = _attempt(run, [case])
                if what is None:
                    verdicts.update(said)
                else:
                    failed(what, seed, cause)
    finally:
        signal.signal(signal.SIGALRM, old)
        tempfile.tempdir = saved_tempdir
        STATE.via_cli = True
        if own:
            box.remove()
            STATE.scratch = None
    report = os.environ.get("MCPREEL_FUZZ_REPORT")
    if report:
        hangs = sum(k for what, k in failures.items() if what.startswith("hang") or ": hang" in what)
        line = {"family": family, "cases": sum(verdicts.values()) + sum(failures.values()),
                **dict(sorted(verdicts.items())), "tracebacks": sum(failures.values()) - hangs, "hangs": hangs,
                "seconds": round(time.monotonic() - started, 1),
                "cpu_seconds": round(time.process_time() - cpu, 1), "seed": master, "via_cli": via_cli,
                **({"failures": {w: {"count": k, "replay": first_seed[w]} for w, k in failures.items()}}
                   if failures else {})}
        with open(report, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")
    assert not failures, {w: (k, f"MCPREEL_FUZZ_CASE={first_seed[w]}") for w, k in failures.items()}
