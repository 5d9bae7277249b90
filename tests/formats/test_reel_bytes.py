"""The reel's ``bytes`` lines (and an invalid line's ``base64``): every byte of a pipe that was not JSON lines,
written, read back, carried by ``convert`` and shown by ``inspect``.

The property tests push random byte streams, cut into random reads, through the stdio proxy's framing
(:class:`~mcpreel.record.framing.Framer`) and recorder into a reel, and read them back: each direction's
bytes come back exactly, and each byte went on exactly once, in order.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel.errors import InputError
from mcpreel.formats import reel
from mcpreel.formats._source import Source
from mcpreel.formats.reel import ReelWriter, raw_note
from mcpreel.model import Kind, Message, SessionInfo
from mcpreel.record.framing import Framer
from mcpreel.record.stdio_recorder import WireRecorder

PY = sys.executable


def reconstruct(path: Path) -> dict[str, bytes]:
    """Each direction's bytes from a reel's records. A message's bytes are the ones its reel line carries
    verbatim after ``"raw":`` (a recorded line is spliced in as it came: a line the noise put a blank in
    front of keeps its blank), which the reader's parsed ``raw`` cannot say."""
    out = {"in": bytearray(), "out": bytearray()}
    verbatim = iter(re.match(rb'.*?"raw":(.*),"seq":\d+\}$', line, re.S).group(1)  # type: ignore[union-attr]
                    for line in path.read_bytes().splitlines() if b'"raw":' in line and b'"type":' not in line[:40])
    for m in reel.read(Source(str(path))):
        if m.kind == Kind.BYTES:
            out[m.dir or "out"] += m.raw
        elif m.kind == Kind.INVALID:
            data = m.extra["base64"] if m.extra and "base64" in m.extra else None
            out[m.dir or "out"] += (__import__("base64").b64decode(data) if data else (m.text or "").encode()) + b"\n"
        elif m.kind == Kind.MESSAGE:
            out[m.dir or "out"] += next(verbatim) + b"\n"
    return {k: bytes(v) for k, v in out.items()}


def pump(framer: Framer, recorder: WireRecorder, chunks: list[bytes]) -> bytes:
    """What the stdio proxy's pump does with ``chunks`` (no pipes): returns the bytes sent on, in order."""
    sent = bytearray()
    direction = framer.direction
    for chunk in chunks:
        done = 0
        for what, end in framer.feed(chunk):
            if isinstance(what, list):
                recorder.lines(direction, what, 1_700_000_000_000)
            else:
                recorder.raw(direction, what, 1_700_000_000_000, h2=framer.h2)
            sent += chunk[done:end]
            done = max(done, end)
        sent += chunk[done:]
    rest = framer.finish()
    if isinstance(rest, list):
        recorder.tail(direction, rest[0], 1_700_000_000_000)
    elif rest:
        recorder.raw(direction, rest, 1_700_000_000_000)
    return bytes(sent)


json_line = st.integers(min_value=0, max_value=10**6).map(lambda i: b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i)
noise = st.binary(max_size=300)
stream = st.lists(st.one_of(json_line, noise, st.just(b"\n"), st.just(b"\xff\xfe\n"), st.just("é".encode())),
                  max_size=20).map(b"".join)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=stream, cuts=st.lists(st.integers(min_value=1, max_value=400), max_size=30),
       direction=st.sampled_from(["in", "out"]), limit=st.sampled_from([16, 1 << 20]))
def test_random_bytes_through_the_framing_and_the_reel_come_back_exactly(tmp_path, data, cuts, direction, limit):
    chunks, at = [], 0
    for n in cuts:
        if at >= len(data):
            break
        chunks.append(data[at : at + n])
        at += n
    if at < len(data):
        chunks.append(data[at:])
    path = tmp_path / f"r{abs(hash((data, tuple(cuts), direction, limit)))}.jsonl"
    writer = ReelWriter(path, SessionInfo(label="t", transport="stdio"))
    recorder = WireRecorder(writer)
    framer = Framer(direction, batch=3, limit=limit)
    sent = pump(framer, recorder, chunks)
    recorder.close(0, "done")
    assert sent == data  # every byte went on, once, in order
    assert reconstruct(path)[direction] == data  # and the reel gives every byte back
    path.unlink()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(st.binary(max_size=2000), max_size=10))
def test_bytes_lines_round_trip_through_the_writer_and_the_reader(tmp_path, pieces):
    path = tmp_path / f"b{abs(hash(tuple(pieces)))}.jsonl"
    with ReelWriter(path, SessionInfo(label="t")) as writer:
        for i, piece in enumerate(pieces):
            writer.write_bytes("in" if i % 2 else "out", piece)
    got = [m.raw for m in reel.read(Source(str(path))) if m.kind == Kind.BYTES]
    assert got == [p for p in pieces if p]
    path.unlink()


def test_a_big_chunk_is_written_as_several_lines_text_or_base64(tmp_path):
    path = tmp_path / "b.jsonl"
    data = b"t" * (reel.BYTES_PIECE + 5) + b"\xff"
    with ReelWriter(path, SessionInfo(label="t")) as writer:
        writer.write_bytes("out", data)
    lines = [json.loads(x) for x in path.read_bytes().splitlines()]
    chunks = [x for x in lines if x.get("type") == "bytes"]
    assert [("text" in x, "base64" in x) for x in chunks] == [(True, False), (False, True)]
    assert [x["seq"] for x in chunks] == [0, 1]
    assert b"".join(m.raw for m in reel.read(Source(str(path))) if m.kind == Kind.BYTES) == data


