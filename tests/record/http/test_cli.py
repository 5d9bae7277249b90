"""``mcpreel record --transport streamable-http|sse`` and ``mcpreel proxy start`` as a user runs them."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from mcpreel._infra import jsonio
from mcpreel.formats import open_session
from mcpreel.model import Kind

from .helpers import ThreadServer, free_port, sdk_server
from .test_sdk_peers import sse_session, streamable_session

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.filterwarnings("ignore:The sampling capability is deprecated")]


_STARTED: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _no_stray_recorder() -> Iterator[None]:
    """A test that fails half-way must not leave its recorder running."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


class Recorder:
    """``python -m mcpreel ARGS`` with its stderr read line by line in a thread."""

    def __init__(self, *args: str, cwd: Path):
        self.proc = subprocess.Popen([sys.executable, "-m", "mcpreel", *args], cwd=cwd, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _STARTED.append(self.proc)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.err: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.err.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, text: str, timeout: float = 15) -> str:
        while True:
            line = self.lines.get(timeout=timeout)
            if line is None:
                raise AssertionError(f"exited before saying {text!r}: {''.join(self.err)}")
            if text in line:
                return line

    def stop(self, sig: int) -> tuple[int, str, str]:
        self.proc.send_signal(sig)
        assert self.proc.stdout is not None
        out = self.proc.stdout.read()  # stderr is the reader thread's alone
        self.proc.wait(15)
        self.reader.join(15)
        return self.proc.returncode, out, "".join(self.err)


async def test_record_sse_until_sigterm(tmp_path: Path) -> None:
    port = free_port()
    with ThreadServer(sdk_server().sse_app()) as srv:
        rec = Recorder("record", "--transport", "sse", "--target", srv.url("/sse"), "--listen", f"127.0.0.1:{port}",
                       "--out", "r.jsonl", "--session-file", "q.json", "--envelope", "e.json", cwd=tmp_path)
        line = rec.wait_for("point your MCP client at")
        assert f"http://127.0.0.1:{port}/sse" in line
        result, posted = await sse_session(f"http://127.0.0.1:{port}/sse")
        code, out, err = rec.stop(signal.SIGTERM)
    assert code == 0 and out == ""  # stdout stays the client's
    assert result["echo"][0] == "héllo ✓"
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("mcpreel: ") and "recorded -> r.jsonl and q.json; signal SIGTERM; envelope -> e.json" in last
    for name in ("r.jsonl", "q.json", "e.json"):
        assert (os.stat(tmp_path / name).st_mode & 0o777) == 0o600, name
    reel, _ = open_session(tmp_path / "r.jsonl", "reel")
    assert reel.info.transport == "sse" and reel.info.url == srv.url("/sse") and reel.info.end_reason == "signal SIGTERM"
    recorded = [m for m in reel.messages if m.kind == Kind.MESSAGE]
    assert [m.raw for m in recorded if m.dir == "in"] == posted.messages
    qai = jsonio.loads((tmp_path / "q.json").read_bytes())
    assert qai["transport"] == "sse" and len(qai["messages"]) == len(recorded)
    assert jsonio.loads((tmp_path / "e.json").read_bytes())["transport"] == "http-sse"


async def test_proxy_start_spelling_until_sigint(tmp_path: Path) -> None:
    port = free_port()
    with ThreadServer(sdk_server().streamable_http_app(json_response=True)) as srv:
        rec = Recorder("proxy", "start", "--transport", "streamable-http", "--target-url", srv.url("/mcp"),
                       "--listen", f"127.0.0.1:{port}", "--out", "r.jsonl", cwd=tmp_path)
        rec.wait_for("point your MCP client at")
        result, _ = await streamable_session(f"http://127.0.0.1:{port}/mcp", back_channel=False)
        code, _, err = rec.stop(signal.SIGINT)
    assert code == 0 and result["slow"] == "done 3"
    assert "signal SIGINT" in err and "Traceback" not in err
    assert (tmp_path / "r.jsonl").read_text().rstrip().splitlines()[-1].endswith('"reason":"signal SIGINT"}')


