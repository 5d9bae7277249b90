"""Issue 28, item 9: a reel survives a full disk.

A write the disk takes only part of (the kernel writes what fits, then refuses with ENOSPC) is cut
back to the last whole line at once; the recording stops with one warning while forwarding goes on, and
the ``end`` line, written when the session ends with room again, says the recording stopped early. A
reel torn all the same (another writer, a crash between a short write and its cut) is read up to the
torn line, with a note. Either way every verb reads what was written.

The full disk is a file object that takes ``room`` more bytes, then refuses (as the kernel does).
"""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.formats import open_session
from mcpreel.formats.reel import ReelWriter
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.record.pipeline import Pipeline
from mcpreel.record.session_file import SessionFileKeeper
from mcpreel.record.stdio_recorder import WireRecorder

T = 1_747_090_800_123


class FullDisk:
    """The reel's file, on a disk with ``room`` bytes left (None: room enough)."""

    def __init__(self, fh: Any, room: int | None = None):
        self.fh = fh
        self.room = room

    def write(self, data: Any) -> int:
        if self.room is None:
            return self.fh.write(data)
        if self.room <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        n = self.fh.write(bytes(data[:self.room]))
        self.room -= n
        return n

    def fileno(self) -> int:
        return self.fh.fileno()

    def close(self) -> None:
        self.fh.close()


def ping(i: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"%s"}}' % (i, b"x" * 200)


def recorder(path: Path, addons: list[object] | None = None) -> tuple[WireRecorder, FullDisk, list[str]]:
    writer = ReelWriter(path, SessionInfo(label="t", transport="stdio", command=["srv"]))
    disk = FullDisk(writer._fh)
    writer._fh = disk  # type: ignore[assignment]
    warnings: list[str] = []
    return WireRecorder(writer, pipeline=Pipeline(addons or []), warn=warnings.append), disk, warnings


def every_verb_reads(path: Path, tmp: Path) -> list[str]:
    """inspect, convert and import read the reel (exit 0); returns what each said on stderr."""
    said = []
    for args in (["inspect", str(path)], ["inspect", "-v", str(path)],
                 ["convert", str(path), str(tmp / "out.jsonl"), "--to", "jsonrpc"],
                 ["convert", str(path), str(tmp / "out.har"), "--to", "har"],
                 ["import", str(path), "--out-trace", str(tmp / "trace.json")],
                 ["audit", str(path)], ["report", str(path), "-o", str(tmp / "r.html")]):
        result = CliRunner().invoke(cli, args)
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        assert result.exit_code == 0, (args, result.output[-400:])
        said.append(result.stderr)
    return said


class Tally:
    def __init__(self) -> None:
        self.seen = 0

    def recorded(self, rec: Message) -> None:
        self.seen += 1


@pytest.mark.parametrize("addons", [False, True], ids=["spliced", "pipeline"])
def test_a_write_cut_by_a_full_disk_leaves_whole_lines_and_the_end_comes_when_room_does(tmp_path: Path,
                                                                                     addons: bool) -> None:
    path = tmp_path / "s.jsonl"
    rec, disk, warnings = recorder(path, [Tally()] if addons else None)
    rec.lines("in", [ping(1), ping(2)], T)
    before = path.read_bytes()
    disk.room = 300  # the next write gets one line and a half in
    rec.lines("out", [ping(3), ping(4)], T + 1)
    rec.lines("in", [ping(5)], T + 2)  # forwarding goes on: nothing raised, nothing recorded
    assert path.read_bytes() == before, "the cut line and the line after it are gone"
    assert len(warnings) == 1 and "recording stopped" in warnings[0] and "No space left" in warnings[0]
    disk.room = None  # room again
    rec.close(0, "server exited with code 0")
    lines = [json.loads(x) for x in path.read_bytes().splitlines()]
    assert [x.get("raw", {}).get("id") for x in lines[1:-1]] == [1, 2]
    end = lines[-1]
    assert end["type"] == "end" and "write error (No space left on device)" in end["reason"]
    every_verb_reads(path, tmp_path)
    session, _ = open_session(path)
    assert [m.raw["id"] for m in session] == [1, 2] and "write error" in (session.info.end_reason or "")


def test_a_disk_still_full_at_the_end_leaves_an_unfinished_reel_of_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    rec, disk, warnings = recorder(path)
    rec.lines("in", [ping(1)], T)
    disk.room = 10
    rec.lines("out", [ping(1)], T + 1)
    rec.close(0, "server exited with code 0")  # the end line does not fit either
    data = path.read_bytes()
    assert data.endswith(b"\n") and len(data.splitlines()) == 2 and len(warnings) == 1
    every_verb_reads(path, tmp_path)


