"""The library shows what the CLI shows: a caller of ``replay_file`` gets redacted bodies by default.

A replay's report is shared the way its terminal output is (CI logs, artifacts, a notebook cell); the
verdict is made on the bodies as they came, then what the report shows is redacted, unless the caller
says ``ReplayOptions(redact=False)``. Both eras: a handshake-era recording and a 2026-07-28 one.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from mcpreel.replay import ReplayOptions, ReplayTarget, replay_file

SECRET = "hunter2-very-secret"


def _reel(path: Path, era: str, answer: str) -> Path:
    modern = era == "modern"
    lines: list[dict] = [{"v": 1, "type": "meta", "startedAt": "2026-11-28T00:00:00.000Z", "label": "r", "command": ["x"]}]
    meta = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}} if modern else {}
    if not modern:
        lines += [
            {"t": "2026-11-28T00:00:00.001Z", "dir": "in", "raw": {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}},
            {"t": "2026-11-28T00:00:00.002Z", "dir": "out", "raw": {"jsonrpc": "2.0", "id": 0, "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}}},
            {"t": "2026-11-28T00:00:00.003Z", "dir": "in", "raw": {"jsonrpc": "2.0", "method": "notifications/initialized"}},
        ]
    lines += [
        {"t": "2026-11-28T00:00:01.000Z", "dir": "in", "raw": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "login", "arguments": {"user": "ann", "password": SECRET}, **meta}}},
        {"t": "2026-11-28T00:00:01.001Z", "dir": "out", "raw": {"jsonrpc": "2.0", "id": 1, "result": {
            "content": [{"type": "text", "text": f"{answer}: password={SECRET}"}]}}},
    ]
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return path


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_replay_file_redacts_what_it_shows_unless_told_not_to(tmp_path: Path, era: str) -> None:
    recorded = _reel(tmp_path / "recorded.jsonl", era, "welcome")
    server = _reel(tmp_path / "server.jsonl", era, "go away")  # a changed answer: a difference to show
    target = ReplayTarget(command=[sys.executable, "-m", "mcpreel", "serve", str(server)])
    report = replay_file(recorded, target, options=ReplayOptions(timeout=60))
    call = next(r for r in report.results if r.method == "tools/call")
    assert call.status == "changed"  # judged on the bodies as they came
    shown = orjson.dumps([r.to_json() for r in report.results]).decode()
    assert SECRET not in shown and "welcome" in shown  # redacted, yet still the recording's words

    raw = replay_file(recorded, target, options=ReplayOptions(timeout=60, redact=False))
    assert SECRET in orjson.dumps([r.to_json() for r in raw.results]).decode()
