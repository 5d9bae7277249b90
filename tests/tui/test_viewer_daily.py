"""The viewer used daily (issue 29): export by the file name, phrase search, the footer of the row, asking
before quitting with held messages, column headings and widths, ``s`` against ``S``, and held time apart
from the server's time. Driven by Textual's pilot, on files and on the scripted proxy of
``test_live_contract``."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Select

from mcpreel.formats import open_session
from mcpreel.tui.app import ViewerApp
from mcpreel.tui.live import live_app
from mcpreel.tui.screens import QuitScreen, SaveScreen
from tests.tui.test_live_contract import CALL, ScriptedProxy, _record, _until, proxy  # noqa: F401 (a fixture)
from tests.tui.test_viewer import _answer, _app, _call, _detail, _lines, _loaded, _reel, _type, small_reel  # noqa: F401

pytestmark = pytest.mark.anyio


@pytest.fixture
def reel(request) -> Path:
    """``test_viewer``'s small reel (every kind of row)."""
    return request.getfixturevalue("small_reel")


@pytest.fixture
def live(request) -> ScriptedProxy:
    """``test_live_contract``'s scripted proxy, holding one call (h1, a 30 s timeout)."""
    return request.getfixturevalue("proxy")


async def _written(pilot, app: ViewerApp, path: Path) -> None:
    for _ in range(100):
        await pilot.pause()
        if path.exists():
            break
    await app.workers.wait_for_complete()
    await pilot.pause()


async def _save_dialog(pilot, key: str, path: Path, fmt: str | None = None) -> SaveScreen:
    await pilot.press(key)
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, SaveScreen)
    if fmt is not None:
        screen.query_one("#format", Select).value = fmt
        await pilot.pause()
    screen.query_one("#path", Input).value = str(path)
    return screen


# -- 6: export by the file name's ending unless a format is chosen -----------------------------------------
async def test_export_takes_the_format_from_the_file_name_unless_one_is_chosen(reel: Path, tmp_path: Path):
    app = _app(reel)
    async with app.run_test(size=(160, 40)) as pilot:
        await _loaded(pilot, app)
        screen = await _save_dialog(pilot, "e", tmp_path / "x.har")
        assert screen.query_one("#format", Select).value == "auto"  # not preset to reel
        await pilot.click("#ok")
        await _written(pilot, app, tmp_path / "x.har")
        assert "(har, from the file name)" in app.status_text
        # a name that says no format is refused, nothing written
        await _save_dialog(pilot, "e", tmp_path / "x.txt")
        await pilot.click("#ok")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert any("cannot tell the format from the name" in n.message for n in app._notifications)
        # a format chosen wins over the ending
        await _save_dialog(pilot, "e", tmp_path / "chosen.har", fmt="reel")
        screen = app.screen
        screen.query_one("#path", Input).value = str(tmp_path / "chosen.har")
        await pilot.click("#ok")
        await _written(pilot, app, tmp_path / "chosen.har")
    doc = json.loads((tmp_path / "x.har").read_text())
    assert doc["log"]["entries"]  # a HAR, not a reel under a .har name
    assert not (tmp_path / "x.txt").exists()
    first = (tmp_path / "chosen.har").read_text().splitlines()[0]
    assert json.loads(first)["type"] == "meta"  # the reel asked for


async def test_a_save_format_given_at_start_is_what_the_dialog_opens_with(reel: Path, tmp_path: Path):
    app = _app(reel, save_format="qai")
    async with app.run_test(size=(160, 40)) as pilot:
        await _loaded(pilot, app)
        screen = await _save_dialog(pilot, "e", tmp_path / "y.jsonl")
        assert screen.query_one("#format", Select).value == "qai"
        await pilot.click("#ok")
        await _written(pilot, app, tmp_path / "y.jsonl")
    assert "messages" in json.loads((tmp_path / "y.jsonl").read_text())


# -- 7: phrases in quotes, bare words ANDed -------------------------------------------------------------------
@pytest.fixture
def words_reel(tmp_path: Path) -> Path:
    return _reel(tmp_path / "words.jsonl", [
        _call(1, "lookup"), _answer(1, "user 99999 found"),
        _call(2, "lookup"), _answer(2, "user 12"),
        _call(3, "lookup"), _answer(3, "order 99999 for user"),
    ])


async def test_bare_words_all_match_and_quotes_make_a_phrase(words_reel: Path):
    app = _app(words_reel)
    async with app.run_test(size=(160, 40)) as pilot:
        await _loaded(pilot, app)
        await _type(pilot, "user 99999")
        assert app.list.items == [1, 5]  # both words (before: either word, every answer)
        await _type(pilot, "text:user 99999")
        assert app.list.items == [1, 5]
        await _type(pilot, '"user 99999"')
        assert app.list.items == [1]
        await _type(pilot, 'text:"user 99999"', keys=True)
        assert app.list.items == [1]
        await _type(pilot, "99999 tool:lookup")  # keys still combine, a tool's operation with the word
        assert app.list.items == [1, 5]
        await _type(pilot, '"user 99999')  # a quote left open: said, the view unchanged
        assert app.list.items == [1, 5]
        assert any("closing quotation" in n.message for n in app._notifications)


