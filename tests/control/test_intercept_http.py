"""The intercept over HTTP: the official SDK client (both eras) through the Streamable HTTP recorder, and a
legacy HTTP+SSE session, with a scripted viewer on the control socket."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, ClientSession, MCPError
from mcp.client.sse import sse_client

from mcpreel.control.client import ControlClient
from mcpreel.control.server import ControlServer
from mcpreel.formats import qai
from tests.record.http.helpers import ThreadServer, proxy, sdk_server

pytestmark = [pytest.mark.anyio]
DROP_ERROR = {"code": -32050, "message": "the viewer said no"}


class Viewer(threading.Thread):
    """Edits held echo calls saying "edit me", drops "drop me", forwards the rest."""

    def __init__(self, path: Path):
        super().__init__(daemon=True)
        self.client = ControlClient.connect(path)
        self.events: list[dict[str, Any]] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        c = self.client
        try:
            for event in c.events(timeout=60):
                self.events.append(event)
                if event["type"] == "end":
                    return
                if event["type"] != "held":
                    continue
                message = event["message"]
                text = (message.get("params") or {}).get("arguments", {}).get("text")
                if text == "edit me":
                    edited = json.loads(json.dumps(message))
                    edited["params"]["arguments"]["text"] = "edited by the viewer"
                    c.edit(event["hold"], edited)
                elif text == "drop me":
                    c.drop(event["hold"], DROP_ERROR)
                else:
                    c.forward(event["hold"])
        except BaseException as exc:
            self.error = exc
        finally:
            c.close()


def start(tmp_path: Path, transport: str, intercept: str = "tool:echo") -> tuple[ControlServer, Viewer]:
    server = ControlServer(transport=transport, directory=tmp_path / "rt", intercept=intercept)
    (tmp_path / "rt").mkdir(mode=0o700)
    viewer = Viewer(server.start())
    viewer.start()
    return server, viewer


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_hold_edit_and_drop_over_streamable_http(tmp_path: Path, mode: str) -> None:
    app = sdk_server().streamable_http_app(stateless_http=mode == "auto", json_response=mode == "auto")
    server, viewer = start(tmp_path, "streamable-http")
    try:
        with ThreadServer(app) as srv, proxy("streamable-http", srv.url("/mcp"), tmp_path, addons=[server],
                                             interceptor=server) as run:
            async with Client(run.url, mode=mode) as c:  # type: ignore[call-arg]
                edited = await c.call_tool("echo", {"text": "edit me"})
                plain = await c.call_tool("echo", {"text": "as is"})
                with pytest.raises(MCPError) as dropped:
                    await c.call_tool("echo", {"text": "drop me"})
                after = await c.call_tool("echo", {"text": "still alive"})
    finally:
        server.close()
    viewer.join(10)
    assert viewer.error is None, viewer.error
    assert edited.content[0].text == "edited by the viewer"
    assert plain.content[0].text == "as is" and after.content[0].text == "still alive"
    assert (dropped.value.error.code, dropped.value.error.message) == (DROP_ERROR["code"], DROP_ERROR["message"])
    records = run.records()
    calls = [r for r in records if r.dir == "in" and r.method == "tools/call"]
    edit = next(r for r in calls if r.modified)
    assert edit.raw["params"]["arguments"]["text"] == "edited by the viewer" and edit.decided_by == "viewer"
    assert edit.original["params"]["arguments"]["text"] == "edit me"
    drop = next(r for r in calls if r.dropped)
    assert drop.raw["params"]["arguments"]["text"] == "drop me"
    answer = next(r for r in records if r.dir == "out" and r.injected)
    assert answer.raw == {"jsonrpc": "2.0", "id": drop.raw["id"], "error": DROP_ERROR}
    # the server never saw the dropped call: only three echo answers came from it
    from_server = [r for r in records if r.dir == "out" and r.is_response and not r.injected
                   and isinstance(r.raw.get("result"), dict) and "content" in r.raw["result"]]
    assert len(from_server) == 3
    # a qai export holds both versions
    session_out = tmp_path / "s.qai.json"
    from mcpreel.formats import open_session

    with session_out.open("wb") as fh:
        qai.write(open_session(run.out, "reel")[0], fh)
    entry = next(e for e in json.loads(session_out.read_text())["messages"] if e["modified"])
    assert entry["original_payload"]["params"]["arguments"]["text"] == "edit me"
    assert [e["type"] for e in viewer.events if e["type"] in ("held", "released")].count("released") == 4


async def test_hold_and_edit_over_legacy_sse(tmp_path: Path) -> None:
    server, viewer = start(tmp_path, "sse")
    try:
        with ThreadServer(sdk_server().sse_app()) as srv, proxy("sse", srv.url("/sse"), tmp_path, addons=[server],
                                                               interceptor=server) as run:
            async with sse_client(run.url) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                edited = await session.call_tool("echo", {"text": "edit me"})
                with pytest.raises(MCPError) as dropped:
                    await session.call_tool("echo", {"text": "drop me"})
                after = await session.call_tool("echo", {"text": "still alive"})
    finally:
        server.close()
    viewer.join(10)
    assert viewer.error is None
    assert edited.content[0].text == "edited by the viewer" and after.content[0].text == "still alive"
    # the answer to the dropped request came on the SSE stream, where a legacy client waits for it
    assert (dropped.value.error.code, dropped.value.error.message) == (DROP_ERROR["code"], DROP_ERROR["message"])
    records = run.records()
    edit = next(r for r in records if r.dir == "in" and r.modified)
    assert edit.original["params"]["arguments"]["text"] == "edit me"
    drop = next(r for r in records if r.dir == "in" and r.dropped)
    answer = next(r for r in records if r.injected)
    assert answer.raw["id"] == drop.raw["id"] and answer.ctx["sse"] == {"event": "message"}


async def test_a_viewer_injects_a_request_into_the_clients_http_session(tmp_path: Path) -> None:
    app = sdk_server().streamable_http_app()
    server = ControlServer(transport="streamable-http", directory=tmp_path / "rt")
    (tmp_path / "rt").mkdir(mode=0o700)
    server.start()
    try:
        with ThreadServer(app) as srv, proxy("streamable-http", srv.url("/mcp"), tmp_path, addons=[server],
                                             interceptor=server) as run:
            async with Client(run.url, mode="legacy") as c:  # type: ignore[call-arg]
                await c.call_tool("echo", {"text": "first"})
                import anyio

                def inject() -> None:
                    with ControlClient.connect(server.socket_path) as viewer:  # type: ignore[arg-type]
                        viewer.inject("client_to_server", {"jsonrpc": "2.0", "id": "inj-1", "method": "tools/call",
                                                           "params": {"name": "echo", "arguments": {"text": "injected"}}})
                        with pytest.raises(Exception, match="only client_to_server"):
                            viewer.inject("server_to_client", {"jsonrpc": "2.0", "method": "notifications/x"})

                await anyio.to_thread.run_sync(inject)
                after = await c.call_tool("echo", {"text": "after"})
    finally:
        server.close()
    assert after.content[0].text == "after"
    records = run.records()
    sent = next(r for r in records if r.dir == "in" and r.injected)
    assert sent.raw["id"] == "inj-1"
    answer = next(r for r in records if r.dir == "out" and r.is_response and r.id == "inj-1")
    assert answer.raw["result"]["content"][0]["text"] == "injected"  # the server answered in the client's session
