"""``mcpreel calls``, the one reading of typed times (``--since yesterday``), and ``show`` read by a person.

"Yesterday's failed call" is asked of a real corpus: the shared fixtures (old recordings of other tools)
and a recording made here by ``mcpreel record`` (the ``recordings`` fixture: a failing tool, a missing
prompt), with "now" frozen one day after that recording (``--now``), never left to the clock.
"""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.corpus.calls import CallFilter, CallPage, find_calls
from mcpreel.corpus.index import index_paths
from mcpreel.corpus.query import run_sql
from mcpreel.corpus.when import Clock, parse_duration_ms, parse_when
from mcpreel.errors import UsageError
from mcpreel.render.calls import call_lines
from tests.corpus.test_index import SECRET, reel

#: 09:30 on 26 November 2026 in UTC+01:00: the day starts at 23:00 UTC the evening before
CET = timezone(timedelta(hours=1))
NOW = datetime(2026, 11, 26, 9, 30, tzinfo=CET)


def _ms(*args: int, tz: Any = CET) -> int:
    return int(datetime(*args, tzinfo=tz).timestamp() * 1000)


def _invoke(*args: Any) -> Any:
    return CliRunner().invoke(cli, [str(a) for a in args])


# -- the one reading of a typed time -----------------------------------------------------------------


def test_words_dates_times_and_durations_on_a_frozen_clock() -> None:
    clock = Clock(NOW)
    assert parse_when("yesterday", clock=clock) == _ms(2026, 11, 25)
    assert parse_when("yesterday", clock=clock, end=True) == _ms(2026, 11, 26)  # a day counts whole
    assert parse_when("Today", clock=clock) == _ms(2026, 11, 26)
    assert parse_when("today", clock=clock, end=True) == _ms(2026, 11, 27)
    assert parse_when("now", clock=clock) == clock.epoch_ms
    assert parse_when("2d", clock=clock) == clock.epoch_ms - 2 * 86_400_000
    assert parse_when("90s", clock=clock) == clock.epoch_ms - 90_000
    assert parse_when("1w", clock=clock) == clock.epoch_ms - 7 * 86_400_000
    assert parse_when("2026-11-20", clock=clock) == _ms(2026, 11, 20)  # a date: the reader's midnight
    assert parse_when("2026-11-20", clock=clock, end=True) == _ms(2026, 11, 21)
    assert parse_when("2026-11-20T08:00", clock=clock) == _ms(2026, 11, 20, 8)  # no offset: the reader's clock
    assert parse_when("2026-11-20T08:00:00Z", clock=clock) == _ms(2026, 11, 20, 8, tz=UTC)
    for bad in ("yesterday-ish", "2026-02-30", "soon", ""):
        with pytest.raises(UsageError, match="--until .*yesterday"):
            parse_when(bad, clock=clock, option="--until")
    assert parse_duration_ms("500ms") == 500
    assert parse_duration_ms("2s") == parse_duration_ms("2000") == 2000
    assert parse_duration_ms("1.5m") == 90_000
    with pytest.raises(UsageError, match="--slower-than"):
        parse_duration_ms("fast")


# -- yesterday's failed call on a real corpus --------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(recordings: dict, fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The shared fixtures and the two recordings made here, indexed into one database."""
    root = tmp_path_factory.mktemp("calls")
    mine = root / "sessions"
    mine.mkdir()
    for era in ("legacy", "modern"):
        shutil.copy(recordings[era], mine / f"{era}.jsonl")
    db = root / "corpus.duckdb"
    summary = index_paths([fixtures_dir, mine], db)
    assert summary.read > 10
    (last_ms,) = run_sql(db, "SELECT max(start_ms) FROM operations WHERE file LIKE ?", [f"{mine}%"]).rows[0]
    # "now": the day after the recording, in UTC (the recording is then yesterday's, whatever the hour)
    now = datetime.fromtimestamp(last_ms / 1000, UTC) + timedelta(days=1)
    return {"db": db, "mine": mine, "now": now.isoformat()}


