"""The control server on its own: holds, decisions, bad commands, notes on stderr, attach and detach."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mcpreel.control.client import ControlClient, ControlError
from mcpreel.control.server import ControlServer
from mcpreel.intercept import Decision, Pending
from mcpreel.model import Message

CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}


class Port:
    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    def inject(self, direction: str, message: Any) -> None:
        if direction == "out":
            raise ValueError("no way to the client here")
        self.sent.append((direction, message))


@pytest.fixture
def server(tmp_path: Path) -> Any:
    notes: list[str] = []
    s = ControlServer(transport="stdio", directory=tmp_path, intercept="", note=notes.append)
    s.notes = notes  # type: ignore[attr-defined]
    s.start()
    yield s
    s.close()


def decide_in_thread(server: ControlServer, message: Any = CALL) -> tuple[threading.Thread, list[Decision]]:
    got: list[Decision] = []
    t = threading.Thread(target=lambda: got.append(server.decide(Pending("in", message, 0))), daemon=True)
    t.start()
    return t, got


def test_a_hold_with_no_viewer_waits_and_says_so(server: ControlServer) -> None:
    assert server.wants("in", CALL) and not server.wants("out", CALL)  # "" = every request from the client
    t, got = decide_in_thread(server)
    time.sleep(0.3)
    assert t.is_alive() and not got
    assert any("holding tools/call echo (id 1) from the client; no viewer is attached, it waits" in n
               for n in server.notes)  # type: ignore[attr-defined]
    with ControlClient.connect(server.socket_path) as c:  # type: ignore[arg-type]
        held = c.wait_for("held", timeout=5)  # a viewer that attaches later gets the hold
        assert held["message"] == CALL and held["direction"] == "client_to_server" and held["timeout"] is None
        c.forward(held["hold"])
        assert c.wait_for("released", timeout=5) == {"type": "released", "hold": held["hold"], "action": "forward",
                                                     "by": "viewer"}
    t.join(5)
    assert got[0].action == "forward" and got[0].by == "viewer"


def test_a_bad_edit_is_refused_and_the_hold_stays(server: ControlServer) -> None:
    t, got = decide_in_thread(server)
    with ControlClient.connect(server.socket_path) as c:  # type: ignore[arg-type]
        held = c.wait_for("held", timeout=5)
        with pytest.raises(ControlError, match="not valid JSON-RPC"):
            c.edit(held["hold"], {"id": 1, "method": "tools/call"})
        with pytest.raises(ControlError, match="no message is held as 'h999'"):
            c.forward("h999")
        assert t.is_alive()
        c.edit(held["hold"], {**CALL, "params": {"name": "echo", "arguments": {"text": "y"}}})
        with pytest.raises(ControlError, match="already released|no message is held"):
            c.forward(held["hold"])
    t.join(5)
    assert got[0].action == "edit" and got[0].message["params"]["arguments"]["text"] == "y"


def test_the_timeout_forwards_unchanged(tmp_path: Path) -> None:
    s = ControlServer(transport="stdio", directory=tmp_path, intercept="tool:echo", timeout=0.2)
    s.start()
    try:
        started = time.monotonic()
        d = s.decide(Pending("in", CALL, 0))
        assert d.action == "forward" and d.by == "timeout" and time.monotonic() - started >= 0.2
    finally:
        s.close()


def test_a_viewer_that_detaches_leaves_its_holds_waiting(server: ControlServer) -> None:
    from mcpreel.control import discovery

    c = ControlClient.connect(server.socket_path)  # type: ignore[arg-type]
    t, got = decide_in_thread(server)
    c.wait_for("held", timeout=5)
    time.sleep(0.6)
    c.close()
    deadline = time.monotonic() + 5
    while not any("the viewer detached" in n for n in server.notes) and time.monotonic() < deadline:  # type: ignore[attr-defined]
        time.sleep(0.02)
    assert any("the viewer detached; 1 held message(s) keep waiting for a viewer" in n
               for n in server.notes)  # type: ignore[attr-defined]
    assert t.is_alive()
    assert len(discovery.running(server.socket_path.parent)) == 1  # type: ignore[union-attr]
    time.sleep(0.2)
    # a listing's probe connects and leaves at once: no "viewer detached" line for it
    assert sum("the viewer detached" in n for n in server.notes) == 1  # type: ignore[attr-defined]
    server.shutdown()  # the proxy stops: nothing waits forever
    t.join(5)
    assert got[0].by == "detach"


def test_records_backlog_inject_and_intercept_commands(server: ControlServer) -> None:
    port = Port()
    server.attach(port)
    for i in range(3):
        rec = Message("in", {"jsonrpc": "2.0", "id": i, "method": "ping"}, 1_700_000_000_000 + i, seq=i)
        server.recorded(rec)
    with ControlClient.connect(server.socket_path) as c:  # type: ignore[arg-type]
        backlog = [c.wait_for("record", timeout=5) for _ in range(3)]
        assert [b["record"]["seq"] for b in backlog] == [0, 1, 2] and backlog[0]["record"]["dir"] == "in"
        server.recorded(Message("out", {"jsonrpc": "2.0", "id": 0, "result": {}}, 1_700_000_000_010, seq=3))
        assert c.wait_for("record", timeout=5)["record"]["seq"] == 3  # live
        c.inject("client_to_server", {"jsonrpc": "2.0", "method": "notifications/x"})
        assert port.sent == [("in", {"jsonrpc": "2.0", "method": "notifications/x"})]
        with pytest.raises(ControlError, match="inject failed: no way to the client"):
            c.inject("server_to_client", {"jsonrpc": "2.0", "method": "notifications/x"})
        c.intercept("method:ping")
        assert server.filter_text == "method:ping" and not server.wants("in", CALL)
        c.intercept(None)
        assert not server.wants("in", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
        with pytest.raises(ControlError, match="unknown key"):
            c.intercept("colour:red")
    server.close(0, "done")
    assert not server.socket_path.exists()  # type: ignore[union-attr]


def test_end_is_sent_when_the_recording_finishes(server: ControlServer) -> None:
    with ControlClient.connect(server.socket_path) as c:  # type: ignore[arg-type]
        server.finished(3, "server exited with code 3")
        assert c.wait_for("end", timeout=5) == {"type": "end", "exit_code": 3, "reason": "server exited with code 3"}
        assert c.next_event(timeout=5) is None  # then the connection closes


def test_fast_path_frames_reach_a_viewer_as_records_backlog_and_live(server: ControlServer) -> None:
    from mcpreel.record.pipeline import Pipeline

    pipeline = Pipeline([server])
    assert not pipeline.sees_records and pipeline.sees_frames  # watching keeps the stdio recorder's fast path
    pipeline.frames("in", [b'{"jsonrpc":"2.0","id":1,"method":"ping"}', "not json"], 1_700_000_000_000, 5)
    with ControlClient.connect(server.socket_path) as c:  # type: ignore[arg-type]
        got = [c.wait_for("record", timeout=5)["record"] for _ in range(2)]
        assert [(g["seq"], g.get("type"), g.get("raw")) for g in got] == [
            (5, None, {"jsonrpc": "2.0", "id": 1, "method": "ping"}), (6, "invalid", None)]
        pipeline.frames("out", [b'{"jsonrpc":"2.0","id":1,"result":{}}'], 1_700_000_000_001, 7)
        live = c.wait_for("record", timeout=5)["record"]
        assert live["seq"] == 7 and live["dir"] == "out"