# -- 8: the footer, quitting, headings, widths, s and S, held time -------------------------------------------------
def _footer(app: ViewerApp) -> set[str]:
    return {key.description for key in app.screen.query("FooterKey")}


async def test_the_footer_shows_the_keys_of_the_row(live: ScriptedProxy):
    app = live_app(live.path)
    async with app.run_test(size=(200, 40)) as pilot:
        await _until(pilot, lambda: "h1" in app.held, "held")
        await _until(pilot, lambda: "Forward" in _footer(app), "the held row's keys in the footer")
        shown = _footer(app)
        assert {"Forward", "Edit", "Drop", "Inject", "Quit"} <= shown
        assert not {"Pair", "Save shown", "Export"} & shown
        await pilot.press("p")  # not a key of a HELD row: nothing happens
        assert app.list.current() == "h1"
        await pilot.press("home")
        await _until(pilot, lambda: "Pair" in _footer(app), "the browsing keys")
        shown = _footer(app)
        assert {"Pair", "Save shown", "Save all", "Export", "Filter", "Inject"} <= shown
        assert not {"Forward", "Edit", "Drop"} & shown
        await pilot.press("f")  # not a key of a record row: nothing is sent
        await pilot.pause(0.1)
        assert live.got == []


async def test_the_footer_of_a_file_offers_no_live_keys(reel: Path):
    app = _app(reel)
    async with app.run_test(size=(200, 40)) as pilot:
        await _loaded(pilot, app)
        await pilot.pause()
        shown = _footer(app)
        assert {"Pair", "Save shown", "Save all", "Export", "Filter", "Help", "Quit"} <= shown
        assert not {"Forward", "Edit", "Drop", "Inject", "Intercept"} & shown


async def _ask_to_quit(pilot: Any, app: Any) -> None:
    """``q`` once the proxy's message is held: the question is asked, the viewer still runs."""
    await _until(pilot, lambda: "h1" in app.held, "held")
    await pilot.press("q")
    await pilot.pause()
    assert isinstance(app.screen, QuitScreen) and app.is_running


async def test_quitting_with_messages_held_asks_first(live: ScriptedProxy):
    app = live_app(live.path)
    async with app.run_test(size=(160, 40)) as pilot:
        await _ask_to_quit(pilot, app)
        said = str(app.screen.query_one("#fate").content)
        assert "1 message is held" in str(app.screen.query_one(".title").content)
        assert "they go on unchanged after their 30s timeout" in said
        await pilot.press("n")
        await pilot.pause()
        assert app.is_running and not isinstance(app.screen, QuitScreen)
        await pilot.press("q")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
    assert not app.is_running
    assert live.got == []  # quitting decided nothing: the hold is the proxy's to keep


async def test_the_quit_question_answers_itself_once_nothing_is_held(live: ScriptedProxy):
    app = live_app(live.path)
    async with app.run_test(size=(160, 40)) as pilot:
        await _ask_to_quit(pilot, app)
        # another viewer (or the timeout) releases it while the question is open: nothing is left to ask
        live.send({"type": "released", "hold": "h1", "action": "forward", "by": "timeout"})
        await _until(pilot, lambda: not app.is_running, "the viewer quit")
    assert live.got == []  # this viewer decided nothing


async def test_the_cursors_line_stays_in_view_when_the_list_shrinks(tmp_path: Path):
    """The list loses lines when the terminal, the header or the status line takes them: the line under
    the cursor is scrolled back into view (it was left below the fold), and a scrollbar never takes the
    last line (in CI's 80x24 terminal a horizontal one hid the line the cursor was on)."""
    records: list[dict[str, Any]] = []
    for i in range(5):
        records += [_call(i, "x"), _answer(i)]
    app = _app(_reel(tmp_path / "r.jsonl", records))
    async with app.run_test(size=(160, 40)) as pilot:
        await _loaded(pilot, app)
        await pilot.press("end")
        await pilot.pause()
        assert app.list.cursor == 9 and app.list.scroll_offset.y == 0
        for width, height in ((160, 10), (80, 24)):  # 80x24: the narrow layout, the list above the detail
            await pilot.resize_terminal(width, height)
            await pilot.pause()
            await pilot.pause()
            top, shown = app.list.scroll_offset.y, app.list.scrollable_content_region.height
            assert shown < 10 and top <= app.list.cursor < top + shown, (width, height, top, shown)
            assert not app.list.show_horizontal_scrollbar  # lines are cut with an ellipsis, never scrolled sideways


