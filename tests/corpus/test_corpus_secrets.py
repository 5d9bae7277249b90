"""Secrets stay out of the corpus (issue 40): a resource URI's ``?api_key=`` and ``user:pass@`` pass the
redactor before ``operations.target`` stores them (so ``show``'s row and the Parquet export hold none), and
``files.error`` quotes no file content raw."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.corpus.index import index_paths
from mcpreel.corpus.parquet import export_parquet
from mcpreel.corpus.query import run_sql
from mcpreel.corpus.scrub import ERROR_MAX, stored_error, stored_target

KEY = "k3y-0f-the-user-9f8e7d6c5b4a"
PASSWORD = "hunter2-pa55word"
URIS = [f"https://api.example.com/doc?api_key={KEY}&page=2", f"postgres://bob:{PASSWORD}@db.example.com/main",
        f"file:///data/report.csv?token={KEY}"]


def _session(path: Path) -> Path:
    msgs: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}},
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {},
                                               "serverInfo": {"name": "s", "version": "1"}}},
    ]
    for i, uri in enumerate(URIS, start=1):
        msgs.append({"jsonrpc": "2.0", "id": i, "method": "resources/read", "params": {"uri": uri}})
        msgs.append({"jsonrpc": "2.0", "id": i, "result": {"contents": [{"uri": "x", "text": "ok"}]}})
    msgs.append({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "get_weather"}})
    msgs.append({"jsonrpc": "2.0", "id": 9, "result": {"content": []}})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(m) + "\n" for m in msgs), encoding="utf-8")
    return path


def test_resource_uris_are_stored_redacted(tmp_path: Path) -> None:
    _session(tmp_path / "s" / "a.jsonrpc.jsonl")
    db = tmp_path / "c.duckdb"
    index_paths([tmp_path / "s"], db)
    targets = [r[0] for r in run_sql(db, "SELECT target FROM operations ORDER BY id").rows]
    assert "https://api.example.com/doc?api_key=[REDACTED]&page=2" in targets
    assert "postgres://bob:[REDACTED]@db.example.com/main" in targets
    assert "file:///data/report.csv?token=[REDACTED]" in targets
    assert "get_weather" in targets  # a tool's name as it came
    raw = db.read_bytes()
    assert KEY.encode() not in raw and PASSWORD.encode() not in raw
    for op_id in run_sql(db, "SELECT id FROM operations WHERE method = 'resources/read'").rows:
        shown = CliRunner().invoke(cli, ["show", str(op_id[0]), "--db", str(db)])
        assert shown.exit_code == 0, shown.output
        assert KEY not in shown.stdout and PASSWORD not in shown.stdout
    out = tmp_path / "pq"
    export_parquet(db, out)
    for part in out.rglob("*.parquet"):
        assert KEY.encode() not in part.read_bytes() and PASSWORD.encode() not in part.read_bytes()
    con = duckdb.connect()
    stored = {r[0] for r in con.execute(f"SELECT target FROM read_parquet('{out}/operations/*/*.parquet')").fetchall()}
    assert not any(KEY in (t or "") or PASSWORD in (t or "") for t in stored)


def test_a_file_error_quotes_no_secret(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    secret = "sk-abcdefghijklmnopqrstuvwxyz0123"
    (folder / "bad.jsonl").write_text(json.dumps({"v": 1, "type": "meta"}) + "\n"
                                      + json.dumps({"t": secret, "dir": "in", "raw": {}}) + "\n")
    db = tmp_path / "c.duckdb"
    stats = index_paths([folder], db)
    assert stats.errors == 1
    (error,) = run_sql(db, "SELECT error FROM files").rows[0]
    assert error and "[REDACTED]" in error and secret not in error
    assert secret.encode() not in db.read_bytes()


def test_the_stored_texts() -> None:
    assert stored_target("get_weather") == "get_weather"
    assert stored_target("ns:tool") == "ns:tool"
    assert stored_target("https://u:p4ssw0rd@h/x?sig=abc&x=1") == "https://u:[REDACTED]@h/x?sig=[REDACTED]&x=1"
    long = stored_error("password=" + "x" * 5000 + " " + "y" * 5000)
    assert len(long) == ERROR_MAX and long.endswith("…") and "xxx" not in long