def test_default_output_path(tmp_path: Path) -> None:
    port = free_port()
    rec = Recorder("record", "--transport", "streamable-http", "--target", "http://127.0.0.1:9/mcp",
                   "--listen", f"127.0.0.1:{port}", cwd=tmp_path)
    rec.wait_for("point your MCP client at")
    r = httpx2.post(f"http://127.0.0.1:{port}/mcp", content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    assert r.status_code == 502
    code, _, err = rec.stop(signal.SIGINT)
    assert code == 0
    files = list((tmp_path / "mcpreel-sessions").glob("127.0.0.1-9-*.jsonl"))
    assert len(files) == 1 and str(files[0].relative_to(tmp_path)) in err


def test_redact_says_how_many_secrets_were_redacted(tmp_path: Path) -> None:
    port = free_port()
    rec = Recorder("record", "--transport", "streamable-http", "--target", "http://127.0.0.1:9/mcp",
                   "--listen", f"127.0.0.1:{port}", "--out", "r.jsonl", "--redact", cwd=tmp_path)
    rec.wait_for("point your MCP client at")
    call = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"password":"hunter2"}}}'
    assert httpx2.post(f"http://127.0.0.1:{port}/mcp", content=call).status_code == 502
    code, _, err = rec.stop(signal.SIGINT)
    assert code == 0
    assert "(1 request, 1 unanswered, 1 secrets redacted) recorded -> r.jsonl" in err.strip().splitlines()[-1]
    assert "hunter2" not in (tmp_path / "r.jsonl").read_text()


def _one_line_error(args: list[str], cwd: Path) -> str:
    proc = subprocess.run([sys.executable, "-m", "mcpreel", *args], cwd=cwd, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def test_taken_port_fails_cleanly_before_any_file(tmp_path: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        line = _one_line_error(["record", "--transport", "streamable-http", "--target", "http://127.0.0.1:9/mcp",
                                "--listen", f"127.0.0.1:{port}", "--out", "r.jsonl"], tmp_path)
    assert line.startswith(f"error: cannot listen on 127.0.0.1:{port}")
    assert not (tmp_path / "r.jsonl").exists()


@pytest.mark.parametrize(("args", "says"), [
    (["--target", "ftp://x/mcp"], "is not an http:// or https:// URL with a host"),
    (["--target", "http://127.0.0.1:9/mcp", "--listen", "nowhere"], "--listen must be HOST:PORT"),
])
def test_bad_words_fail_cleanly(tmp_path: Path, args: list[str], says: str) -> None:
    line = _one_line_error(["record", "--transport", "streamable-http", "--out", "r.jsonl", *args], tmp_path)
    assert says in line


def test_taken_port_leaves_no_default_file(tmp_path: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        _one_line_error(["record", "--transport", "sse", "--target", "http://127.0.0.1:9/sse",
                         "--listen", f"127.0.0.1:{busy.getsockname()[1]}"], tmp_path)
    assert list((tmp_path / "mcpreel-sessions").glob("*")) == []


@pytest.mark.parametrize(("args", "says"), [
    (["--target", "http://127.0.0.1:99999/mcp"], "Port out of range"),
    (["--target", "ftp://x/mcp"], "is not an http:// or https:// URL with a host"),
    (["--target", "http://127.0.0.1:9/mcp", "--listen", "nowhere"], "--listen must be HOST:PORT"),
])
def test_bad_words_leave_no_default_file(tmp_path: Path, args: list[str], says: str) -> None:
    """Without --out the recorder picks a file under ./mcpreel-sessions: not before the words are checked."""
    line = _one_line_error(["record", "--transport", "streamable-http", *args], tmp_path)
    assert says in line
    assert not (tmp_path / "mcpreel-sessions").exists()


@pytest.mark.parametrize("option", ["--envelope", "--session-file"])
def test_an_output_that_cannot_be_written_fails_before_listening(tmp_path: Path, option: str) -> None:
    (tmp_path / "afile").write_text("")
    line = _one_line_error(["record", "--transport", "streamable-http", "--target", "http://127.0.0.1:9/mcp",
                            "--listen", "127.0.0.1:0", "--out", "r.jsonl", option, "afile/x.json"], tmp_path)
    assert "afile/x.json: cannot write the" in line
    assert not (tmp_path / "r.jsonl").exists()
