"""The live viewer against the control protocol itself: a scripted proxy on a real Unix socket.

The real proxy is tested in ``test_live_proxy.py``; here the other end is a script that speaks the
contract's lines exactly (hello, backlog records sent twice, held, released, ok/error, end), so what the
viewer sends for each key (forward, edit, drop with an error, inject) is checked word for word.
"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from mcpreel.tui.app import ViewerApp
from mcpreel.tui.live import live_app

pytestmark = pytest.mark.anyio

CALL = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "search", "arguments": {"q": "cats"}}}


class ScriptedProxy:
    """Accepts one viewer, sends ``lines``, then answers each command with ok (or error for a bad edit)
    and records what it got."""

    def __init__(self, path: Path, lines: list[dict[str, Any]]):
        self.path, self.lines = path, lines
        self.got: list[dict[str, Any]] = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(1)
        self.conn: socket.socket | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def send(self, obj: dict[str, Any]) -> None:
        assert self.conn is not None
        self.conn.sendall(json.dumps(obj).encode() + b"\n")

    def _run(self) -> None:
        self.conn, _ = self.server.accept()
        proxy = {"version": 1, "pid": 1, "socket": str(self.path), "transport": "stdio", "target": ["srv", "--x"],
                 "listen": None, "reel": "/tmp/live.jsonl", "started": "2026-11-24T00:00:00Z",
                 "intercept": "dir:out kind:request"}
        self.send({"type": "hello", "version": 1, "proxy": proxy})
        for line in self.lines:
            self.send(line)
        with self.conn.makefile("rb") as fh:
            for raw in fh:
                cmd = json.loads(raw)
                self.got.append(cmd)
                if cmd["type"] == "decide" and cmd["action"] == "edit" and cmd["message"].get("jsonrpc") != "2.0":
                    self.send({"type": "error", "ref": cmd.get("ref"), "message": "not JSON-RPC"})
                    continue
                self.send({"type": "ok", "ref": cmd.get("ref")})
                if cmd["type"] == "decide":
                    self.send({"type": "released", "hold": cmd["hold"], "action": cmd["action"], "by": "viewer"})

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.shutdown(socket.SHUT_RDWR)  # the reading thread's file holds the socket open
            except OSError:
                pass
            self.conn.close()
        self.server.close()


def _record(seq: int, d: str, raw: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"type": "record", "record": {"t": f"2026-11-24T00:00:0{seq}.000Z", "dir": d, "raw": raw, "seq": seq, **more}}


@pytest.fixture
def proxy(tmp_path: Path):
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}
    backlog = [_record(0, "in", init), _record(1, "out", {"jsonrpc": "2.0", "id": 0, "result": {}})]
    lines = backlog + backlog + [  # the backlog twice: the viewer keeps one of each seq
        {"type": "held", "hold": "h1", "direction": "client_to_server", "message": CALL, "since": "x", "timeout": 30},
    ]
    p = ScriptedProxy(tmp_path / "p.sock", lines)
    yield p
    p.close()


async def _until(pilot, check, what: str) -> None:
    for _ in range(300):
        await pilot.pause(0.01)
        if check():
            return
    raise AssertionError(f"never happened: {what}")


async def test_backlog_once_then_held_forward(proxy: ScriptedProxy):
    app: ViewerApp = live_app(proxy.path)
    async with app.run_test(size=(160, 40)) as pilot:
        await _until(pilot, lambda: "h1" in app.held, "the held message shown")
        assert len(app.entries) == 2  # the backlog sent twice is kept once
        assert app.list.current() == "h1"
        assert "HELD" in app.line_of("h1").plain and "tools/call" in app.line_of("h1").plain
        assert "goes on unchanged after 30s" in app.line_of("h1").plain
        header = str(app.query_one("#header").content)
        assert "live: pid 1" in header and "srv --x" in header and "intercept dir:out kind:request" in header
        await pilot.press("f")
        await _until(pilot, lambda: "h1" not in app.held, "released")
        assert proxy.got[0]["type"] == "decide" and proxy.got[0]["hold"] == "h1" and proxy.got[0]["action"] == "forward"
        assert "h1" not in app.list.items
        proxy.send(_record(2, "in", CALL))
        await _until(pilot, lambda: len(app.entries) == 3, "the forwarded call recorded")
        assert app.list.current() == 2  # live: the cursor follows the newest line


async def test_edit_is_checked_then_sent(proxy: ScriptedProxy):
    from textual.widgets import TextArea

    app = live_app(proxy.path)
    async with app.run_test(size=(160, 50)) as pilot:
        await _until(pilot, lambda: "h1" in app.held, "held")
        await pilot.press("m")
        await pilot.pause()
        area = app.screen.query_one("#json", TextArea)
        area.text = '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": 5}'
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "params" in str(app.screen.query_one("#problem").content)  # refused here, nothing sent
        assert proxy.got == []
        await pilot.press("ctrl+o")  # no terminal to hand over under the pilot: said, the editor stays
        await pilot.pause()
        assert "cannot be handed to $EDITOR" in str(app.screen.query_one("#problem").content)
        edited = {**CALL, "params": {"name": "search", "arguments": {"q": "dogs"}}}
        area.text = json.dumps(edited)
        await pilot.press("ctrl+s")
        await _until(pilot, lambda: proxy.got, "the edit sent")
        assert proxy.got[0]["action"] == "edit" and proxy.got[0]["message"] == edited


async def test_drop_asks_for_the_error_and_inject_sends_a_message(proxy: ScriptedProxy):
    from textual.widgets import Input

    app = live_app(proxy.path)
    async with app.run_test(size=(160, 50)) as pilot:
        await _until(pilot, lambda: "h1" in app.held, "held")
        await pilot.press("d")
        await pilot.pause()
        app.screen.query_one("#code", Input).value = "-32050"
        app.screen.query_one("#message", Input).value = "not today"
        await pilot.click("#ok")
        await _until(pilot, lambda: proxy.got, "the drop sent")
        assert proxy.got[0]["action"] == "drop" and proxy.got[0]["error"] == {"code": -32050, "message": "not today"}
        await pilot.press("i")
        await pilot.pause()
        await pilot.press("ctrl+s")  # the default: a notifications/message to the client
        await _until(pilot, lambda: len(proxy.got) == 2, "the inject sent")
        assert proxy.got[1]["type"] == "inject" and proxy.got[1]["direction"] == "server_to_client"
        assert proxy.got[1]["message"]["method"] == "notifications/message"


async def test_the_end_and_a_closed_connection_are_said(proxy: ScriptedProxy):
    app = live_app(proxy.path)
    async with app.run_test(size=(160, 40)) as pilot:
        await _until(pilot, lambda: "h1" in app.held, "held")
        proxy.send({"type": "end", "exit_code": 0, "reason": "client closed stdin"})
        proxy.close()
        await _until(pilot, lambda: not app.held, "held messages cleared")
        status = str(app.query_one("#status").content)
        assert "the recording ended (client closed stdin, exit 0)" in status and "s still saves" in status


def test_a_socket_nobody_answers_is_one_clear_error(tmp_path: Path):
    from mcpreel.errors import UsageError

    with pytest.raises(UsageError, match="cannot connect to the control socket"):
        live_app(tmp_path / "gone.sock")


async def test_records_arriving_under_a_dialog_are_listed(proxy: ScriptedProxy):
    app = live_app(proxy.path)
    async with app.run_test(size=(160, 40)) as pilot:
        await _until(pilot, lambda: "h1" in app.held, "held")
        await pilot.press("question_mark")
        await pilot.pause()
        proxy.send(_record(2, "out", {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}))
        proxy.send({"type": "released", "hold": "h1", "action": "forward", "by": "timeout"})
        await _until(pilot, lambda: len(app.entries) == 3 and not app.held, "the record and the release")
        await pilot.press("escape")
        assert app.list.items == [0, 1, 2]
        assert "3 records" in str(app.query_one("#status").content)


async def test_capital_i_changes_what_the_proxy_holds(proxy: ScriptedProxy):
    from textual.widgets import Input

    app = live_app(proxy.path)
    async with app.run_test(size=(160, 40)) as pilot:
        await _until(pilot, lambda: "h1" in app.held, "held")
        await pilot.press("I")
        await pilot.pause()
        box = app.screen.query_one("#intercept", Input)
        assert box.value == "dir:out kind:request"  # the proxy's, from its hello
        box.value = "method:tools/list"
        await pilot.press("enter")
        await _until(pilot, lambda: proxy.got, "the intercept sent")
        assert proxy.got[0] == {"type": "intercept", "filter": "method:tools/list", "ref": proxy.got[0]["ref"]}
        assert "intercept method:tools/list" in str(app.query_one("#header").content)
        await pilot.press("I")
        await pilot.pause()
        app.screen.query_one("#intercept", Input).value = ""
        await pilot.press("enter")
        await _until(pilot, lambda: len(proxy.got) == 2, "holding turned off")
        assert proxy.got[1]["filter"] is None
        assert "intercept " not in str(app.query_one("#header").content)


async def test_a_record_that_breaks_the_reel_rules_is_skipped_with_a_warning(proxy: ScriptedProxy):
    app = live_app(proxy.path)
    async with app.run_test(size=(160, 40)) as pilot:
        await _until(pilot, lambda: "h1" in app.held, "held")
        proxy.send({"type": "record", "record": {"t": "yesterday", "dir": "in", "raw": CALL, "seq": 2}})
        proxy.send(_record(3, "out", {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}))
        await _until(pilot, lambda: len(app.entries) == 3, "the good record after the bad one")
        assert any("a record the proxy sent was skipped" in n.message and "ISO-8601" in n.message
                   for n in app._notifications)
