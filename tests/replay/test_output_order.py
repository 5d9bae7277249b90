"""Replay's output in the order a reader wants it (issue 29): what is replayed against what and which
sessions first, then the rows, then the summary; and ``--pace recorded`` keeping the recorded gaps between
the client's messages (the default, ``none``, keeps the order only)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcpreel.eras import era_name
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.replay import wire
from mcpreel.replay.results import ReplayOptions
from tests.replay.helpers import INIT, INIT_OK, call, note, replay_against_mock, res, text

SERVER = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'report' / 'peers' / 'server.py'}"


def _later(t: str) -> str:
    from mcpreel._infra.timeutil import iso_from_ms, ms_from_iso

    return iso_from_ms(ms_from_iso(t) + 60_000)


def _doctored(recordings: dict, tmp_path: Path, sessions: int = 1) -> Path:
    """The legacy recording with its first echo answer changed; ``sessions=2``: the same session twice in one
    file, a minute apart (two client sessions: two handshakes)."""
    lines = recordings["legacy"].read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if '"result"' in line and "hello <b>&</b>" in line)
    lines[first] = lines[first].replace("hello <b>&</b>", "hullo")
    records = [json.loads(line) for line in lines[1:] if json.loads(line).get("type") != "end"]
    for r in records:
        r.pop("seq", None)
    out = [lines[0]] + [json.dumps(r) for r in records]
    if sessions == 2:
        for r in records:
            r["t"] = _later(r["t"])
        out += [json.dumps(r) for r in records]
    path = tmp_path / f"doctored-{sessions}.jsonl"
    path.write_text("\n".join(out) + "\n")
    return path


def _replay(path: Path, *more: str) -> tuple[int, list[str]]:
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "replay", str(path), "--target-command", SERVER, *more],
                          capture_output=True, text=True, timeout=180)
    return proc.returncode, proc.stdout.splitlines()


def _at(lines: list[str], start: str) -> int:
    found = [i for i, line in enumerate(lines) if line.startswith(start)]
    assert found, f"no line starts with {start!r}:\n" + "\n".join(lines)
    return found[0]


@pytest.mark.e2e
def test_the_heading_comes_first_then_the_rows_then_the_summary(recordings, tmp_path):
    code, lines = _replay(_doctored(recordings, tmp_path))
    assert code == 1
    heading, label, era = _at(lines, "replay of "), _at(lines, "session 1, legacy"), _at(lines, "replayed in the")
    rows, row = _at(lines, "results that are not the same"), _at(lines, "  #")
    summary = _at(lines, "10 requests replayed")
    assert heading == 0 and heading < label < era < rows < row < summary == len(lines) - 1
    said = "".join(lines[heading:label]).replace(" ", "")  # piped output wraps at 120 columns
    assert ("against" + SERVER + "(stdio)").replace(" ", "") in said
    assert lines[era] == f"replayed in the {era_name('legacy')}, as recorded"
    assert sum(line.startswith("replay of ") for line in lines) == 1  # said once, not again at the end


@pytest.mark.e2e
def test_the_sessions_of_a_file_are_listed_before_the_rows(recordings, tmp_path):
    code, lines = _replay(_doctored(recordings, tmp_path, sessions=2), "--all")
    assert code == 1, "\n".join(lines)
    heading = _at(lines, "replay of ")
    listed = _at(lines, "2 client sessions, each on a fresh connection")
    first, second = _at(lines, "  session 1, legacy"), _at(lines, "  session 2, legacy")
    rows = _at(lines, "results")
    summary = _at(lines, "20 requests replayed")
    assert heading == 0 < listed < first < second < rows < summary
    assert f"-> replayed in the {era_name('legacy')}, 10 requests" in lines[first]
    body = lines[rows + 1:summary]
    assert sum(" session 1 " in line for line in body if line.startswith("  #")) == 10
    assert sum(" session 2 " in line for line in body if line.startswith("  #")) == 10
    assert not any(line.startswith("replay of ") for line in lines[1:])


def test_the_heading_says_the_pacing():
    from mcpreel.render.replay import heading
    from mcpreel.replay import ReplayPlan

    plan = ReplayPlan("x.jsonl", "srv", "stdio", "auto", "recorded",
                      sessions=[{"index": 2, "label": "session 2, modern 2026-07-28", "era": "modern",
                                 "replay_in": "modern", "requests": 3}], of=3)
    from rich.console import Console

    console = Console(width=200, record=True, file=open("/dev/null", "w"))
    for part in heading(plan):
        console.print(part)
    said = console.export_text().splitlines()
    assert said == ["replay of x.jsonl against srv (stdio)",
                    "session 2, modern 2026-07-28 (of 3)",
                    f"replayed in the {era_name('modern')}, as recorded; pacing: as recorded (each message no earlier than "
                    "its recorded time)"]


# -- pacing -------------------------------------------------------------------------------------------------
def _spaced(gap_ms: int) -> Session:
    """A handshake and three calls, the calls ``gap_ms`` apart in the recording, answered at once."""
    t0 = 1_700_000_000_000
    msgs = [Message("in", INIT, t0), Message("out", INIT_OK, t0 + 1),
            Message("in", note("notifications/initialized"), t0 + 2)]
    for i in range(3):
        t = t0 + 10 + i * gap_ms
        msgs += [Message("in", call(10 + i, "echo", {"i": i}), t), Message("out", res(10 + i, text(f"r{i}")), t + 1)]
    return Session(SessionInfo(path="spaced.jsonl", transport="stdio"), msgs)


def _sent_times(monkeypatch) -> list[tuple[str, float]]:
    sent: list[tuple[str, float]] = []
    real = wire._Run.send

    async def send(self, message: dict[str, Any], exchange, result):
        sent.append((message.get("method", ""), asyncio.get_running_loop().time()))
        return await real(self, message, exchange, result)

    monkeypatch.setattr(wire._Run, "send", send)
    return sent


def _calls_at(sent: list[tuple[str, float]]) -> list[float]:
    times = [t for method, t in sent if method == "tools/call"]
    assert len(times) == 3
    return [b - a for a, b in zip(times, times[1:], strict=False)]


def test_pace_recorded_keeps_the_recorded_gaps(monkeypatch):
    sent = _sent_times(monkeypatch)
    started = time.monotonic()
    report, _ = asyncio.run(replay_against_mock(
        _spaced(700), options=ReplayOptions(timeout=5, unrecorded_grace=0.05, pace="recorded")))
    assert report.count("same") == 4 and time.monotonic() - started >= 1.4
    assert sent[0][0] == "initialize"
    first = sent[0][1]
    calls = [t - first for method, t in sent if method == "tools/call"]
    recorded = [0.010, 0.710, 1.410]  # each call's recorded time after the first message
    assert all(at >= want - 0.001 for at, want in zip(calls, recorded, strict=True)), calls  # never earlier


def test_pace_none_keeps_the_order_not_the_clock(monkeypatch):
    sent = _sent_times(monkeypatch)
    report, _ = asyncio.run(replay_against_mock(
        _spaced(5000), options=ReplayOptions(timeout=5, unrecorded_grace=0.05)))
    assert report.count("same") == 4
    assert sum(_calls_at(sent)) < 5  # the recording's 10 s of gaps are not waited
    assert [m for m, _ in sent] == ["initialize", "notifications/initialized", "tools/call", "tools/call", "tools/call"]


def test_the_readme_says_what_replay_does_with_timing():
    from tests.docs.pages import docs_text

    readme = docs_text()
    assert "pacing as recorded" not in readme  # the old claim, untrue without --pace recorded
    assert "--pace recorded" in readme