def test_a_record_written_whole_by_the_writer_is_cut_back_too(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = ReelWriter(path, SessionInfo(label="t"))
    disk = FullDisk(writer._fh, room=50)
    writer._fh = disk  # type: ignore[assignment]
    with pytest.raises(OSError):
        writer.write(Message("in", json.loads(ping(9)), T))
    assert path.read_bytes().endswith(b"\n") and len(path.read_bytes().splitlines()) == 1
    disk.room = None
    writer.close(0, "closed")
    assert json.loads(path.read_bytes().splitlines()[-1])["type"] == "end"


def torn_reel(tmp: Path, *, tail: bytes) -> Path:
    path = tmp / "torn.jsonl"
    writer = ReelWriter(path, SessionInfo(label="t", transport="stdio", command=["srv"]))
    writer.write_frames("in", [ping(1)], T)
    writer.write_frames("out", [b'{"jsonrpc":"2.0","id":1,"result":{}}'], T + 3)
    writer._fh.close()  # a crash: no end line
    with open(path, "ab") as fh:
        fh.write(tail)
    return path


def test_a_torn_last_line_is_left_out_with_a_note_by_every_verb(tmp_path: Path) -> None:
    path = torn_reel(tmp_path, tail=ping(2)[:70])
    said = every_verb_reads(path, tmp_path)
    assert "line 4 is torn" in said[0] + CliRunner().invoke(cli, ["inspect", str(path)]).output
    session, _ = open_session(path)
    assert [m.raw.get("id") for m in session] == [1, 1]
    assert any("line 4 is torn" in n for n in session.info.notes)
    assert [len(b.raws) for b in session.wire_blocks()] == [2]  # the fast lane stops there too


def test_a_torn_line_that_is_not_the_last_is_still_refused(tmp_path: Path) -> None:
    path = torn_reel(tmp_path, tail=ping(2)[:70] + b"\n" + ping(3)[:40])
    result = CliRunner().invoke(cli, ["inspect", str(path)])
    assert result.exit_code == 2 and "line 4" in result.stderr and result.stderr.count("\n") == 1


def test_a_whole_last_line_without_its_newline_reads_without_a_note(tmp_path: Path) -> None:
    path = torn_reel(tmp_path, tail=b'{"t":"2025-05-12T23:00:00.130Z","dir":"in","raw":' + ping(2) + b"}")
    session, _ = open_session(path)
    assert [m.raw.get("id") for m in session] == [1, 1, 2] and not any("torn" in n for n in session.info.notes)


def test_the_session_file_keeps_its_last_whole_save_through_a_full_disk(tmp_path: Path) -> None:
    """The qai session file beside the reel is rewritten whole (temp file + rename): a save the disk
    refuses leaves the last good file and no temp file, warns once, and the next save with room works."""
    path = tmp_path / "s.json"
    warnings: list[str] = []
    keeper = SessionFileKeeper(path, SessionInfo(label="t"), save_every=None, warn=warnings.append)
    keeper.recorded(Message("in", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, T, seq=0))
    assert keeper.save()
    good = path.read_bytes()
    write = keeper._write

    def full(session: Session, fh: Any) -> None:
        fh.write(b"{" * 100)
        fh.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    keeper._write = full
    keeper.recorded(Message("out", {"jsonrpc": "2.0", "id": 1, "result": {}}, T + 1, seq=1))
    assert not keeper.save()
    assert path.read_bytes() == good and sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]
    assert len(warnings) == 1 and "No space left" in warnings[0]
    keeper._write = write
    keeper.finished(0, "closed")
    assert keeper.saved and len(json.loads(path.read_bytes())["messages"]) == 2


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Any:
    """A 64 KiB tmpfs (root only: skipped where it cannot be mounted), unmounted after the test."""
    import os
    import subprocess

    where = tmp_path / "tiny"
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                                           capture_output=True).returncode != 0:
        pytest.skip("a tmpfs cannot be mounted here (needs root)")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.mark.timeout(60)
def test_a_real_full_disk_while_recording(tiny_disk: Path, tmp_path: Path) -> None:
    """``mcpreel record`` on a disk that fills mid-session and has room again before the end."""
    import subprocess
    import time

    from tests.record.stdio.helpers import PY, RAW, record_argv

    filler = tiny_disk / "filler"
    filler.write_bytes(b"\0" * (52 << 10))  # about 12 KiB left: the reel fills it within the first 40 pings
    out = tiny_disk / "s.jsonl"
    proc = subprocess.Popen(record_argv(out) + [PY, RAW, "echo"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    for i in range(120):
        proc.stdin.write(ping(i) + b"\n")
        proc.stdin.flush()
        assert proc.stdout.readline().startswith(b'{"jsonrpc"')  # forwarding goes on, full disk or not
    filler.unlink()
    time.sleep(0.2)
    proc.stdin.close()
    proc.stdout.read()
    proc.wait(timeout=30)
    assert proc.stderr is not None
    err = proc.stderr.read()
    assert proc.returncode == 0 and b"No space left on device" in err
    lines = [json.loads(x) for x in out.read_bytes().splitlines()]  # every line whole
    assert 2 < len(lines) < 240 and lines[-1]["type"] == "end" and "write error" in lines[-1]["reason"]
    every_verb_reads(out, tmp_path)


def test_no_room_for_the_meta_line_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mcpreel.formats.reel as reel

    def full(path: Any) -> FullDisk:
        return FullDisk(open(path, "ab", buffering=0), room=40)

    monkeypatch.setattr(reel, "open_private_append", full)
    with pytest.raises(OSError, match="No space left"):
        ReelWriter(tmp_path / "s.jsonl", SessionInfo(label="t"))
    assert list(tmp_path.iterdir()) == []
