"""Real recordings of the operations every verb must read alike (issue 24), made with ``mcpreel record``.

Each function records one session between real peers into the directory ``out`` and returns a
:class:`Recorded`: the reel's path and what the client saw (so a test can check a verb against the
client's own account, not against another verb). Everything is bounded in time; HTTP servers listen on
127.0.0.1 ports picked here.

- :func:`task_session`: an MCP Task (2025-11-25) against server-everything over stdio: the call with
  ``params.task``, ``tasks/get`` polls as the server's ``pollInterval`` asks, ``tasks/result``;
- :func:`listen_session`: a ``subscriptions/listen`` stream (2026-07-28) of the SDK ``Client`` against an
  SDK ``MCPServer`` whose tool calls ``ctx.notify_tools_changed()``; ``mode="legacy"`` gives an ordinary
  handshake-era session with the same server;
- :func:`listen_session_http`: the same listen stream over Streamable HTTP, through the recording proxy;
- :func:`multi_session_http`: one recording proxy (Streamable HTTP) in front of an SDK ``MCPServer``, two
  clients through it (default mode, then ``mode="legacy"``): two client sessions whose ids both start at 1;
- :func:`mrtr_session`: a multi-round-trip request (``input_required`` and its retry in 2026-07-28, an
  ``elicitation/create`` mid-call in the handshake era).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PY = sys.executable
MCPREEL = [PY, "-m", "mcpreel"]
EVERYTHING_JS = ROOT / ".peers" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
OPS_SERVER = HERE / "ops_server.py"
MRTR = ROOT / "tests" / "replay" / "peers"
TIMEOUT_S = 90.0  # one client run, start to end


@dataclass(frozen=True)
class Recorded:
    """A real recording: ``reel`` is the file ``mcpreel record`` wrote; ``seen`` what the client saw;
    ``sessions`` how many client sessions the client(s) opened; ``era`` per client session."""

    reel: Path
    seen: dict[str, Any]
    sessions: int = 1
    eras: tuple[str, ...] = field(default_factory=tuple)


def _record_stdio(out: Path, server: list[str]) -> list[str]:
    return [*MCPREEL, "record", "-q", "--out", str(out), "--", *server]


def _run(script: Path, *args: str) -> dict[str, Any]:
    """Run a client script (an SDK client under ``patient_client.py``) and return the JSON it printed."""
    argv = [PY, str(script), *args]
    if script.name.endswith("client.py"):
        argv.insert(1, str(HERE / "patient_client.py"))
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, env=_env())
    if proc.returncode != 0:
        raise AssertionError(f"{script.name} failed (exit {proc.returncode}): {proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def _env() -> dict[str, str]:
    """The tests' environment, with this tree's ``src`` first (the recorder the client starts is this one)."""
    src = str(ROOT / "src")
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": src if not path else f"{src}{os.pathsep}{path}"}


def task_session(out: Path) -> Recorded:
    """A 2025-11-25 task against server-everything (stdio), driven with raw JSON-RPC lines."""
    if not EVERYTHING_JS.is_file():
        raise FileNotFoundError(f"server-everything is not installed at {EVERYTHING_JS}: run `make peers`")
    reel = out / "task.jsonl"
    seen = _run(HERE / "task_driver.py", *_record_stdio(reel, ["node", str(EVERYTHING_JS), "stdio"]))
    return Recorded(reel, seen, 1, ("2025-11-25",))


def listen_session(out: Path, mode: str = "auto") -> Recorded:
    """``mode="auto"`` (the SDK's default, 2026-07-28): a listen stream that hears the tool list change,
    then ``echo`` and ``fail``; ``mode="legacy"``: an ordinary handshake-era session (``tools/list``,
    ``touch``, ``echo``, ``fail``) with the same server."""
    reel = out / f"listen-{mode}.jsonl"
    command = shlex.join(_record_stdio(reel, [PY, str(OPS_SERVER)]))
    seen = _run(HERE / "ops_client.py", "listen" if mode == "auto" else "plain", command, mode)
    return Recorded(reel, seen, 1, (seen["protocol"],))


def mrtr_session(out: Path, mode: str = "auto") -> Recorded:
    """``greet`` of ``tests/replay/peers/mrtr_server.py``, which needs the user's name: one operation of two
    rounds in 2026-07-28 (``mode="auto"``), a call with a nested ``elicitation/create`` in the handshake era."""
    reel = out / f"mrtr-{mode}.jsonl"
    command = shlex.join(_record_stdio(reel, [PY, str(MRTR / "mrtr_server.py")]))
    seen = _run(MRTR / "mrtr_client.py", command, mode)
    return Recorded(reel, seen, 1, (seen["protocol"],))


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(proc: subprocess.Popen[bytes], port: int, deadline: float) -> None:
    import socket

    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{proc.args} exited early (exit {proc.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"{proc.args} never listened on 127.0.0.1:{port}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def _http_proxy(reel: Path) -> Iterator[str]:
    """An SDK ``MCPServer`` (``ops_server.py``) over Streamable HTTP behind ``mcpreel record --transport
    streamable-http``, both on 127.0.0.1 ports picked here; yields the proxy's URL; stops both (the proxy
    first, so the reel is complete)."""
    port, listen = _free_port(), _free_port()
    deadline = time.monotonic() + 30
    server = subprocess.Popen([PY, str(OPS_SERVER), "streamable-http", str(port)], env=_env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_port(server, port, deadline)
        proxy = subprocess.Popen([*MCPREEL, "record", "-q", "--transport", "streamable-http", "--target",
                                  f"http://127.0.0.1:{port}/mcp", "--listen", f"127.0.0.1:{listen}", "--out",
                                  str(reel)], env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_port(proxy, listen, deadline)
            yield f"http://127.0.0.1:{listen}/mcp"
        finally:
            _stop(proxy)
    finally:
        _stop(server)


def listen_session_http(out: Path) -> Recorded:
    """The listen stream of :func:`listen_session` (2026-07-28) over Streamable HTTP, through the recording
    proxy: the stream's acknowledgement and change arrive on the listen request's own SSE response."""
    reel = out / "listen-http.jsonl"
    with _http_proxy(reel) as url:
        seen = _run(HERE / "ops_client.py", "listen", url, "auto")
    return Recorded(reel, seen, 1, (seen["protocol"],))


def multi_session_http(out: Path) -> Recorded:
    """Two SDK clients, one after the other, through one ``mcpreel record --transport streamable-http``
    proxy in front of an SDK ``MCPServer``: the default mode (2026-07-28: ``server/discover``, no session
    id) and ``mode="legacy"`` (``initialize``, an ``Mcp-Session-Id``); both number their requests from 1."""
    reel = out / "multi-http.jsonl"
    with _http_proxy(reel) as url:
        seen = {mode: _run(HERE / "ops_client.py", "plain", url, mode) for mode in ("auto", "legacy")}
    return Recorded(reel, seen, 2, tuple(seen[m]["protocol"] for m in ("auto", "legacy")))


def all_sessions(out: Path) -> dict[str, Recorded]:
    """Every recording above, by name (about 30 s on a quiet 2-core machine)."""
    return {
        "task": task_session(out),
        "listen": listen_session(out),
        "legacy": listen_session(out, "legacy"),
        "listen-http": listen_session_http(out),
        "multi-http": multi_session_http(out),
        "mrtr-auto": mrtr_session(out),
        "mrtr-legacy": mrtr_session(out, "legacy"),
    }


if __name__ == "__main__":  # record them all into a directory, to look at: python operations_sessions.py DIR
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    print(json.dumps({k: {"reel": str(v.reel), "seen": v.seen} for k, v in all_sessions(target).items()}, indent=1))
