"""``serve`` of a line-based recording through the compact index: the same answers as from memory."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcpreel.formats import get_writer, open_session
from mcpreel.mock import compact as compact_module
from mcpreel.mock.compact import load_compact
from mcpreel.mock.engine import Mock, MockOptions
from mcpreel.model import Kind
from mcpreel.operations.cassette import build

_T = "2026-01-01T00:00:00.000Z"


def reel(path: Path, records: list[tuple[str, Any]], **extra: Any) -> Path:
    lines = [{"v": 1, "type": "meta", "startedAt": _T, "label": "t", "command": []}]
    lines += [{"t": _T, "dir": d, "raw": raw, **extra} for d, raw in records]
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return path


def call(i: Any, name: str, **args: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args}}


def answer(i: Any, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": text}]}}


def _client_messages(path: Path) -> list[Any]:
    session, _ = open_session(path)
    return [m.raw for m in session if m.kind == Kind.MESSAGE and m.dir == "in" and not m.dropped]


def _serve_all(mock: Mock, messages: list[Any], extra: list[Any]) -> list[Any]:
    """Every recorded client message, then ``extra`` ones, through one connection; what it emitted."""
    out: list[Any] = []

    async def go() -> None:
        conn = mock.connection()
        conn.client_gone()  # recorded server requests wait for no answer
        for message in messages + extra:
            waiting = conn.receive(message, out.append)
            if waiting is not None:
                await waiting

    asyncio.run(go())
    return out


def _both(path: Path, mode: str = "method-params", extra: list[Any] | None = None, repeat: bool = True):
    session, _ = open_session(path)
    compact = load_compact(path, session, mode)
    assert compact is not None
    options = MockOptions(match=mode, repeat=repeat, answer_timeout=0.01)
    from_disk, in_memory = Mock(compact, options), Mock(build(open_session(path)[0].materialize()), options)
    messages = _client_messages(path)
    got = _serve_all(from_disk, messages, extra or [])
    want = _serve_all(in_memory, messages, extra or [])
    compact.close()
    return got, want, from_disk, in_memory


@pytest.mark.parametrize("mode", ["method-params", "strict", "sequential"])
def test_a_reel_is_answered_the_same_from_disk_as_from_memory(tmp_path, mode):
    records = [
        ("in", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}),
        ("out", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                                                        "serverInfo": {"name": "s", "version": "1"}}}),
        ("in", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ("out", {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
        ("in", {**call(1, "echo", text="a"), "params": {"name": "echo", "arguments": {"text": "a"},
                                                         "_meta": {"progressToken": "p1"}}}),
        ("out", {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p1", "progress": 1}}),
        ("out", {"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}),
        ("in", {"jsonrpc": "2.0", "id": "s1", "result": {"roots": []}}),
        ("out", answer(1, "first a")),
        ("out", {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "after"}}),
        ("in", call(2, "echo", text="a")),
        ("out", answer(2, "second a")),
        ("in", [call(3, "add", a=1), call(4, "echo", text="b")]),
        ("out", [answer(4, "b"), answer(3, "1")]),
        ("in", call(5, "never_answered")),
    ]
    path = reel(tmp_path / "r.jsonl", records)
    extra = [call(90, "echo", text="a"), call(91, "echo", text="zzz"), call(92, "nope"),
             {"jsonrpc": "2.0", "id": 93, "method": "resources/read", "params": {"uri": "x"}},
             {"jsonrpc": "2.0", "id": 94, "method": "ping"}]
    got, want, from_disk, in_memory = _both(path, mode, extra)
    assert got == want
    assert any(isinstance(m, dict) and m.get("method") == "notifications/progress" for m in got)
    assert from_disk.stats.answered == in_memory.stats.answered > 0
    assert [m.reason for m in from_disk.stats.misses] == [m.reason for m in in_memory.stats.misses]
    assert from_disk.recorded_requests == in_memory.recorded_requests == 6


def test_identical_requests_are_answered_in_recorded_order_then_repeat_or_run_out(tmp_path):
    records = []
    for i in range(5):
        records += [("in", call(i, "same")), ("out", answer(i, f"answer {i}"))]
    path = reel(tmp_path / "r.jsonl", records)
    extra = [call(100 + i, "same") for i in range(3)]
    for repeat in (True, False):
        got, want, _, _ = _both(path, extra=extra, repeat=repeat)
        assert got == want
    got, _, _, _ = _both(path, extra=extra)
    assert [m["result"]["content"][0]["text"] for m in got[5:]] == ["answer 4"] * 3


def test_a_long_reel_is_read_back_line_by_line_exactly(tmp_path):
    """Offsets are kept for every 32nd line only: every line in between must still be read back right."""
    records = []
    for i in range(300):
        records += [("in", call(i, f"t{i % 7}", n=i)), ("out", answer(i, f"answer {i}"))]
        if i % 5 == 0:
            records.append(("out", {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": i}}))
    path = reel(tmp_path / "r.jsonl", records)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())  # a BOM does not move the lines
    got, want, _, _ = _both(path, extra=[call(999, "t3", n=10)])
    assert got == want
    answers = [m["result"]["content"][0]["text"] for m in got if "result" in m]
    assert answers[:300] == [f"answer {i}" for i in range(300)]


def test_answers_stored_far_from_their_request_are_read_back(tmp_path, monkeypatch):
    monkeypatch.setattr(compact_module, "_NEAR", 1)  # every answer counts as far
    records = []
    for i in range(40):
        records += [("in", call(i, "t", n=i)), ("out", answer(i, f"answer {i}"))]
    path = reel(tmp_path / "r.jsonl", records)
    session, _ = open_session(path)
    cas = load_compact(path, session, "method-params")
    assert cas is not None and len(cas.responses_far) == 40
    got, want, _, _ = _both(path)
    assert got == want and got[39]["result"]["content"][0]["text"] == "answer 39"


def test_keyed_redaction_markers_match_the_live_secret_through_the_index(tmp_path, monkeypatch):
    from mcpreel.redact.keys import ENV_VAR, keyed_marker

    key_file = tmp_path / "redact.key"
    key_file.write_text("k" * 32)
    monkeypatch.setenv(ENV_VAR, str(key_file))
    marker = keyed_marker(b"k" * 32, "token", "s3cret")
    path = reel(tmp_path / "r.jsonl", [("in", call(1, "login", token=marker)), ("out", answer(1, "welcome")),
                                      ("in", call(2, "other")), ("out", answer(2, "other"))])
    session, _ = open_session(path)
    cas = load_compact(path, session, "method-params")
    assert cas is not None and list(cas.keyed) == ["tools/call"]
    got, want, _, _ = _both(path, extra=[call(10, "login", token="s3cret"), call(11, "login", token="wrong")])
    assert got == want
    assert got[-2]["result"]["content"][0]["text"] == "welcome" and "error" in got[-1]


def test_a_miss_among_many_recorded_calls_names_the_same_closest_one(tmp_path):
    """The index keeps the first 500 requests of a method, the candidates a miss is explained from."""
    records = []
    for i in range(600):
        records += [("in", call(i, f"t{i % 3}", n=i)), ("out", answer(i, str(i)))]
    path = reel(tmp_path / "r.jsonl", records)
    got, want, from_disk, _ = _both(path, extra=[call(900, "t1", n=599), call(901, "zz", n=1)])
    assert got == want and len(from_disk.stats.misses) == 2
    assert "closest is request #" in from_disk.stats.misses[0].reason


def test_keys_that_share_a_hash_are_told_apart_when_read_back(tmp_path, monkeypatch):
    """With every hash the same, the index finds one run for all keys: what is read back decides."""
    monkeypatch.setattr(compact_module, "_HASH_MASK", 0)
    records = []
    for i, name in enumerate(["a", "b", "a", "c", "b"]):
        records += [("in", call(i, name)), ("out", answer(i, f"{name} {i}"))]
    path = reel(tmp_path / "r.jsonl", records)
    got, want, _, _ = _both(path, extra=[call(50, "b"), call(51, "c"), call(52, "d")])
    assert got == want
    assert [m["result"]["content"][0]["text"] for m in got[:5]] == ["a 0", "b 1", "a 2", "c 3", "b 4"]


def test_keys_sorted_in_runs_answer_repeats_in_recorded_order_across_runs(tmp_path, monkeypatch):
    """The keys are sorted in runs of _CHUNK requests and never merged (the load's peak): a request
    recorded in several runs is found in each, and its answers come back in recorded order."""
    monkeypatch.setattr(compact_module, "_CHUNK", 3)
    records = []
    for i, name in enumerate(["a", "b", "a", "c", "a", "b", "d", "a", "c", "a"]):
        records += [("in", call(i, name)), ("out", answer(i, f"{name} {i}"))]
    path = reel(tmp_path / "r.jsonl", records)
    got, want, from_disk, _ = _both(path, extra=[call(50, "a"), call(51, "e")])
    assert len(from_disk.cassette.keys) == 4  # 10 requests in runs of 3
    assert got == want
    assert [m["result"]["content"][0]["text"] for m in got[:10]] == [
        "a 0", "b 1", "a 2", "c 3", "a 4", "b 5", "d 6", "a 7", "c 8", "a 9"]


def test_recordings_of_several_sessions_and_other_formats_are_served_from_memory(tmp_path, fixtures_dir):
    two = reel(tmp_path / "two.jsonl", [
        ("in", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}),
        ("out", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18", "capabilities": {}}}),
        ("in", call(1, "x")), ("out", answer(1, "x")),
        ("in", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}),
    ])
    merged = reel(tmp_path / "merged.jsonl", [("in", call(1, "x")), ("out", answer(1, "x"))], file="a.jsonl")
    qai = fixtures_dir / "qai" / "qai_session_minimal.json"
    for path in (two, merged, qai):
        session, _ = open_session(path)
        assert load_compact(path, session, "method-params") is None, path


def test_real_sessions_converted_to_reels_are_answered_the_same(tmp_path, fixtures_dir):
    served = 0
    for source in sorted((fixtures_dir / "qai").glob("*.json")):
        session, _ = open_session(source)
        path = tmp_path / (source.stem + ".jsonl")
        with open(path, "wb") as fh:
            get_writer("reel")(session, fh)
        if load_compact(path, open_session(path)[0], "method-params") is None:
            continue
        got, want, _, _ = _both(path)
        assert got == want, source
        served += 1
    assert served >= 3


@pytest.mark.e2e
@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_the_sdk_client_of_each_era_gets_from_the_served_index_what_it_got_from_the_server(tmp_path, era):
    import subprocess

    from tests.replay.e2e_helpers import MCPREEL, SDK_SERVER, record, run_client

    out = tmp_path / "s.jsonl"
    got = record(out, SDK_SERVER, era=era)
    assert got["protocol"] == ("2026-07-28" if era == "auto" else "2025-11-25")
    assert run_client("stdio", " ".join([*MCPREEL, "serve", str(out)]), era=era) == got
    said = subprocess.run([*MCPREEL, "serve", str(out)], input="", capture_output=True, text=True, timeout=60)
    assert said.returncode == 0 and "recorded requests, match method-params, indexed on disk)" in said.stderr


#: runs the CLI and says its own peak RSS (VmHWM is the process's own: not inherited across the fork)
_PEAK = """
import runpy, sys
sys.argv = ["mcpreel", *sys.argv[1:]]
try:
    runpy.run_module("mcpreel", run_name="__main__")
finally:
    hwm = next(ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:"))
    sys.stderr.write("PEAK " + hwm.split()[1] + "\\n")
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_serve_memory_is_flat_from_20k_to_200k_messages(tmp_path):
    import os
    import subprocess
    import sys

    peaks = []
    for n in (10_000, 100_000):  # calls: 20k and 200k messages
        path = tmp_path / f"r{n}.jsonl"
        with open(path, "wb") as fh:
            fh.write(orjson.dumps({"v": 1, "type": "meta", "startedAt": _T, "label": "t", "command": []}) + b"\n")
            for i in range(n):
                fh.write(orjson.dumps({"t": _T, "dir": "in", "raw": call(i, f"tool_{i % 17}", q=f"customer {i}")})
                         + b"\n")
                fh.write(orjson.dumps({"t": _T, "dir": "out", "raw": answer(i, f'{{"n": {i}, "pad": "{"x" * 40}"}}')})
                         + b"\n")
        asked = b"".join(orjson.dumps(call(f"c{j}", f"tool_{j % 17}", q=f"customer {j}")) + b"\n" for j in range(50))
        proc = subprocess.run([sys.executable, "-c", _PEAK, "serve", str(path)], input=asked, capture_output=True,
                              env=os.environ, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.count(b"\n") == 50 and b"indexed on disk" in proc.stderr
        peaks.append(int(proc.stderr.rsplit(b"PEAK ", 1)[1]) / 1024)
    assert peaks[1] <= 1.3 * peaks[0], peaks
