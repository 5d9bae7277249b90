"""End to end: the official SDK client (both eras) through ``mcpreel record --intercept`` over stdio, and a
scripted viewer on the control socket (:mod:`mcpreel.control.client`) that edits, drops and forwards."""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError, StdioServerParameters

from mcpreel.control import discovery
from mcpreel.control.client import ControlClient
from tests.peers import SDK_SERVER

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]
PY = sys.executable
EDIT_ERROR = {"code": -32050, "message": "the viewer said no"}


def wait_for_proxy(directory: Path, timeout: float = 20.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = discovery.running(directory) if directory.exists() else []
        if found:
            return found[0]
        time.sleep(0.05)
    raise TimeoutError("no proxy appeared in the runtime directory")


class Viewer(threading.Thread):
    """Attaches to the one proxy, edits held echo calls saying "edit me", drops "drop me", forwards the rest
    (unless ``decide`` is False: then it only watches)."""

    def __init__(self, directory: Path, *, decide: bool = True, leave_after_first_hold: bool = False):
        super().__init__(daemon=True)
        self.directory = directory
        self.decide = decide
        self.leave = leave_after_first_hold
        self.events: list[dict[str, Any]] = []
        self.info: dict[str, Any] = {}
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.info = wait_for_proxy(self.directory)
            with ControlClient.connect(self.info["socket"]) as c:
                for event in c.events(timeout=60):
                    self.events.append(event)
                    if event["type"] == "end":
                        return
                    if event["type"] != "held":
                        continue
                    if self.leave:
                        return
                    if not self.decide:
                        continue
                    message = event["message"]
                    text = message["params"]["arguments"].get("text")
                    if text == "edit me":
                        edited = json.loads(json.dumps(message))
                        edited["params"]["arguments"]["text"] = "edited by the viewer"
                        c.edit(event["hold"], edited)
                    elif text == "drop me":
                        c.drop(event["hold"], EDIT_ERROR)
                    else:
                        c.forward(event["hold"])
        except BaseException as exc:
            self.error = exc


def params(tmp_path: Path, out: Path, *options: str) -> StdioServerParameters:
    env = dict(os.environ, MCPREEL_RUNTIME_DIR=str(tmp_path / "rt"))
    return StdioServerParameters(command=PY, args=["-m", "mcpreel", "record", "--out", str(out), *options, "--",
                                                   PY, str(SDK_SERVER), "--as", "proxy"], env=env)


def reel(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_bytes().splitlines()]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_hold_edit_drop_and_forward_over_stdio(tmp_path: Path, mode: str) -> None:
    out = tmp_path / "s.jsonl"
    viewer = Viewer(tmp_path / "rt")
    viewer.start()
    errlog = tmp_path / "err.txt"
    with errlog.open("w") as err:
        async with Client(params(tmp_path, out, "--intercept", "tool:echo"), mode=mode) as c:  # type: ignore[call-arg]
            edited = await c.call_tool("echo", {"text": "edit me"})
            plain = await c.call_tool("echo", {"text": "as is"})
            with pytest.raises(MCPError) as dropped:
                await c.call_tool("echo", {"text": "drop me"})
            failing = await c.call_tool("fail", {"reason": "not held"})  # the filter holds echo only
    del err
    viewer.join(20)
    assert viewer.error is None, viewer.error
    # the server got the edited call, the client its answer; the dropped call got the viewer's error
    assert edited.content[0].text == "edited by the viewer"
    assert plain.content[0].text == "as is"
    assert (dropped.value.error.code, dropped.value.error.message) == (EDIT_ERROR["code"], EDIT_ERROR["message"])
    assert failing.is_error
    kinds = [e["type"] for e in viewer.events]
    assert kinds.count("held") == 3 and kinds.count("released") == 3 and kinds[-1] == "end"
    assert viewer.info["transport"] == "stdio" and viewer.info["intercept"] == "tool:echo"

    lines = reel(out)
    body = [x for x in lines if "raw" in x]
    calls = [x for x in body if x["dir"] == "in" and x["raw"].get("method") == "tools/call"]
    edit = next(x for x in calls if x.get("modified"))
    assert edit["raw"]["params"]["arguments"]["text"] == "edited by the viewer"
    assert edit["original"]["params"]["arguments"]["text"] == "edit me" and edit["decided_by"] == "viewer"
    drop = next(x for x in calls if x.get("dropped"))
    assert drop["raw"]["params"]["arguments"]["text"] == "drop me" and drop["decided_by"] == "viewer"
    answer = next(x for x in body if x["dir"] == "out" and x["raw"].get("id") == drop["raw"]["id"])
    assert answer["injected"] is True and answer["raw"]["error"]["code"] == EDIT_ERROR["code"]
    # the viewer saw every record of the reel, live, with the same seq
    seen = {e["record"]["seq"]: e["record"] for e in viewer.events if e["type"] == "record"}
    assert {x["seq"] for x in body} <= set(seen)
    assert seen[edit["seq"]]["modified"] is True
    # the socket and its description are gone with the proxy
    assert list((tmp_path / "rt").iterdir()) == []

    # qai export holds both versions, as seed 003 shows them
    import subprocess

    qai = tmp_path / "s.json"
    done = subprocess.run([PY, "-m", "mcpreel", "convert", str(out), str(qai), "--to", "qai"], capture_output=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    doc = json.loads(qai.read_text())
    entry = next(e for e in doc["messages"] if e["modified"])
    assert entry["payload"]["params"]["arguments"]["text"] == "edited by the viewer"
    assert entry["original_payload"]["params"]["arguments"]["text"] == "edit me"
    assert sum(e["modified"] for e in doc["messages"]) == 1


async def test_timeout_forwards_unchanged_and_no_viewer_is_said_on_stderr(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    errlog = tmp_path / "err.txt"
    with errlog.open("w") as err:
        async with Client(params(tmp_path, out, "--intercept", "tool:echo", "--intercept-timeout", "0.5"),
                          mode="legacy") as c:  # type: ignore[call-arg]
            started = time.monotonic()
            r = await c.call_tool("echo", {"text": "nobody decides"})
            waited = time.monotonic() - started
    del err
    assert r.content[0].text == "nobody decides" and waited >= 0.5
    call = next(x for x in reel(out) if "raw" in x and x["raw"].get("method") == "tools/call")
    assert call["decided_by"] == "timeout" and "modified" not in call


async def test_a_viewer_that_leaves_does_not_stall_the_proxy(tmp_path: Path) -> None:
    """The viewer detaches while a call is held: the call waits (the proxy says so), other traffic goes on
    (the server's answers to unheld requests), and a second viewer decides it."""
    out = tmp_path / "s.jsonl"
    first = Viewer(tmp_path / "rt", leave_after_first_hold=True)
    first.start()
    second = Viewer(tmp_path / "rt")
    async with Client(params(tmp_path, out, "--intercept", "tool:echo"), mode="legacy") as c:  # type: ignore[call-arg]
        import anyio

        async with anyio.create_task_group() as tg:
            result: dict[str, Any] = {}

            async def held_call() -> None:
                result["r"] = await c.call_tool("echo", {"text": "edit me"})

            tg.start_soon(held_call)
            await anyio.to_thread.run_sync(first.join, 20)
            assert first.events and first.events[-1]["type"] == "held"
            second.start()  # attaches later: gets the hold again, and decides it
        assert result["r"].content[0].text == "edited by the viewer"
    second.join(20)
    assert second.error is None
    assert any(e["type"] == "held" for e in second.events)


def test_the_socket_is_private_and_another_uid_is_refused(tmp_path: Path) -> None:
    from mcpreel.control.client import ControlError
    from mcpreel.control.server import ControlServer, peer_uid

    notes: list[str] = []
    server = ControlServer(transport="stdio", directory=tmp_path, note=notes.append)
    path = server.start()
    try:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(path.with_suffix(".json")).st_mode) == 0o600
        with ControlClient.connect(path) as c:
            assert c.proxy["socket"] == str(path)
            assert peer_uid(c._sock) == os.getuid()
    finally:
        server.close()
    assert not path.exists() and not path.with_suffix(".json").exists()

    # a server that expects another uid closes the connection before saying anything
    other = ControlServer(transport="stdio", directory=tmp_path, note=notes.append, allowed_uid=os.getuid() + 1)
    path = other.start()
    try:
        with pytest.raises(ControlError, match="before saying hello"):
            ControlClient.connect(path)
        assert any("refused a connection from uid" in n for n in notes)
    finally:
        other.close()


async def test_a_viewer_turns_the_intercept_on_during_a_recording(tmp_path: Path) -> None:
    """``record`` without --intercept: the viewer sends ``intercept`` and the next call is held."""
    out = tmp_path / "s.jsonl"
    decided: dict[str, Any] = {}
    on = threading.Event()

    def viewer() -> None:
        info = wait_for_proxy(tmp_path / "rt")
        with ControlClient.connect(info["socket"]) as c:
            assert c.proxy["intercept"] is None
            c.intercept("tool:echo")
            on.set()
            held = c.wait_for("held", timeout=30)
            edited = json.loads(json.dumps(held["message"]))
            edited["params"]["arguments"]["text"] = "changed"
            c.edit(held["hold"], edited)
            decided["hold"] = held["hold"]

    import anyio

    async with Client(params(tmp_path, out), mode="legacy") as c:  # type: ignore[call-arg]
        first = await c.call_tool("echo", {"text": "before"})
        async with anyio.create_task_group() as tg:
            tg.start_soon(anyio.to_thread.run_sync, viewer)
            assert await anyio.to_thread.run_sync(on.wait, 30)  # the viewer attached and turned the intercept on
            second = await c.call_tool("echo", {"text": "held"})
    assert first.content[0].text == "before" and second.content[0].text == "changed" and decided
