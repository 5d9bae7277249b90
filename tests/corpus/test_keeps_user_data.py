"""The corpus keeps the user's data (issue 40): the Parquet export never deletes a folder it did not write,
``index --db`` on a DuckDB database that is not an index drops nothing, and what the corpus writes (the
database, its WAL, the Parquet files) is the user's alone: 0600 in 0700 folders it makes."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.corpus import schema
from mcpreel.corpus.db import connect, private_files
from mcpreel.corpus.index import index_paths
from mcpreel.corpus.parquet import MARKER, export_parquet
from mcpreel.errors import InputError, UsageError
from tests.corpus.test_index import reel


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def index(tmp_path: Path) -> Path:
    reel(tmp_path / "s" / "one.jsonl")
    db = tmp_path / "c.duckdb"
    index_paths([tmp_path / "s"], db)
    return db


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("table", [t.name for t in schema.TABLES])
def test_export_refuses_a_folder_of_the_users_and_touches_nothing(index: Path, tmp_path: Path, table: str) -> None:
    out = tmp_path / "repo"
    (out / table).mkdir(parents=True)
    (out / table / "keep.py").write_text("the user's code\n")
    (out / "README.md").write_text("mine\n")
    before = _tree(out)
    result = _invoke("export", "parquet", "--db", str(index), "-o", str(out))
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and table in lines[0] and "nothing was changed" in lines[0], result.output
    assert "Traceback" not in result.output
    assert _tree(out) == before
    assert sorted(p.name for p in out.iterdir()) == sorted(["README.md", table])  # no staging, no tables


def test_export_to_dot_in_a_repository_with_a_tools_folder(index: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    (repo / "tools").mkdir(parents=True)
    (repo / "tools" / "build.sh").write_text("#!/bin/sh\n")
    monkeypatch.chdir(repo)
    result = _invoke("export", "parquet", "--db", str(index), "-o", ".")
    assert result.exit_code == 2 and "tools" in result.output
    assert (repo / "tools" / "build.sh").read_text() == "#!/bin/sh\n"


def test_index_parquet_refuses_a_folder_of_the_users(tmp_path: Path) -> None:
    reel(tmp_path / "s" / "a.jsonl")
    out = tmp_path / "pq"
    (out / "files").mkdir(parents=True)
    (out / "files" / "photo.jpg").write_bytes(b"\xff\xd8")
    result = _invoke("index", str(tmp_path / "s"), "--db", str(tmp_path / "c.duckdb"), "--parquet", str(out))
    assert result.exit_code == 2 and "files" in result.output and "Traceback" not in result.output
    assert (out / "files" / "photo.jpg").read_bytes() == b"\xff\xd8"
    assert not (out / "operations").exists()


def test_an_export_replaces_its_own_tables_and_keeps_what_is_beside_them(index: Path, tmp_path: Path) -> None:
    out = tmp_path / "bucket"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    assert export_parquet(index, out)["operations"] > 0
    assert (out / MARKER).is_file()
    (out / "operations" / "stale.parquet").write_bytes(b"old")
    export_parquet(index, out)  # its own folders (the marker says so): replaced whole
    assert not (out / "operations" / "stale.parquet").exists()
    assert (out / "notes.txt").read_text() == "mine\n"
    assert sorted(p.name for p in out.iterdir()) == sorted([MARKER, "notes.txt", *(t.name for t in schema.TABLES)])


def test_the_parquet_files_are_the_users_alone(index: Path, tmp_path: Path) -> None:
    out = tmp_path / "new" / "pq"
    export_parquet(index, out)
    assert stat.S_IMODE(out.stat().st_mode) == 0o700 and stat.S_IMODE(out.parent.stat().st_mode) == 0o700
    files = [p for p in out.rglob("*") if p.is_file()]
    folders = [p for p in out.rglob("*") if p.is_dir()]
    assert any(p.suffix == ".parquet" for p in files)
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {"0o600"}
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in folders} == {"0o700"}


def _foreign(db: Path, *tables: str) -> None:
    con = duckdb.connect(str(db))
    for name in tables:
        con.execute(f"CREATE TABLE {name} (a VARCHAR)")
        con.execute(f"INSERT INTO {name} VALUES ('precious')")
    con.close()


@pytest.mark.parametrize("tables", [("tools", "files"), ("meta",), ("sessions", "operations", "other")])
def test_index_refuses_a_database_that_is_not_an_index(tmp_path: Path, tables: tuple[str, ...]) -> None:
    reel(tmp_path / "s" / "a.jsonl")
    db = tmp_path / "team.duckdb"
    _foreign(db, *tables)
    result = _invoke("index", str(tmp_path / "s"), "--db", str(db))
    assert result.exit_code == 2, result.output
    assert "not a corpus index" in result.output and "Traceback" not in result.output
    con = duckdb.connect(str(db), read_only=True)
    try:
        for name in tables:
            assert con.execute(f"SELECT a FROM {name}").fetchall() == [("precious",)]
        names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    finally:
        con.close()
    assert names == set(tables)  # nothing dropped, nothing added


def test_a_view_where_an_index_table_belongs_is_no_index(index: Path) -> None:
    con = duckdb.connect(str(index))
    con.execute("DROP TABLE tools")
    con.execute("CREATE VIEW tools AS SELECT * FROM read_text('/etc/hostname')")
    con.close()
    with pytest.raises(InputError, match="not a corpus index"):
        connect(index, read_only=False)
    with pytest.raises(InputError, match="not a corpus index"):
        connect(index, read_only=True)
    con = duckdb.connect(str(index), read_only=True)
    try:  # still there: refused, not rebuilt
        assert con.execute("SELECT table_type FROM information_schema.tables WHERE table_name = 'tools'").fetchone() \
            == ("VIEW",)
    finally:
        con.close()


def test_the_database_and_its_wal_are_0600_in_a_0700_folder(tmp_path: Path) -> None:
    reel(tmp_path / "s" / "a.jsonl")
    db = tmp_path / "made" / "here" / "c.duckdb"
    seen: list[str] = []

    def during(_files: int, _bytes: int) -> None:  # mid-pass: what DuckDB creates now is created private
        probe = db.with_name("probe")
        probe.write_text("x")
        seen.append(oct(stat.S_IMODE(probe.stat().st_mode)))
        probe.unlink()
        seen.extend(oct(stat.S_IMODE(p.stat().st_mode)) for p in db.parent.iterdir() if p.name.startswith("c.duckdb"))

    umask = os.umask(0o022)
    os.umask(umask)
    index_paths([tmp_path / "s"], db, on_start=during)
    assert seen and set(seen) == {"0o600"}
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700 and stat.S_IMODE(db.parent.parent.stat().st_mode) == 0o700
    assert os.umask(umask) == umask  # restored after the pass
    wal = db.with_name(db.name + ".wal")
    with private_files():  # as index_paths holds it: the WAL DuckDB makes on a write is private
        con = connect(db, read_only=False)
        try:
            con.execute("INSERT INTO meta VALUES ('probe', 'x')")
            assert wal.exists() and stat.S_IMODE(wal.stat().st_mode) == 0o600
        finally:
            con.close()


def test_an_older_world_readable_index_becomes_private(index: Path, tmp_path: Path) -> None:
    os.chmod(index, 0o644)
    index_paths([tmp_path / "s"], index)
    assert stat.S_IMODE(index.stat().st_mode) == 0o600


def test_an_unwritable_target_is_one_line(index: Path, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    out = tmp_path / "ro"
    out.mkdir()
    os.chmod(out, 0o500)
    try:
        with pytest.raises(UsageError, match="cannot write"):
            export_parquet(index, out)
    finally:
        os.chmod(out, 0o700)
