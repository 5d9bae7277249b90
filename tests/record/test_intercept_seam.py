"""The intercept seam of the stdio recorder, with a scripted interceptor (no socket): what is forwarded,
what the client gets back, what the reel records."""

from __future__ import annotations

import json
import os
import select
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from mcpreel._infra import jsonio
from mcpreel.formats import qai
from mcpreel.intercept import FORWARD, Decision, Interceptors, Pending
from mcpreel.record import RecordHooks, RecordOptions, StdioServer, record
from tests.record.stdio.helpers import PY, RAW


def call(i: int, name: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "method": name, "params": {"q": f"q{i}"}}


class Scripted:
    """Edits ``edit_me``, drops ``drop_me`` (with an error), closes nothing, and injects a ping."""

    def __init__(self) -> None:
        self.seen: list[Pending] = []
        self.port: Any = None

    def attach(self, port: Any) -> None:
        self.port = port

    def wants(self, direction: str, message: Any) -> bool:
        return direction == "in" and "method" in message and "id" in message

    def decide(self, item: Pending) -> Decision:
        self.seen.append(item)
        name = item.message["method"]
        if name == "edit_me":
            return Decision("edit", message={**item.message, "method": "edited"}, by="rules:test")
        if name == "drop_me":
            return Decision("drop", error={"code": -32099, "message": "not today"}, by="viewer")
        if name == "boom":
            raise RuntimeError("a bug in the interceptor")
        return Decision("forward", by="timeout", inject=[("in", {"jsonrpc": "2.0", "id": 99, "method": "ping"})])


def run(tmp_path: Path, messages: list[dict[str, Any]], interceptor: Any) -> tuple[list[dict[str, Any]], list[dict], list[str]]:
    out = tmp_path / "s.jsonl"
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    r_err, w_err = os.pipe()
    os.write(w_in, b"".join(jsonio.dumps(m) + b"\n" for m in messages))
    os.close(w_in)
    warnings: list[str] = []
    try:
        record(RecordOptions(StdioServer((PY, RAW, "answer"), fds=(r_in, w_out, w_err)), out),
               RecordHooks(interceptor=interceptor, warn=warnings.append))
    finally:
        for fd in (r_in, w_out, w_err):
            os.close(fd)
    got = b""
    while chunk := os.read(r_out, 1 << 16):
        got += chunk
    os.close(r_out)
    os.close(r_err)
    reel = [json.loads(x) for x in out.read_bytes().splitlines()]
    return [json.loads(x) for x in got.splitlines()], reel, warnings


def test_edit_drop_forward_and_inject_through_the_stdio_seam(tmp_path: Path) -> None:
    s = Scripted()
    client_got, reel, _ = run(tmp_path, [call(1, "edit_me"), call(2, "drop_me"), call(3, "plain"),
                                         {"jsonrpc": "2.0", "method": "notifications/x"}], s)
    assert s.port is not None and [p.message["id"] for p in s.seen] == [1, 2, 3]
    answers = {m["id"]: m for m in client_got}
    assert answers[1]["result"] == {"method": "edited"}  # the server got the edited call
    assert answers[2] == {"jsonrpc": "2.0", "id": 2, "error": {"code": -32099, "message": "not today"}}
    assert answers[3]["result"] == {"method": "plain"}
    assert 99 not in answers  # the injected request's answer is kept from the client, which never sent it
    body = [x for x in reel if "raw" in x]
    edited = next(x for x in body if x["raw"].get("id") == 1 and x["dir"] == "in")
    assert edited["modified"] is True and edited["original"] == call(1, "edit_me")
    assert edited["raw"]["method"] == "edited" and edited["decided_by"] == "rules:test"
    dropped = next(x for x in body if x["raw"].get("id") == 2 and x["dir"] == "in")
    assert dropped["dropped"] is True and dropped["decided_by"] == "viewer" and dropped["raw"] == call(2, "drop_me")
    answer = next(x for x in body if x["raw"].get("id") == 2 and x["dir"] == "out")
    assert answer["injected"] is True
    plain = next(x for x in body if x["raw"].get("id") == 3 and x["dir"] == "in")
    assert plain["decided_by"] == "timeout" and "modified" not in plain
    ping = next(x for x in body if x["raw"].get("id") == 99 and x["dir"] == "in")
    assert ping["injected"] is True
    # the server answered the injected request (it reached the server): recorded, marked, not forwarded
    kept = next(x for x in body if x["raw"].get("id") == 99 and x["dir"] == "out")
    assert kept["raw"]["result"] == {"method": "ping"} and kept["kept_from_client"] is True
    # the server saw no dropped call: exactly one answer per forwarded request
    assert sorted(m["id"] for m in client_got) == [1, 2, 3]
    # the one reading pairs the answer with the injected request and keeps both marks
    from mcpreel.formats import open_session
    from mcpreel.operations import walk

    steps = [st for st in walk(open_session(tmp_path / "s.jsonl", "reel")[0]) if st.kind == "response"]
    injected = next(st.exchange for st in steps if st.exchange is not None and st.exchange.id == 99)
    assert injected.injected and injected.response is not None and injected.response["result"] == {"method": "ping"}


