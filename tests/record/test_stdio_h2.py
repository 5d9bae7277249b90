"""HTTP over stdio (``stdio-v2``): an HTTP/2 client and server on pipes, recorded through the stdio proxy.

The peers (tests/record/peers/h2_client.py, h2_server.py: the h2 package, written from the Transports WG's
http-over-stdio drafts) keep every byte they wrote and read. Through the proxy each side must get exactly
what the other wrote, the answers must be those of a direct run, the reel must keep both directions' bytes
exactly, and the bytes must be decoded into the HTTP exchanges and JSON-RPC messages the HTTP recorder writes.
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
import h2.events
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel.drafts import H2_PREFACE, STDIO_V2_PATH
from mcpreel.formats import reel
from mcpreel.formats._source import Source
from mcpreel.model import Kind, Message
from mcpreel.record.http_recorder import HttpRecorder
from mcpreel.record.stdio_h2 import H2Observer, is_h2_session
from mcpreel.redact import MARKER
from tests.record.peers import h2_client

PY = sys.executable
SERVER = [PY, str(Path(__file__).resolve().parent / "peers" / "h2_server.py")]


def reel_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_bytes().splitlines()]


def raw_bytes(lines: list[dict[str, Any]], direction: str) -> bytes:
    return b"".join(base64.b64decode(x["base64"]) if "base64" in x else x["text"].encode()
                    for x in lines if x.get("type") == "bytes" and x["dir"] == direction)


@pytest.fixture(scope="module")
def direct(tmp_path_factory) -> h2_client.Transcript:
    logs = tmp_path_factory.mktemp("direct")
    return h2_client.run([*SERVER, "--log", str(logs)])


@pytest.mark.parametrize("options", [(), ("--no-control",)], ids=["control", "no-control"])
def test_an_http2_over_stdio_session_is_recorded_byte_exact_and_decoded(tmp_path, direct, options):
    out, logs = tmp_path / "s.jsonl", tmp_path / "logs"
    logs.mkdir()
    proxied = h2_client.run([PY, "-m", "mcpreel", "record", "-q", "--out", str(out), *options, "--",
                             *SERVER, "--log", str(logs)])
    assert proxied.returncode == 0, proxied.stderr[-2000:]
    # the client got what it gets directly, and each side got exactly the bytes the other wrote
    assert proxied.answers == direct.answers
    assert [a[0] for a in direct.answers] == [200, 202, 200, 200, 200, 0]
    assert bytes(proxied.wrote) == (logs / "server-read.bin").read_bytes()
    assert bytes(proxied.read) == (logs / "server-wrote.bin").read_bytes()
    assert bytes(proxied.wrote).startswith(H2_PREFACE)

    lines = reel_lines(out)
    # every byte kept, both directions, in order: the server's exactly; the client's with its header blocks
    # re-encoded once one carried a credential (test_stdio_raw_redact.py; --keep-secrets keeps them exact)
    assert raw_bytes(lines, "out") == bytes(proxied.read)
    assert raw_bytes(lines, "in").startswith(H2_PREFACE)
    assert any(x.get("redacted") for x in lines if x.get("type") == "bytes" and x["dir"] == "in")
    assert not [x for x in lines if x.get("type") == "invalid"]

    # decoded: the same JSON-RPC messages and HTTP exchanges an HTTP recording holds
    sent = [x["raw"] for x in lines if "raw" in x and x["dir"] == "in"]
    assert sent == h2_client.SCRIPT
    answers = [x for x in lines if "raw" in x and x["dir"] == "out"]
    assert [m["raw"].get("id") for m in answers] == [1, 2, None, 3, 4]
    assert answers[2]["raw"]["method"] == "notifications/progress"
    assert answers[2]["ctx"]["sse"]["event"] == "message"  # an SSE stream's event, as over HTTP
    assert len(answers[4]["raw"]["result"]["content"][0]["text"]) == 200_000  # past the 64 KB window
    first = next(x for x in lines if "raw" in x)
    assert first["ctx"]["method"] == "POST" and first["ctx"]["path"] == STDIO_V2_PATH
    assert first["ctx"]["headers"]["authorization"] == MARKER  # a secret header redacted, as over HTTP
    assert first["ctx"]["headers"]["mcp-protocol-version"] == "2026-07-28"
    assert answers[0]["ctx"]["status"] == 200
    transport = [x["ctx"] for x in lines if x.get("type") == "transport"]
    assert transport[0] == {"framing": "h2", "transport": "stdio-v2"}
    assert any(c.get("status") == 202 for c in transport)  # the notification's 202
    reset = [c for c in transport if c.get("closed") == "client"]
    assert reset and reset[0]["error"] == "RST_STREAM CANCEL" and reset[0]["unanswered"] == ["5"]
    assert any(c.get("goaway") == "NO_ERROR" for c in transport)

    session = reel.read(Source(str(out)))
    assert is_h2_session(session)


# -- the decoder alone, on bytes made in memory -------------------------------------------------------------


def conversation() -> tuple[list[tuple[str, bytes]], list[dict[str, Any]]]:
    """A client and a server (h2) talking in memory: the bytes each wrote, in order, and the messages sent."""
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    server = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
    wire: list[tuple[str, bytes]] = []
    client.initiate_connection()
    server.initiate_connection()
    sent = [{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "t", "arguments": {"i": i}}}
            for i in range(1, 4)]

    def move() -> None:
        for _ in range(10):
            c, s = client.data_to_send(), server.data_to_send()
            if not c and not s:
                return
            if c:
                wire.append(("in", c))
                for ev in server.receive_data(c):
                    if isinstance(ev, h2.events.StreamEnded):
                        body = json.dumps({"jsonrpc": "2.0", "id": ev.stream_id // 2 + 1, "result": {}}).encode()
                        server.send_headers(ev.stream_id, [(":status", "200"), ("content-type", "application/json")])
                        server.send_data(ev.stream_id, body, end_stream=True)
            if s:
                wire.append(("out", s))
                client.receive_data(s)

    for msg in sent:  # two requests in flight at once, then a third
        sid = client.get_next_available_stream_id()
        client.send_headers(sid, [(":method", "POST"), (":scheme", "http"), (":authority", "localhost"),
                                  (":path", "/mcp"), ("content-type", "application/json")])
        client.send_data(sid, json.dumps(msg).encode(), end_stream=True)
        if msg["id"] != 1:
            move()
    return wire, sent


def decode(wire: list[tuple[str, bytes]], cuts: list[int]) -> list[Message]:
    records: list[Message] = []
    observer = H2Observer(HttpRecorder(records.append), records.append)
    for i, (direction, data) in enumerate(wire):
        at = cuts[i % len(cuts)] % (len(data) + 1) if cuts else len(data)
        for piece in (data[:at], data[at:]):  # each write read in two pieces, cut anywhere
            if piece:
                observer.feed(direction, piece)
    observer.close()
    return records


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=12))
def test_the_decoder_gives_the_same_exchanges_however_the_bytes_are_cut(cuts):
    wire, sent = conversation()
    whole = decode(wire, [])
    cut = decode(wire, cuts)
    assert [(m.kind, m.dir, m.raw) for m in cut] == [(m.kind, m.dir, m.raw) for m in whole]
    assert [m.raw for m in whole if m.kind == Kind.MESSAGE and m.dir == "in"] == sent
    assert sorted(m.raw["id"] for m in whole if m.kind == Kind.MESSAGE and m.dir == "out") == [1, 2, 3]


def test_bytes_that_are_not_http2_stop_the_decoding_with_one_note():
    records: list[Message] = []
    observer = H2Observer(HttpRecorder(records.append), records.append)
    observer.feed("in", b"GET / HTTP/1.1\r\n\r\n")
    observer.feed("in", b"more")
    assert len(records) == 1 and records[0].kind == Kind.TRANSPORT
    assert "HTTP/2 decoding stopped" in records[0].ctx["undecoded"]
    assert "in" in observer.broken


def jsonrpc_of(ctype: str, body: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an answer: a JSON body, or an SSE stream's ``data`` lines."""
    if not body:
        return []
    if "text/event-stream" in ctype:
        return [json.loads(line[5:]) for line in body.decode().splitlines() if line.startswith("data:")]
    return [json.loads(body)]


