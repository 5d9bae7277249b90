"""Reading the corpus only reads the index (issue 40): ``query``, ``sessions``, ``show`` and ``report --db``
open DuckDB read-only with external access off, so no query writes a file (``COPY … TO``), reads one
(``read_text``), lists a folder (``glob``), attaches a database or fetches an extension; each is one line,
exit 2. And ``--server-name``/``--client`` take ``*`` as the one wildcard: ``%`` and ``_`` are literal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.corpus.db import connect
from mcpreel.corpus.index import index_paths
from mcpreel.corpus.query import like_pattern, sessions
from tests.corpus.test_index import reel


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def index(tmp_path: Path) -> Path:
    reel(tmp_path / "s" / "one.jsonl", server="my_srv")
    reel(tmp_path / "s" / "two.jsonl", server="myXsrv")
    reel(tmp_path / "s" / "three.jsonl", server="100%")
    reel(tmp_path / "s" / "four.jsonl", server="1000")
    db = tmp_path / "c.duckdb"
    index_paths([tmp_path / "s"], db)
    return db


def _one_line_exit_2(result: Any) -> str:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.output
    return lines[0]


def test_a_query_cannot_write_a_file(index: Path, tmp_path: Path) -> None:
    target = tmp_path / "leak.csv"
    line = _one_line_exit_2(_invoke("query", f"COPY (SELECT * FROM operations) TO '{target}'", "--db", str(index)))
    assert "outside the index" in line
    assert not target.exists()


@pytest.mark.parametrize("sql", [
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM read_blob('/etc/hostname')",
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM read_csv('/etc/passwd')",
])
def test_a_query_cannot_read_or_list_files(index: Path, sql: str) -> None:
    line = _one_line_exit_2(_invoke("query", sql, "--db", str(index)))
    assert "outside the index" in line and "root:" not in line


@pytest.mark.parametrize("sql", [
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "SET autoinstall_known_extensions = true",
])
def test_a_query_cannot_fetch_extensions_or_leave_the_sandbox(index: Path, sql: str) -> None:
    _one_line_exit_2(_invoke("query", sql, "--db", str(index)))


def test_a_query_cannot_attach_another_database(index: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.duckdb"
    _one_line_exit_2(_invoke("query", f"ATTACH '{other}' AS o", "--db", str(index)))
    assert not other.exists()


def test_every_read_connection_is_sandboxed(index: Path) -> None:
    con = connect(index, read_only=True)
    try:
        with pytest.raises(duckdb.PermissionException):
            con.execute("SELECT * FROM read_text('/etc/hostname')")
    finally:
        con.close()


def test_sessions_show_and_report_on_an_index_whose_tables_read_files(index: Path, tmp_path: Path) -> None:
    """A shared index whose ``sessions`` table became a view over ``read_text``: every reader refuses it in
    one line instead of reading the file as whoever opens it."""
    con = duckdb.connect(str(index))
    con.execute("DROP TABLE sessions")
    con.execute("CREATE VIEW sessions AS SELECT content AS file FROM read_text('/etc/hostname')")
    con.close()
    for args in (["sessions"], ["show", "1"], ["report", "-o", str(tmp_path / "r.html")], ["query", "SELECT 1"]):
        line = _one_line_exit_2(_invoke(*args, "--db", str(index)))
        assert "not a corpus index" in line, args
    assert not (tmp_path / "r.html").exists()


def test_the_readers_still_read(index: Path, tmp_path: Path) -> None:
    assert _invoke("sessions", "--db", str(index)).exit_code == 0
    assert _invoke("show", "1", "--db", str(index)).exit_code == 0
    assert _invoke("report", "--db", str(index), "-o", str(tmp_path / "r.html")).exit_code == 0
    assert (tmp_path / "r.html").stat().st_size > 0


# -- % and _ are literal; * is the wildcard -----------------------------------------------------------


def _servers(db: Path, **kw: Any) -> list[str]:
    return sorted(row[5] for row in sessions(db, **kw).rows)


def test_underscore_and_percent_match_themselves(index: Path) -> None:
    assert _servers(index, server="my_srv") == ["my_srv"]
    assert _servers(index, server="100%") == ["100%"]
    assert _servers(index, server="MY_SRV") == ["my_srv"]  # still case-insensitive
    assert _servers(index, server="my*") == ["myXsrv", "my_srv"]
    assert _servers(index, server="10*") == ["100%", "1000"]
    assert _servers(index, client="test_r") == []
    assert len(_servers(index, client="test*")) == 4


def test_the_cli_filters_take_percent_literally(index: Path) -> None:
    result = _invoke("sessions", "--server-name", "100%", "--db", str(index), "--format", "json")
    assert result.exit_code == 0, result.output
    assert [row["server"] for row in json.loads(result.stdout)] == ["100%"]


def test_like_pattern_escapes_the_escape() -> None:
    assert like_pattern("a\\b_c%d*") == "a\\\\b\\_c\\%d%"
