"""Every count the corpus index gives equals what ``inspect --json`` gives, file by file.

The corpus is the shared fixtures (every format mcpreel reads) plus the sessions of every shape written as
reels (:mod:`tests.operations.synthetic`: both eras, a task, a listen stream, a multi-round-trip request,
several client sessions in one file, a reused pending id, dropped calls, merged files) and one merged file of
those (many client sessions in one file). No peer is recorded: the real recordings' counts are checked once,
end to end, in ``tests/test_one_truth.py``.
"""

from __future__ import annotations

import json
import math
import shutil
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.corpus.db import connect
from mcpreel.corpus.index import index_paths
from tests.operations.synthetic import MERGED, write_reels


def _inspect(path: str) -> dict[str, Any] | None:
    result = CliRunner().invoke(cli, ["inspect", "--json", "--summary", path])
    if result.exit_code != 0:
        return None
    return json.loads(result.stdout)


def _nearest_rank(values: list[int], p: float) -> int:
    values = sorted(values)
    return values[max(0, math.ceil(p / 100 * len(values)) - 1)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, fixtures_dir) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("corpus")
    shutil.copytree(fixtures_dir, root / "fixtures")
    synthetic = write_reels(root / "synthetic")
    reels = [str(path) for name, path in synthetic.items() if name not in MERGED and name != "merged"]
    merged = root / "merged" / "all.jsonl"
    merged.parent.mkdir()
    result = CliRunner().invoke(cli, ["merge", *reels, "-o", str(merged)])
    assert result.exit_code == 0, result.output
    db = root / "index" / "corpus.duckdb"
    stats = index_paths([root / "fixtures", root / "synthetic", merged.parent], db)
    assert stats.read == stats.found > 60
    return root, db


def test_every_count_equals_inspect(corpus) -> None:
    root, db = corpus
    con = connect(db, read_only=True)
    files = con.execute("SELECT path, status, error, sessions, records, messages, operations FROM files "
                        "ORDER BY path").fetchall()
    checked = 0
    many = 0
    eras: Counter[str] = Counter()
    for path, status, error, n_sessions, records, messages, n_ops in files:
        doc = _inspect(path)
        if doc is None:
            assert status == "error" and error, path  # what inspect cannot read the index keeps with its error
            continue
        assert status in ("ok", "in-progress"), (path, error)
        s = doc["summary"]
        where = f"{path}: "
        assert records == s["records"], where + "records"
        assert messages == s["messages"], where + "messages"
        assert n_ops == s["operations"], where + "operations"
        sessions = con.execute("SELECT session, era, protocol, requests, notifications, responses, orphans, "
                               "operations, tasks, messages, records FROM sessions WHERE file = ? ORDER BY session",
                               [path]).fetchall()
        assert n_sessions == len(sessions) == len(doc["session"]["sessions"]), where + "sessions"
        many += len(sessions) > 1
        for row, theirs in zip(sessions, doc["session"]["sessions"], strict=True):
            assert (row[0], row[1], row[2]) == (theirs["index"], theirs["era"], theirs["protocol"]), where + "session"
            eras[row[1]] += 1
        sums = [sum(r[i] for r in sessions) for i in range(3, 11)]
        assert sums[:5] == [s["requests"], s["notifications"], s["responses"], len(s["orphans"]), s["operations"]], \
            where + "requests, notifications, responses, orphans, operations"
        assert sums[5] == s["tasks"], where + "tasks"
        assert sums[6] == s["messages"] and sums[7] == s["records"], where + "messages and records per session"
        ops = con.execute("SELECT method, tool, status, dropped, latency_ms, polls, kind, failed FROM operations "
                          "WHERE file = ?", [path]).fetchall()
        assert len(ops) == s["operations"]
        assert dict(Counter(o[0] for o in ops)) == s["methods"], where + "operations per method"
        assert sum(o[5] for o in ops) == s["polls"], where + "polls"
        assert sum(1 for o in ops if o[6] == "task") == s["tasks"], where + "tasks"
        tools: dict[str, Counter[str]] = defaultdict(Counter)
        for _method, tool, status, dropped, *_ in ops:
            if tool is None:
                continue
            c = tools[tool]
            c["calls"] += 1
            c["errors"] += status == "error"
            c["is_errors"] += status == "isError"
            c["unanswered"] += status in ("unanswered", "cancelled", "dropped") and not dropped
            c["dropped"] += bool(dropped)
        assert set(tools) == set(s["tools"]), where + "tools"
        for name, theirs in s["tools"].items():
            mine = tools[name]
            for key in ("calls", "errors", "is_errors", "unanswered", "dropped"):
                assert mine[key] == theirs[key], f"{where}tool {name}: {key}"
        failed = [e for e in s["errors"] if e["method"] is not None]  # an orphan's error is no operation's
        assert sum(1 for o in ops if o[7]) == len(failed), where + "failed operations"
        latencies: dict[str, list[int]] = defaultdict(list)
        for o in ops:
            if o[4] is not None:
                latencies[o[0]].append(o[4])
        assert set(latencies) == set(s["latency"]), where + "latency methods"
        for method, theirs in s["latency"].items():
            values = latencies[method]
            assert len(values) == theirs["count"], f"{where}{method}: latency count"
            assert max(values) == theirs["max_ms"], f"{where}{method}: max"
            if "latency_error" not in s:
                assert _nearest_rank(values, 50) == theirs["p50_ms"], f"{where}{method}: p50"
                assert _nearest_rank(values, 95) == theirs["p95_ms"], f"{where}{method}: p95"
        checked += 1
    con.close()
    assert checked >= 55
    assert many >= 2  # two HTTP sessions, a second initialize, the merged files
    assert eras["modern"] and eras["legacy"]


