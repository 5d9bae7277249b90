"""Raw ``bytes`` reel lines (a stdio pipe that was not JSON lines: HTTP/2 ``stdio-v2`` frames, binary, no
newline) carried through the verbs that meet them: ``mcpreel redact`` rewrites them as the recorder does
(credential headers out of HPACK header blocks, the text rule on the rest), OTLP says they were there and
that it does not carry them, the live feed and the control channel pass them on unchanged, and a HAR of a
``stdio-v2`` recording holds its decoded HTTP exchanges."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.convert import write_session
from mcpreel.formats import open_session
from mcpreel.model import Kind, Message, Session, SessionInfo
from mcpreel.otel.mapping import spans
from mcpreel.redact import MARKER
from tests.record.test_stdio_raw_redact import (
    BODY_KEY,
    DPOP,
    SCRIPT,
    assert_no_header_secret,
    decoded_messages,
    frames_of,
    header_blocks,
    lines_of,
    raw_of,
    record,
)

T = 1_800_000_000_000
TOKEN = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"
BINARY = b"\x00\x01\xffAuthorization: Bearer " + TOKEN.encode() + b"\xfe no newline"


def run(*args: object) -> tuple[int, str]:
    r = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return r.exit_code, r.stdout + r.stderr


def binary_reel(path: Path) -> Path:
    msgs = [Message("in", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, T),
            Message("out", BINARY, T + 1, kind=Kind.BYTES),
            Message("out", {"jsonrpc": "2.0", "id": 1, "result": {}}, T + 2)]
    write_session(Session(SessionInfo(), msgs), path, "reel")
    return path


def test_redact_rewrites_the_raw_copy_of_an_http2_recording_that_kept_its_secrets(tmp_path: Path) -> None:
    _, kept = record(tmp_path, "--keep-secrets")
    # the raw copy is byte-exact, secrets and all (HPACK may Huffman-code them: decoded, they are there)
    assert dict(header_blocks(frames_of(raw_of(lines_of(kept), "in")))[0])["dpop"] == DPOP
    shared = tmp_path / "shared.jsonl"
    code, said = run("redact", kept, shared, "--plain")
    assert code == 0, said
    assert "raw bytes line" in said
    lines = assert_no_header_secret(shared)  # not in the file, not in the header blocks once HPACK-decoded
    assert any(x.get("redacted") for x in lines if x.get("type") == "bytes" and x["dir"] == "in")
    # still HTTP/2 that decodes into the same JSON-RPC messages, the body's key redacted as in the JSON lines
    sent = [m.raw for m in decoded_messages(raw_of(lines, "in"), raw_of(lines, "out")) if m.dir == "in"]
    assert sent[0]["params"]["api_key"] == MARKER and sent[1:] == SCRIPT[1:]
    assert BODY_KEY.encode() not in shared.read_bytes()
    assert raw_of(lines, "out") == raw_of(lines_of(kept), "out")  # the server's bytes held no secret: exact


def test_redact_applies_the_text_rule_to_binary_bytes_keeping_the_rest(tmp_path: Path) -> None:
    reel = binary_reel(tmp_path / "b.jsonl")
    shared = tmp_path / "shared.jsonl"
    code, said = run("redact", reel, shared, "--plain")
    assert code == 0, said
    assert TOKEN not in shared.read_text()
    (line,) = [x for x in lines_of(shared) if x.get("type") == "bytes"]
    data = raw_of([line], "out")
    assert line["redacted"] is True and data.startswith(b"\x00\x01\xff") and data.endswith(b"\xfe no newline")


def test_otlp_says_raw_bytes_were_there_and_that_it_does_not_carry_them(tmp_path: Path) -> None:
    session, _ = open_session(binary_reel(tmp_path / "b.jsonl"), "reel")
    (root,) = [s for s in spans(session, include_content=True) if s.name.startswith("mcp session")]
    (event,) = [e for e in root.events if e.name == "mcpreel.raw_bytes"]
    assert event.attributes["mcpreel.raw.size"] == len(BINARY)
    assert event.attributes["mcpreel.raw.lossy"] is True
    assert event.attributes["mcpreel.direction"] == "server_to_client"
    assert root.attributes["mcpreel.raw_bytes"] == event.attributes["mcpreel.raw.size"]
    assert TOKEN not in json.dumps([e.attributes for e in root.events])


def test_http_outputs_of_a_stdio_v2_recording_hold_its_decoded_http_exchanges(tmp_path: Path) -> None:
    _, reel = record(tmp_path)
    har = tmp_path / "s.har"
    code, said = run("convert", reel, har, "--to", "har")
    assert code == 0, said
    assert "raw byte chunks" in said  # what HAR cannot hold, said in one line
    log = json.loads(har.read_text())["log"]
    assert log["_mcp"]["transport"] == "stdio-v2"
    posts = [e for e in log["entries"] if e["request"]["method"] == "POST"]
    assert [(e["request"]["url"], e["request"]["httpVersion"], e["response"]["status"]) for e in posts] == \
        [("http://localhost/mcp", "HTTP/2", status) for status in (200, 202, 200, 200, 200)]
    assert [e["_mcp"]["method"] for e in posts] == [m["method"] for m in SCRIPT]
    assert all(e["request"]["headers"] for e in posts)  # the decoded request headers, redacted
    assert MARKER in json.dumps(posts[0]["request"]["headers"]) and DPOP not in har.read_text()
    envelope = tmp_path / "s.http.json"
    code, said = run("convert", reel, envelope, "--to", "streamable-http")
    assert code == 0, said
    doc = json.loads(envelope.read_text())
    sent = [e["request"] for e in doc["entries"] if "request" in e]
    assert sent[1:] == SCRIPT[1:] and sent[0]["method"] == SCRIPT[0]["method"]


def test_the_live_viewer_gets_raw_bytes_and_the_intercept_says_it_cannot_hold_them(tmp_path: Path) -> None:
    """A binary, no-newline peer recorded with a viewer attached and holding: the viewer's feed carries the
    ``bytes`` lines as the reel has them, the bytes go on unchanged (each side sees what the other wrote),
    and the recorder says in one line per direction that they cannot be held or edited."""
    import base64
    import os
    import subprocess
    import sys
    import time

    from mcpreel.control.client import ControlClient
    from mcpreel.formats._source import Source
    from mcpreel.formats.reel import record_of_line
    from tests.record.peers import byte_echo
    from tests.record.test_stdio_bytes import ECHO, read_exactly, write_all

    runtime = tmp_path / "run"
    out = tmp_path / "r.jsonl"
    env = {**os.environ, "MCPREEL_RUNTIME_DIR": str(runtime)}
    proc = subprocess.Popen([sys.executable, "-m", "mcpreel", "record", "--out", str(out), "--", *ECHO],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    got = bytearray()
    try:
        deadline = time.monotonic() + 60
        while not list(runtime.glob("*.sock")):
            assert time.monotonic() < deadline and proc.poll() is None, "no control socket"
            time.sleep(0.05)
        viewer = ControlClient.connect(next(runtime.glob("*.sock")), timeout=30)
        viewer.intercept("dir:c2s")  # a viewer holding the client's messages
        assert read_exactly(proc.stdout.fileno(), len(byte_echo.GREETING), got) == byte_echo.GREETING
        piece = b"\xff\xfe binary, no newline"
        write_all(proc.stdin.fileno(), piece)
        assert read_exactly(proc.stdout.fileno(), len(piece), got) == piece  # went on at once, unheld
        seen = bytearray()
        while piece not in seen:
            event = viewer.wait_for("record", timeout=30)
            line = event["record"]
            if line.get("type") == "bytes" and line["dir"] == "in":
                seen += base64.b64decode(line["base64"]) if "base64" in line else line["text"].encode()
                shown = record_of_line(line, 1, Source("control socket"))  # what the TUI's live feed reads
                assert shown is not None and shown.kind == Kind.BYTES and isinstance(shown.raw, bytes)
        viewer.close()
    finally:
        proc.stdin.close()
        got += proc.stdout.read()
        err = proc.stderr.read().decode()
        assert proc.wait(60) == 0, err
    assert bytes(got) == byte_echo.GREETING + piece
    # one line per direction (the server's echo is raw too), said once however many bytes came
    assert err.count("the client sends bytes that are not JSON lines: they go on unchanged and cannot be held "
                     "or edited") == 1, err
    assert err.count("cannot be held or edited") <= 2, err


def test_the_live_otlp_export_says_raw_bytes_by_their_size_and_never_queues_them(tmp_path: Path) -> None:
    """``record --otlp-endpoint``: the live exporter is a ``raw_recorded`` addon; what it queues for a raw
    line is its direction and size (a binary stream must not wait in its queue whole), and the span says
    them as ``export otlp`` of the reel does."""
    from mcpreel.otel.live import LiveExport

    live = LiveExport("http://127.0.0.1:9/v1/traces")  # no session yet: nothing is started, nothing is sent
    live.raw_recorded(Message("out", BINARY, 1_700_000_000_000, kind=Kind.BYTES, seq=3))
    queued = live.queue.get_nowait()
    assert queued.kind == Kind.BYTES and queued.raw == b"" and queued.extra["size"] == len(BINARY)
    session = Session.streaming(SessionInfo(label="live", transport="stdio"), lambda: iter([queued]))
    (root,) = [s for s in spans(session, include_content=True) if s.name.startswith("mcp session")]
    (event,) = [e for e in root.events if e.name == "mcpreel.raw_bytes"]
    assert event.attributes["mcpreel.raw.size"] == len(BINARY) and event.attributes["mcpreel.raw.lossy"] is True
    assert root.attributes["mcpreel.raw_bytes"] == len(BINARY)
