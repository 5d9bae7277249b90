"""Issue 28 item 12: viewers never stall forwarding.

A real ``mcpreel record`` over stdio, its backlog full, and 50 viewers attaching while a client keeps
making round trips: every viewer gets its hello and its backlog, forwarding goes on meanwhile, and a
51st viewer is refused with a line that says why. (``bench/viewers.py`` measures the rate; this asserts
loosely, as a shared CI machine allows: before the fix the rate fell to about 1 % and 17 of 50 connected.)
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from mcpreel.control.client import ControlClient, ControlError
from mcpreel.control.server import MAX_VIEWERS

pytestmark = pytest.mark.e2e
PY = sys.executable
SRC = str(Path(__file__).resolve().parents[2] / "src")

SERVER = textwrap.dedent(
    """
    import os, orjson
    pending = b""
    while True:
        chunk = os.read(0, 65536)
        if not chunk:
            break
        lines = (pending + chunk).split(b"\\n")
        pending = lines.pop()
        out = b"".join(orjson.dumps({"jsonrpc": "2.0", "id": orjson.loads(l)["id"], "result": {}}) + b"\\n"
                       for l in lines)
        while out:
            out = out[os.write(1, out):]
    """
)


class Recording:
    def __init__(self, tmp: Path):
        runtime = tmp / "run"
        env = {**os.environ, "MCPREEL_RUNTIME_DIR": str(runtime), "PYTHONPATH": SRC}
        self.proc = subprocess.Popen([PY, "-m", "mcpreel", "record", "--out", str(tmp / "r.jsonl"), "--",
                                      PY, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, bufsize=0, env=env)
        self.buf = b""
        self.n = 0
        deadline = time.monotonic() + 30
        while not list(runtime.glob("*.sock")):
            assert time.monotonic() < deadline and self.proc.poll() is None, "no control socket"
            time.sleep(0.05)
        self.socket = next(runtime.glob("*.sock"))

    def answers(self, k: int) -> None:
        assert self.proc.stdout is not None
        while self.buf.count(b"\n") < k:
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            assert chunk, "the proxy closed its stdout"
            self.buf += chunk
        self.buf = self.buf.split(b"\n", k)[k]

    def pings(self, k: int) -> None:
        assert self.proc.stdin is not None
        os.write(self.proc.stdin.fileno(), b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % (self.n + i)
                                                   for i in range(k)))
        self.n += k
        self.answers(k)

    def rate(self, seconds: float) -> float:
        done, end = 0, time.monotonic() + seconds
        while time.monotonic() < end:
            self.pings(1)
            done += 1
        return done / seconds


def attach(path: Path, got: list[int], lock: threading.Lock, holders: list[socket.socket]) -> None:
    """One viewer: connect, read until the hello and some of the backlog came, stay attached."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    try:
        s.connect(str(path))
        data = b""
        while data.count(b"\n") < 1000:
            chunk = s.recv(1 << 16)
            if not chunk:
                return
            data += chunk
        if data.startswith(b'{"type":"hello"') and b'{"type":"record"' in data:
            with lock:
                got.append(1)
    except OSError:
        return
    finally:
        with lock:
            holders.append(s)


def test_fifty_viewers_attach_while_forwarding_goes_on_and_the_next_one_is_refused(tmp_path: Path) -> None:
    rec = Recording(tmp_path)
    holders: list[socket.socket] = []
    try:
        for _ in range(10):
            rec.pings(1000)  # 20,000 reel records: the backlog ring is full
        before = rec.rate(1.5)
        got: list[int] = []
        lock = threading.Lock()
        threads = [threading.Thread(target=attach, args=(rec.socket, got, lock, holders), daemon=True)
                   for _ in range(MAX_VIEWERS)]
        for t in threads:
            t.start()
        during = rec.rate(3.0)  # the viewers attach meanwhile
        for t in threads:
            t.join(30)
        assert len(got) == MAX_VIEWERS == 50  # every viewer got its hello and backlog
        # forwarding went on (loosely, as a loaded 2-core machine allows: before the fix this ratio was
        # 0.003-0.03; now 0.4-1 even with the attach burst inside a short window, see BENCHMARKS.md)
        assert during >= 0.1 * before, (before, during)
        with pytest.raises(ControlError, match="already has 50 viewers attached"):
            ControlClient.connect(rec.socket, timeout=10)
        rec.pings(100)  # and still forwards
    finally:
        for s in holders:
            s.close()
        assert rec.proc.stdin is not None
        rec.proc.stdin.close()
        assert rec.proc.wait(20) == 0
        assert rec.proc.stderr is not None
        err = rec.proc.stderr.read().decode()
        assert "refused a viewer: 50 are attached already" in err


def test_a_viewer_attaching_mid_stream_gets_every_record_once_in_order(tmp_path: Path) -> None:
    """The backlog is made outside the lock: what is recorded while it is made comes after it, once."""
    from mcpreel.control.server import ControlServer

    server = ControlServer(transport="stdio", directory=tmp_path)
    server.start()
    stop = threading.Event()
    sent: list[int] = []

    def record() -> None:
        seq = 0
        while not stop.is_set() and seq < 200_000:
            server.frames("in", [b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % seq], 1_700_000_000_000, seq)
            sent.append(seq)
            seq += 1
            if seq % 100 == 0:
                time.sleep(0.001)

    feeder = threading.Thread(target=record, daemon=True)
    feeder.start()
    try:
        while len(sent) < 5000:
            time.sleep(0.01)
        seqs: list[int] = []
        with ControlClient.connect(server.socket_path) as c:  # type: ignore[arg-type]
            time.sleep(0.5)
            stop.set()
            feeder.join(10)
            last = sent[-1]
            while not seqs or seqs[-1] != last:
                event = c.next_event(timeout=10)
                assert event is not None and event["type"] == "record"
                seqs.append(event["record"]["seq"])
        assert seqs == list(range(seqs[0], last + 1)) and seqs[0] == 0
    finally:
        stop.set()
        server.close()