def test_tasks_and_both_eras_are_in_the_index(corpus) -> None:
    _, db = corpus
    con = connect(db, read_only=True)
    (tasks,) = con.execute("SELECT count(*) FROM operations WHERE kind = 'task' AND task_id IS NOT NULL").fetchone()
    assert tasks >= 3  # the task, and the same in both merged files
    (merged_sessions,) = con.execute("SELECT count(*) FROM sessions WHERE file LIKE '%/merged/all.jsonl'").fetchone()
    (own_sessions,) = con.execute("SELECT count(*) FROM sessions WHERE file LIKE '%/synthetic/%' AND file NOT LIKE "
                                  "'%/synthetic/merged%'").fetchone()
    assert merged_sessions == own_sessions >= 8
    servers = {r[0] for r in con.execute("SELECT DISTINCT server_name FROM sessions WHERE file LIKE '%/synthetic/%'")
               .fetchall()}
    assert len(servers - {None}) >= 2
    con.close()


def test_show_reads_a_task_back_from_its_file(corpus) -> None:
    from mcpreel.corpus.show import show_operation

    _, db = corpus
    con = connect(db, read_only=True)
    (op_id, polls) = con.execute("SELECT id, polls FROM operations WHERE kind = 'task' AND file LIKE '%/synthetic/task.jsonl'"
                                 ).fetchone()
    con.close()
    doc = show_operation(db, op_id)
    roles = [m["role"] for m in doc["messages"]]
    assert roles[0] == "call" and roles.count("poll") == polls and "result" in roles
    assert all(m["line"] is not None for m in doc["messages"])
    assert doc["operation"]["task_id"] is not None and doc["redacted"] is True


def test_the_fast_lane_writes_what_the_general_path_writes(corpus, tmp_path, monkeypatch) -> None:
    """The common operation's short row (``_plain_ok``, its columns filled in by the load) equals the row the
    general path writes for it, column by column, over the whole corpus."""
    from mcpreel.corpus import index as ix

    root, db = corpus
    general_db = tmp_path / "general.duckdb"
    monkeypatch.setattr(ix._FileReader, "_plain_ok",
                        lambda self, op, opening, response: self._general(op, op.status()))
    index_paths([root / "fixtures", root / "synthetic", root / "merged"], general_db)
    cols = "file, session, n, kind, dir, method, target, tool, status, failed, code, message, dropped, marks, " \
           "latency_ms, rounds, polls, task_id, task_status, children, start_ms, end_ms, request_index, " \
           "request_line, response_index, response_line, request_bytes, response_bytes, day"
    rows = []
    for path in (db, general_db):
        con = connect(path, read_only=True)
        rows.append(con.execute(f"SELECT {cols} FROM operations ORDER BY file, n").fetchall())
        con.close()
    assert len(rows[0]) == len(rows[1]) > 300
    assert rows[0] == rows[1]
