"""Issue 28 item 13: a client that dies while a message is held ends the held message and the proxy.

Before, the pump waited on the decision, nobody read the client's EOF, and the server and the proxy ran
until someone forwarded the message (an IDE that restarts its servers leaked processes).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from mcpreel.formats import open_session
from mcpreel.model import Kind

pytestmark = pytest.mark.e2e
PY = sys.executable
SRC = str(Path(__file__).resolve().parents[2] / "src")

# answers every request; writes its pid so the test can see it ended
SERVER = textwrap.dedent(
    """
    import json, os, sys
    open(sys.argv[1], "w").write(str(os.getpid()))
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" in msg and "method" in msg:
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {}}), flush=True)
    """
)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("direction", ["in", "out"])
def test_a_client_that_dies_while_a_message_is_held_ends_it_and_the_proxy(tmp_path: Path, direction: str) -> None:
    runtime, reel, pidfile = tmp_path / "run", tmp_path / "r.jsonl", tmp_path / "server.pid"
    # "in": the client's request is held; "out": the server's answer to it is
    held = "" if direction == "in" else "dir:server_to_client"
    proc = subprocess.Popen(
        [PY, "-m", "mcpreel", "record", "--out", str(reel), "--intercept", held, "--",
         PY, "-c", SERVER, str(pidfile)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
        env={**os.environ, "MCPREEL_RUNTIME_DIR": str(runtime), "PYTHONPATH": SRC})
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    stderr: list[str] = []
    reader = threading.Thread(target=lambda: stderr.extend(line.decode() for line in proc.stderr), daemon=True)
    reader.start()
    pidfile.touch()
    try:
        proc.stdin.write(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{}}}\n')
        deadline = time.monotonic() + 30
        while not any("control: holding" in line for line in stderr) or not pidfile.stat().st_size:
            assert time.monotonic() < deadline and proc.poll() is None, stderr
            time.sleep(0.05)
        server_pid = int(pidfile.read_text())
        # the client dies: both its ends of the proxy's pipes close
        proc.stdin.close()
        proc.stdout.close()
        code = proc.wait(15)  # before: it waited for a viewer forever
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(5)
    assert code == 0, stderr
    assert not alive(server_pid)
    assert any("the client went away; 1 held message(s) abandoned" in line for line in stderr), stderr
    session, _ = open_session(reel)
    messages = [m for m in session.messages if m.kind == Kind.MESSAGE]
    abandoned = [m for m in messages if (m.extra or {}).get("abandoned") is True]
    assert len(abandoned) == 1  # the reader keeps the mark
    gone = abandoned[0]
    assert gone.dir == direction and gone.dropped and gone.decided_by == "client-gone"
    assert gone.raw["id"] == 7
    if direction == "in":  # it never reached the server: nothing answered it
        assert [m for m in messages if m.dir == "out"] == []
    assert "after the client went away" in (session.info.end_reason or ""), session.info.end_reason


def test_an_http_client_that_disconnects_while_its_request_is_held_has_it_abandoned(tmp_path: Path) -> None:
    """HTTP: the proxy serves other clients, so it goes on; the held request ends as abandoned at once and
    never reaches the target (before, it waited for a viewer, holding a worker thread)."""
    import socket
    from urllib.parse import urlsplit

    from mcpreel.control.client import ControlClient
    from mcpreel.control.server import ControlServer
    from tests.record.http.helpers import ThreadServer, proxy, sdk_server

    (tmp_path / "rt").mkdir(mode=0o700)
    server = ControlServer(transport="streamable-http", directory=tmp_path / "rt", intercept="tool:echo")
    server.start()
    app = sdk_server().streamable_http_app(stateless_http=True, json_response=True)
    body = b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}'
    try:
        with ThreadServer(app) as srv, proxy("streamable-http", srv.url("/mcp"), tmp_path, addons=[server],
                                             interceptor=server) as run, \
                ControlClient.connect(server.socket_path) as viewer:  # type: ignore[arg-type]
            where = urlsplit(run.url)
            client = socket.create_connection((where.hostname, where.port), timeout=10)
            client.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                           b"Accept: application/json, text/event-stream\r\n"
                           b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            held = viewer.wait_for("held", timeout=10)
            client.close()  # the client goes away while its request is held
            released = viewer.wait_for("released", timeout=10)
            assert released == {"type": "released", "hold": held["hold"], "action": "close", "by": "client-gone"}
    finally:
        server.close()
    calls = [r for r in run.records() if r.kind == Kind.MESSAGE and r.dir == "in"]
    assert len(calls) == 1 and calls[0].dropped and calls[0].decided_by == "client-gone"
    assert (calls[0].extra or {}).get("abandoned") is True
    assert not [r for r in run.records() if r.kind == Kind.MESSAGE and r.dir == "out"]  # the target never saw it
