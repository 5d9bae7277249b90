"""The viewer's behaviour on files, driven by Textual's pilot (``App.run_test``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mcpreel.formats import open_session
from mcpreel.model import Kind, Message, Session, SessionInfo
from mcpreel.tui.app import FileFeed, ViewerApp
from mcpreel.tui.entries import NO_ANSWER, Entries

pytestmark = pytest.mark.anyio


def _reel(path: Path, records: list[dict]) -> Path:
    lines = [{"v": 1, "type": "meta", "startedAt": "2026-11-24T00:00:00.000Z", "label": "t", "command": ["srv"],
              "transport": "stdio"}]
    for i, rec in enumerate(records):
        lines.append({"t": f"2026-11-24T00:00:{i:02d}.000Z", "seq": i, **rec})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _call(i: int, tool: str, **more) -> dict:
    return {"dir": "in", "raw": {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                 "params": {"name": tool, "arguments": {"q": f"query {i}"}}}, **more}


def _answer(i: int, text: str = "fine", error: bool = False) -> dict:
    if error:
        return {"dir": "out", "raw": {"jsonrpc": "2.0", "id": i, "error": {"code": -32602, "message": "bad"}}}
    return {"dir": "out", "raw": {"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": text}]}}}


@pytest.fixture
def small_reel(tmp_path: Path) -> Path:
    return _reel(tmp_path / "small.jsonl", [
        {"dir": "in", "raw": {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                         "clientInfo": {"name": "probe", "version": "1"}}}},
        _answer(0),
        _call(1, "search"),
        {"type": "stderr", "text": "server says hello"},
        _answer(1, "found it"),
        _call(2, "fetch", modified=True,
              original={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": {"name": "fetch", "arguments": {"q": "ORIGINAL"}}}),
        _answer(2, error=True),
        _call(3, "search", dropped=True),
        {"dir": "out", "type": "invalid", "text": "not json {"},
        _call(4, "search"),
        {"dir": "out", "raw": {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "hi"}},
         "injected": True, "decided_by": "viewer"},
    ])


def _app(path: Path, **kw) -> ViewerApp:
    session, _ = open_session(path)
    return ViewerApp(FileFeed(session), session.info, title=str(path), **kw)


async def _loaded(pilot, app: ViewerApp) -> None:
    for _ in range(200):
        await pilot.pause()
        if app.entries.complete:
            return
    raise AssertionError("the file never finished loading")


def _plain(widget) -> str:
    """What a Static shows, as plain text."""
    from rich.console import Console

    console = Console(width=200, record=True, file=open(os.devnull, "w"))
    content = widget.content
    console.print(content if not isinstance(content, str) else content)
    return console.export_text()


def _detail(app: ViewerApp) -> str:
    return _plain(app.query_one("#detail"))


def _lines(app: ViewerApp) -> list[str]:
    return [app.line_of(item).plain for item in app.list.items]


def test_entries_pair_status_and_latency():
    e = Entries(SessionInfo())
    e.extend([Message("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}, t=1000),
              Message("out", {"jsonrpc": "2.0", "id": 1, "method": "roots/list"}, t=1001),  # same id, other side
              Message("out", {"jsonrpc": "2.0", "id": 1, "result": {"isError": True}}, t=1250),
              Message("in", {"jsonrpc": "2.0", "id": 9, "method": "ping"}, t=1300),
              Message(None, kind=Kind.STDERR, text="x")])
    e.finish()
    call, roots, answer, ping, stderr = e.rows
    assert (call.pair, answer.pair, roots.pair) == (2, 0, None)
    assert (call.status, answer.status, answer.tool, answer.latency_ms) == ("isError", "isError", "x", 250)
    assert roots.status == ping.status == NO_ANSWER  # pending at the end of the file: never answered
    assert stderr.label == "stderr"


def test_entries_deduplicate_live_records_by_seq():
    e = Entries()
    first = e.add(Message("in", {"jsonrpc": "2.0", "method": "x"}, seq=4))
    assert first is not None and e.add(Message("in", {"jsonrpc": "2.0", "method": "x"}, seq=4)) is None
    assert len(e) == 1


async def test_rows_show_what_happened(small_reel: Path):
    app = _app(small_reel)
    async with app.run_test(size=(160, 40)) as pilot:
        await _loaded(pilot, app)
        lines = _lines(app)
        assert len(lines) == 11
        assert "C→S initialize" in lines[0] and "ok" in lines[0]
        assert "tools/call" in lines[2] and "search" in lines[2] and "2000ms" in lines[2]
        assert "stderr" in lines[3] and "server says hello" in lines[3]
        assert "[MODIFIED]" in lines[5] and "error -32602" in lines[5]
        assert "[DROPPED]" in lines[7]
        assert "invalid" in lines[8] and "not json {" in lines[8]
        assert "no answer" in lines[9]
        assert "S→C notifications/message" in lines[10] and "[INJECTED]" in lines[10]
        header = _plain(app.query_one("#header"))
        assert "legacy era (handshake, 2025-06-18)" in header and "probe 1" in header


async def test_detail_shows_json_the_original_and_the_pair_and_p_jumps(small_reel: Path):
    app = _app(small_reel)
    async with app.run_test(size=(160, 50)) as pilot:
        await _loaded(pilot, app)
        await pilot.press("down", "down")  # the search call
        text = _detail(app)
        assert '"name": "search"' in text and "found it" in text and "response (p jumps there)" in text
        await pilot.press("p")
        assert app.list.current() == 4
        assert "request (p jumps there)" in _detail(app)
        await pilot.press("down")  # the edited fetch call
        text = _detail(app)
        assert "the original, before the edit" in text and "ORIGINAL" in text and "[MODIFIED]" in text


async def test_save_with_s_writes_a_private_reel(small_reel: Path, tmp_path: Path):
    out = tmp_path / "saved" / "copy.jsonl"
    app = _app(small_reel, save_path=str(out))
    async with app.run_test(size=(160, 40)) as pilot:
        await _loaded(pilot, app)
        await pilot.press("s")
        await pilot.press("enter")
        for _ in range(100):
            await pilot.pause()
            if out.exists():
                break
        await app.workers.wait_for_complete()
    assert oct(os.stat(out).st_mode & 0o777) == "0o600"
    saved, _ = open_session(out)
    records = saved.messages
    assert len(records) == 11
    assert records[5].modified and records[5].original["params"]["arguments"]["q"] == "ORIGINAL"
    assert records[7].dropped
    assert [r.kind for r in records].count(Kind.STDERR) == 1


async def test_export_with_e_writes_the_chosen_format(small_reel: Path, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = _app(small_reel, save_path="copy.jsonl")
    async with app.run_test(size=(160, 40)) as pilot:
        await _loaded(pilot, app)
        await pilot.press("e")
        from textual.widgets import Select

        select = app.screen.query_one("#format", Select)
        select.value = "qai"
        await pilot.pause()
        await pilot.click("#ok")
        await app.workers.wait_for_complete()
        await pilot.pause()
    doc = json.loads((tmp_path / "copy.qai.json").read_text())
    edited = [m for m in doc["messages"] if m.get("modified")]
    assert edited and edited[0]["original_payload"]["params"]["arguments"]["q"] == "ORIGINAL"


async def test_save_to_a_path_that_cannot_be_written_says_so(small_reel: Path, tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    app = _app(small_reel, save_path=str(blocker / "copy.jsonl"))
    async with app.run_test(size=(160, 40)) as pilot:
        await _loaded(pilot, app)
        await pilot.press("s", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        messages = [n.message for n in app._notifications]
    assert any("cannot write" in m for m in messages)
    assert not app.is_running


async def test_help_opens_and_closes(small_reel: Path):
    app = _app(small_reel)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        from mcpreel.tui.screens import HelpScreen

        assert isinstance(app.screen, HelpScreen)
        shown = _plain(app.screen.query_one("#help"))
        assert "jump to the pair" in shown and "[MODIFIED] edited on the way" in shown
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("q")
    assert not app.is_running


async def _type(pilot, text: str, keys: bool = False) -> None:
    await pilot.press("slash")
    box = pilot.app.query_one("#filter")
    box.value = ""
    if keys:
        await pilot.press(*text)  # each character a key, as a person types
    else:
        box.value = text
    await pilot.press("enter")
    await pilot.pause()


async def test_filter_tokens_narrow_the_list_and_bad_tokens_are_refused(small_reel: Path):
    app = _app(small_reel)
    async with app.run_test(size=(160, 40)) as pilot:
        await _loaded(pilot, app)
        await _type(pilot, "method:tools/call", keys=True)
        assert app.list.items == [2, 4, 5, 6, 7, 9]  # an operation: the calls and their answers
        assert "6 of 11 records" in _plain(app.query_one("#status")) and "method:tools/call" in _plain(app.query_one("#status"))
        await _type(pilot, "method:tools/call dir:out id:1")  # dir:out is client -> server
        assert app.list.items == [2]
        await pilot.press("p")  # the pair is filtered out: said, the cursor stays
        assert app.list.current() == 2
        assert any("hidden by the filter" in n.message for n in app._notifications)
        await _type(pilot, "status:error")
        assert app.list.items == [5, 6]  # the failed call and its answer
        await _type(pilot, "found")  # a bare word is text
        assert app.list.items == [4]
        await _type(pilot, "nosuchkey:x")
        assert app.list.items == [4]  # unchanged
        assert any("unknown key" in n.message for n in app._notifications)
        await pilot.press("escape")
        await _type(pilot, "")
        assert len(app.list.items) == 11


def _http_call(i: int, tool: str, sid: str, exchange: int) -> dict:
    return {**_call(i, tool), "ctx": {"exchange": exchange, "headers": {"mcp-session-id": sid}}}


def _http_answer(i: int, sid: str, exchange: int, error: bool = False) -> dict:
    return {**_answer(i, error=error), "ctx": {"exchange": exchange, "headers": {"mcp-session-id": sid}}}


async def test_the_filter_matches_an_operation_so_the_errors_of_a_tool_are_found(tmp_path: Path):
    # two HTTP client sessions numbering their ids alike: each answer pairs within its own session
    def init(sid: str, exchange: int) -> list[dict]:
        ask = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": sid}}}
        return [{"dir": "in", "raw": ask, "ctx": {"exchange": exchange}},
                {"dir": "out", "raw": {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18"}},
                 "ctx": {"exchange": exchange, "headers": {"mcp-session-id": sid}}}]

    path = _reel(tmp_path / "ops.jsonl", [
        *init("A", 10), *init("B", 11),
        _http_call(1, "run_sql", "A", 1),
        _http_call(1, "search", "B", 2),
        _http_answer(1, "B", 2, error=True),  # search failed (session B)
        _http_answer(1, "A", 1),  # run_sql fine (session A)
        _http_call(2, "run_sql", "A", 3),
        _http_answer(2, "A", 3, error=True),  # run_sql failed
        _http_call(3, "run_sql", "B", 4),
        _http_answer(3, "B", 4, error=True),  # run_sql failed
    ])
    app = _app(path)
    async with app.run_test(size=(160, 40)) as pilot:
        await _loaded(pilot, app)
        rows = app.entries.rows[4:]
        assert [(r.pair, r.status) for r in rows[:4]] == [(7, "ok"), (6, "error -32602"), (5, "error -32602"),
                                                          (4, "ok")]
        await _type(pilot, "status:error tool:run_sql", keys=True)
        assert app.list.items == [8, 9, 10, 11]  # both failed run_sql calls, request and answer
        assert "4 of 12 records" in _plain(app.query_one("#status"))
        await _type(pilot, "status:ok tool:run_sql")
        assert app.list.items == [4, 7]


async def test_a_filter_given_at_start_applies_while_the_file_loads(small_reel: Path):
    app = _app(small_reel, filter_text="kind:notification")
    async with app.run_test(size=(160, 40)) as pilot:
        await _loaded(pilot, app)
        assert app.list.items == [10]
        assert "decided by viewer" in _detail(app)


@pytest.mark.parametrize("name", ["qai/qai_session_dropped.json", "mcp-replay-v1/mcp-context7-com-2026-08-20T17-03-48-173Z.mcp.jsonl",
                                  "hub/mcp-vcr/fixtures__jsonrpc_error_response.yaml"])
async def test_opens_fixtures_of_other_formats(fixtures_dir: Path, name: str):
    path = fixtures_dir / name
    session, _ = open_session(path)
    expected = len(session.messages)
    app = _app(path)
    async with app.run_test(size=(160, 40)) as pilot:
        await _loaded(pilot, app)
        assert len(app.list.items) == expected > 0
        assert _detail(app)  # the first record is shown


async def test_a_big_file_loads_in_batches_and_scrolls(tmp_path: Path):
    records = []
    for i in range(10_000):
        records += [_call(i, "search"), _answer(i)]
    path = _reel(tmp_path / "big.jsonl", [{**r, "t": "2026-11-24T00:00:00.000Z"} for r in records])
    app = _app(path)
    async with app.run_test(size=(160, 40)) as pilot:
        await _loaded(pilot, app)
        assert len(app.list.items) == 20_000
        await pilot.press("end")
        assert app.list.current() == 19_999
        assert "(response)" in app.line_of(19_999).plain


async def test_bad_input_mid_file_ends_the_app_with_its_error(tmp_path: Path):
    path = _reel(tmp_path / "bad.jsonl", [_call(1, "x"), _answer(1)])
    with path.open("a") as fh:
        fh.write("{not json\n")
    app = _app(path)
    async with app.run_test(size=(120, 30)) as pilot:
        for _ in range(100):
            await pilot.pause()
            if not app.is_running:
                break
    assert app.error is not None and "line 4" in str(app.error)
    assert app.return_code == 2


def test_a_session_object_is_what_save_writes():
    e = Entries(SessionInfo(label="x"))
    e.add(Message("in", {"jsonrpc": "2.0", "method": "x"}))
    assert isinstance(e.session(), Session) and len(e.session().messages) == 1


def test_the_command_needs_a_terminal_and_says_so(small_reel: Path):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "mcpreel", "tui", str(small_reel)], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: mcpreel tui needs a terminal (stdin and stdout); for a file's rows use mcpreel inspect"
    assert proc.stdout == ""


async def test_quitting_while_a_file_loads_ends_cleanly(tmp_path: Path):
    path = _reel(tmp_path / "big.jsonl", [{**_call(i, "search"), "t": "2026-11-24T00:00:00.000Z"} for i in range(20_000)])
    app = _app(path)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("q")
    assert not app.is_running and app.error is None and app.return_code == 0


def test_a_save_format_that_cannot_be_written_is_refused_before_the_screen(small_reel: Path):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "mcpreel", "tui", str(small_reel), "--save-format", "langchain"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stderr.startswith("error: --save-format langchain: can be read but not written")


async def test_two_client_sessions_are_told_apart_with_their_eras(tmp_path: Path):
    init = {"dir": "in", "raw": {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "old-client", "version": "1"}}}}
    discover = {"dir": "in", "raw": {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "new-client", "version": "2"}}}}}
    path = _reel(tmp_path / "two.jsonl", [init, _answer(0), _call(1, "search"), _answer(1), discover,
                                          {"dir": "out", "raw": {"jsonrpc": "2.0", "id": 0, "result": {
                                              "supportedVersions": ["2026-07-28"], "capabilities": {}}}}])
    app = _app(path)
    async with app.run_test(size=(160, 40)) as pilot:
        await _loaded(pilot, app)
        header = _plain(app.query_one("#header"))
        assert "session 1, legacy era (handshake, 2025-06-18), old-client 1" in header
        assert "session 2, modern era (stateless, 2026-07-28), new-client 2" in header
        lines = _lines(app)
        assert " S1 " in lines[2] and " S2 " in lines[4]
        await pilot.press("end")
        assert "session 2, modern era (stateless, 2026-07-28)" in _detail(app)


async def test_what_is_said_on_stderr_under_record_tui_becomes_a_notification(small_reel: Path):
    import sys

    app = _app(small_reel)
    app.show_stderr = True
    async with app.run_test(size=(160, 40)) as pilot:
        await _loaded(pilot, app)
        print("mcpreel: control: holding tools/call; no viewer is attached", file=sys.stderr, flush=True)
        for _ in range(50):
            await pilot.pause(0.02)
            if app._notifications:
                break
        assert [n.message for n in app._notifications] == ["mcpreel: control: holding tools/call; no viewer is attached"]


def test_a_file_and_attach_together_are_refused(small_reel: Path):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "mcpreel", "tui", str(small_reel), "--attach", "/nowhere.sock"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert (proc.returncode, proc.stderr.strip()) == (2, "error: give a FILE or --attach, not both")


async def test_a_narrow_terminal_puts_the_detail_under_the_list(small_reel: Path):
    app = _app(small_reel)
    async with app.run_test(size=(90, 40)) as pilot:
        await _loaded(pilot, app)
        assert app.list.size.width >= 88  # the whole width: the marks fit
        detail = app.query_one("#detail-scroll")
        assert detail.region.y > app.list.region.y and detail.region.width >= 88
    wide = _app(small_reel)
    async with wide.run_test(size=(160, 40)) as pilot:
        await _loaded(pilot, wide)
        assert wide.query_one("#detail-scroll").region.x > wide.list.region.x


async def test_at_puts_the_cursor_on_the_record_calls_names(small_reel: Path) -> None:
    """``mcpreel tui FILE --at N`` (the command ``mcpreel calls`` prints): the cursor starts on record N."""
    app = _app(small_reel, at=6)
    async with app.run_test() as pilot:
        await _loaded(pilot, app)
        await pilot.pause()
        assert app.list.current() == 6
        assert app.entries.rows[6].status.startswith("error")  # the failed answer of fetch
    beyond = _app(small_reel, at=99)
    async with beyond.run_test() as pilot:
        await _loaded(pilot, beyond)
        assert beyond.list.current() == 0  # out of range: a warning, the cursor stays put
