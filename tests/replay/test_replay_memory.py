"""``replay`` reads the recording as a stream: its peak memory does not grow with the session.

It used to load the whole recording (and pair it into exchanges) before sending anything: 598 MB at 100k
messages, 1.6 GB at 1M. Now it makes one pass for the few facts a run needs first, then sends each
request and judges its answer as the file goes by, holding only the requests in flight.

The target is a tiny stdio server written here that answers every request at once with what the
recording holds (``mcpreel serve`` would do, but slower: the test stays within a few seconds).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpreel._infra.correlation import verbatim_key
from mcpreel.eras import CLIENT_INFO_KEY, PROTOCOL_VERSION_KEY
from mcpreel.formats.reel import ReelWriter
from mcpreel.merge import ORIGIN_KEY, select_source
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.operations.sessions import STREAMED_SESSIONS, split_sessions, split_sessions_streaming
from mcpreel.replay.wire import _facts, _IdSet

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in kB, Linux")

TEXT = "x" * 2000  # each answer: enough that keeping them all shows
INIT_RESULT = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
               "serverInfo": {"name": "echo", "version": "1"}}
CALL_RESULT = {"content": [{"type": "text", "text": TEXT}], "isError": False}

SERVER = f"""
import json, sys
INIT = {json.dumps(INIT_RESULT)!r}
CALL = {json.dumps(CALL_RESULT)!r}
out = sys.stdout
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m or "method" not in m:
        continue
    result = INIT if m["method"] == "initialize" else CALL
    out.write('{{"jsonrpc":"2.0","id":' + json.dumps(m["id"]) + ',"result":' + result + '}}\\n')
    out.flush()
