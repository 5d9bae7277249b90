"""Listen streams as the subscription lifecycle draft moves them (transports-wg
proposals/XXXX-subscription-lifecycle.md, 2026-09-29): a stream's ``streamId``, ``expiresAt``, its lifecycle
notifications (``reauthorization_required``, ``access_reduced``, ``missed``, and a type the draft leaves to
others, kept as it came) and its paused state, recorded and shown by ``inspect``; ``missed`` is flagged as
data loss. The session is built from the draft's own wire examples (no SDK speaks it yet)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.operations import operations
from mcpreel.operations.facts import META_SUBSCRIPTION_ID, listen_lifecycle
from tests.formats.support import write

T0 = 1_790_000_000_000  # 2026-09-21T...Z, epoch ms
ISO = "2026-09-21T14:13:20.000Z"  # == T0
LATER = "2026-09-21T14:13:25.000Z"  # T0 + 5 s
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}}


def tagged(method: str, t: int, **params: Any) -> Message:
    return Message("out", {"jsonrpc": "2.0", "method": method, "params": {**params, "_meta": {META_SUBSCRIPTION_ID: "L1"}}},
                   t=T0 + t)


def lifecycle(kind: str, t: int, **params: Any) -> Message:
    return tagged("notifications/subscriptions/lifecycle", t, type=kind, lastUpdatedAt=ISO, **params)


def session() -> Session:
    listen = {"jsonrpc": "2.0", "id": "L1", "method": "subscriptions/listen",
              "params": {"notifications": {"toolsListChanged": True, "lifecycle": True}, "expiresAt": LATER,
                         "_meta": META}}
    records = [
        Message("in", listen, t=T0),
        tagged("notifications/subscriptions/acknowledged", 1, notifications={"toolsListChanged": True},
               streamId="stream-7f3a", expiresAt=LATER, lifecycle=True, lastUpdatedAt=ISO),
        lifecycle("reauthorization_required", 2, authorizedUntil=LATER, reason="token_expiry"),
        # sent 6 s in, its deadline (5 s in) passed: the stream is paused
        lifecycle("reauthorization_required", 6000, authorizedUntil=LATER, reason="token_expiry"),
        lifecycle("access_reduced", 6001, removed={"resourceSubscriptions": ["file:///a"]}),
        lifecycle("missed", 6002),
        lifecycle("com.example/quota_warning", 6003, remaining=3),
        Message("in", {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "L1"}}, t=T0 + 7000),
    ]
    return Session(SessionInfo(transport="stdio", command=["server"], started=T0), records)


def test_the_lifecycle_of_a_stream_is_read_from_its_notes() -> None:
    stream = next(op for op in operations(session()) if op.method == "subscriptions/listen")
    assert len(stream.notes) == 6  # the acknowledgment and every lifecycle notification belong to the stream
    life = listen_lifecycle([(None, m) for _, m in stream.notes])
    assert life is not None and life["streamId"] == "stream-7f3a" and life["expiresAt"] == LATER
    assert life["events"] == {"reauthorization_required": 2, "access_reduced": 1, "missed": 1,
                              "com.example/quota_warning": 1}
    assert life["data_loss"] is True
    assert listen_lifecycle([]) is None


def test_inspect_shows_it_and_flags_missed_as_data_loss(tmp_path: Path) -> None:
    reel = write(session(), tmp_path / "s.jsonl", "reel")
    r = CliRunner().invoke(cli, ["inspect", str(reel)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    line = next(line for line in r.output.splitlines() if "listen (subscription 'L1')" in line)
    assert "streamId stream-7f3a" in line and f"expires {LATER}" in line
    assert "missed x1" in line and "DATA LOSS" in line and "paused" in line
    assert "com.example/quota_warning x1" in line
    r = CliRunner().invoke(cli, ["inspect", str(reel), "--json"], catch_exceptions=False)
    streams = json.loads(r.output)["summary"]["streams"]
    assert streams == [{"request": 0, "subscription": "L1", "streamId": "stream-7f3a", "expiresAt": LATER,
                        "lifecycle": True, "lastUpdatedAt": ISO,
                        "events": {"reauthorization_required": 2, "access_reduced": 1, "missed": 1,
                                   "com.example/quota_warning": 1},
                        "data_loss": True, "paused": True}]
