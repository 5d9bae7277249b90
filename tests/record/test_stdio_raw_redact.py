"""The raw ``bytes`` copy of a stdio recording carries no secret (issue 36): HTTP/2 header blocks, DATA, text.

A ``stdio-v2`` client sends ``Authorization: Bearer sk-…`` and a ``DPoP`` proof on every request and an API
key in a JSON body. Recorded with the default options, neither header secret is anywhere in the reel: not in
its bytes, not in the raw copy's base64, not in its header blocks once HPACK-decoded; the raw copy still
decodes (frame by frame, and into the same JSON-RPC messages). With ``--redact`` the body's key is gone too;
with ``--keep-secrets`` the raw copy is byte-exact, as it was before.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import h2.config
import h2.connection
import hpack
from hyperframe.frame import ContinuationFrame, DataFrame, Frame, HeadersFrame

from mcpreel.drafts import H2_PREFACE
from mcpreel.formats import reel
from mcpreel.formats._source import Source
from mcpreel.model import Kind, Message
from mcpreel.record.http_recorder import HttpRecorder
from mcpreel.record.raw_redact import RawRedactor
from mcpreel.record.stdio_h2 import H2Observer
from mcpreel.redact import MARKER, Redactor
from tests.record.peers import h2_client

PY = sys.executable
SERVER = [PY, str(Path(__file__).resolve().parent / "peers" / "h2_server.py")]

BEARER = "sk-live0123456789abcdefSECRETbearer"
DPOP = "eyJhbGciOiJFUzI1NiIsInR5cCI6ImRwb3Arand0In0.eyJodG0iOiJQT1NUIiwiaHR1IjoiL21jcCJ9.c2lnbmF0dXJlU0VDUkVU"
BODY_KEY = "sk-bodysecret0123456789abcdefXYZ"
HEADERS = [("authorization", f"DPoP {BEARER}"), ("dpop", DPOP), ("x-trace", "plain")]
SCRIPT: list[dict[str, Any]] = [
    {**h2_client.SCRIPT[0], "params": {**h2_client.SCRIPT[0]["params"], "api_key": BODY_KEY}},
    *h2_client.SCRIPT[1:5],
]
SECRETS = (BEARER, DPOP)


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_bytes().splitlines()]


def raw_of(lines: list[dict[str, Any]], direction: str) -> bytes:
    return b"".join(base64.b64decode(x["base64"]) if "base64" in x else x["text"].encode()
                    for x in lines if x.get("type") == "bytes" and x["dir"] == direction)


def frames_of(data: bytes) -> list[Frame]:
    """Every frame of one direction's raw copy (after the preface): it must parse whole, with nothing left."""
    if data.startswith(H2_PREFACE):
        data = data[len(H2_PREFACE):]
    frames, pos = [], 0
    while pos < len(data):
        frame, length = Frame.parse_frame_header(memoryview(data[pos : pos + 9]))
        assert len(data) >= pos + 9 + length, "a frame cut short"
        frame.parse_body(memoryview(data[pos + 9 : pos + 9 + length]))
        frames.append(frame)
        pos += 9 + length
    return frames


def header_blocks(frames: list[Frame]) -> list[list[tuple[str, str]]]:
    """The header blocks, HPACK-decoded with one fresh decoder (as any reader of the raw copy would)."""
    decoder, blocks, parts = hpack.Decoder(), [], []
    for f in frames:
        if isinstance(f, HeadersFrame | ContinuationFrame):
            parts.append(bytes(f.data))
            if "END_HEADERS" in f.flags:
                blocks.append([(k, v) for k, v in decoder.decode(b"".join(parts))])
                parts = []
    return blocks


def decoded_messages(raw_in: bytes, raw_out: bytes) -> list[Message]:
    records: list[Message] = []
    observer = H2Observer(HttpRecorder(records.append, keep_secrets=True), records.append)
    observer.feed("in", raw_in)
    observer.feed("out", raw_out)
    observer.close()
    return [r for r in records if r.kind == Kind.MESSAGE]


def record(tmp_path: Path, *options: str) -> tuple[h2_client.Transcript, Path]:
    out = tmp_path / "s.jsonl"
    run = h2_client.run([PY, "-m", "mcpreel", "record", "-q", "--no-control", "--out", str(out), *options, "--",
                         *SERVER], script=SCRIPT, headers=HEADERS)
    assert run.returncode == 0, run.stderr[-2000:]
    assert [a[0] for a in run.answers] == [200, 202, 200, 200, 200]
    return run, out


def assert_no_header_secret(out: Path) -> list[dict[str, Any]]:
    data = out.read_bytes()
    for secret in SECRETS:
        assert secret.encode() not in data
    lines = lines_of(out)
    raw_in = raw_of(lines, "in")
    for secret in SECRETS:
        assert secret.encode() not in raw_in
    blocks = header_blocks(frames_of(raw_in))
    assert len(blocks) == len(SCRIPT)
    for block in blocks:
        names = dict(block)
        assert names["authorization"] == MARKER and names["dpop"] == MARKER
        assert names["x-trace"] == "plain" and names[":path"] == "/mcp"  # the rest as it was
        assert not any(secret in v for _, v in block for secret in SECRETS)
    assert all(x.get("redacted") is True for x in lines if x.get("type") == "bytes" and x["dir"] == "in"
               and x.get("redacted") is not None)
    return lines


