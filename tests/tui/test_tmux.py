"""End to end in a real terminal: tmux, two windows. In the first the official SDK client talks over stdio through
``mcpreel record --intercept tool:echo`` to the SDK test server; in the second ``mcpreel tui`` attaches to
that proxy (the only one running) and a person's keys are sent to it (``send-keys``), what it draws is read
back (``capture-pane``). The held call is edited in ``$EDITOR`` (the terminal handed over and back) and sent;
the next one is dropped with the default error; ``s`` saves. The client never sees a byte of the UI: its
window shows only what the server says on stderr.

``MCPREEL_TUI_SCREENSHOT=path.ansi`` keeps the viewer's screen (with colours) from the held moment: the
README's screenshot is drawn from it (``docs/tui.png``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]


class Tmux:
    """One private tmux server (its own socket name), killed at the end."""

    def __init__(self, env: dict[str, str]):
        self.name = f"mcpreel-test-{uuid.uuid4().hex[:8]}"
        self.env = env

    def __call__(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.name, *args], capture_output=True, text=True, timeout=10,
                              env=self.env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def screen(self, window: str, colours: bool = False) -> str:
        return self("capture-pane", "-p", *(["-e"] if colours else []), "-t", f"t:{window}")

    def wait(self, window: str, text: str, seconds: float = 30.0) -> str:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            shown = self.screen(window)
            if text in shown:
                return shown
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared in window {window}:\n{self.screen(window)}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.name, "kill-server"], capture_output=True, timeout=10, env=self.env)


def _wait_file(path: Path, lines: int, seconds: float = 30.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists():
            got = path.read_text().splitlines()
            if len(got) >= lines:
                return got
        time.sleep(0.1)
    raise AssertionError(f"{path} never had {lines} lines")


def _wait_proxy(directory: Path, client_screen: Callable[[], str], seconds: float = 30.0) -> None:
    from mcpreel.control.discovery import running

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if directory.exists() and running(directory):
            return
        time.sleep(0.1)
    raise AssertionError(f"the proxy never published its control socket; the client's window:\n{client_screen()}")


def test_attach_edit_in_editor_drop_and_save_in_a_real_terminal(tmp_path: Path) -> None:
    out, results, saved = tmp_path / "s.jsonl", tmp_path / "results.txt", tmp_path / "viewer.jsonl"
    env = dict(os.environ, MCPREEL_RUNTIME_DIR=str(tmp_path / "rt"), PYTHONPATH=os.pathsep.join(
        [str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")]), TERM="xterm-256color",
        EDITOR="sed -i 's/as sent/edited in the editor/'", COLORTERM="truecolor")
    env.pop("TMUX", None)
    tmux = Tmux(env)
    py = sys.executable
    try:
        tmux("new-session", "-d", "-s", "t", "-n", "client", "-x", "150", "-y", "40", "-c", str(tmp_path),
             f"{py} -m tests.tui.peers.client s.jsonl {results}; sleep 30")
        tmux("set-option", "-g", "default-size", "150x40")  # later windows too, with no client attached
        _wait_proxy(tmp_path / "rt", lambda: tmux.screen("client"))  # a person starts the viewer once the proxy runs
        tmux("new-window", "-t", "t", "-n", "viewer", f"cd {tmp_path} && {py} -m mcpreel tui --save {saved}; sleep 30")
        tmux("resize-window", "-t", "t:viewer", "-x", "150", "-y", "40")
        tmux.wait("viewer", "HELD")
        tmux("send-keys", "-t", "t:viewer", "m")
        tmux.wait("viewer", "ctrl+s send")
        tmux("send-keys", "-t", "t:viewer", "C-o")  # $EDITOR (sed here) edits the message; the terminal comes back
        tmux.wait("viewer", "edited in the editor")
        tmux("send-keys", "-t", "t:viewer", "C-s")
        assert _wait_file(results, 1)[0] == "answer: edited in the editor"
        tmux.wait("viewer", "[MODIFIED]")
        tmux.wait("viewer", "HELD")  # the second call
        if os.environ.get("MCPREEL_TUI_SCREENSHOT"):
            tmux("send-keys", "-t", "t:viewer", "Up", "Up", "Up", "Up")  # the edited call, its original and its answer
            time.sleep(0.5)
            Path(os.environ["MCPREEL_TUI_SCREENSHOT"]).write_text(tmux.screen("viewer", colours=True))
            tmux("send-keys", "-t", "t:viewer", "End")
        tmux("send-keys", "-t", "t:viewer", "d")
        tmux.wait("viewer", "its sender gets this JSON-RPC error")
        tmux("send-keys", "-t", "t:viewer", "Enter")
        assert _wait_file(results, 2)[1] == "error: -32001 dropped by the viewer"
        tmux.wait("viewer", "[DROPPED]")
        tmux("send-keys", "-t", "t:viewer", "s")
        tmux.wait("viewer", "File (written atomically")
        tmux("send-keys", "-t", "t:viewer", "Enter")
        tmux.wait("viewer", "saved")
        client_window = tmux.screen("client")
        tmux("send-keys", "-t", "t:viewer", "q")
        deadline = time.monotonic() + 10
        while "HELD" in tmux.screen("viewer") or "records" in tmux.screen("viewer"):
            assert time.monotonic() < deadline, "the viewer did not quit"
            time.sleep(0.1)
    finally:
        tmux.close()
    assert "C→S" not in client_window and "HELD" not in client_window  # the client's terminal has no UI
    lines = [json.loads(x) for x in saved.read_text().splitlines()]
    edit = next(x for x in lines if x.get("modified"))
    assert edit["raw"]["params"]["arguments"]["text"] == "edited in the editor"
    assert edit["original"]["params"]["arguments"]["text"] == "as sent"
    assert any(x.get("dropped") for x in lines)
    assert oct(saved.stat().st_mode & 0o777) == "0o600"
    # the proxy's own reel holds both versions too, and who decided
    recorded = [json.loads(x) for x in out.read_text().splitlines()]
    edit = next(x for x in recorded if x.get("modified"))
    assert edit["original"]["params"]["arguments"]["text"] == "as sent" and edit["decided_by"] == "viewer"


def test_record_tui_runs_the_viewer_in_the_http_proxys_terminal(tmp_path: Path) -> None:
    import asyncio
    import threading

    from mcp import Client

    from tests.conftest import free_port, wait_port
    from tests.peers import SDK_SERVER

    server_port, listen = free_port(), free_port()
    server = subprocess.Popen([sys.executable, str(SDK_SERVER), "streamable-http", str(server_port), "--as", "proxy"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = dict(os.environ, MCPREEL_RUNTIME_DIR=str(tmp_path / "rt"), PYTHONPATH=os.pathsep.join(
        [str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")]), TERM="xterm-256color")
    env.pop("TMUX", None)
    tmux = Tmux(env)
    answers: list[str] = []
    try:
        wait_port(server_port, 30)
        tmux("new-session", "-d", "-s", "t", "-n", "proxy", "-x", "150", "-y", "40", "-c", str(tmp_path),
             f"{sys.executable} -m mcpreel record --transport streamable-http --target "
             f"http://127.0.0.1:{server_port}/mcp --listen 127.0.0.1:{listen} --intercept tool:echo --tui "
             f"--out s.jsonl; echo EXIT=$?; sleep 30")
        tmux.wait("proxy", "point your MCP client at")

        def client() -> None:
            async def go() -> None:
                async with Client(f"http://127.0.0.1:{listen}/mcp") as c:
                    answer = await c.call_tool("echo", {"text": "over http"})
                    answers.append(answer.content[0].text)

            asyncio.run(go())

        calling = threading.Thread(target=client, daemon=True)
        calling.start()
        tmux.wait("proxy", "HELD")
        tmux("send-keys", "-t", "t:proxy", "f")
        calling.join(30)
        assert answers == ["over http"]
        # q at once: the viewer may not have heard of the release yet (the client has its answer first);
        # then it asks whether to quit with 1 held, and the question answers itself when the release comes
        tmux("send-keys", "-t", "t:proxy", "q")
        shown = tmux.wait("proxy", "EXIT=")
    finally:
        tmux.close()
        server.terminate()
        server.wait(10)
    assert "EXIT=0" in shown and "recorded -> s.jsonl" in shown  # the recorder's summary, after the viewer
    lines = [json.loads(x) for x in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert lines[-1]["type"] == "end"
    assert any(x.get("raw", {}).get("params", {}).get("name") == "echo" and x.get("decided_by") == "viewer" for x in lines)


def test_record_tui_refuses_stdio_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mcpreel", "record", "--tui", "--out", str(tmp_path / "x.jsonl"), "--",
                           sys.executable, "-c", "pass"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr.strip() == ("error: --tui is for HTTP transports: a stdio proxy's stdin and stdout belong to the "
                                   "MCP client; run `mcpreel tui` in another terminal, it attaches to this proxy")
    assert done.stdout == "" and not (tmp_path / "x.jsonl").exists()
