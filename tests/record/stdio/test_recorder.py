"""WireRecorder + ReelWriter.write_frames: what the proxy writes is always a readable reel."""

from __future__ import annotations

import json
import os
import stat

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel._infra import jsonio
from mcpreel.formats import open_session
from mcpreel.formats.reel import ReelWriter
from mcpreel.model import Kind, SessionInfo
from mcpreel.record.pipeline import Pipeline, Redaction
from mcpreel.record.stdio_recorder import WireRecorder, classify
from mcpreel.redact import Redactor

T = 1_747_090_800_123  # 2025-05-12T23:00:00.123Z


def new_recorder(path, redactor=None, **kw):
    pipeline = Pipeline([Redaction(redactor)] if redactor is not None else [])
    return WireRecorder(ReelWriter(path, SessionInfo(label="t", transport="stdio", command=["srv"])),
                        pipeline=pipeline, **kw)


def test_lines_become_message_invalid_and_batch_records(tmp_path):
    path = tmp_path / "r.jsonl"
    rec = new_recorder(path)
    rec.lines("in", [b'{"jsonrpc":"2.0","id":1,"method":"ping"}', b"not json", b'[{"jsonrpc":"2.0","method":"x"}]'], T)
    rec.lines("out", [b'{"jsonrpc":"2.0","id":1,"result":{}}', b"42", b"", b"\xff\xfe"], T + 5)
    rec.stderr([b"log line\r", b"second"], T + 6)
    rec.close(0, "server exited with code 0")
    lines = [json.loads(x) for x in path.read_bytes().splitlines()]
    assert lines[0]["type"] == "meta" and lines[0]["transport"] == "stdio"
    body = lines[1:-1]
    assert [x.get("seq") for x in body] == list(range(9))
    assert body[0] == {"t": "2025-05-12T23:00:00.123Z", "dir": "in", "raw": {"jsonrpc": "2.0", "id": 1, "method": "ping"}, "seq": 0}
    assert body[1] == {"t": "2025-05-12T23:00:00.123Z", "dir": "in", "type": "invalid", "text": "not json", "seq": 1}
    assert body[2]["raw"] == [{"jsonrpc": "2.0", "method": "x"}]
    assert body[3]["t"] == "2025-05-12T23:00:00.128Z" and body[3]["dir"] == "out"
    # a bare scalar, a blank line and bytes that are not UTF-8 are not JSON-RPC frames
    assert [(x["type"], x["text"]) for x in body[4:7]] == [("invalid", "42"), ("invalid", ""), ("invalid", "\\xff\\xfe")]
    assert [(x["type"], x["text"]) for x in body[7:]] == [("stderr", "log line"), ("stderr", "second")]
    assert lines[-1]["type"] == "end" and lines[-1]["exitCode"] == 0 and lines[-1]["reason"].startswith("server exited")
    assert (rec.messages, rec.invalid, rec.stderr_lines) == (3, 4, 2)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_raw_bytes_are_spliced_as_they_came(tmp_path):
    """Member order, spacing, escapes and duplicate members stay as the peer wrote them."""
    path = tmp_path / "r.jsonl"
    rec = new_recorder(path)
    wire = b'{ "id" :1, "method":"a\\u00e9", "method":"b", "n": 1.50, "big": 123456789012345678901234567890 }'
    rec.lines("in", [wire], T)
    rec.close(0, None)
    line = path.read_bytes().splitlines()[1]
    assert line == b'{"t":"2025-05-12T23:00:00.123Z","dir":"in","raw":' + wire + b',"seq":0}'
    assert jsonio.loads(line)["raw"]["big"] == 123456789012345678901234567890


def test_a_carriage_return_never_reaches_the_reel_raw(tmp_path):
    """CRLF peers: the \r is JSON whitespace; left raw it would cut the line for universal-newline readers."""
    path = tmp_path / "r.jsonl"
    rec = new_recorder(path)
    rec.lines("in", [b'{"id":1,\r"method":"x"}\r', b"bad\r"], T)
    rec.close(0, None)
    data = path.read_bytes()
    assert b"\r" not in data
    body = [json.loads(x) for x in data.splitlines()][1:-1]
    assert body[0]["raw"] == {"id": 1, "method": "x"}
    assert body[1]["text"] == "bad\r"


def test_redactor_changes_the_record_only(tmp_path):
    path = tmp_path / "r.jsonl"

    rec = new_recorder(path, redactor=Redactor())
    untouched = b'{"id": 2, "method": "tools/list"}'
    rec.lines("in", [b'{"id":1,"method":"x","params":{"password":"s3cret","keep":1}}', untouched,
                     b"junk Authorization: Bearer abcdefghijklmnop"], T)
    rec.stderr([b"using token ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"], T)
    rec.close(0, None)
    lines = path.read_bytes().splitlines()
    body = [json.loads(x) for x in lines][1:-1]
    assert body[0]["raw"] == {"id": 1, "method": "x", "params": {"password": "[REDACTED]", "keep": 1}}
    assert untouched in lines[2]  # nothing secret: the wire bytes as they were
    assert body[2]["type"] == "invalid" and "abcdefghijklmnop" not in body[2]["text"]
    assert "ghp_" not in body[3]["text"] and "[REDACTED]" in body[3]["text"]


def test_a_failing_disk_stops_recording_with_one_warning(tmp_path):
    path = tmp_path / "r.jsonl"
    warnings = []
    rec = new_recorder(path, warn=warnings.append)
    rec.writer._fh.close()  # what a vanished disk looks like to the writer
    rec.lines("in", [b"{}"], T)
    rec.lines("in", [b"{}"], T)
    rec.stderr([b"x"], T)
    assert rec.failed
    assert len(warnings) == 1 and "recording stopped" in warnings[0] and "forwarding goes on" in warnings[0]


wire_lines = st.one_of(
    st.binary(max_size=60).map(lambda b: b.replace(b"\n", b"")),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=8,
    ).map(lambda v: json.dumps(v, ensure_ascii=False).encode("utf-8", "surrogatepass")),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.tuples(st.sampled_from(["in", "out"]), st.lists(wire_lines, min_size=1, max_size=6)),
                        min_size=1, max_size=5))
def test_property_any_bytes_make_a_reel_our_reader_reads_back(tmp_path, batches):
    path = tmp_path / "p.jsonl"
    if path.exists():
        path.unlink()
    rec = new_recorder(path)
    for direction, lines in batches:
        rec.lines(direction, lines, T)
    rec.close(0, None)
    session, _ = open_session(path)
    records = list(session)
    expected = [(d, line) for d, lines in batches for line in lines]
    assert len(records) == len(expected)
    for (direction, line), rec_ in zip(expected, records, strict=True):
        frame, value = classify(line)
        assert rec_.dir == direction
        if value is None:
            assert rec_.kind == Kind.INVALID and rec_.text == frame
        else:
            assert rec_.kind == Kind.MESSAGE and rec_.raw == value
    assert session.info.exit_code == 0


def test_a_redactor_that_breaks_stops_recording_not_the_proxy(tmp_path):
    class Broken:
        def value(self, value):
            raise RuntimeError("redactor bug")

        def text(self, text):
            return text

    warnings = []
    rec = new_recorder(tmp_path / "r.jsonl", redactor=Broken(), warn=warnings.append)
    rec.lines("in", [b'{"id":1}'], T)  # does not raise
    assert rec.failed and "redactor bug" in warnings[0]
