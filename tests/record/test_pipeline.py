"""The recording pipeline: addons in order, dropping and changing records, and one addon seeing every
record of a real stdio recording and of a real HTTP recording, beside redaction and the session file."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcpreel._infra import jsonio
from mcpreel.formats import open_session
from mcpreel.formats.reel import ReelWriter
from mcpreel.model import Kind, Message, SessionInfo
from mcpreel.record import RecordHooks, RecordOptions, StdioServer, record
from mcpreel.record.pipeline import Pipeline, Redaction
from mcpreel.record.stdio_recorder import WireRecorder
from mcpreel.redact import MARKER, Redactor

from .http.helpers import ThreadServer, proxy
from .http.scripted import ScriptedTarget
from .stdio.helpers import PY, RAW

T = 1_747_090_800_123


class Hooks:
    """A custom addon: every hook, every record (thread-safe: the stdio pumps call it from two threads)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.info: SessionInfo | None = None
        self.before: list[Message] = []
        self.after: list[Message] = []
        self.ended: list[tuple[int | None, str]] = []

    def started(self, info: SessionInfo) -> None:
        self.info = info

    def record(self, rec: Message) -> Message:
        with self.lock:
            self.before.append(rec)
        return rec

    def recorded(self, rec: Message) -> None:
        with self.lock:
            self.after.append(rec)

    def finished(self, exit_code: int | None, reason: str) -> None:
        self.ended.append((exit_code, reason))


def test_addons_run_in_order_and_may_change_or_drop_a_record(tmp_path: Path) -> None:
    calls: list[str] = []

    class Upper:
        def record(self, rec: Message) -> Message:
            calls.append("upper")
            return Message(rec.dir, {**rec.raw, "method": rec.raw["method"].upper()}, rec.t)

    class DropPings:
        def record(self, rec: Message) -> Message | None:
            calls.append("drop")
            return None if rec.raw.get("method") == "PING" else rec

    class OnlyWatches:
        pass

    pipeline = Pipeline([Upper(), DropPings(), OnlyWatches()])
    assert pipeline.sees_records
    assert pipeline.record(Message("in", {"method": "ping"}, T)) is None
    kept = pipeline.record(Message("in", {"method": "tools/list"}, T))
    assert kept is not None and kept.raw == {"method": "TOOLS/LIST"}
    assert calls == ["upper", "drop", "upper", "drop"]
    assert not Pipeline([OnlyWatches()]).sees_records  # no record hooks: the stdio recorder's fast path


def test_the_stdio_recorder_writes_what_the_addons_return_and_keeps_untouched_wire_bytes(tmp_path: Path) -> None:
    class DropNotifications:
        def record(self, rec: Message) -> Message | None:
            return None if rec.kind == Kind.MESSAGE and "id" not in rec.raw else rec

    path = tmp_path / "r.jsonl"
    hooks = Hooks()
    rec = WireRecorder(ReelWriter(path, SessionInfo(label="t", transport="stdio", command=["srv"])),
                       pipeline=Pipeline([DropNotifications(), hooks]))
    spaced = b'{"id": 1,  "method": "x"}'
    rec.lines("in", [spaced, b'{"jsonrpc":"2.0","method":"notifications/initialized"}', b"junk"], T)
    rec.stderr([b"a line"], T)
    rec.close(0, "done")
    lines = path.read_bytes().splitlines()
    assert spaced in lines[1]  # the wire bytes, as they came
    body = [json.loads(x) for x in lines[1:-1]]
    assert [b.get("type", "message") for b in body] == ["message", "invalid", "stderr"]
    assert rec.messages == 1 and rec.invalid == 1
    assert [r.seq for r in hooks.after] == [0, 1, 2] and [b["seq"] for b in body] == [0, 1, 2]
    assert hooks.ended == [(0, "done")]


