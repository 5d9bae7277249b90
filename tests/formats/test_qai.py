"""The qai session format: the real files' quirks, correlation by (direction, id), faithful round trips."""

from __future__ import annotations

import json

import pytest

from mcpreel._infra.timeutil import ms_from_iso
from mcpreel.errors import FormatError
from mcpreel.formats import open_session
from mcpreel.formats.qai import iso_micro
from mcpreel.inspection import analyze
from mcpreel.model import Message

from ..conftest import needs_shared
from .support import (
    FIXTURES,
    assert_same_wire,
    fixture,
    messages_only,
    read,
    read_as,
    req,
    resp,
    session_of,
    t1,
    wire,
    write,
)

QAI = sorted((FIXTURES / "qai").glob("*.json"))


def test_sniffed_and_read():
    session, detection = open_session(fixture("qai/qai_session_fastmcp.json"))
    assert detection.format == "qai"
    info = session.info
    assert info.id == "f4aedaa9-836c-4cac-b6b8-f7925b8cd8be"
    assert info.transport == "stdio"
    assert info.command == ["python", "servers.py", "fastmcp"]
    assert info.ended is None  # ended_at null in real files
    assert info.metadata == {"fixture": "qai_session_fastmcp"}
    msgs = session.messages
    assert len(msgs) == 19
    assert [m.dir for m in msgs[:4]] == ["in", "out", "in", "in"]
    edited = msgs[5]
    assert edited.modified and edited.raw["params"]["arguments"] == {"message": "MODIFIED"}
    assert edited.original["params"]["arguments"] == {"message": "original"}
    assert msgs[17].raw["id"] == "str-6"  # string ids stay strings
    # microseconds: the model keeps ms (truncated), the string is kept for the way back
    assert msgs[0].t == ms_from_iso("2026-11-20T21:46:45.930Z")
    assert msgs[0].extra["qai"]["timestamp"] == "2026-11-20T21:46:45.930175+00:00"


def test_correlation_ignores_the_files_correlated_id():
    """Client and server requests share id 0; qai's own correlated_id pairs the tool's answer wrongly."""
    path = fixture("qai/qai_session_id_collision.json")
    doc = json.loads(path.read_text())
    assert doc["messages"][6]["correlated_id"] is None  # the file's (wrong) claim: the tool answer matches nothing
    rows = analyze(read(path)).rows
    assert rows[5].label == "(response)" and rows[5].dir == "in" and rows[5].corr == 4  # client answers sampling
    assert rows[6].label == "(response)" and rows[6].dir == "out" and rows[6].corr == 3  # server answers tools/call
    assert not any(r.orphan or r.unanswered for r in rows)


def test_writer_computes_correlated_id_as_the_requests_proxy_id(tmp_path):
    out = write(read(fixture("qai/qai_session_id_collision.json")), tmp_path / "s.json", "qai")
    msgs = json.loads(out.read_text())["messages"]
    by_seq = {m["sequence"]: m for m in msgs}
    assert by_seq[5]["correlated_id"] == by_seq[4]["proxy_id"]  # client's answer -> sampling request
    assert by_seq[6]["correlated_id"] == by_seq[3]["proxy_id"]  # tool result -> tools/call
    assert by_seq[1]["correlated_id"] == by_seq[0]["proxy_id"]
    assert by_seq[3]["correlated_id"] is None and by_seq[2]["correlated_id"] is None


@needs_shared
@pytest.mark.parametrize("path", QAI, ids=[p.name for p in QAI])
def test_qai_to_qai_keeps_the_document(path, tmp_path):
    """Everything but a wrong correlated_id comes back as it was, timestamps with their microseconds."""
    out = write(read(path), tmp_path / "s.json", "qai")
    original = json.loads(path.read_text())
    again = json.loads(out.read_text())
    if path.name == "qai_session_id_collision.json":
        original["messages"][6]["correlated_id"] = again["messages"][6]["correlated_id"]
    assert again == original
    assert list(again) == list(original)  # member order too
    assert [list(m) for m in again["messages"]] == [list(m) for m in original["messages"]]


@needs_shared
@pytest.mark.parametrize("path", QAI, ids=[p.name for p in QAI])
def test_qai_through_a_reel_keeps_the_document(path, tmp_path):
    reel = write(read(path), tmp_path / "s.jsonl", "reel")
    out = write(read_as(reel, "reel"), tmp_path / "s.json", "qai")
    original = json.loads(path.read_text())
    again = json.loads(out.read_text())
    if path.name == "qai_session_id_collision.json":
        original["messages"][6]["correlated_id"] = again["messages"][6]["correlated_id"]
    assert again == original


def test_reel_to_qai_to_reel_keeps_every_record_it_can(tmp_path):
    src = read(fixture("mcp-replay-v1/mcp-context7-com-2026-08-20T17-03-48-173Z.mcp.jsonl"))
    qai = write(src, tmp_path / "s.json", "qai")
    back = read_as(write(read_as(qai, "qai"), tmp_path / "b.jsonl", "reel"), "reel")
    assert_same_wire(messages_only(back), messages_only(src))
    assert t1(back) == t1(src)
    assert back.info.started == src.info.started and back.info.ended == src.info.ended
    assert back.info.end_reason == "eval_complete"