def test_a_failing_interceptor_lets_the_message_through_with_one_warning(tmp_path: Path) -> None:
    client_got, reel, warnings = run(tmp_path, [call(1, "boom")], Scripted())
    assert client_got[0]["result"] == {"method": "boom"}
    assert any("a bug in the interceptor" in w and "unchanged" in w for w in warnings)


def test_the_reel_and_qai_round_trip_the_intercept_fields(tmp_path: Path) -> None:
    from mcpreel.formats import open_session
    from mcpreel.formats import reel as reel_format

    run(tmp_path, [call(1, "edit_me"), call(2, "drop_me")], Scripted())
    session = open_session(tmp_path / "s.jsonl", "reel")[0]
    msgs = session.messages
    edited = next(m for m in msgs if m.dir == "in" and m.id == 1)
    assert edited.modified and edited.original == call(1, "edit_me") and edited.decided_by == "rules:test"
    assert any(m.injected for m in msgs)
    again = tmp_path / "again.jsonl"
    with again.open("wb") as fh:
        reel_format.write(session, fh)
    assert [(m.modified, m.original, m.dropped, m.injected, m.decided_by) for m in open_session(again, "reel")[0].messages] \
        == [(m.modified, m.original, m.dropped, m.injected, m.decided_by) for m in msgs]
    exported = tmp_path / "s.json"
    with exported.open("wb") as fh:
        qai.write(session, fh)
    doc = json.loads(exported.read_text())
    entry = next(e for e in doc["messages"] if e["direction"] == "client_to_server" and e["jsonrpc_id"] == 1)
    # seed 003's shape: modified true, payload as forwarded, original_payload as it arrived
    assert entry["modified"] is True and entry["payload"]["method"] == "edited"
    assert entry["original_payload"] == call(1, "edit_me")
    unedited = next(e for e in doc["messages"] if e["direction"] == "server_to_client")
    assert unedited["modified"] is False and "original_payload" not in unedited
    back = open_session(exported, "qai")[0].messages
    assert [(m.modified, m.dropped, m.injected, m.decided_by) for m in back] == \
        [(m.modified, m.dropped, m.injected, m.decided_by) for m in msgs]


def test_a_chain_passes_the_edit_on_and_a_drop_ends_it() -> None:
    class Edit:
        def wants(self, direction: str, message: Any) -> bool:
            return True

        def decide(self, item: Pending) -> Decision:
            return Decision("edit", message={**item.message, "params": {"x": 1}}, by="rules:a")

    class Look:
        def __init__(self, action: str) -> None:
            self.got: Any = None
            self.action = action

        def wants(self, direction: str, message: Any) -> bool:
            return True

        def decide(self, item: Pending) -> Decision:
            self.got = item.message
            return FORWARD if self.action == "forward" else Decision(self.action, by="viewer")

    look = Look("forward")
    d = Interceptors([Edit(), look]).decide(Pending("in", call(1, "m"), 0))
    assert look.got["params"] == {"x": 1} and d.action == "edit" and d.by == "rules:a"
    d = Interceptors([Edit(), Look("drop")]).decide(Pending("in", call(1, "m"), 0))
    assert d.action == "drop" and d.by == "viewer"


