"""Every verb, on a simulated Windows and a simulated macOS: it runs, or says in one line what it cannot do.

The simulation (``sim/sitecustomize.py``) takes from this Linux interpreter what the system lacks — Windows:
``SIGHUP``, ``killpg``, ``getpgid``, ``getuid``, ``fchmod``, ``O_NOFOLLOW``, ``AF_UNIX``, ``poll``, ``prctl``;
macOS: ``SO_PEERCRED`` and ``prctl`` (with ``LOCAL_PEERCRED`` answered as macOS's kernel does) — and each
test runs one verb in one child (small inputs, bounded in time): the exit code is the one expected, there is
no traceback, and the notes are the one-line ones (each once). Live view is shown both ways: a viewer
attaches to a recording under macOS (and decides a held message), and Windows says "live view is not
available here" (``--intercept`` refuses to start). The real systems run the suite on the CI matrix
(``.github/workflows/ci.yml``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.platform.harness import NO_LIVE_VIEW, PLATFORMS, Result, assert_clean, environ, popen, python_server, run

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(not hasattr(socket, "SO_PEERCRED") or not hasattr(os, "killpg"),
                       reason="the simulation takes Linux's features away: it runs on Linux"),
]

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
ECHO_CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
NOT_PRIVATE = "files are not made 0600 here"


def lines(*messages: Mapping[str, object]) -> str:
    return "".join(json.dumps(m) + "\n" for m in messages)


def demo_server() -> str:
    return f"{sys.executable} -m mcpreel demo-server"


@pytest.fixture(scope="module")
def reel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real session (mcpreel's demo server, stdio), recorded once without simulation. The client's stdin
    stays open until the call's answer came (closing it at once let the server end before it answered, on a
    loaded machine)."""
    out = tmp_path_factory.mktemp("reel") / "demo.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "mcpreel", "record", "--no-control", "--out", str(out), "--",
                             sys.executable, "-m", "mcpreel", "demo-server"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(lines(INIT, INITIALIZED, TOOLS_LIST, ECHO_CALL))
        proc.stdin.flush()
        for line in proc.stdout:  # until the answer to the call (id 3)
            if json.loads(line).get("id") == ECHO_CALL["id"]:
                break
        _, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    return out


def expect(result: Result, code: int, *says: str) -> None:
    assert result.code == code, (result.code, result.err)
    assert_clean(result)
    for text in says:
        assert text in result.err, (text, result.err)


def reel_lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- recording -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("platform", PLATFORMS)
def test_record_stdio(platform: str, tmp_path: Path) -> None:
    result = run(platform, tmp_path, ["record", "--out", "r.jsonl", "--", *python_server("echo")], lines(PING))
    if platform == "windows":  # a loopback control channel, its secret in %LOCALAPPDATA%
        expect(result, 0, NOT_PRIVATE, "control: ")
        assert NO_LIVE_VIEW not in result.err
    else:  # a control channel in macOS's per-user $TMPDIR
        expect(result, 0, f"control: {tmp_path / 'var-folders' / 'mcpreel'}")
        assert NO_LIVE_VIEW not in result.err
        assert (tmp_path / "r.jsonl").stat().st_mode & 0o777 == 0o600
    assert result.out == lines(PING)  # the bytes as they came, \n framing untouched
    records = reel_lines(tmp_path / "r.jsonl")
    assert [r["type"] for r in (records[0], records[-1])] == ["meta", "end"]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_proxy_start(platform: str, tmp_path: Path) -> None:
    command = " ".join(python_server("echo"))
    result = run(platform, tmp_path, ["proxy", "start", "--transport", "stdio", "--target-command", command,
                                      "--out", "p.jsonl"], lines(PING))
    expect(result, 0)
    assert NO_LIVE_VIEW not in result.err
    assert (tmp_path / "p.jsonl").exists()