def test_calls_failed_since_yesterday_answers_with_the_recorded_failure(corpus: dict[str, Any]) -> None:
    db, mine = corpus["db"], corpus["mine"]
    result = _invoke("calls", "--failed", "--since", "yesterday", "--db", db, "--now", corpus["now"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["TIME", "SERVER", "TOOL", "STATUS", "LATENCY", "ERROR"]
    rows, opens = lines[1::2], lines[2::2]
    assert len(rows) == len(opens) >= 4  # fail and the missing prompt, in each era
    assert all(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  ", row) for row in rows)  # times as times
    failing = [row for row in rows if " fail " in row]
    assert len(failing) == 2 and all("isError" in row and "no way" in row and " ms" in row for row in failing)
    assert sum("prompts/get no-such-prompt" in row and re.search(r" error -?\d+ ", row) is not None
               for row in rows) == 2
    for line in opens:  # each row: the commands that open it, whole
        assert re.fullmatch(rf"    mcpreel show \d+ --db {re.escape(str(db))}   mcpreel tui {re.escape(str(mine))}/"
                            rf"(legacy|modern)\.jsonl --at \d+", line), line
    assert "fixtures" not in result.stdout  # the fixtures' failures are older than yesterday
    assert re.search(r"\d+ calls", result.stderr)

    # the same question as data: every row opens the request it names
    as_json = json.loads(_invoke("calls", "--failed", "--since", "yesterday", "--db", db, "--now", corpus["now"],
                                 "--json").stdout)
    assert len(as_json) == len(rows)
    from mcpreel.formats import open_session

    for row in as_json:
        messages = list(open_session(row["file"])[0])
        opened = messages[row["record"]].raw
        assert opened["method"] == row["method"] and (row["tool"] is None or opened["params"]["name"] == row["tool"])
        assert row["show"] == f"mcpreel show {row['id']} --db {db}" and row["time"].endswith("Z")

    # older failures are there when asked for, and the day after tomorrow, yesterday is empty
    everything = json.loads(_invoke("calls", "--failed", "--since", "2000-01-01", "--db", db, "--limit", "100000",
                                    "--json").stdout)
    assert any("fixtures" in row["file"] for row in everything) and len(everything) > len(as_json)
    later = (datetime.fromisoformat(corpus["now"]) + timedelta(days=2)).isoformat()
    empty = _invoke("calls", "--failed", "--since", "yesterday", "--db", db, "--now", later)
    assert empty.exit_code == 0 and empty.stdout == "" and "no calls match" in empty.stderr
    before = _invoke("calls", "--failed", "--until", "2d", "--db", db, "--now", corpus["now"], "--json",
                     "--limit", "100000")
    assert not any(str(mine) in row["file"] for row in json.loads(before.stdout))


def test_sessions_takes_the_same_times(corpus: dict[str, Any]) -> None:
    db, mine = corpus["db"], corpus["mine"]
    result = _invoke("sessions", "--failed", "--since", "yesterday", "--db", db, "--now", corpus["now"],
                     "--format", "json")
    assert result.exit_code == 0, result.output
    files = {Path(row["file"]).parent for row in json.loads(result.stdout)}
    assert files == {mine}
    until = _invoke("sessions", "--until", "2d", "--db", db, "--now", corpus["now"], "--format", "json")
    assert until.exit_code == 0 and mine not in {Path(r["file"]).parent for r in json.loads(until.stdout)}
    bad = _invoke("sessions", "--since", "last tuesday", "--db", db)
    assert bad.exit_code == 2 and "--since 'last tuesday'" in bad.stderr and "Traceback" not in bad.output


def test_show_is_readable_by_default_and_raw_with_json(corpus: dict[str, Any]) -> None:
    db = corpus["db"]
    (op_id,) = run_sql(db, "SELECT id FROM operations WHERE tool = 'fail' ORDER BY id LIMIT 1").rows[0]
    shown = _invoke("show", op_id, "--db", db)
    assert shown.exit_code == 0, shown.output
    text = shown.stdout
    assert text.startswith(f"operation {op_id}: tools/call fail · isError · ")
    assert re.search(r"  time     \d{4}-\d\d-\d\d \d\d:\d\d:\d\d", text)
    assert "\n→ call tools/call (client to server, line " in text and "\n← answer tools/call (server to client" in text
    assert '\n  "params": {\n' in text  # pretty-printed
    assert "mcpreel tui " in text and "secrets redacted" in text
    raw = json.loads(_invoke("show", op_id, "--db", db, "--json").stdout)
    assert isinstance(raw["operation"]["start_ms"], int) and raw["session"]["server_name"]


# -- fitted, escaped, filtered -----------------------------------------------------------------------


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """Reels whose failure message is long and carries a terminal escape, indexed."""
    corpus = tmp_path / "s"
    reel(corpus / "a.jsonl", server="evil\x1b]52;c;Zm9v\x07srv")
    reel(corpus / "b.jsonl", server="my_srv", calls=2)
    db = tmp_path / "c.duckdb"
    index_paths([corpus], db)
    return db


def test_rows_fit_the_terminal_and_are_never_cut_when_piped(hostile: Path) -> None:
    page = find_calls(hostile, CallFilter(failed=True))
    long = "x" * 300
    page = CallPage([c.__class__(**{**c.__dict__, "message": f"{long} tail"}) for c in page.calls], page.total)
    fitted = [line.plain for line in call_lines(page, width=100, tz=UTC)]
    from rich.cells import cell_len

    heading, rows, opens = fitted[0], fitted[1::2], fitted[2::2]
    assert all(cell_len(line) <= 100 for line in [heading, *rows]) and len(rows) == 2
    assert all(line.endswith("…") for line in rows)
    assert all(line.startswith("    mcpreel show ") and " --at " in line for line in opens)  # whole, never cut
    piped = _invoke("calls", "--failed", "--db", hostile)
    assert piped.exit_code == 0
    assert "\x1b" not in piped.stdout and "\\x1b]52;c;Zm9v\\x07" in piped.stdout  # escaped, visible
    # the index keeps messages short anyway: a line is at most its message and the paths it names
    assert all(len(line) < 200 + 2 * len(str(hostile.parent)) for line in piped.stdout.splitlines())
    assert SECRET not in piped.stdout


def test_filters_narrow_and_take_names_literally(hostile: Path) -> None:
    def ids(**kw: Any) -> int:
        return len(find_calls(hostile, CallFilter(**kw)).calls)

    assert ids() == 2 * 2 + 3 + 2  # initialize and tools/list, then the calls, in each reel
    assert ids(failed=True) == 2
    assert ids(tool="echo") == 5 and ids(tool="ech*") == 5 and ids(tool="nope") == 0
    assert ids(method="tools/*") == 2 + 5
    assert ids(server="my_srv") == 4 and ids(server="myXsrv") == 0  # _ is not a wildcard
    assert ids(slower_than_ms=0) == 9 and ids(slower_than_ms=1000) == 0
    assert ids(failed=True, limit=1) == 1 and find_calls(hostile, CallFilter(failed=True, limit=1)).total == 2
    limited = _invoke("calls", "--db", hostile, "--limit", "3")
    assert limited.exit_code == 0 and "the newest 3 of 9 calls" in limited.stderr
    slow = _invoke("calls", "--db", hostile, "--slower-than", "2 s")
    assert slow.exit_code == 0 and "no calls match" in slow.stderr
    bad = _invoke("calls", "--db", hostile, "--slower-than", "soon")
    assert bad.exit_code == 2 and "--slower-than 'soon'" in bad.stderr