def test_serve_speaks_http2_over_stdio_when_the_recording_did(tmp_path, direct):
    out = tmp_path / "s.jsonl"
    recorded = h2_client.run([PY, "-m", "mcpreel", "record", "-q", "--out", str(out), "--", *SERVER])
    assert recorded.returncode == 0, recorded.stderr[-2000:]
    served = h2_client.run([PY, "-m", "mcpreel", "serve", str(out)])  # no --transport: the recording's own
    assert served.returncode == 0, served.stderr[-2000:]
    assert b"serve speaks it too" in served.stderr and b"on stdio (stdio-v2: HTTP/2)" in served.stderr
    assert [a[0] for a in served.answers] == [a[0] for a in direct.answers]  # 200, 202, 200, 200, 200, reset
    for (_, dctype, dbody), (_, sctype, sbody) in zip(direct.answers, served.answers, strict=True):
        want, got = jsonrpc_of(dctype, dbody), jsonrpc_of(sctype, sbody)
        assert [m.get("id") for m in got] == [m.get("id") for m in want]
        for w, g in zip(want, got, strict=True):  # the recorded result, with the era's own additions
            if "result" in w:
                assert w["result"].items() <= g["result"].items()
            else:
                assert g == w
    big = jsonrpc_of(served.answers[4][1], served.answers[4][2])[0]
    assert len(big["result"]["content"][0]["text"]) == 200_000  # past the 64 KB window: flow control works


def test_replay_speaks_http2_over_stdio_to_the_target_when_the_recording_did(tmp_path):
    out = tmp_path / "s.jsonl"
    recorded = h2_client.run([PY, "-m", "mcpreel", "record", "-q", "--out", str(out), "--", *SERVER])
    assert recorded.returncode == 0, recorded.stderr[-2000:]
    target = " ".join([PY, *SERVER[1:]])
    proc = subprocess.run([PY, "-m", "mcpreel", "replay", str(out), "--target-command", target, "--timeout", "5",
                           "--all"], capture_output=True, timeout=180)
    text = proc.stdout.decode()
    assert proc.returncode == 0, (text, proc.stderr.decode()[-2000:])
    assert "(stdio-v2)" in text and "replay speaks it too" in proc.stderr.decode()
    assert "5 requests replayed: 4 same, 0 changed, 1 unrecorded" in text  # the call cancelled while recorded
