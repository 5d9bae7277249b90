"""``convert`` keeps a reader's fast lane of payloads through the URL-secret cleaning (it changes only
transport context, which the lane does not carry): a jsonrpc file's trace is written from its blocks."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from mcpreel.convert import _without_url_secrets
from mcpreel.formats import open_session


def test_the_cleaned_session_keeps_the_readers_lane(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}\n')
    session, _ = open_session(path)
    assert session.wire_lane is not None
    cleaned = _without_url_secrets(session)
    assert cleaned.wire_lane is session.wire_lane
    assert [b.raws for b in cleaned.wire_blocks()] == [b.raws for b in session.wire_blocks()]
    assert [m.raw for m in cleaned] == [m.raw for m in session]


def _flat(blocks) -> list[tuple]:
    out = []
    for b in blocks:
        sources = b.sources or list(range(b.first_source, b.first_source + len(b.raws)))
        for i, raw in enumerate(b.raws):
            out.append((raw, b.dirs[i] if b.dirs else None, b.times[i] if b.times else None, sources[i],
                        b.scopes[i] if b.scopes else None))
    return out


def test_the_reels_lane_gives_the_blocks_its_records_give(tmp_path: Path) -> None:
    from mcpreel.model import WireBlocks, _blocks_from_messages

    t = "2026-11-24T00:00:00.{:03d}Z"
    lines = [{"v": 1, "type": "meta", "startedAt": t.format(0), "label": "x", "command": []}]
    for i in range(WireBlocks.SIZE + 40):  # over a block's size
        lines.append({"t": t.format(i % 1000), "dir": "in" if i % 2 else "out", "raw": {"jsonrpc": "2.0", "id": i}})
    lines += [
        {"t": t.format(1), "dir": "in", "raw": {"jsonrpc": "2.0", "id": "s"}, "seq": 7},
        {"t": t.format(2), "dir": "in", "raw": {"jsonrpc": "2.0", "id": "e"}, "modified": True, "original": {"a": 1}},
        {"t": t.format(3), "dir": "in", "raw": {"jsonrpc": "2.0", "id": "d"}, "dropped": True},
        {"t": t.format(4), "type": "stderr", "text": "log"},
        {"t": t.format(5), "dir": "out", "raw": {"jsonrpc": "2.0", "id": "f"}, "file": "a.jsonl"},
        {"dir": "in", "raw": {"jsonrpc": "2.0", "id": "no-time"}},
        {"t": "not a time", "dir": "in", "raw": {}, "x": 1},
        {"t": t.format(6), "dir": "in", "raw": [{"jsonrpc": "2.0", "id": "b1"}, {"jsonrpc": "2.0", "id": "b2"}]},
        {"type": "end", "t": t.format(9), "exitCode": 0},
    ]
    path = tmp_path / "r.reel.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines[:-3] + lines[-2:]))
    session, _ = open_session(path)
    assert session.wire_lane is not None
    assert _flat(session.wire_blocks()) == _flat(_blocks_from_messages(list(session)))
    bad = tmp_path / "bad.reel.jsonl"
    bad.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))  # with the line whose time is no time
    session, _ = open_session(bad)
    from mcpreel.errors import McpreelError

    with pytest.raises(McpreelError, match="line .*: t is not an ISO-8601 time"):
        list(session.wire_blocks())
