"""``convert`` keeps a reader's fast lane of payloads through the URL-secret cleaning (it changes only
transport context, which the lane does not carry): a jsonrpc file's trace is written from its blocks."""

from __future__ import annotations

from pathlib import Path

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