LONG = "a_really_long_tool_name_that_goes_on_and_on"


async def test_columns_have_headings_and_a_long_tool_name_is_cut_before_the_id(tmp_path: Path):
    path = _reel(tmp_path / "long.jsonl", [_call(7, LONG), _answer(7), _call(8, "x"), _answer(8)])
    app = _app(path)
    async with app.run_test(size=(200, 40)) as pilot:
        await _loaded(pilot, app)
        heading = app.heading().plain
        assert str(app.query_one("#columns").content) == heading or heading in str(app.query_one("#columns").content)
        line = _lines(app)[0]
        names = ["method", "tool", "id", "status", "latency", "marks", "time (UTC)"]
        where = [heading.index(n) for n in names]
        assert where == sorted(where)
        tool_at, id_at = heading.index("tool"), heading.index(" id ") + 1
        cell = line[tool_at:id_at]
        assert cell.endswith("… ") and LONG.startswith(cell[:-2])  # cut, and a space before the id
        assert line[id_at:].startswith("7 ")
        assert line[heading.index("status"):].startswith("ok ")
        # a file of short names keeps narrow columns
        short = _app(_reel(tmp_path / "short.jsonl", [_call(1, "x"), _answer(1)]))
    async with short.run_test(size=(200, 40)) as pilot:
        await _loaded(pilot, short)
        assert short.heading().plain.index(" id ") < heading.index(" id ")


async def test_s_saves_what_is_shown_and_capital_s_every_record(reel: Path, tmp_path: Path):
    app = _app(reel)
    async with app.run_test(size=(160, 40)) as pilot:
        await _loaded(pilot, app)
        await _type(pilot, "status:error")
        assert app.list.items == [5, 6]
        screen = await _save_dialog(pilot, "s", tmp_path / "shown.jsonl")
        assert "the 2 records shown (filter: status:error)" in str(screen.query_one(".title").content)
        await pilot.click("#ok")
        await _written(pilot, app, tmp_path / "shown.jsonl")
        screen = await _save_dialog(pilot, "S", tmp_path / "all.jsonl")
        assert "every record (11)" in str(screen.query_one(".title").content)
        await pilot.click("#ok")
        await _written(pilot, app, tmp_path / "all.jsonl")
    shown = open_session(tmp_path / "shown.jsonl")[0].messages
    assert [m.raw.get("id") for m in shown] == [2, 2] and shown[0].modified
    assert len(open_session(tmp_path / "all.jsonl")[0].messages) == 11


def _iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


async def test_a_held_call_shows_its_held_time_apart_from_the_server_time(tmp_path: Path):
    since = datetime.now(UTC) - timedelta(seconds=2)
    held = ScriptedProxy(tmp_path / "p.sock", [
        {"type": "held", "hold": "h1", "direction": "client_to_server", "message": CALL, "since": _iso(since),
         "timeout": None}])
    try:
        app = live_app(held.path)
        async with app.run_test(size=(200, 50)) as pilot:
            await _until(pilot, lambda: "h1" in app.held, "held")
            await pilot.press("f")
            await _until(pilot, lambda: "h1" not in app.held, "released")
            answered = since + timedelta(seconds=60)  # held from 2 s before the test to when f arrived
            held.send({"type": "record", "record": {"t": _iso(since), "dir": "in", "raw": CALL, "seq": 0,
                                                     "decided_by": "viewer"}})
            held.send({"type": "record", "record": {"t": _iso(answered), "dir": "out", "seq": 1,
                                                     "raw": {"jsonrpc": "2.0", "id": 7, "result": {}}}})
            await _until(pilot, lambda: len(app.entries) == 2, "the call and its answer")
            call, answer = app.entries.rows
            assert call.latency_ms == answer.latency_ms == 60_000
            assert call.held_ms is not None and 2000 <= call.held_ms < 60_000 and answer.held_ms == call.held_ms
            server = 60_000 - call.held_ms
            assert call.server_ms == server
            held_mark = f"[HELD {call.held_ms / 1000:.1f}s]"
            line = _lines(app)[0]
            assert held_mark in line and f" {server}ms " in line and "60000ms" not in line
            await pilot.press("home")
            assert f"60000ms: held {call.held_ms}ms, server {server}ms" in _detail(app)
    finally:
        held.close()


async def test_a_recorded_held_call_says_its_latency_includes_the_hold(tmp_path: Path):
    # a reel records who decided, not when: the viewer says the latency holds the wait too
    path = _reel(tmp_path / "decided.jsonl", [_call(1, "search", decided_by="viewer"), _answer(1)])
    app = _app(path)
    async with app.run_test(size=(200, 50)) as pilot:
        await _loaded(pilot, app)
        assert "includes the time it was held" in _detail(app) and "decided by viewer" in _detail(app)
        assert "[HELD" not in _lines(app)[0]
