"""The corpus indexer and its commands on small corpora built here: incremental passes, unreadable files,
reels still being written, two indexers on one database, ``--watch``, ``query``, ``sessions``, ``show``, the
corpus report, the Parquet export, the schema's README table; and, on damaged files, that indexing never
raises (a property test)."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel.cli import cli
from mcpreel.corpus import schema
from mcpreel.corpus.db import IndexLock, connect
from mcpreel.corpus.index import index_paths, watch
from mcpreel.corpus.query import parse_since, run_sql, sessions
from mcpreel.errors import InputError, UsageError

ROOT = Path(__file__).resolve().parents[2]
T = "2026-11-25T10:00:00.{:03d}Z"
SECRET = "sk-live-abcdefghijklmnopqrstuvwx1234"


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj) + "\n"


def reel(path: Path, *, calls: int = 3, fail: bool = True, end: bool = True, server: str = "demo",
         description: str = "Echo the text back") -> Path:
    """A small reel: a handshake, tools/list, ``calls`` echo calls (the last one an isError carrying a
    secret when ``fail``), and an end line when ``end``."""
    lines = [_line({"v": 1, "type": "meta", "startedAt": T.format(0), "label": "t", "command": ["srv"],
                    "transport": "stdio"})]
    ms = 1

    def msg(d: str, raw: dict[str, Any]) -> None:
        nonlocal ms
        lines.append(_line({"t": T.format(ms), "dir": d, "raw": raw}))
        ms += 2

    msg("in", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "tester", "version": "1.0"}}})
    msg("out", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {},
                                                       "serverInfo": {"name": server, "version": "2.0"}}})
    msg("in", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    msg("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    msg("out", {"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": "echo", "description": description, "inputSchema": {"type": "object"}}]}})
    for i in range(calls):
        rid = 10 + i
        msg("in", {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"text": f"hi {i}", "api_key": SECRET}}})
        if fail and i == calls - 1:
            msg("out", {"jsonrpc": "2.0", "id": rid, "result": {
                "isError": True, "content": [{"type": "text", "text": f"bad key {SECRET}"}]}})
        else:
            msg("out", {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": f"hi {i}"}]}})
    if end:
        lines.append(_line({"t": T.format(ms), "type": "end", "exitCode": 0, "durationMs": ms}))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _files(db: Path) -> dict[str, tuple[Any, ...]]:
    con = connect(db, read_only=True)
    try:
        return {Path(r[0]).name: r[1:] for r in con.execute(
            "SELECT path, status, error, sessions, operations FROM files").fetchall()}
    finally:
        con.close()


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


# -- incremental passes ----------------------------------------------------------------------------


def test_unchanged_skipped_changed_read_again_removed_dropped(tmp_path: Path) -> None:
    corpus = tmp_path / "sessions"
    a = reel(corpus / "a.jsonl")
    b = reel(corpus / "sub" / "b.jsonl", calls=1, fail=False)
    (corpus / ".hidden.jsonl").write_text("not even json")
    (corpus / "another.duckdb").write_bytes(b"an index is never a session")
    (corpus / "another.duckdb.lock").write_bytes(b"")
    db = tmp_path / "corpus.duckdb"
    first = index_paths([corpus], db)
    assert (first.found, first.read, first.skipped, first.errors) == (2, 2, 0, 0)
    assert first.operations == 2 + 3 + 2 + 1  # initialize and tools/list, then the calls
    again = index_paths([corpus], db)
    assert (again.read, again.skipped, again.removed) == (0, 2, 0)

    reel(a, calls=5)  # a changed file: read again, its rows replaced
    os.utime(a, ns=(time.time_ns(), time.time_ns() + 10**9))
    b.unlink()
    third = index_paths([corpus], db)
    assert (third.read, third.skipped, third.removed) == (1, 0, 1)
    files = _files(db)
    assert set(files) == {"a.jsonl"}
    assert files["a.jsonl"][:1] == ("ok",) and files["a.jsonl"][3] == 7
    rows = run_sql(db, "SELECT count(*), count(DISTINCT id) FROM operations").rows[0]
    assert rows == (7, 7)  # the old rows of a.jsonl are gone, b's too


def _table(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = connect(db, read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_batches_written_beside_the_reading_equal_one_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of two files each, every one written by the writer's thread while the next is read, give
    the index one batch gives: the same rows, the same operation ids, in one consistent database."""
    from mcpreel.corpus import index as ix

    for i in range(7):
        reel(tmp_path / "s" / f"r{i}.jsonl", calls=2 + i, server=f"srv{i % 3}")
    whole = tmp_path / "whole.duckdb"
    index_paths([tmp_path / "s"], whole)
    monkeypatch.setattr(ix, "BATCH_FILES", 2)
    written: list[str] = []
    real_write = ix._Batch.write

    def write(self: Any, con: Any, next_id: int) -> None:
        written.append(threading.current_thread().name)
        real_write(self, con, next_id)

    monkeypatch.setattr(ix._Batch, "write", write)
    spools = tmp_path / "tmp"
    spools.mkdir()
    monkeypatch.setattr(ix.tempfile, "tempdir", str(spools))
    batched = tmp_path / "batched.duckdb"
    stats = index_paths([tmp_path / "s"], batched)
    assert stats.read == 7 and stats.errors == 0
    assert len(written) == 4 and all(name.startswith("mcpreel-index-writer") for name in written)
    ops = ("SELECT id, regexp_extract(file, '[^/]+$'), session, n, method, tool, status, latency_ms, request_line "
           "FROM operations ORDER BY id")
    assert _table(batched, ops) == _table(whole, ops) and len(_table(whole, ops)) == 7 * 4 + 21
    counts = "SELECT regexp_extract(path, '[^/]+$'), status, sessions, operations, messages FROM files ORDER BY 1"
    assert _table(batched, counts) == _table(whole, counts)
    assert _table(batched, "SELECT value FROM meta WHERE key = 'next_operation_id'") == \
        _table(whole, "SELECT value FROM meta WHERE key = 'next_operation_id'")
    assert not list(spools.iterdir())  # no spool left behind


