"""Issue 40, item 3: ``index`` on a folder a careless or hostile user left: it opens regular files only (a
FIFO swapped in after the listing is stored with its error, never waited on), reads lines in bounded
memory (a line past the limit is refused as soon as that much is read), sweeps the spools of indexers
killed mid-pass, stores every file it could not read with its error (a folder too long to list, a file
it may not open) and indexes names that are not UTF-8 or hold a carriage return."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from mcpreel.corpus import index as index_mod
from mcpreel.corpus.db import connect
from mcpreel.corpus.index import index_paths, sweep_spools, watch
from tests.corpus.test_index import reel

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, modes and byte names are POSIX's")


def _rows(db: Path) -> dict[str, tuple[Any, ...]]:
    con = connect(db, read_only=True)
    try:
        return {r[0]: r[1:] for r in con.execute("SELECT path, status, error, operations FROM files").fetchall()}
    finally:
        con.close()


@pytest.mark.timeout(60)
def test_a_fifo_swapped_in_after_the_listing_is_stored_with_its_error(tmp_path: Path, monkeypatch: Any) -> None:
    corpus = tmp_path / "corpus"
    ok = reel(corpus / "ok.reel")
    fifo = corpus / "swapped.reel"
    os.mkfifo(fifo)  # no writer ever opens it: a plain open() would wait for ever
    listed = [ok, fifo]  # as the listing saw them, both regular files then
    monkeypatch.setattr(index_mod, "find_files", lambda paths, exclude=frozenset(), on_error=None: iter(listed))
    started = time.monotonic()
    stats = index_paths([corpus], tmp_path / "c.duckdb")
    assert time.monotonic() - started < 30
    rows = _rows(tmp_path / "c.duckdb")
    assert rows[str(ok)][0] == "ok" and stats.errors == 1
    status, error, _ = rows[str(fifo)]
    assert status == "error" and "not a regular file (a FIFO)" in error, error


@pytest.mark.timeout(60)
@pytest.mark.parametrize("where", ["middle", "first", "whole"])
def test_a_line_past_the_limit_is_refused_in_bounded_memory(tmp_path: Path, monkeypatch: Any, where: str) -> None:
    monkeypatch.setattr(index_mod, "MAX_LINE_BYTES", 1 << 20)
    corpus = tmp_path / "corpus"
    good = reel(corpus / "good.reel")
    big = '{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"' + "x" * (8 << 20) + '"}}'
    path = corpus / "long.jsonl"
    lines = {"middle": ['{"jsonrpc":"2.0","id":1,"method":"tools/list"}', big, '{"jsonrpc":"2.0","id":1,"result":{}}'],
             "first": [big, '{"jsonrpc":"2.0","id":1,"result":{}}'],
             "whole": ['{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"' + "y" * (8 << 20) + '"}}']}[where]
    path.write_text("\n".join(lines) + ("\n" if where != "whole" else ""))
    tracemalloc.start()
    try:
        index_paths([corpus], tmp_path / "c.duckdb")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 << 20, f"held {peak:,} bytes: the long line was read whole"
    rows = _rows(tmp_path / "c.duckdb")
    assert rows[str(good)][0] == "ok"
    status, error, _ = rows[str(path)]
    assert status == "error" and "longer than 1,048,576 bytes" in error, error


def test_spools_of_killed_indexers_are_swept(tmp_path: Path, monkeypatch: Any) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp / f"mcpreel-index-{dead.pid}-abc"
    (stale / "batch-0").mkdir(parents=True)
    (stale / "batch-0" / "operations.csv").write_text("1,2,3\r\n")
    live = tmp / f"mcpreel-index-{os.getppid()}-def"  # a running indexer's (the parent process lives)
    live.mkdir()
    old = tmp / "mcpreel-index-k2j3h4"  # an older mcpreel's, a week old
    old.mkdir()
    os.utime(old, (time.time() - 7 * 86400,) * 2)
    young = tmp / "mcpreel-index-zz9"
    young.mkdir()
    other = tmp / "unrelated"
    other.mkdir()
    index_paths([reel(tmp_path / "corpus" / "a.reel")], tmp_path / "c.duckdb")
    assert not stale.exists() and not old.exists()
    assert live.exists() and young.exists() and other.exists()
    assert [p.name for p in tmp.iterdir() if p.name.startswith("mcpreel-index-")].__len__() == 2  # its own is gone
    assert sweep_spools(str(tmp)) == []


@pytest.mark.timeout(120)
def test_names_not_utf8_or_with_a_carriage_return_are_indexed_and_watch_goes_on(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    ok = reel(corpus / "ok.reel")
    raw = reel(corpus / "raw.reel")
    odd = corpus / os.fsdecode(b"caf\xe9-latin1.reel")
    raw.rename(odd)
    cr = reel(corpus / "line\rbreak.reel")
    db = tmp_path / "c.duckdb"
    passes: list[Any] = []
    stop = threading.Event()
    thread = threading.Thread(target=watch, args=([corpus], db), kwargs={
        "interval": 0.2, "on_pass": passes.append, "stop": lambda: len(passes) >= 2 or stop.is_set()})
    thread.start()
    thread.join(90)
    stop.set()
    assert not thread.is_alive() and len(passes) == 2
    assert passes[0].read == 3 and passes[0].errors == 0 and passes[1].skipped == 3
    rows = _rows(db)
    assert rows[str(ok)][0] == "ok" and rows[str(cr)][0] == "ok"
    assert rows[str(corpus / "caf\\udce9-latin1.reel")][0] == "ok"  # its bytes written \udcXX: DuckDB holds UTF-8


@pytest.mark.timeout(60)
def test_a_folder_too_long_to_list_is_stored_with_its_error(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    reel(corpus / "ok.reel")
    # folders nested past PATH_MAX (4096 on Linux), made one at a time from a descriptor of the last
    fd = os.open(corpus, os.O_RDONLY)
    try:
        for _ in range(20):
            os.mkdir("d" * 250, dir_fd=fd)
            new = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = new
        with open(os.open("deep.reel", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd), "w") as fh:
            fh.write("{}\n")
    finally:
        os.close(fd)
    stats = index_paths([corpus], tmp_path / "c.duckdb")
    errors = {p: e for p, (s, e, _) in _rows(tmp_path / "c.duckdb").items() if s == "error"}
    assert len(errors) == 1 and stats.errors == 1, errors
    ((path, error),) = errors.items()
    assert len(path) > 4096 and "File name too long" in error, (len(path), error)
    assert any(p == path for p, _ in stats.failed_files)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads every file")
def test_a_file_it_may_not_open_is_stored_with_its_error(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    reel(corpus / "ok.reel")
    locked = reel(corpus / "locked.reel")
    locked.chmod(0)
    try:
        stats = index_paths([corpus], tmp_path / "c.duckdb")
    finally:
        locked.chmod(0o600)
    status, error, _ = _rows(tmp_path / "c.duckdb")[str(locked)]
    assert status == "error" and "Permission denied" in error and stats.errors == 1


def test_the_error_rows_of_a_pass_are_not_read_again_unchanged(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(index_mod, "MAX_LINE_BYTES", 1 << 16)
    corpus = tmp_path / "corpus"
    (corpus).mkdir()
    (corpus / "long.jsonl").write_text(json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"a": "b" * 70000}}))
    first = index_paths([corpus], tmp_path / "c.duckdb")
    second = index_paths([corpus], tmp_path / "c.duckdb")
    assert (first.errors, second.errors, second.skipped) == (1, 0, 1)
