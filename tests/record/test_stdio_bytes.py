"""Every byte, whatever the framing: a stdio peer that is not newline-delimited JSON, through the recording proxy.

The peers (tests/record/peers/) keep what they read and wrote; the client here keeps what it wrote and
read. Through the proxy each side must see exactly what the other wrote (byte for byte), bytes with no
newline must go on at once (the client waits for their echo before it writes anything else), and the
reel must give back every byte of each direction, in order.
"""

from __future__ import annotations

import base64
import json
import os
import random
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpreel.formats import reel
from mcpreel.formats._source import Source
from mcpreel.model import Kind
from tests.record.peers import byte_echo

PY = sys.executable
PEERS = Path(__file__).resolve().parent / "peers"
ECHO = [PY, str(PEERS / "byte_echo.py")]
TIMEOUT = 60.0


def record_argv(out: Path, *options: str) -> list[str]:
    return [PY, "-m", "mcpreel", "record", "-q", "--out", str(out), *options, "--"]


def read_exactly(fd: int, n: int, got: bytearray) -> bytes:
    """Read ``n`` bytes (what an echo must give back) within the timeout: a proxy that waits for a newline fails."""
    want = len(got) + n
    while len(got) < want:
        ready, _, _ = select.select([fd], [], [], TIMEOUT)
        assert ready, f"no bytes within {TIMEOUT}s: the proxy held them (waiting for a newline?)"
        data = os.read(fd, want - len(got))
        assert data, "the peer closed its stdout early"
        got += data
    return bytes(got[want - n :])


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def wire_of(path: Path) -> dict[str, bytes]:
    """Each direction's bytes as the reel keeps them: a message line's JSON (compact, as these peers write it)
    and its newline, an invalid line's bytes and its newline, a ``bytes`` line's bytes."""
    out = {"in": bytearray(), "out": bytearray()}
    for lineno, line in enumerate(path.read_bytes().splitlines(), 1):
        obj: dict[str, Any] = json.loads(line)
        typ, d = obj.get("type"), obj.get("dir")
        if typ == "bytes":
            out[d] += base64.b64decode(obj["base64"]) if "base64" in obj else obj["text"].encode()
        elif typ == "invalid":
            out[d] += (base64.b64decode(obj["base64"]) if "base64" in obj else obj["text"].encode()) + b"\n"
        elif typ is None and "raw" in obj:
            out[d] += json.dumps(obj["raw"], separators=(",", ":")).encode() + b"\n"
        else:
            assert typ in ("meta", "end", "transport"), (lineno, obj)
    return {k: bytes(v) for k, v in out.items()}


@pytest.mark.parametrize("options", [(), ("--no-control",)], ids=["control", "no-control"])
def test_a_binary_no_newline_peer_is_forwarded_at_once_and_kept_byte_exact(tmp_path, options):
    out, logs = tmp_path / "s.jsonl", tmp_path / "logs"
    logs.mkdir()
    proc = subprocess.Popen([*record_argv(out, *options), *ECHO, "--log", str(logs)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    wfd, rfd = proc.stdin.fileno(), proc.stdout.fileno()
    rng = random.Random(36)
    got = bytearray()
    wrote = bytearray()
    try:
        # the server's greeting has no newline: it reaches the client all the same
        assert read_exactly(rfd, len(byte_echo.GREETING), got) == byte_echo.GREETING
        pieces = [
            b"no newline here \xff\xfe",  # not UTF-8, no newline: its echo must come back before anything else
            b" ...and its end\n",
            b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n',  # a JSON line in the middle stays a message
            bytes(rng.randrange(256) for _ in range(200_000)),  # binary with newlines here and there
            b"PRI * HTTP/2.0\r\n",  # HTTP/2-looking text, mid-stream: plain bytes here
            "ünïcode text with no end".encode(),
            b"\n",
            b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n',
        ]
        for piece in pieces:
            write_all(wfd, piece)
            wrote += piece
            assert read_exactly(rfd, len(piece), got) == piece
        tail = b'{"jsonrpc": "2.0", "half a line'  # the stream ends inside a line
        write_all(wfd, tail)
        wrote += tail
        assert read_exactly(rfd, len(tail), got) == tail
    finally:
        proc.stdin.close()
        got += proc.stdout.read()
        err = proc.stderr.read() if proc.stderr else b""
        assert proc.wait(TIMEOUT) == 0, err
    # each side saw exactly what the other wrote
    assert bytes(wrote) == (logs / "server-read.bin").read_bytes()
    assert bytes(got) == (logs / "server-wrote.bin").read_bytes() == byte_echo.GREETING + bytes(wrote)
    # and the reel keeps every byte of both directions, in order
    kept = wire_of(out)
    assert kept["in"] == bytes(wrote)
    assert kept["out"] == bytes(got)
    lines = [json.loads(x) for x in out.read_bytes().splitlines()]
    assert [x["raw"]["id"] for x in lines if "raw" in x and x["dir"] == "in"] == [1, 2]  # JSON lines: messages
    assert any(x.get("type") == "bytes" and "base64" in x for x in lines)
    session = reel.read(Source(str(out)))
    raw = [m for m in session if m.kind == Kind.BYTES]
    assert raw and all(isinstance(m.raw, bytes) and m.t is not None for m in raw)


def test_fifty_megabyte_line_streams_through_in_bounded_memory(tmp_path):
    """A 50 MB line (JSON-looking, so held until the line limit, then kept raw) and 50 MB of bytes with no newline:
    forwarded whole and exact, kept in the reel exact, the proxy's peak memory far below holding them whole."""
    out, logs = tmp_path / "s.jsonl", tmp_path / "logs"
    logs.mkdir()
    big_line = b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"blob":"' + b"y" * (50 << 20) + b'"}}\n'
    no_newline = bytes(range(1, 256)).replace(b"\n", b"") * ((50 << 20) // 254)
    payload = big_line + no_newline
    # the proxy runs under a launcher that reports its children's peak RSS (the proxy's and the small echo's)
    launcher = ("import resource, subprocess, sys; rc = subprocess.call(sys.argv[1:]); "
                "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(rc)")

    def run(data: bytes, where: Path) -> tuple[bytes, int]:
        proc = subprocess.run([PY, "-c", launcher, *record_argv(where, "--no-control"), *ECHO, "--log", str(logs)],
                              input=data, capture_output=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout, int(proc.stderr.strip().splitlines()[-1])

    _, baseline_kb = run(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', tmp_path / "small.jsonl")
    got, peak_kb = run(payload, out)
    assert got == byte_echo.GREETING + payload
    assert (logs / "server-read.bin").read_bytes() == payload
    kept = wire_of(out)
    assert kept["in"] == payload
    assert kept["out"] == byte_echo.GREETING + payload
    growth_mb = (peak_kb - baseline_kb) / 1024
    print(f"peak RSS growth for 100 MB streamed: {growth_mb:.1f} MB (baseline {baseline_kb / 1024:.0f} MB)")
    # holding one of the 50 MB runs whole once would be 50 MB more; the line limit (16 MiB) is held at most once
    assert growth_mb < 45, f"the proxy grew {growth_mb:.0f} MB for 100 MB streamed through"
    lines = [json.loads(x) for x in out.read_bytes().splitlines()]
    biggest = max(len(json.dumps(x)) for x in lines)
    assert biggest < 2 << 20, "a raw run is written in pieces, never as one line"
