"""The reel reader's leniency where seed 004's producers are not strict: a file whose meta line is missing."""

from __future__ import annotations

import pytest

from mcpreel.errors import FormatError
from mcpreel.formats import open_session

from .support import fixture


@pytest.mark.parametrize("keep", [None, 1])  # every message line, or a single one (sniffed as a document)
def test_message_lines_without_a_meta_line_are_read(tmp_path, keep):
    lines = fixture("mcp-replay-v1/readme-minimal.jsonl").read_text().splitlines()[1:]
    src = tmp_path / "cut.jsonl"
    src.write_text("\n".join(lines[:keep]) + "\n")
    session, detection = open_session(src)
    assert detection.format == "reel" and not detection.obvious
    records = list(session)
    assert [m.raw["id"] for m in records] == [1] * len(records) and records[0].dir == "in"
    assert session.info.started == records[0].t
    assert session.info.notes == ["no meta line: the session's label and command are unknown"]


def test_a_first_line_that_is_no_reel_record_is_refused(tmp_path):
    src = tmp_path / "x.jsonl"
    src.write_text('{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n{"jsonrpc": "2.0", "id": 1, "result": {}}\n')
    with pytest.raises(FormatError, match=r"x\.jsonl: line 1 must be the meta line"):
        open_session(src, "reel")


@pytest.mark.parametrize("t", ['"garbage"', "5"])
def test_a_bad_end_time_is_named_by_its_line(tmp_path, t):
    src = tmp_path / "s.jsonl"
    head = fixture("mcp-replay-v1/readme-minimal.jsonl").read_text().splitlines()[:3]
    src.write_text("\n".join(head) + f'\n{{"t":{t},"type":"end","exitCode":0,"durationMs":1}}\n')
    session, _ = open_session(src)
    with pytest.raises(FormatError, match=r"s\.jsonl: line 4: t "):
        list(session)