def test_default_recording_keeps_no_credential_header_in_the_raw_copy_and_it_still_decodes(tmp_path):
    run, out = record(tmp_path)
    lines = assert_no_header_secret(out)
    raw_in, raw_out = raw_of(lines, "in"), raw_of(lines, "out")
    assert raw_out == bytes(run.read)  # the server sent no secret: its bytes are exact
    assert any(x.get("redacted") for x in lines if x.get("type") == "bytes")
    # the raw copy decodes into the same JSON-RPC messages (bodies are redacted only with --redact)
    sent = [m.raw for m in decoded_messages(raw_in, raw_out) if m.dir == "in"]
    assert sent == SCRIPT
    decoded = [x for x in lines if "raw" in x and x["dir"] == "in"]
    assert decoded[0]["ctx"]["headers"]["authorization"] == MARKER and decoded[0]["ctx"]["headers"]["dpop"] == MARKER


def test_redact_also_takes_the_api_key_out_of_the_data_frames(tmp_path):
    _, out = record(tmp_path, "--redact")
    lines = assert_no_header_secret(out)
    assert BODY_KEY.encode() not in out.read_bytes()
    raw_in = raw_of(lines, "in")
    assert BODY_KEY.encode() not in raw_in
    first = json.loads(next(bytes(f.data) for f in frames_of(raw_in) if isinstance(f, DataFrame)))
    assert first["params"]["api_key"] == MARKER
    sent = [m.raw for m in decoded_messages(raw_in, raw_of(lines, "out")) if m.dir == "in"]
    assert sent[0]["params"]["api_key"] == MARKER and sent[1:] == SCRIPT[1:]


def test_keep_secrets_keeps_the_raw_copy_byte_exact(tmp_path):
    run, out = record(tmp_path, "--keep-secrets")
    lines = lines_of(out)
    assert raw_of(lines, "in") == bytes(run.wrote)
    assert raw_of(lines, "out") == bytes(run.read)
    assert not any(x.get("redacted") for x in lines)
    # HPACK may Huffman-code a value: decoded, the proof is there as it was sent
    assert dict(header_blocks(frames_of(raw_of(lines, "in")))[0])["dpop"] == DPOP


# -- the rewriter alone -------------------------------------------------------------------------------------


def client_bytes(n: int, big: bool = False) -> bytes:
    """What an h2 client writes for ``n`` requests whose headers its encoder indexes (dynamic table in use)."""
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    for i in range(n):
        sid = conn.get_next_available_stream_id()
        extra = [("x-big", "v" * 40_000)] if big and i == 0 else []
        conn.send_headers(sid, [(":method", "POST"), (":scheme", "http"), (":authority", "localhost"),
                                (":path", f"/mcp?api_key={BODY_KEY}" if i == 1 else "/mcp"),
                                ("x-session", "indexed-value"), ("authorization", f"Bearer {BEARER}"), *extra])
        conn.send_data(sid, json.dumps({"id": i, "token": BODY_KEY}).encode(), end_stream=True)
    return conn.data_to_send()


def test_rewritten_blocks_need_no_dynamic_table_and_split_into_continuations(tmp_path):
    data = client_bytes(4, big=True)
    rr = RawRedactor()
    out = b"".join(p for i in range(0, len(data), 7) for p, _ in rr.h2("in", data[i : i + 7]))  # cut anywhere
    out += b"".join(p for p, _ in rr.finish("in"))
    frames = frames_of(out)
    assert any(isinstance(f, ContinuationFrame) for f in frames)  # a 40 KB header block: 16 KiB frames
    blocks = header_blocks(frames)
    assert len(blocks) == 4
    for i, block in enumerate(blocks):
        h = dict(block)
        assert h["authorization"] == MARKER and h["x-session"] == "indexed-value"
        assert h[":path"] == ("/mcp?api_key=[REDACTED]" if i == 1 else "/mcp")
    assert BEARER.encode() not in out
    # without a text redactor the DATA payloads stay as they were
    assert sum(BODY_KEY.encode() in bytes(f.data) for f in frames if isinstance(f, DataFrame)) == 4


def test_a_stream_with_no_secret_is_kept_byte_exact():
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    conn.send_headers(1, [(":method", "POST"), (":scheme", "http"), (":authority", "localhost"), (":path", "/mcp")],
                      end_stream=True)
    data = conn.data_to_send()
    pieces = RawRedactor(Redactor()).h2("in", data)
    assert b"".join(p for p, _ in pieces) == data and not any(changed for _, changed in pieces)


def test_binary_and_text_chunks_pass_the_text_redactor_keeping_their_other_bytes():
    chunk = b"\x00\xff\xfeAuthorization: Bearer " + BEARER.encode() + b"\r\n\x80\x81 api_key=" + BODY_KEY.encode() + b"\n"
    [(new, changed)] = RawRedactor(Redactor()).text(chunk)
    assert changed and BEARER.encode() not in new and BODY_KEY.encode() not in new
    assert new.startswith(b"\x00\xff\xfeAuthorization: ") and b"\r\n\x80\x81 api_key=" in new  # not-UTF-8 kept
    assert RawRedactor().text(chunk) == [(chunk, False)]  # no --redact: raw text as it came (as invalid lines)


def test_the_redacted_mark_is_read_and_carried_by_convert(tmp_path):
    _, out = record(tmp_path)
    session = reel.read(Source(str(out)))
    marked = [m for m in session if m.kind == Kind.BYTES and (m.extra or {}).get("redacted")]
    assert marked and all(m.dir == "in" for m in marked)
    copy = tmp_path / "copy.jsonl"
    r = subprocess.run([PY, "-m", "mcpreel", "convert", str(out), str(copy), "--to", "reel"], capture_output=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    assert sum(bool(x.get("redacted")) for x in lines_of(copy)) == len(marked)
