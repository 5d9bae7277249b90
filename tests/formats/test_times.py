"""Awkward times in every reader's time slots: a clean error, or a session every writer writes.

A time that no ISO-8601 string can name (past year 9999, before year 1, NaN, an infinity) must not
reach a writer: the reel, qai, HAR, inspector and simple-trace writers all print ISO times. And a time
before year 1000 must be written with four year digits, or the reel written from it cannot be read back.
"""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel.errors import McpreelError
from mcpreel.formats import get_writer, open_session, writer_names
from mcpreel.inspection import analyze
from mcpreel.render.inspect import plain_lines

CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a", "arguments": {}}}
OK = {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}
PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
PONG = {"jsonrpc": "2.0", "id": 2, "result": {}}
# JSON text put where a format keeps a time: numbers, tokens only the faithful parser reads, strings
TOKENS = ["0", "-1", "5", "1e300", "-1e300", "1e400", str(2**70), "253402300799999", "253402300800000", "NaN",
          "Infinity", "-Infinity", '"inf"', '"nan"', '"1e999"', '"0001-01-01T00:00:00+01:00"', '"0001-01-01T00:00:00Z"',
          '"0999-05-01T00:00:00.001Z"', '"9999-12-31T23:59:59.999Z"', '"1969-12-31T23:59:59.999Z"', "true", "null"]


def _j(obj) -> str:
    return json.dumps(obj)


def _templates(x: str, y: str) -> dict[str, str]:
    """One small document per reader, with ``x`` and ``y`` where it keeps times (its own words)."""
    return {
        "qai": f'{{"id":"s","started_at":{x},"ended_at":{y},"transport":"stdio","server_command":"srv","messages":['
               f'{{"proxy_id":"p1","sequence":0,"timestamp":{x},"direction":"client_to_server","payload":{_j(CALL)}}},'
               f'{{"proxy_id":"p2","sequence":1,"timestamp":{y},"direction":"server_to_client","payload":{_j(OK)}}}]}}',
        "inspector-v2": f'[{{"id":1,"timestamp":{x},"direction":"request","origin":"client","message":{_j(CALL)},'
                        f'"response":{_j(OK)},"duration":{y}}}]',
        "inspector": f'{{"messages":[{_j(CALL)[:-1]},"timestamp_ms":{x}}},{_j(OK)[:-1]},"timestamp":{y}}}]}}',
        "jsonrpc": f'{_j(CALL)[:-1]},"timestamp_ms":{x}}}\n{_j(OK)[:-1]},"timestamp":{y}}}\n',
        "streamable-http": f'{{"transport":"streamable-http","entries":[{{"timestamp_ms":{x},"request":{_j(CALL)}}},'
                           f'{{"timestamp_ms":{y},"response":{_j(OK)}}},{{"request":{_j(PING)[:-1]},"timestamp_ms":{x}}}}}]}}',
        "mcp-recorder": f'{{"version":1,"metadata":{{"recorded_at":{x},"server_url":"http://127.0.0.1/mcp"}},'
                        f'"interactions":[{{"type":"jsonrpc_request","request":{_j(CALL)},"response":{_j(OK)},'
                        f'"latency_ms":{y}}},{{"type":"jsonrpc_request","request":{_j(PING)},"response":{_j(PONG)},'
                        f'"latency_ms":{y}}}]}}',
        "langchain": f'{{"runs":[{{"id":"r1","run_type":"tool","name":"a","inputs":{{}},"outputs":{{"output":1}},'
                     f'"start_time":{x},"end_time":{y}}}]}}',
        "reel": f'{{"v":1,"type":"meta","startedAt":{x},"label":"x","command":[]}}\n'
                f'{{"t":{x},"dir":"in","raw":{_j(CALL)}}}\n{{"t":{y},"dir":"out","raw":{_j(OK)}}}\n'
                f'{{"t":{y},"type":"stderr","text":"s"}}\n',
    }


def _everything(data: str) -> None:
    """Read (sniffed), then inspect and write every format; a written reel must read back."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in"
        path.write_text(data)
        try:
            session, _ = open_session(path)
            session.materialize()
        except McpreelError as exc:
            assert str(exc) and "\n" not in str(exc)
            return
        report = analyze(session, payloads=True)
        assert list(plain_lines(report, verbose=True))
        for name in writer_names():
            buf = io.BytesIO()
            try:
                get_writer(name)(session, buf)
            except McpreelError as exc:  # a stdio session as an HTTP envelope: refused in words
                assert "stdio" in str(exc)
                continue
            if name == "reel":
                back = Path(tmp) / "back.jsonl"
                back.write_bytes(buf.getvalue())
                again, _ = open_session(back, "reel")
                kept = [(m.t, b.t) for m, b in zip(session, again, strict=True) if m.t is not None]
                assert all(a == b for a, b in kept)  # (a record without a time takes the last known one)


FORMATS = sorted(_templates("0", "0"))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("token", TOKENS)
def test_awkward_times_in_every_reader(fmt, token):
    _everything(_templates(token, token)[fmt])


numbers = st.one_of(st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(TOKENS))


def _text(value) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value)  # NaN and infinities as the tokens the faithful parser reads


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fmt=st.sampled_from(FORMATS), x=numbers, y=numbers)
def test_random_times_in_every_reader(fmt, x, y):
    _everything(_templates(_text(x), _text(y))[fmt])


def test_a_reel_before_year_1000_reads_back(tmp_path):
    src = tmp_path / "old.jsonl"
    src.write_text(_templates('"0999-05-01T00:00:00.001Z"', '"0999-05-01T00:00:00.002Z"')["reel"])
    session, _ = open_session(src)
    buf = io.BytesIO()
    get_writer("reel")(session, buf)
    assert b'"t":"0999-05-01T00:00:00.001Z"' in buf.getvalue()


def test_a_qai_time_past_year_9999_is_refused_naming_it(tmp_path):
    src = tmp_path / "s.json"
    src.write_text(_templates(str(2**70), "null")["qai"])
    with pytest.raises(McpreelError, match=r"s\.json: qai started_at is not an ISO-8601 time: 1180591620717411303424"):
        open_session(src)


def test_an_envelope_timestamp_past_year_9999_is_refused_naming_the_entry(tmp_path):
    src = tmp_path / "e.json"
    src.write_text(_templates("5", "253402300800000")["streamable-http"])
    with pytest.raises(McpreelError, match=r"e\.json: streamable-http entry 2: timestamp_ms must be a non-negative integer"):
        open_session(src)