def test_a_server_to_client_answer_can_be_held_and_edited(tmp_path: Path) -> None:
    class EditAnswers:
        def wants(self, direction: str, message: Any) -> bool:
            return direction == "out" and "result" in message

        def decide(self, item: Pending) -> Decision:
            return Decision("edit", message={**item.message, "result": {"method": "changed"}}, by="rules:out")

    client_got, reel, _ = run(tmp_path, [call(1, "plain")], EditAnswers())
    assert client_got == [{"jsonrpc": "2.0", "id": 1, "result": {"method": "changed"}}]
    answer = next(x for x in reel if x.get("dir") == "out" and "raw" in x)
    assert answer["modified"] is True and answer["original"]["result"] == {"method": "plain"}


def test_an_inactive_interceptor_is_not_asked(tmp_path: Path) -> None:
    class Idle:
        active = False

        def __init__(self) -> None:
            self.asked = 0

        def wants(self, direction: str, message: Any) -> bool:
            self.asked += 1
            return True

        def decide(self, item: Pending) -> Decision:
            raise AssertionError("nothing is held while inactive")

    idle = Idle()
    client_got, _, _ = run(tmp_path, [call(1, "a"), call(2, "b")], idle)
    assert [m["id"] for m in client_got] == [1, 2] and idle.asked == 0


def test_bytes_stream_through_while_nothing_is_held_and_injections_wait_for_the_line_to_end(tmp_path: Path) -> None:
    class Switch:
        def __init__(self) -> None:
            self.active = False
            self.port: Any = None
            self.held: list[Any] = []

        def attach(self, port: Any) -> None:
            self.port = port

        def wants(self, direction: str, message: Any) -> bool:
            return direction == "in"

        def decide(self, item: Pending) -> Decision:
            self.held.append(item.message)
            return Decision("edit", message={**item.message, "edited": True}, by="rules:t")

    def read_some(fd: int, want: bytes, timeout: float = 10) -> bytes:
        got = b""
        deadline = time.monotonic() + timeout
        while want not in got and time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                got += os.read(fd, 1 << 16)
        return got

    sw = Switch()
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    r_err, w_err = os.pipe()
    cat = shutil.which("cat")
    assert cat is not None
    options = RecordOptions(StdioServer((cat,), fds=(r_in, w_out, w_err)), tmp_path / "s.jsonl")
    thread = threading.Thread(target=record, args=(options, RecordHooks(interceptor=sw)), daemon=True)
    thread.start()
    os.write(w_in, b'{"jsonrpc":"2.0","id":1,')
    first = read_some(r_out, b'"id":1,')
    assert first == b'{"jsonrpc":"2.0","id":1,'  # before its newline: nothing is held
    sw.port.inject("out", {"jsonrpc": "2.0", "method": "notifications/injected"})
    time.sleep(0.2)
    sw.active = True  # holding starts midway through a line: its rest goes on, unheld
    os.write(w_in, b'"method":"a"}\n{"jsonrpc":"2.0","id":2,"method":"b"}\n')
    got = first + read_some(r_out, b'"id":2')
    os.close(w_in)
    thread.join(10)
    for fd in (r_in, w_out, w_err):
        os.close(fd)
    os.close(r_out)
    os.close(r_err)
    lines = [json.loads(x) for x in got.splitlines()]
    # the line in progress ended first, then the injected one, then the held-and-edited one
    assert lines == [{"jsonrpc": "2.0", "id": 1, "method": "a"}, {"jsonrpc": "2.0", "method": "notifications/injected"},
                     {"jsonrpc": "2.0", "id": 2, "method": "b", "edited": True}]
    assert sw.held == [{"jsonrpc": "2.0", "id": 2, "method": "b"}]