def test_a_custom_addon_sees_every_record_of_a_stdio_recording(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    qai = tmp_path / "s.json"
    hooks = Hooks()
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    r_err, w_err = os.pipe()
    requests = [{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"password": f"s3cret{i}"}}
                for i in range(3)]
    os.write(w_in, b"".join(jsonio.dumps(m) + b"\n" for m in requests) + b"not json\n")
    os.close(w_in)
    try:
        options = RecordOptions(StdioServer((PY, RAW, "answer", "--token", "abcdef"), fds=(r_in, w_out, w_err)), out,
                                session_file=qai, save_every=None, redact=True)
        result = record(options, RecordHooks(addons=(hooks,)))
    finally:
        for fd in (r_in, w_out, w_err):
            os.close(fd)
    answers = b""
    while chunk := os.read(r_out, 1 << 16):
        answers += chunk
    os.close(r_out)
    os.close(r_err)
    assert answers.count(b"\n") == 3  # forwarded as ever

    recorded = open_session(out, "reel")[0]
    assert len(hooks.after) == len(recorded.messages) == len(hooks.before)
    assert [(m.seq, m.kind, m.raw, m.text) for m in hooks.after] == \
           [(m.seq, m.kind, m.raw, m.text) for m in recorded.messages]
    # the addon comes after the redaction: it never sees a secret
    assert all(m.raw["params"]["password"] == MARKER for m in hooks.before if m.dir == "in" and m.raw)
    assert hooks.info is not None and hooks.info.command[-1] == MARKER
    assert hooks.ended == [(result.exit_code, result.reason)]
    assert result.redacted == 4  # three passwords and the --token in the argv
    assert result.session_file == qai and len(json.loads(qai.read_text())["messages"]) == 6


@pytest.mark.anyio
async def test_a_custom_addon_sees_every_record_of_an_http_recording(tmp_path: Path) -> None:
    hooks = Hooks()
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "login", "arguments": {"password": "hunter2"}}}
    with ThreadServer(ScriptedTarget()) as srv:
        with proxy("streamable-http", srv.url("/mcp"), tmp_path, redactor=Redactor(), addons=[hooks],
                   session_file=tmp_path / "s.json") as run:
            async with httpx2.AsyncClient() as http:
                r = await http.post(run.url.replace("/mcp", "/echo-headers"), content=jsonio.dumps(call))
                assert r.status_code == 200
                sse = await http.get(run.url.replace("/mcp", "/sse"))  # a stream: transport records and events
                assert sse.status_code == 200
    records = run.records()
    assert {m.kind for m in records} == {Kind.MESSAGE, Kind.TRANSPORT}
    assert len(hooks.after) == len(records) == len(hooks.before)
    assert [(m.seq, m.kind, m.dir, m.raw) for m in hooks.after] == [(m.seq, m.kind, m.dir, m.raw) for m in records]
    sent = [m for m in hooks.before if m.dir == "in" and m.kind == Kind.MESSAGE]
    assert sent[0].raw["params"]["arguments"]["password"] == MARKER
    assert hooks.info is not None and hooks.info.transport == "streamable-http"
    assert len(hooks.ended) == 1 and hooks.ended[0][1] == "stopped"
    assert run.result is not None and run.result.redacted == 1
    assert run.result.session_file == tmp_path / "s.json"


def test_redaction_counts_and_copies_never_edits() -> None:
    redaction = Redaction(Redactor())
    ctx: dict[str, Any] = {"path": "/mcp?token=abcdefgh", "status": 200}
    rec = Message("in", None, T, kind=Kind.TRANSPORT, ctx=ctx)
    out = redaction.record(rec)
    assert out is not rec and out.ctx == {"path": f"/mcp?token={MARKER}", "status": 200}
    assert ctx["path"] == "/mcp?token=abcdefgh"  # the recorder's own dict is left as it was
    plain = Message("in", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, T)
    assert redaction.record(plain) is plain
    info = SessionInfo(label="t", transport="streamable-http", url="https://u:pw@h/mcp", metadata={"listen": "x"})
    redaction.started(info)
    assert info.url == f"https://u:{MARKER}@h/mcp" and redaction.total == 2
