"""The viewer attached to a real recording proxy (``mcpreel record --intercept`` over stdio) while the official
SDK client calls a real server through it, in both eras: the pilot holds a ``tools/call``, edits it and
forwards it, and the client gets the answer to the edited call; a dropped call gets the chosen error; ``s``
saves what the viewer saw, both versions of the edit included."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters

from mcpreel.control import discovery
from mcpreel.formats import open_session
from mcpreel.tui.live import live_app
from tests.peers import SDK_SERVER

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]
PY = sys.executable


def _proxy_socket(directory: Path, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = discovery.running(directory) if directory.exists() else []
        if found:
            return str(found[0]["socket"])
        time.sleep(0.05)
    raise TimeoutError("no proxy appeared in the runtime directory")


async def _until(pilot: Any, check: Any, what: str, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        await pilot.pause(0.02)
        if check():
            return
    raise AssertionError(f"never happened: {what}")


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_hold_edit_forward_and_drop_from_the_viewer(tmp_path: Path, mode: str) -> None:
    from textual.widgets import TextArea

    out, saved = tmp_path / "s.jsonl", tmp_path / "viewer.jsonl"
    env = dict(os.environ, MCPREEL_RUNTIME_DIR=str(tmp_path / "rt"))
    server = StdioServerParameters(command=PY, env=env, args=[
        "-m", "mcpreel", "record", "-q", "--out", str(out), "--intercept", "tool:echo", "--",
        PY, str(SDK_SERVER), "--as", "proxy"])
    async with Client(server, mode=mode) as client:  # type: ignore[call-arg]
        socket_path = await anyio.to_thread.run_sync(_proxy_socket, tmp_path / "rt")
        app = live_app(socket_path, save_path=str(saved))
        async with app.run_test(size=(160, 50)) as pilot:
            call = asyncio.create_task(client.call_tool("echo", {"text": "as sent"}))
            await _until(pilot, lambda: app.held, "the echo call held")
            hold = next(iter(app.held))
            assert app.list.current() == hold and "tools/call" in app.line_of(hold).plain
            assert not call.done()  # the client waits while the viewer decides
            await pilot.press("m")
            await pilot.pause()
            edited = json.loads(json.dumps(app.held[hold].message))
            edited["params"]["arguments"]["text"] = "edited in the viewer"
            app.screen.query_one("#json", TextArea).text = json.dumps(edited, indent=2)
            await pilot.press("ctrl+s")
            result = await asyncio.wait_for(call, 20)
            assert result.content[0].text == "edited in the viewer"
            # the answer reaches the client and the viewer on their own paths: wait for the viewer's copy
            await _until(pilot, lambda: any(e.msg.modified and e.pair is not None for e in app.entries.rows),
                         "the edit and its answer recorded")
            row = next(e for e in app.entries.rows if e.msg.modified)
            assert "[MODIFIED]" in app.line_of(row.index).plain
            assert row.msg.original["params"]["arguments"]["text"] == "as sent"
            assert row.pair is not None and app.entries.rows[row.pair].status == "ok"

            dropped = asyncio.create_task(client.call_tool("echo", {"text": "drop me"}))
            await _until(pilot, lambda: app.held, "the second call held")
            await pilot.press("d")
            await pilot.pause()
            await pilot.press("enter")  # the default error
            with pytest.raises(MCPError) as err:
                await asyncio.wait_for(dropped, 20)
            assert (err.value.error.code, err.value.error.message) == (-32001, "dropped by the viewer")
            await _until(pilot, lambda: any(e.msg.dropped for e in app.entries.rows), "the drop recorded")
            await pilot.press("s", "enter")
            await _until(pilot, lambda: "saved" in app.status_text, "the save")
    records = open_session(saved)[0].messages
    edit = next(m for m in records if m.modified)
    assert edit.raw["params"]["arguments"]["text"] == "edited in the viewer"
    assert edit.original["params"]["arguments"]["text"] == "as sent" and edit.decided_by == "viewer"
    assert any(m.dropped for m in records) and any(m.injected for m in records)
    assert oct(os.stat(saved).st_mode & 0o777) == "0o600"