def test_a_non_utf8_invalid_line_keeps_its_bytes_and_a_redacted_one_does_not(tmp_path):
    path = tmp_path / "i.jsonl"
    writer = ReelWriter(path, SessionInfo(label="t"))
    recorder = WireRecorder(writer)
    recorder.lines("out", [b"\xff\xfe secret", b"plain text"], 1_700_000_000_000)
    recorder.close(0, "done")
    invalid = [json.loads(x) for x in path.read_bytes().splitlines() if b'"invalid"' in x]
    assert invalid[0]["text"] == "\\xff\\xfe secret" and invalid[0]["base64"] == "//4gc2VjcmV0"
    assert "base64" not in invalid[1]
    # a record whose text a redactor rewrote is a plain str: its bytes are not written beside it
    rewritten = Message("out", None, 1, kind=Kind.INVALID, text="[REDACTED]")
    assert "base64" not in reel.record_line(rewritten, 1, 0)


def raw_reel(tmp_path: Path, *, h2: bool, messages: bool) -> Path:
    path = tmp_path / f"raw-{h2}-{messages}.jsonl"
    writer = ReelWriter(path, SessionInfo(label="raw", transport="stdio", command=["srv"]))
    if h2:
        writer.write(Message("in", None, 1_700_000_000_000, kind=Kind.TRANSPORT,
                             ctx={"framing": "h2", "transport": "stdio-v2"}))
    writer.write_bytes("in", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00", 1_700_000_000_001)
    writer.write_bytes("out", "plain ünïcode, no newline".encode(), 1_700_000_000_002)
    if messages:
        writer.write(Message("in", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, 1_700_000_000_003))
        writer.write(Message("out", {"jsonrpc": "2.0", "id": 1, "result": {}}, 1_700_000_000_004))
    writer.close(0, "done")
    return path


def records(path: Path) -> list[tuple[Any, ...]]:
    return [(m.kind, m.dir, m.t, m.raw, m.text, m.ctx, m.seq) for m in reel.read(Source(str(path)))]


def test_convert_carries_bytes_reel_to_reel_and_says_other_formats_lose_them(tmp_path):
    src = raw_reel(tmp_path, h2=True, messages=True)
    copy = tmp_path / "copy.jsonl"
    proc = subprocess.run([PY, "-m", "mcpreel", "convert", str(src), str(copy)], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert b"warning" not in proc.stderr
    assert records(copy) == records(src)
    lossy = tmp_path / "out.jsonrpc"
    proc = subprocess.run([PY, "-m", "mcpreel", "convert", str(src), str(lossy), "--to", "jsonrpc"],
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert b"2 raw byte chunks" in proc.stderr and b"kept only by a reel" in proc.stderr
    for fmt in ("qai", "har", "inspector", "mcp-conformance"):  # every writer passes over them without failing
        target = tmp_path / f"out.{fmt}"
        proc = subprocess.run([PY, "-m", "mcpreel", "convert", str(src), str(target), "--to", fmt],
                              capture_output=True, timeout=60)
        assert proc.returncode == 0, (fmt, proc.stderr)
        assert b"raw byte chunk" in proc.stderr


def test_inspect_shows_raw_chunks(tmp_path):
    src = raw_reel(tmp_path, h2=True, messages=True)
    proc = subprocess.run([PY, "-m", "mcpreel", "inspect", str(src)], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    assert "[BYTES] 33 bytes: PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n\\x00" in text
    assert "[BYTES] 27 bytes: plain ünïcode, no newline" in text
    assert "framing h2 transport stdio-v2" in text
    assert "60 raw bytes in 2 chunks" in text


def test_the_tui_entry_of_a_raw_chunk_reads_as_its_bytes():
    from mcpreel.tui.app import _hexdump
    from mcpreel.tui.entries import Entry

    entry = Entry(0, Message("out", b"\x00\x01abc", 1, kind=Kind.BYTES), "bytes")
    assert entry.text() == "5 bytes: \\x00\\x01abc"
    assert _hexdump(b"\x00\x01abc") == "00000000  " + "00 01 61 62 63".ljust(47) + "  ..abc"


def test_serve_and_replay_say_what_they_cannot_act_on(tmp_path):
    assert raw_note(raw_reel(tmp_path, h2=False, messages=False).parent / "nope.jsonl", "serve") is None
    with pytest.raises(InputError, match="holds only raw bytes .*: nothing to serve"):
        raw_note(raw_reel(tmp_path, h2=True, messages=False), "serve")
    note = raw_note(raw_reel(tmp_path, h2=True, messages=True), "replay")
    assert note is not None and "HTTP/2 (stdio-v2 draft)" in note and "replay acts on the messages decoded" in note
    plain = raw_note(raw_reel(tmp_path, h2=False, messages=True), "serve")
    assert plain is not None and "serve cannot act on them" in plain
    src = raw_reel(tmp_path, h2=True, messages=True)
    proc = subprocess.run([PY, "-m", "mcpreel", "serve", str(src), "--transport", "stdio"],  # not the recorded stdio-v2
                          input=b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
    assert proc.stderr.count(b"stdio-v2 draft") == 1
    only_raw = raw_reel(tmp_path, h2=False, messages=False)
    proc = subprocess.run([PY, "-m", "mcpreel", "serve", str(only_raw)], input=b"", capture_output=True, timeout=60)
    assert proc.returncode == 2 and b"holds only raw bytes" in proc.stderr and b"Traceback" not in proc.stderr