def test_a_batch_that_cannot_be_written_fails_the_pass_and_is_read_again(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer's error reaches the pass (raised at its next flush or at its end), the batch's
    transaction is rolled back, and the next pass reads those files again: nothing half-written."""
    from mcpreel.corpus import index as ix

    for i in range(4):
        reel(tmp_path / "s" / f"r{i}.jsonl")
    monkeypatch.setattr(ix, "BATCH_FILES", 2)
    real_load = ix._Spool.load
    calls = {"n": 0}

    def load(self: Any, con: Any) -> None:
        calls["n"] += 1
        if self.table.name == "sessions" and calls["n"] > 4:  # the second batch: files loaded, then this
            raise OSError(28, "No space left on device")
        real_load(self, con)

    monkeypatch.setattr(ix._Spool, "load", load)
    db = tmp_path / "c.duckdb"
    with pytest.raises(OSError, match="No space left"):
        index_paths([tmp_path / "s"], db)
    first = _files(db)
    assert len(first) == 2 and all(v[0] == "ok" for v in first.values())  # the first batch, whole
    assert _table(db, "SELECT count(DISTINCT file) FROM operations") == [(2,)]
    monkeypatch.setattr(ix._Spool, "load", real_load)
    stats = index_paths([tmp_path / "s"], db)
    assert (stats.read, stats.skipped) == (2, 2)
    assert len(_files(db)) == 4 and _table(db, "SELECT count(DISTINCT file) FROM operations") == [(4,)]


def test_an_interrupted_pass_keeps_what_it_committed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C half-way: the batch being written is finished (the pass waits for its writer), the open one is
    dropped, the index stays consistent and the next pass reads only what is missing."""
    from mcpreel.corpus import index as ix

    for i in range(6):
        reel(tmp_path / "s" / f"r{i}.jsonl")
    monkeypatch.setattr(ix, "BATCH_FILES", 2)
    (size,) = {p.stat().st_size for p in (tmp_path / "s").iterdir()}  # six reels alike

    def progress(n: int) -> None:
        if n >= 5 * size:  # the fifth file read: two batches handed to the writer, the third open
            raise KeyboardInterrupt

    db = tmp_path / "c.duckdb"
    with pytest.raises(KeyboardInterrupt):
        index_paths([tmp_path / "s"], db, on_progress=progress)
    kept = _files(db)
    assert len(kept) == 4 and all(v[0] == "ok" for v in kept.values())
    assert _table(db, "SELECT count(DISTINCT file) FROM operations") == [(4,)]
    stats = index_paths([tmp_path / "s"], db)
    assert (stats.read, stats.skipped) == (2, 4) and len(_files(db)) == 6


def test_same_size_and_time_but_another_head_is_read_again(tmp_path: Path) -> None:
    a = reel(tmp_path / "s" / "a.jsonl", description="Echo the text back")
    db = tmp_path / "c.duckdb"
    index_paths([tmp_path / "s"], db)
    st = a.stat()
    reel(a, description="Echo the text BACK")  # the same length, another definition
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert a.stat().st_size == st.st_size
    stats = index_paths([tmp_path / "s"], db)
    assert stats.read == 1
    (hashes,) = run_sql(db, "SELECT count(DISTINCT hash) FROM tools").rows[0]
    assert hashes == 1  # the old definition's row went with the old reading


def test_a_file_that_cannot_be_read_is_kept_with_its_one_line_error(tmp_path: Path) -> None:
    corpus = tmp_path / "s"
    reel(corpus / "good.jsonl")
    (corpus / "notes.md").write_text("# not a session\n")
    (corpus / "broken.jsonl").write_text(_line({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + "{oops\n" +
                                         _line({"jsonrpc": "2.0", "id": 1, "result": {}}))
    db = tmp_path / "c.duckdb"
    stats = index_paths([corpus], db)
    assert stats.read == 3 and stats.errors == 2
    files = _files(db)
    assert files["good.jsonl"][0] == "ok"
    for name in ("notes.md", "broken.jsonl"):
        status, error, n_sessions, n_ops = files[name]
        assert status == "error" and n_sessions == 0 and n_ops == 0
        assert error and "\n" not in error and str(corpus) not in error
    assert "line 2" in files["broken.jsonl"][1]
    (orphans,) = run_sql(db, "SELECT count(*) FROM operations WHERE file LIKE '%broken.jsonl'").rows[0]
    assert orphans == 0  # what it had read before the bad line is not in the index


def test_a_reel_being_written_is_in_progress_then_complete(tmp_path: Path) -> None:
    corpus = tmp_path / "s"
    live = reel(corpus / "live.jsonl", calls=2, fail=False, end=False)
    with open(live, "a", encoding="utf-8") as fh:
        fh.write('{"t": "2026-11-25T10:00:01.000Z", "dir": "in", "raw": {"jsonrpc": "2.0", "id"')  # torn: mid-write
    db = tmp_path / "c.duckdb"
    index_paths([corpus], db)
    assert _files(db)["live.jsonl"][0] == "in-progress"
    assert run_sql(db, "SELECT in_progress FROM sessions").rows == [(True,)]
    reel(live, calls=3, fail=False, end=True)  # the recorder finished
    stats = index_paths([corpus], db)
    assert stats.read == 1 and stats.in_progress == 0
    assert _files(db)["live.jsonl"][0] == "ok"
    assert run_sql(db, "SELECT in_progress, tool_calls FROM sessions").rows == [(False, 3)]


# -- two writers -----------------------------------------------------------------------------------


def _hold_lock(db: str, ready: Any, release: Any) -> None:
    lock = IndexLock(Path(db))
    lock.acquire(wait=False)
    ready.set()
    release.wait(30)
    lock.release()


def test_a_second_indexer_waits_or_says_why(tmp_path: Path) -> None:
    corpus = tmp_path / "s"
    reel(corpus / "a.jsonl")
    db = tmp_path / "c.duckdb"
    ctx = multiprocessing.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(str(db), ready, release))
    holder.start()
    try:
        assert ready.wait(60)
        with pytest.raises(UsageError, match=rf"being written by indexer pid {holder.pid} since"):
            index_paths([corpus], db, wait=False)
        result = _invoke("index", str(corpus), "--db", str(db), "--no-wait")
        assert result.exit_code == 2 and f"pid {holder.pid}" in result.output
        told: list[str] = []
        threading.Timer(1.0, release.set).start()
        stats = index_paths([corpus], db, wait=True, on_wait=told.append)
        assert stats.read == 1
        assert len(told) == 1 and f"pid {holder.pid}" in told[0]
    finally:
        release.set()
        holder.join(30)


def test_concurrent_indexers_leave_one_consistent_index(tmp_path: Path) -> None:
    corpus = tmp_path / "s"
    for i in range(6):
        reel(corpus / f"r{i}.jsonl", calls=20 + i)
    db = tmp_path / "c.duckdb"
    results: list[Any] = []
    threads = [threading.Thread(target=lambda: results.append(index_paths([corpus], db))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sum(r.read for r in results) == 6 and sum(r.skipped for r in results) == 12
    rows = run_sql(db, "SELECT count(*), count(DISTINCT id), count(DISTINCT file) FROM operations").rows[0]
    assert rows == (sum(2 + 20 + i for i in range(6)), sum(2 + 20 + i for i in range(6)), 6)


def test_watch_follows_a_recorder(tmp_path: Path) -> None:
    corpus = tmp_path / "s"
    live = reel(corpus / "live.jsonl", calls=1, fail=False, end=False)
    db = tmp_path / "c.duckdb"
    passes: list[Any] = []

    def on_pass(stats: Any) -> None:
        passes.append(stats)
        if len(passes) == 1:
            reel(live, calls=4, fail=False, end=True)

    done = threading.Event()
    thread = threading.Thread(target=lambda: (watch([corpus], db, interval=0.3, on_pass=on_pass,
                                                    stop=lambda: len(passes) >= 3), done.set()))
    thread.start()
    assert done.wait(120)
    assert passes[0].in_progress == 1 and passes[1].read == 1 and passes[2].read == 0
    assert run_sql(db, "SELECT in_progress, tool_calls FROM sessions").rows == [(False, 4)]


# -- asking it -------------------------------------------------------------------------------------


@pytest.fixture
def small(tmp_path: Path) -> Path:
    reel(tmp_path / "s" / "one.jsonl", server="alpha")
    reel(tmp_path / "s" / "two.jsonl", server="beta", fail=False)
    reel(tmp_path / "s" / "three.jsonl", server="alpha", fail=False, description="Echo, changed")
    db = tmp_path / "c.duckdb"
    index_paths([tmp_path / "s"], db)
    return db


def test_query_in_three_formats_read_only(small: Path) -> None:
    sql = "SELECT server_name, tool_calls, failed FROM sessions WHERE file NOT LIKE '%three.jsonl' ORDER BY server_name"
    as_json = _invoke("query", sql, "--db", str(small), "--format", "json")
    assert as_json.exit_code == 0
    assert json.loads(as_json.stdout) == [{"server_name": "alpha", "tool_calls": 3, "failed": 1},
                                          {"server_name": "beta", "tool_calls": 3, "failed": 0}]
    as_csv = _invoke("query", sql, "--db", str(small), "--format", "csv")
    assert as_csv.stdout.splitlines() == ["server_name,tool_calls,failed", "alpha,3,1", "beta,3,0"]
    table = _invoke("query", sql, "--db", str(small)).stdout.splitlines()
    assert table[0].split() == ["server_name", "tool_calls", "failed"] and table[-1] == "(2 rows)"
    refused = _invoke("query", "DELETE FROM operations", "--db", str(small))
    assert refused.exit_code == 2 and "read-only" in refused.output.lower()
    bad = _invoke("query", "SELECT nope FROM operations", "--db", str(small))
    assert bad.exit_code == 2 and "the query failed" in bad.output and "Traceback" not in bad.output
    missing = _invoke("query", "SELECT 1", "--db", str(small.parent / "none.duckdb"))
    assert missing.exit_code == 2 and "mcpreel index" in missing.output


def test_sessions_named_questions_name_file_and_line(small: Path) -> None:
    failed = sessions(small, failed=True)
    assert len(failed.rows) == 1
    row = dict(zip(failed.columns, failed.rows[0], strict=True))
    assert Path(row["file"]).name == "one.jsonl" and row["server"] == "alpha" and row["client"] == "tester"
    assert row["line"] == 11  # the failed call's request line (meta 1, handshake 2-4, tools/list 5-6)
    (line,) = run_sql(small, "SELECT request_line FROM operations WHERE id = ?", [row["operation"]]).rows[0]
    assert line == 11
    assert {Path(r[0]).name for r in sessions(small, tool="echo").rows} == {"one.jsonl", "two.jsonl", "three.jsonl"}
    assert sessions(small, tool="nope").rows == []
    assert [Path(r[0]).name for r in sessions(small, server="BE*").rows] == ["two.jsonl"]
    assert len(sessions(small, client="tester", since="2026-11-25").rows) == 3
    assert sessions(small, since="2026-11-26T00:00:00Z").rows == []
    for spelling in ("--server-name", "--server"):  # the issue's --server parses, hidden (vocabulary)
        named = _invoke("sessions", spelling, "alpha", "--db", str(small), "--format", "json")
        assert sorted(Path(r["file"]).name for r in json.loads(named.stdout)) == ["one.jsonl", "three.jsonl"]
    out = _invoke("sessions", "--failed", "--tool", "echo", "--db", str(small), "--format", "json")
    assert out.exit_code == 0 and [Path(r["file"]).name for r in json.loads(out.stdout)] == ["one.jsonl"]


def test_since_takes_durations_and_dates() -> None:
    now = 1_800_000_000_000
    assert parse_since("2d", now) == now - 2 * 86_400_000
    assert parse_since("30m", now) == now - 1_800_000
    assert parse_since("2026-11-25", now) == parse_since("2026-11-25T00:00:00Z", now)
    with pytest.raises(UsageError, match="--since"):
        parse_since("yesterday-ish", now)


def test_show_prints_request_and_answer_redacted_by_default(small: Path) -> None:
    (op_id,) = run_sql(small, "SELECT id FROM operations WHERE failed").rows[0]
    shown = _invoke("show", str(op_id), "--db", str(small), "--json")
    assert shown.exit_code == 0, shown.output
    doc = json.loads(shown.stdout)
    assert doc["operation"]["status"] == "isError" and doc["operation"]["tool"] == "echo"
    assert [(m["role"], m["line"]) for m in doc["messages"]] == [("call", 11), ("answer", 12)]
    assert SECRET not in shown.stdout and "[REDACTED" in shown.stdout
    assert SECRET not in (doc["operation"]["message"] or "")  # the index keeps it redacted too
    plain = _invoke("show", str(op_id), "--db", str(small), "--no-redact")
    assert SECRET in plain.stdout
    assert _invoke("show", "999999", "--db", str(small)).exit_code == 2


def test_show_refuses_a_file_changed_since_indexing(small: Path) -> None:
    (op_id, file) = run_sql(small, "SELECT id, file FROM operations WHERE failed").rows[0]
    with open(file, "a", encoding="utf-8") as fh:
        fh.write("\n")
    result = _invoke("show", str(op_id), "--db", str(small))
    assert result.exit_code == 2 and "changed since it was indexed" in result.output


def test_corpus_report_page(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "fleet.html"
    result = _invoke("report", "--db", str(small), "-o", str(out))
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert csp and "default-src 'none'" in csp.group(1) and "unsafe-inline" not in csp.group(1)
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    from mcpreel.report.page import source_hash

    assert style and source_hash(style.group(1)) in csp.group(1)
    script = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(script) == 1 and f"script-src {source_hash(script[0])};" in csp.group(1)  # its own, by hash
    for section in ("per-day", "sessions", "tools", "slowest", "failed", "peers", "changed", "unreadable"):
        assert f'id="{section}"' in page
    assert "one.jsonl:11" in page  # the failed call, where to find it
    changed = page[page.index('id="changed-table"'):]
    assert "<td>echo</td>" in changed  # two definitions of echo in the corpus
    assert SECRET not in page
    # each session links to its own report, written beside the page; a failed operation to its call there
    pages = sorted((tmp_path / "fleet.sessions").iterdir())
    assert [p.name for p in pages] == ["0001.html", "0002.html", "0003.html"]
    assert all(oct(p.stat().st_mode & 0o777) == "0o600" for p in pages)
    sessions = page[page.index('id="sessions-table"'):].split("</table>")[0]
    assert sessions.count('<tr class="session') == 3 and sessions.count('href="fleet.sessions/') == 3
    assert re.search(r'<td class="time" data-v="\d+">2026-11-25 \d\d:\d\d:\d\d</td>', sessions)
    failed = page[page.index('id="failed-table"'):].split("</table>")[0]
    link = re.search(r'href="(fleet\.sessions/\d{4}\.html)#call-(\d+)"', failed)
    assert link, failed
    target = (tmp_path / link.group(1)).read_text(encoding="utf-8")
    assert "one.jsonl" in target and f'"n":{int(link.group(2)) - 1},' in target.replace(" ", "")
    both = _invoke("report", "x.jsonl", "--db", str(small))
    assert both.exit_code == 2 and "not both" in both.output


def test_export_parquet_partitioned_by_day(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "pq"
    result = _invoke("export", "parquet", "--db", str(small), "--out", str(out))
    assert result.exit_code == 0, result.output
    for table in schema.TABLES:
        parts = sorted(p.name for p in (out / table.name).iterdir())
        assert parts == ["day=2026-11-25"], table.name
    import duckdb

    con = duckdb.connect()
    n = con.execute(f"SELECT count(*) FROM read_parquet('{out}/operations/*/*.parquet', hive_partitioning = true) "
                    "WHERE day = DATE '2026-11-25'").fetchone()[0]
    assert n == run_sql(small, "SELECT count(*) FROM operations").rows[0][0]
    again = _invoke("export", "parquet", "--db", str(small), "-o", str(out))  # replaces, leaves no staging
    assert again.exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == sorted([".mcpreel-parquet", *(t.name for t in schema.TABLES)])


def test_index_command_and_its_line(tmp_path: Path) -> None:
    reel(tmp_path / "s" / "a.jsonl")
    (tmp_path / "s" / "bad.json").write_text("{}")
    db = tmp_path / "c.duckdb"
    result = _invoke("index", str(tmp_path / "s"), "--db", str(db), "--parquet", str(tmp_path / "pq"))
    assert result.exit_code == 0, result.output
    assert "indexed 2 files (2 read, 0 unchanged, 1 unreadable); read 1 sessions, 5 operations" in result.output
    assert "bad.json" in result.output and (tmp_path / "pq" / "operations").is_dir()
    missing = _invoke("index", str(tmp_path / "nowhere"), "--db", str(db))
    assert missing.exit_code == 2 and "no such file or folder" in missing.output


def test_an_index_of_another_schema_version(tmp_path: Path) -> None:
    reel(tmp_path / "s" / "a.jsonl")
    db = tmp_path / "c.duckdb"
    index_paths([tmp_path / "s"], db)
    import duckdb

    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(InputError, match="newer mcpreel"):
        connect(db, read_only=True)
    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(InputError, match="rebuild"):
        connect(db, read_only=True)
    assert index_paths([tmp_path / "s"], db).read == 1  # rebuilt: every file read again


def test_the_readme_shows_the_schema() -> None:
    from tests.docs.pages import topic

    page = topic("corpus")  # the docs' reference page, and `mcpreel help corpus`
    assert schema.markdown() in page, "the corpus schema page (src/mcpreel/cli/topics/corpus.md) differs from " \
        "mcpreel/corpus/schema.py: paste markdown()"


# -- damaged files ---------------------------------------------------------------------------------

_GOOD = None


def _good_bytes() -> bytes:
    global _GOOD
    if _GOOD is None:
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            _GOOD = reel(Path(d) / "g.jsonl").read_bytes()
    return _GOOD


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_damaged_files_never_raise(tmp_path_factory: Any, data: Any) -> None:
    good = _good_bytes()
    cut = data.draw(st.integers(0, len(good)))
    junk = data.draw(st.binary(max_size=64))
    at = data.draw(st.integers(0, len(good)))
    damaged = good[:at] + junk + good[at:cut] if at < cut else good[:cut] + junk
    folder = tmp_path_factory.mktemp("damaged")
    (folder / "s").mkdir()
    (folder / "s" / "x.jsonl").write_bytes(damaged)
    (folder / "s" / "y.json").write_bytes(data.draw(st.binary(max_size=200)))
    db = folder / "c.duckdb"
    stats = index_paths([folder / "s"], db)
    assert stats.read == 2
    con = connect(db, read_only=True)
    try:
        rows = con.execute("SELECT status, error FROM files").fetchall()
    finally:
        con.close()
    for status, error in rows:
        assert status in ("ok", "in-progress", "error")
        assert (status == "error") == (error is not None)
        if error is not None:
            assert "\n" not in error and "Traceback" not in error


def test_progress_is_told_the_bytes_to_read(tmp_path: Path) -> None:
    a = reel(tmp_path / "s" / "a.jsonl")
    b = reel(tmp_path / "s" / "b.jsonl", calls=9)
    started: list[tuple[int, int]] = []
    done: list[int] = []
    index_paths([tmp_path / "s"], tmp_path / "c.duckdb", on_start=lambda n, size: started.append((n, size)),
                on_progress=done.append)
    total = a.stat().st_size + b.stat().st_size
    assert started == [(2, total)]
    assert done and done[-1] == total and done == sorted(done)


def test_the_default_folder_is_where_wrap_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    nothing = _invoke("index")
    assert nothing.exit_code == 2 and "mcpreel wrap" in nothing.output
    reel(tmp_path / ".mcpreel" / "sessions" / "claude" / "github" / "a.jsonl")
    result = _invoke("index")
    assert result.exit_code == 0, result.output
    assert (tmp_path / ".mcpreel" / "corpus.duckdb").is_file()
    listed = _invoke("sessions", "--format", "json")
    assert [Path(r["file"]).name for r in json.loads(listed.stdout)] == ["a.jsonl"]


def test_odd_text_reaches_the_index_whole(tmp_path: Path) -> None:
    """NULs, quotes, commas, newlines, lone surrogates and long texts in what a session names: every row is
    loaded (the spools are CSV), texts cut to 500 characters, NULs written ``\\0``."""
    odd = 'x\u0000y, "z"\nw\r' + "\ud800" + "n" * 600
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": odd, "task": {}}},
        {"jsonrpc": "2.0", "id": 1, "result": {"task": {"taskId": odd, "status": odd}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": odd}},
        {"jsonrpc": "2.0", "id": 2, "result": {"taskId": odd, "status": odd}},
        {"jsonrpc": "2.0", "id": 3, "method": odd},
        {"jsonrpc": "2.0", "id": 3, "error": {"code": 1 << 70, "message": odd}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 4, "result": {"tools": [{"name": odd, "description": odd}]}},
    ]
    path = tmp_path / "s" / "odd.jsonrpc.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(m) + "\n" for m in lines), encoding="utf-8")
    db = tmp_path / "c.duckdb"
    stats = index_paths([path.parent], db)
    assert (stats.read, stats.errors, stats.operations) == (1, 0, 3), _files(db)
    rows = run_sql(db, "SELECT kind, tool, task_id, task_status, method, code, message FROM operations ORDER BY n").rows
    task, error, listing = rows
    assert task[0] == "task" and task[1].startswith("x\\0y") and task[1].endswith("…") and task[2] == task[1]
    assert error[4].startswith("x\\0y") and error[5] is None and error[6] and error[6].startswith("x\\0y")
    (name, description) = run_sql(db, "SELECT name, description FROM tools").rows[0]
    assert name == task[1] and description.startswith("x\\0y")


# -- the pool: files read by worker processes, one writer ------------------------------------------

_EVERY_TABLE = (
    "SELECT * EXCLUDE (indexed_ms) FROM files ORDER BY path",
    "SELECT * FROM sessions ORDER BY file, session",
    "SELECT * FROM operations ORDER BY id",
    "SELECT * FROM tools ORDER BY file, session, name, hash",
    "SELECT value FROM meta WHERE key = 'next_operation_id'",
)


def _corpus_for_the_pool(folder: Path) -> None:
    for i in range(9):
        reel(folder / f"srv{i % 3}" / f"r{i}.jsonl", calls=1 + 3 * i, fail=i % 2 == 0, server=f"srv{i % 3}")
    reel(folder / "live.jsonl", end=False)  # still being written
    (folder / "broken.json").write_text('{"not": "a session"')  # cannot be read
    shutil.copy(ROOT / "tests" / "corpus" / "__init__.py", folder / "empty.jsonl")


def test_the_pool_gives_the_index_one_process_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read by two worker processes, a chunk of files each at a time, written by this one: the same rows in
    every table, the same operation ids (the chunks are written in the files' order), the same counts; and
    so on the next, incremental pass (a file changed, one removed, one added)."""
    from mcpreel.corpus import index as ix

    corpus = tmp_path / "s"
    _corpus_for_the_pool(corpus)
    monkeypatch.setattr(ix, "CHUNK_BYTES_MIN", 1)  # a chunk per file: every file a task of the pool
    monkeypatch.setattr(ix, "CHUNK_BYTES_MAX", 1)
    spools = tmp_path / "tmp"
    spools.mkdir()
    monkeypatch.setattr(ix.tempfile, "tempdir", str(spools))
    one, two = tmp_path / "one.duckdb", tmp_path / "two.duckdb"
    for step in range(2):
        if step == 1:
            reel(corpus / "srv1" / "r4.jsonl", calls=30)
            os.utime(corpus / "srv1" / "r4.jsonl", ns=(time.time_ns(), time.time_ns() + 10**9))
            (corpus / "srv0" / "r3.jsonl").unlink()
            reel(corpus / "srv2" / "new.jsonl", calls=4, server="srv2")
        alone = index_paths([corpus], one, jobs=1)
        pooled = index_paths([corpus], two, jobs=2)
        assert alone.jobs == 1 and pooled.jobs == 2
        for field in ("found", "read", "skipped", "removed", "errors", "in_progress", "sessions", "operations",
                      "messages", "records", "bytes"):
            assert getattr(pooled, field) == getattr(alone, field), field
        assert pooled.failed_files == alone.failed_files and len(alone.failed_files) == 2 - step * 2
        for sql in _EVERY_TABLE:
            rows = _table(two, sql)
            assert rows == _table(one, sql), sql
            assert rows
        assert not list(spools.iterdir())  # no spool left behind
    assert (alone.read, alone.removed) == (2, 1)


def test_the_cli_takes_jobs(tmp_path: Path) -> None:
    corpus = tmp_path / "s"
    _corpus_for_the_pool(corpus)
    db = tmp_path / "c.duckdb"
    result = _invoke("index", str(corpus), "--db", str(db), "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert "12 files (12 read" in result.output and "2 unreadable" in result.output
    assert _invoke("index", str(corpus), "--db", str(db), "-j", "0").exit_code == 2
    (ops,) = run_sql(db, "SELECT count(*) FROM operations").rows[0]
    assert ops == sum(2 + 1 + 3 * i for i in range(9)) + 2 + 3


def test_ctrl_c_during_a_pooled_pass_keeps_what_it_committed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the workers read: the batch being written is finished, the workers stop at once, no
    spool is left, and the next pass reads only what is missing."""
    from mcpreel.corpus import index as ix

    for i in range(8):
        reel(tmp_path / "s" / f"r{i}.jsonl")
    monkeypatch.setattr(ix, "CHUNK_BYTES_MIN", 1)
    monkeypatch.setattr(ix, "CHUNK_BYTES_MAX", 1)
    spools = tmp_path / "tmp"
    spools.mkdir()
    monkeypatch.setattr(ix.tempfile, "tempdir", str(spools))
    size = (tmp_path / "s" / "r0.jsonl").stat().st_size

    def progress(n: int) -> None:  # told after each chunk (a file) the pool gave back
        if n >= 3 * size:
            raise KeyboardInterrupt

    db = tmp_path / "c.duckdb"
    with pytest.raises(KeyboardInterrupt):
        index_paths([tmp_path / "s"], db, on_progress=progress, jobs=2)
    kept = _files(db)
    assert len(kept) == 3 and all(v[0] == "ok" for v in kept.values())
    assert not list(spools.iterdir())
    stats = index_paths([tmp_path / "s"], db, jobs=2)
    assert (stats.read, stats.skipped) == (5, 3) and len(_files(db)) == 8
    assert _table(db, "SELECT count(*), count(DISTINCT id), min(id), max(id) FROM operations") == [(40, 40, 1, 40)]
