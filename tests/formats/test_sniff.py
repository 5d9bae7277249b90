"""Sniffing a file whose first line is longer than the head the sniffer reads (64 KiB)."""

from __future__ import annotations

import json

import pytest

from mcpreel.formats import open_session

BIG = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a", "arguments": {"blob": "x" * 70_000}}}
ANSWER = {"jsonrpc": "2.0", "id": 1, "result": {}}


@pytest.mark.parametrize(("text", "fmt", "records"), [
    (json.dumps(BIG) + "\n" + json.dumps(ANSWER) + "\n", "jsonrpc", 2),  # JSONL opening with a large message
    (json.dumps([BIG]) + "\n" + json.dumps(ANSWER) + "\n", "jsonrpc", 2),  # ... with a large batch line
    (json.dumps(BIG) + "\n" + " " * 70_000 + "\n\n" + json.dumps(ANSWER) + "\n", "jsonrpc", 2),  # blank run between
    (json.dumps([BIG, ANSWER]), "jsonrpc", 2),  # one long line: one JSON array of messages
    (json.dumps(BIG) + "\n" + " " * 70_000 + "\n", "jsonrpc", 1),  # one message and trailing blanks
    (json.dumps({"v": 1, "type": "meta", "startedAt": "2026-01-01T00:00:00Z", "label": "x" * 70_000, "command": []})
     + "\n" + json.dumps({"t": "2026-01-01T00:00:01Z", "dir": "in", "raw": BIG}) + "\n", "reel", 1),
])
def test_a_first_line_longer_than_the_head(tmp_path, text, fmt, records):
    src = tmp_path / "s.jsonl"
    src.write_text(text)
    session, detection = open_session(src)
    assert detection.format == fmt
    assert len(list(session)) == records