def test_additive_members_carry_what_qai_cannot(tmp_path):
    s = session_of(
        Message("in", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, 1000, ctx={"status": 200, "headers": {"a": "b"}}),
        Message("out", {"jsonrpc": "2.0", "id": 1, "result": {}}, 1005, dropped=True),
        transport="streamable-http", url="http://127.0.0.1:9/mcp", exit_code=3, end_reason="killed",
    )
    out = write(s, tmp_path / "s.json", "qai")
    doc = json.loads(out.read_text())
    assert doc["messages"][0]["ctx"] == {"status": 200, "headers": {"a": "b"}}
    assert doc["messages"][1]["dropped"] is True
    assert "dropped" not in doc["messages"][0]
    assert doc["exit_code"] == 3 and doc["end_reason"] == "killed"
    assert doc["server_url"] == "http://127.0.0.1:9/mcp" and doc["server_command"] is None
    back = read_as(out, "qai")
    assert wire(back) == wire(s)
    assert back.messages[0].ctx == s.messages[0].ctx
    assert (back.info.exit_code, back.info.end_reason) == (3, "killed")


def test_original_payload_only_when_modified(tmp_path):
    s = session_of(req("in", 1, "tools/call", 5, name="x", arguments={}),
                   Message("in", {"jsonrpc": "2.0", "id": 2, "method": "ping"}, 6, modified=True,
                           original={"jsonrpc": "2.0", "id": 2, "method": "pong"}))
    doc = json.loads(write(s, tmp_path / "s.json", "qai").read_text())
    assert "original_payload" not in doc["messages"][0]
    assert doc["messages"][1]["original_payload"]["method"] == "pong"


def test_times_the_model_made_get_microseconds_000(tmp_path):
    s = session_of(req("in", 1, "ping", 1747090800123), resp("out", 1, t=1747090800130))
    doc = json.loads(write(s, tmp_path / "s.json", "qai").read_text())
    assert doc["messages"][0]["timestamp"] == "2025-05-12T23:00:00.123000+00:00"
    assert iso_micro(0) == "1970-01-01T00:00:00+00:00"
    assert doc["started_at"] == doc["messages"][0]["timestamp"]  # no start known: the first message's time


def test_a_changed_time_is_written_anew(tmp_path):
    s = read(fixture("qai/qai_session_minimal.json"))
    s.messages[0].t += 1
    doc = json.loads(write(s, tmp_path / "s.json", "qai").read_text())
    assert doc["messages"][0]["timestamp"] == "2026-11-20T21:46:46.726000+00:00"
    assert doc["messages"][1]["timestamp"] == "2026-11-20T21:46:47.124677+00:00"


def test_sequence_is_0_based_over_the_messages(tmp_path):
    """A recorder's seq counts stderr and transport lines too; qai's sequence counts messages from 0."""
    s = session_of(req("in", 1, "ping", 1), resp("out", 1, t=2), req("in", 2, "ping", 3))
    s.messages[0].seq = 5
    s.messages[1].seq = 2
    s.messages[2].seq = 9
    doc = json.loads(write(s, tmp_path / "s.json", "qai").read_text())
    assert [m["sequence"] for m in doc["messages"]] == [0, 1, 2]


def test_a_qai_files_own_sequence_stays_monotonic(tmp_path):
    s = read(fixture("qai/qai_session_no_initialize.json"))
    s.messages[1].seq = 1  # out of order: renumbered after the last
    doc = json.loads(write(s, tmp_path / "s.json", "qai").read_text())
    assert [m["sequence"] for m in doc["messages"]] == [3, 4]


def test_no_initialize_file_keeps_its_sequence_numbers():
    s = read(fixture("qai/qai_session_no_initialize.json"))
    assert [m.seq for m in s] == [3, 4]
    assert analyze(s).summary.unanswered == []


@pytest.mark.parametrize(
    ("doc", "rule"),
    [
        ([], "a qai session is a JSON object"),
        ({"id": "x"}, 'must have a "messages" array'),
        ({"messages": [1]}, "qai message 1 must be a JSON object"),
        ({"messages": [{"direction": "up", "payload": {}}]}, 'qai message 1: direction must be "client_to_server"'),
        ({"messages": [{"direction": "client_to_server"}]}, "qai message 1 has no payload"),
        ({"messages": [{"direction": "client_to_server", "payload": "x"}]}, "payload must be a JSON-RPC object"),
        ({"messages": [{"direction": "client_to_server", "payload": {}, "timestamp": "yesterday"}]},
         "qai message 1: timestamp is not an ISO-8601 time"),
        ({"started_at": "soon", "messages": []}, "qai started_at is not an ISO-8601 time"),
        ({"metadata": [], "messages": []}, "qai metadata must be an object"),
    ],
)
def test_bad_files_fail_with_one_line_naming_the_rule(doc, rule, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(FormatError) as err:
        read_as(path, "qai")
    assert rule in str(err.value)
    assert str(err.value).startswith(str(path))
    assert "\n" not in str(err.value)


def test_messages_encoded_in_runs_read_as_one_indented_document(tmp_path):
    """The writer encodes its messages a run at a time; a run orjson refuses (an integer beyond 64 bits)
    is encoded message by message. Either way the file is the document indented as one, across the runs'
    boundaries, and the derived proxy ids are uuid5 of ``<session id>/<index>``."""
    import uuid

    from mcpreel.formats import qai

    records = []
    for i in range(700):
        records.append(req("in", i, "tools/call", 1_763_942_400_000 + i, big=2**70 if i == 300 else i))
        records.append(resp("out", i, {"n": i}, 1_763_942_400_000 + i))
    out = write(session_of(*records, id="s1"), tmp_path / "s.json", "qai")
    text = out.read_text()
    doc = json.loads(text)
    assert text == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    assert doc["messages"][600]["payload"]["params"]["big"] == 2**70
    assert [m["proxy_id"] for m in doc["messages"][:3] + doc["messages"][-2:]] == [
        str(uuid.uuid5(qai._NS, f"s1/{i}")) for i in (0, 1, 2, 1398, 1399)]