"""


def _reel(path: Path, calls: int) -> None:
    w = ReelWriter(path, SessionInfo(label="long", transport="stdio", command=["x"]))
    w.write(Message("in", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "agent", "version": "1"}}}))
    w.write(Message("out", {"jsonrpc": "2.0", "id": 0, "result": INIT_RESULT}))
    w.write(Message("in", {"jsonrpc": "2.0", "method": "notifications/initialized"}))
    for i in range(1, calls + 1):
        w.write(Message("in", {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                               "params": {"name": "echo", "arguments": {"n": i}}}))
        w.write(Message("out", {"jsonrpc": "2.0", "id": i, "result": CALL_RESULT}))
    w.close(0, "done")


def _replay_peak_mb(tmp: Path, calls: int) -> float:
    reel = tmp / f"s{calls}.reel.jsonl"
    _reel(reel, calls)
    server = tmp / "echo.py"
    server.write_text(SERVER)
    out = tmp / f"r{calls}.json"
    proc = subprocess.Popen([sys.executable, "-m", "mcpreel", "replay", str(reel), "--target-command",
                             f"{sys.executable} {server}", "--output", str(out)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert proc.returncode == 0, err
    report = json.loads(out.read_text())
    assert report["summary"]["same"] == calls + 1 and report["summary"]["requests"] == calls + 1
    return usage.ru_maxrss / 1024


@linux
@pytest.mark.timeout(120)
def test_replay_peak_memory_does_not_grow_with_the_session(tmp_path: Path) -> None:
    small = _replay_peak_mb(tmp_path, 1_000)
    large = _replay_peak_mb(tmp_path, 10_000)  # 20k messages, 44 MB of reel
    # before: the whole recording in memory (small ~45 MB, large ~190 MB); now the same within noise
    assert large <= 1.3 * small, f"replay peak RSS {large:.0f} MB at 60k messages vs {small:.0f} MB at 2k"


def _tiny_sessions(n: int) -> list[Message]:
    """``n`` conversations one after the other, each an ``initialize`` and a call, all answered."""
    records = []
    for s in range(n):
        records += [Message("in", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": f"c{s}", "version": "1"}}}),
                    Message("out", {"jsonrpc": "2.0", "id": 0, "result": INIT_RESULT}),
                    Message("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": f"t{s}"}}),
                    Message("out", {"jsonrpc": "2.0", "id": 1, "result": CALL_RESULT})]
    return records


def _counting(records: list[Message]) -> tuple[Session, list[int]]:
    reads = [0]

    def factory() -> Iterator[Message]:
        reads[0] += 1
        return iter(records)

    return Session.streaming(SessionInfo(transport="stdio"), factory), reads


def test_a_few_sessions_are_streamed_each_from_the_file_and_split_as_in_memory() -> None:
    records = _tiny_sessions(3)
    session, reads = _counting(records)
    parts = split_sessions_streaming(session)
    assert reads[0] == 1 and all(not p.records for p in parts)  # one pass; no records held
    expected = split_sessions(Session(SessionInfo(transport="stdio"), records))
    assert [p.label() for p in parts] == [p.label() for p in expected]
    for part, want in zip(parts, expected, strict=True):
        assert list(part.as_session(session.info)) == want.records  # read again, the same records
    assert reads[0] == 4


def test_many_sessions_are_spooled_once_not_read_once_each() -> None:
    records = _tiny_sessions(STREAMED_SESSIONS + 2)
    session, reads = _counting(records)
    parts = split_sessions_streaming(session)
    assert len(parts) == STREAMED_SESSIONS + 2 and all(not p.records for p in parts)  # none held in memory
    expected = split_sessions(Session(SessionInfo(transport="stdio"), records))
    assert [p.label() for p in parts] == [p.label() for p in expected]
    for part, want in zip(parts, expected, strict=True):
        assert list(part.as_session(session.info)) == want.records
        assert list(part.as_session(session.info)) == want.records  # read again from the spool, the same
    assert reads[0] == 2  # the split, then the file once into the spool: not two passes per session


def _many_sessions_peak_mb(tmp: Path, sessions: int, calls: int) -> float:
    """Peak RSS of a child that splits a reel of ``sessions`` conversations and reads each one back."""
    reel = tmp / f"many{sessions}x{calls}.reel.jsonl"
    w = ReelWriter(reel, SessionInfo(label="many", transport="stdio", command=["x"]))
    for s in range(sessions):
        w.write(Message("in", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": f"c{s}", "version": "1"}}}))
        w.write(Message("out", {"jsonrpc": "2.0", "id": 0, "result": INIT_RESULT}))
        for i in range(1, calls + 1):
            w.write(Message("in", {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "echo"}}))
            w.write(Message("out", {"jsonrpc": "2.0", "id": i, "result": CALL_RESULT}))
    w.close(0, "done")
    code = ("import sys\nfrom mcpreel.formats import open_session\nfrom mcpreel.operations.sessions import split_sessions_streaming\n"
            "s, _ = open_session(sys.argv[1])\nparts = split_sessions_streaming(s)\n"
            "n = sum(1 for p in parts for _ in p.as_session(s.info))\nprint(len(parts), n)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(reel)], stdout=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert proc.stdout is not None
    assert proc.stdout.read().split() == [str(sessions).encode(), str(sessions * (2 + 2 * calls)).encode()]
    return usage.ru_maxrss / 1024


@linux
@pytest.mark.timeout(120)
def test_many_sessions_are_read_back_in_flat_memory(tmp_path: Path) -> None:
    small = _many_sessions_peak_mb(tmp_path, 20, 50)
    large = _many_sessions_peak_mb(tmp_path, 20, 1500)  # 60k messages, 130 MB of reel
    # held in memory (before the spool) the large one took ~100 MB more
    assert large <= 1.3 * small, f"split peak RSS {large:.0f} MB at 60k messages vs {small:.0f} MB at 2k"


def test_the_ids_in_use_are_a_set_and_counting_ids_cost_one_range() -> None:
    ids = _IdSet()
    for n in range(10_000):
        ids.add(verbatim_key(n))
    assert ids.lo == [0] and ids.hi == [9_999] and not ids.other
    rng = random.Random(7)
    keys = [verbatim_key(v) for v in (rng.randrange(-50, 5_000) for _ in range(3_000))]
    keys += [verbatim_key("7"), verbatim_key(True), verbatim_key(7.0), verbatim_key(None)]
    ids, plain = _IdSet(), set()
    for key in keys:
        assert (key in ids) == (key in plain)
        ids.add(key)
        plain.add(key)
    probes = [verbatim_key(v) for v in range(-60, 5_010)] + [verbatim_key("7"), verbatim_key("8"), verbatim_key(1.0)]
    assert [p in ids for p in probes] == [p in plain for p in probes]
    assert len(ids.lo) <= _IdSet._MAX_RANGES


def test_one_source_of_a_merged_file_is_read_as_a_stream() -> None:
    records = [Message("in", {"jsonrpc": "2.0", "id": i, "method": "tools/list"}, extra={ORIGIN_KEY: name})
               for i, name in enumerate(["a", "b", "a", "b", "a"])]
    reads = [0]

    def factory() -> Iterator[Message]:
        reads[0] += 1
        return iter(records)

    info = SessionInfo(metadata={"merged": [{"file": "a"}, {"file": "b"}]})
    one = select_source(Session.streaming(info, factory), "a", "m.reel.jsonl", stream=True)
    assert one.is_streaming and reads[0] == 0  # nothing read yet: each pass reads the file again
    assert [m.raw["id"] for m in one] == [0, 2, 4] and [m.raw["id"] for m in one] == [0, 2, 4]
    assert reads[0] == 2
    kept = select_source(Session(info, records), "a", "m.reel.jsonl")
    assert not kept.is_streaming and [m.raw["id"] for m in kept] == [0, 2, 4]


def _modern(method: str, rid: int, name: str) -> Message:
    return Message("in", {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"_meta": {
        PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_INFO_KEY: {"name": name, "version": "1"}}}})


def test_the_first_pass_finds_what_the_run_needs_first() -> None:
    # our own handshake (a 2026 recording replayed --era legacy) names the client as it always did: from
    # a left-out server/discover as recorded, never from requests whose protocol _meta is stripped
    plain = _facts(Session(SessionInfo(), [_modern("tools/list", 3, "x"), _modern("tools/call", 9, "y")]), False)
    assert plain.info == {"name": "x", "version": "1"} and plain.legacy_info is None
    assert plain.requests == 2 and plain.max_int == 9 and not plain.has_initialize and plain.era == "modern"
    found = _facts(Session(SessionInfo(), [_modern("tools/list", 3, "x"), _modern("server/discover", "d", "z")]),
                   False)
    assert found.info == {"name": "x", "version": "1"} and found.legacy_info == {"name": "z", "version": "1"}
