"""``record --otlp-endpoint``: spans leave while the session is recorded, and a dead collector costs a warning.

The SDK client drives ``tests/report/peers/server.py`` through ``mcpreel record --otlp-endpoint`` (stdio).
What the receiver gets must be what ``export otlp`` makes of the reel written in the same run (the
tap sees the same lines with the same times), and nothing about the session may change when the
collector is down.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcpreel.formats import open_session
from mcpreel.otel.mapping import spans as map_spans
from tests.otel.receiver import Receiver

DRIVE = Path(__file__).resolve().parent.parent / "report" / "peers" / "drive.py"
pytestmark = pytest.mark.e2e


def drive(out: Path, *record_options: str) -> tuple[dict, str, float]:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, str(DRIVE), str(out), *record_options], capture_output=True, text=True,
                          timeout=90, env={**os.environ, "DRIVE_ERAS": "legacy"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)["legacy"], proc.stderr, time.monotonic() - started


def test_spans_are_exported_while_recording(tmp_path):
    with Receiver() as rx:
        seen, stderr, _ = drive(tmp_path, "--otlp-endpoint", rx.url)
        deadline = time.monotonic() + 10
        while not any(s["parent_id"] is None for s in rx.spans()) and time.monotonic() < deadline:
            time.sleep(0.1)
        got = rx.spans()
    assert seen["fail"] is True and "OTLP" not in stderr
    reel = tmp_path / "legacy.jsonl"
    mapped = map_spans(open_session(reel)[0])
    kinds = {"client": 3, "server": 2, "internal": 1}
    assert sorted((s["name"], s["kind"], s["start"], s["end"]) for s in got) == sorted(
        (r.name, kinds[r.kind], r.start_ns, r.end_ns) for r in mapped)
    (root,) = [s for s in got if s["parent_id"] is None]
    assert root["name"] == "mcp session report-peer" and root["attributes"]["mcpreel.server.exit_code"] == 0
    assert root["resource"]["service.name"] == "report-peer"
    slow = next(s for s in got if s["name"] == "tools/call slow")
    assert [e[0] for e in slow["events"]] == ["notifications/progress"] * 3


def test_a_dead_collector_costs_a_warning_and_nothing_else(tmp_path):
    import socket

    # a port held bound but never listening: refused for the whole test, and no other test can take it
    # (a receiver's port closed before the run could be bound again by a parallel test's server)
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{held.getsockname()[1]}"
        seen, stderr, took = drive(tmp_path / "dead", "--otlp-endpoint", dead)
    baseline, _, _ = drive(tmp_path / "base")
    assert seen == baseline  # the client saw the same session
    warnings = [line for line in stderr.splitlines() if "OTLP export" in line]
    assert len(warnings) == 1 and "failed; the recording goes on without it" in warnings[0]
    lines = (tmp_path / "dead" / "legacy.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["type"] == "end" and json.loads(lines[-1])["exitCode"] == 0
    assert took < 60


def test_a_bad_otlp_endpoint_is_refused_before_anything_starts(tmp_path):
    for args in (["--", sys.executable, "-c", "pass"], ["--transport", "streamable-http", "--target", "http://127.0.0.1:9/mcp"]):
        proc = subprocess.run([sys.executable, "-m", "mcpreel", "record", "--out", str(tmp_path / "x.jsonl"),
                               "--otlp-endpoint", "nope://x", *args], capture_output=True, text=True, timeout=60)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and "not an http:// or https:// URL" in lines[0], proc.stderr
    assert not (tmp_path / "x.jsonl").exists()


def test_an_http_recording_exports_live(tmp_path):
    """The HTTP recorder (Streamable HTTP) in front of the SDK server, the SDK client in its default
    (2026-07-28) mode: the spans that arrive are the reel's."""
    import asyncio
    import queue
    import signal
    import threading

    import uvicorn
    from mcp import Client

    from tests.conftest import free_port
    from tests.report.peers.server import mcp as peer

    srv = uvicorn.Server(uvicorn.Config(peer.streamable_http_app(), host="127.0.0.1", port=0, log_level="warning"))
    th = threading.Thread(target=srv.run, daemon=True)
    th.start()
    deadline = time.monotonic() + 20
    while not srv.started and time.monotonic() < deadline:
        time.sleep(0.02)
    port = srv.servers[0].sockets[0].getsockname()[1]
    listen = free_port()
    reel = tmp_path / "http.jsonl"
    try:
        with Receiver() as rx:
            proc = subprocess.Popen([sys.executable, "-m", "mcpreel", "record", "--transport", "streamable-http",
                                     "--target", f"http://127.0.0.1:{port}/mcp", "--listen", f"127.0.0.1:{listen}",
                                     "--out", str(reel), "--otlp-endpoint", rx.url],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            lines: queue.Queue[str] = queue.Queue()
            threading.Thread(target=lambda: [lines.put(x) for x in proc.stderr], daemon=True).start()
            try:
                while "point your MCP client" not in lines.get(timeout=30):
                    pass

                async def session() -> None:
                    async with Client(f"http://127.0.0.1:{listen}/mcp") as c:
                        await c.list_tools()
                        await c.call_tool("echo", {"text": "over http"})
                        await c.call_tool("fail", {"reason": "no"})
                        await c.get_prompt("greet", {"name": "Ada"})

                asyncio.run(session())
            finally:
                proc.send_signal(signal.SIGINT)
                proc.wait(30)
            assert proc.returncode == 0
            got = rx.spans()
    finally:
        srv.should_exit = True
        th.join(10)
    mapped = map_spans(open_session(reel)[0])
    kinds = {"client": 3, "server": 2, "internal": 1}
    assert sorted((s["name"], s["kind"], s["start"], s["end"]) for s in got) == sorted(
        (r.name, kinds[r.kind], r.start_ns, r.end_ns) for r in mapped)
    names = {s["name"] for s in got}
    assert {"server/discover", "tools/call echo", "tools/call fail", "prompts/get greet"} <= names
    echo = next(s for s in got if s["name"] == "tools/call echo")
    assert echo["attributes"]["network.transport"] == "tcp" and echo["attributes"]["server.port"] == port
    assert echo["attributes"]["mcp.protocol.version"] == "2026-07-28"