@pytest.mark.parametrize("platform", PLATFORMS)
def test_record_http_stops_on_ctrl_c(platform: str, tmp_path: Path) -> None:
    proc = popen(platform, tmp_path, ["record", "--transport", "streamable-http", "--target",
                                      "http://127.0.0.1:9/mcp", "--listen", "127.0.0.1:0", "--out", "h.jsonl"],
                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append(line)
            if "point your MCP client at" in line:
                break
        proc.send_signal(signal.SIGINT)  # Ctrl+C, which Windows has too
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    expect(Result(proc.returncode, out, "".join(seen) + err), 0)
    assert reel_lines(tmp_path / "h.jsonl")[-1]["type"] == "end"


def test_a_system_that_cannot_name_a_socket_peer_has_a_secret_channel(tmp_path: Path) -> None:
    """A POSIX system with neither SO_PEERCRED, LOCAL_PEERCRED nor getpeereid: the control channel is a
    loopback socket with the run's secret (no "live view is not available"), and the recording."""
    result = run("bsd", tmp_path, ["record", "--out", "r.jsonl", "--", *python_server("echo")], lines(PING))
    expect(result, 0, "control: ")
    assert NO_LIVE_VIEW not in result.err
    assert result.out == lines(PING)


_VIEWER = r"""
import json, sys, time
from mcpreel.control.client import ControlClient
from mcpreel.control.discovery import running
deadline = time.monotonic() + 60
while not running() and time.monotonic() < deadline:
    time.sleep(0.1)
client = ControlClient.connect(running()[0]["socket"])
print(json.dumps({"hello": client.hello["type"], "intercept": client.proxy.get("intercept")}), flush=True)
for event in client.events(timeout=60):
    if event.get("type") == "held":
        client.decide(event["hold"], "forward")
        print(json.dumps({"decided": event["hold"]}), flush=True)
    if event.get("type") == "end":
        break
print(json.dumps({"end": True}), flush=True)
"""


@pytest.mark.parametrize("platform", [*PLATFORMS, "bsd"])
def test_a_viewer_attaches_and_decides_a_held_message(platform: str, tmp_path: Path) -> None:
    """Under macOS (LOCAL_PEERCRED, no SO_PEERCRED, no prctl) the viewer attaches to the Unix socket, its
    peer known to be us; under Windows (no Unix sockets, no uids, no poll, no MSG_DONTWAIT) and a system that
    cannot name a socket's peer, to the loopback socket with the run's secret; either way it releases the
    message ``--intercept`` held, and the recording then ends whole."""
    env = environ(platform, tmp_path)
    viewer = subprocess.Popen([sys.executable, "-c", _VIEWER], env=env, cwd=tmp_path, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proxy = popen(platform, tmp_path, ["record", "--intercept", "method:ping", "--intercept-timeout", "60",
                                      "--out", "r.jsonl", "--", *python_server("echo")],
                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proxy.stdin is not None and proxy.stdout is not None
        proxy.stdin.write(lines(PING))
        proxy.stdin.flush()
        echoed = proxy.stdout.readline()  # held until the viewer forwards it
        out, err = proxy.communicate(timeout=60)
        seen, viewer_err = viewer.communicate(timeout=60)
    finally:
        for p in (proxy, viewer):
            if p.poll() is None:
                p.kill()
    assert echoed == lines(PING)
    expect(Result(proxy.returncode, out, err), 0, "intercept: holding method:ping")
    assert "Traceback" not in viewer_err, viewer_err
    said = [json.loads(line) for line in seen.splitlines()]
    assert said[0] == {"hello": "hello", "intercept": "method:ping"}
    assert any("decided" in s for s in said) and said[-1] == {"end": True}


def test_a_connection_without_the_secret_is_refused(tmp_path: Path) -> None:
    """Under Windows the loopback port is open to every local user: a connection that does not send the
    run's secret first gets nothing, and the proxy says so once on stderr; the recording goes on."""
    probe = r"""
import json, socket, sys, time
from mcpreel.control.discovery import running
deadline = time.monotonic() + 60
while not running() and time.monotonic() < deadline:
    time.sleep(0.1)
info = running()[0]
s = socket.create_connection(tuple(info["address"]), timeout=10)
s.sendall(b'{"type":"auth","secret":"guessed"}\n')
print(json.dumps({"got": s.recv(100).decode()}), flush=True)
"""
    env = environ("windows", tmp_path)
    proxy = popen("windows", tmp_path, ["record", "--out", "r.jsonl", "--", *python_server("echo")],
                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        said = subprocess.run([sys.executable, "-c", probe], env=env, cwd=tmp_path, text=True,
                              capture_output=True, timeout=90)
        assert proxy.stdin is not None
        proxy.stdin.write(lines(PING))
        proxy.stdin.close()
        out = proxy.stdout.read() if proxy.stdout is not None else ""
        err = proxy.stderr.read() if proxy.stderr is not None else ""
        proxy.wait(60)
    finally:
        if proxy.poll() is None:
            proxy.kill()
    assert json.loads(said.stdout) == {"got": ""}, said.stderr  # closed, not a byte of hello
    expect(Result(proxy.returncode, out, err), 0, "refused a connection that did not give this recording's secret")
    assert out == lines(PING)


def _start_server_and_kill_the_proxy(platform: str, tmp_path: Path) -> tuple[int, bool]:
    """Record a server that ignores the end of its stdin, kill -9 the proxy: is the server gone after?"""
    pid_file = tmp_path / "server.pid"
    server = [sys.executable, "-c", "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); "
              "time.sleep(60)", str(pid_file)]
    proxy = popen(platform, tmp_path, ["record", "--no-control", "--out", "r.jsonl", "--", *server],
                  stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = int(pid_file.read_text())
        time.sleep(0.5)  # the watchdog starts right after the server
        proxy.kill()
        proxy.wait(10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return pid, True
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
        return pid, False
    finally:
        if proxy.poll() is None:
            proxy.kill()
        if proxy.stdin is not None:
            proxy.stdin.close()


def test_macos_a_killed_proxy_leaves_no_server_behind(tmp_path: Path) -> None:
    """No prctl on macOS: the watchdog ends the server's group when the proxy dies by kill -9."""
    _, gone = _start_server_and_kill_the_proxy("macos", tmp_path)
    assert gone


# -- the verbs that read and write files ---------------------------------------------------------------
FILE_VERBS = {
    "inspect": (lambda r: ["inspect", str(r)], 0),
    "convert": (lambda r: ["convert", str(r), "out.qai.json"], 0),
    "import": (lambda r: ["import", str(r), "--out-trace", "t.jsonl"], 0),
    "trace": (lambda r: ["trace", "import-mcp", "--input", str(r), "--out-trace", "t2.jsonl"], 0),
    "report": (lambda r: ["report", str(r), "-o", "r.html"], 0),
    "diff": (lambda r: ["diff", str(r), str(r)], 0),
    "redact": (lambda r: ["redact", str(r), "red.jsonl"], 0),
    "merge": (lambda r: ["merge", str(r), "copy.jsonl", "-o", "m.jsonl"], 0),
    "export": (lambda r: ["export", "otlp", str(r), "--out", "o.json"], 0),
    "audit": (lambda r: ["audit", str(r)], 0),
    "contract": (lambda r: ["contract", "snapshot", str(r), "-o", "c.json"], 0),
}


@pytest.mark.parametrize("verb", sorted(FILE_VERBS))
@pytest.mark.parametrize("platform", PLATFORMS)
def test_file_verbs(platform: str, verb: str, reel: Path, tmp_path: Path) -> None:
    shutil.copy(reel, tmp_path / "copy.jsonl")
    args, code = FILE_VERBS[verb]
    result = run(platform, tmp_path, args(reel))
    expect(result, code)


# -- the verbs that talk to a server -------------------------------------------------------------------
@pytest.mark.parametrize("platform", PLATFORMS)
def test_serve_stdio(platform: str, reel: Path, tmp_path: Path) -> None:
    result = run(platform, tmp_path, ["serve", str(reel), "--transport", "stdio"], lines(INIT, TOOLS_LIST))
    expect(result, 0)
    answers = [json.loads(line) for line in result.out.splitlines()]
    assert [a["id"] for a in answers] == [1, 2] and "tools" in answers[1]["result"]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_replay(platform: str, reel: Path, tmp_path: Path) -> None:
    expect(run(platform, tmp_path, ["replay", str(reel), "--target-command", demo_server()]), 0)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_check(platform: str, tmp_path: Path) -> None:
    result = run(platform, tmp_path, ["check", "--command", demo_server(), "--profile", "mcp", "--no-call",
                                      "--timeout", "60"])
    expect(result, 0)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_wrap_and_unwrap(platform: str, tmp_path: Path) -> None:
    config = tmp_path / "claude_desktop_config.json"
    original = '{"mcpServers": {"x": {"command": "python3", "args": ["server.py"]}}}\n'
    config.write_text(original)
    home = ["--home", str(tmp_path)]
    wrapped = run(platform, tmp_path, ["wrap", "--config", str(config), "--all", *home])
    expect(wrapped, 0)
    assert json.loads(config.read_text())["mcpServers"]["x"]["args"][0] == "record"
    expect(run(platform, tmp_path, ["unwrap", "--config", str(config), "--all", *home]), 0)
    assert config.read_text() == original


def test_windows_a_server_writing_crlf_is_passed_as_it_came_and_recorded(tmp_path: Path) -> None:
    """A Windows server whose stdout is in text mode ends its lines with \\r\\n: the client gets its bytes
    untouched, and the reel holds the answer (the \\r is whitespace to JSON)."""
    server = tmp_path / "crlf_server.py"
    server.write_text("import sys\nfor line in sys.stdin.buffer:\n"
                      "    sys.stdout.buffer.write(b'{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\\r\\n')\n"
                      "    sys.stdout.buffer.flush()\n")
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "record", "--no-control", "--out", "r.jsonl", "--",
                           sys.executable, str(server)], input=lines(PING).encode(), capture_output=True,
                          env=environ("windows", tmp_path), cwd=tmp_path, timeout=90)
    expect(Result(proc.returncode, "", proc.stderr.decode()), 0)
    assert proc.stdout == b'{"jsonrpc":"2.0","id":1,"result":{}}\r\n'
    answers = [r for r in reel_lines(tmp_path / "r.jsonl") if r.get("dir") == "out"]
    assert [a["raw"] for a in answers] == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_demo(platform: str, tmp_path: Path) -> None:
    """``mcpreel demo`` (``make demo``'s command): record stdio and Streamable HTTP, convert, check."""
    result = run(platform, tmp_path, ["demo", "--out", "demo-output"], timeout=180)
    expect(result, 0)
    assert (tmp_path / "demo-output" / "session.reel.jsonl").exists()
    assert (tmp_path / "demo-output" / "check-report.json").exists()
