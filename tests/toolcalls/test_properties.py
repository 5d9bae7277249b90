"""Property tests: random or truncated input into every reader ends in a clean error, never a traceback."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel.errors import McpreelError
from mcpreel.formats import open_session
from mcpreel.toolcalls.importer import ImportOptions, write_trace

from .test_fixtures_and_t1 import SESSION

READERS = ["auto", "jsonrpc", "inspector", "streamable-http", "http-sse", "reel"]

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8))
json_values = st.recursive(json_scalars, lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(st.text(max_size=6), c, max_size=4)),
                           max_leaves=12)
jsonrpc_like = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0")},
    optional={"id": json_values, "method": st.sampled_from(["tools/call", "tools/list", "initialize", "x"]),
              "params": json_values, "result": json_values, "error": json_values},
)


def _import_bytes(data: bytes, fmt: str) -> None:
    """Read + normalize; only McpreelError may escape."""
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "in.json"
        p.write_bytes(data)
        try:
            session, _ = open_session(p, fmt)
            write_trace(session, Path(d) / "out.jsonl", options=ImportOptions())
        except McpreelError as exc:
            text = str(exc)
            assert "\n" not in text and text  # one line
            assert not (Path(d) / "out.jsonl").exists()


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(data=st.binary(max_size=300), fmt=st.sampled_from(READERS))
def test_random_bytes(data, fmt):
    _import_bytes(data, fmt)


@SETTINGS
@given(doc=json_values, fmt=st.sampled_from(READERS))
def test_random_json_documents(doc, fmt):
    _import_bytes(json.dumps(doc).encode(), fmt)


@SETTINGS
@given(msgs=st.lists(jsonrpc_like, max_size=8), fmt=st.sampled_from(["jsonrpc", "inspector", "auto"]))
def test_random_jsonrpc_sessions(msgs, fmt):
    _import_bytes("".join(json.dumps(m) + "\n" for m in msgs).encode() if fmt == "jsonrpc" else json.dumps(msgs).encode(), fmt)


@SETTINGS
@given(entries=st.lists(st.dictionaries(st.sampled_from(["request", "response", "sse", "timestamp_ms", "transport_context", "x"]),
                                        json_values, max_size=3), max_size=6),
       transport=st.sampled_from(["streamable-http", "http-sse", "other"]))
def test_random_envelopes(entries, transport):
    _import_bytes(json.dumps({"transport": transport, "entries": entries}).encode(), "auto")


def _valid_inputs() -> list[tuple[bytes, str]]:
    jsonl = "".join(json.dumps(m) + "\n" for m in SESSION).encode()
    env = json.dumps({"transport": "streamable-http", "entries": [{"request": m} if "method" in m else {"response": m} for m in SESSION]}).encode()
    reel = (json.dumps({"v": 1, "type": "meta", "startedAt": "2026-01-01T00:00:00.000Z", "label": "x", "command": []}) + "\n" +
            "".join(json.dumps({"t": "2026-01-01T00:00:01.000Z", "dir": "in" if "method" in m else "out", "raw": m}) + "\n" for m in SESSION)).encode()
    return [(jsonl, "jsonrpc"), (json.dumps(SESSION).encode(), "inspector"), (env, "streamable-http"), (reel, "reel")]


@SETTINGS
@given(which=st.integers(0, 3), cut=st.floats(0, 1), fmt_auto=st.booleans())
def test_truncated_valid_inputs(which, cut, fmt_auto):
    data, fmt = _valid_inputs()[which]
    _import_bytes(data[: int(len(data) * cut)], "auto" if fmt_auto else fmt)


# -- the fast lane and the general path agree --------------------------------------------------------

rpc_ids = st.one_of(st.none(), st.sampled_from([0, 1, 2, -1, 1.0, "1", "2", "a", "01"]))


@st.composite
def rpc_messages(draw):
    kind = draw(st.sampled_from(["call", "call", "request", "result", "result", "error", "note"]))
    if kind == "note":
        return {"jsonrpc": "2.0", "method": draw(st.sampled_from(["notifications/initialized", "notifications/progress"]))}
    if kind in ("call", "request"):
        msg = {"jsonrpc": "2.0", "method": "tools/call" if kind == "call" else draw(st.sampled_from(
            ["tools/list", "ping", "initialize", "sampling/createMessage", "roots/list"]))}
        if draw(st.booleans()) or kind == "call":
            msg["id"] = draw(rpc_ids)
        if kind == "call":
            msg["params"] = {"name": draw(st.sampled_from(["a", "b"])), "arguments": {"x": draw(st.integers(0, 3))}}
        return msg
    msg = {"jsonrpc": "2.0", "id": draw(rpc_ids)}
    if kind == "result":
        msg["result"] = draw(st.sampled_from([{"ok": 1}, {"tools": [{"name": "a"}]}, None, {}]))
    else:
        msg["error"] = {"code": -1, "message": "x"}
    return msg


def _trace(path: Path, fmt: str) -> tuple[str, list[str]]:
    warnings: list[str] = []
    try:
        session, _ = open_session(path, fmt)
        write_trace(session, path.with_suffix(".out"), options=ImportOptions(), warn=warnings.append)
    except McpreelError as exc:
        return "refused: " + str(exc).split(": ", 1)[1], []
    return path.with_suffix(".out").read_text(), warnings


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(msgs=st.lists(rpc_messages(), max_size=10))
def test_jsonl_fast_lane_and_array_general_path_agree(msgs):
    """JSONL runs the plain-block hot loop; the same messages as an inspector array run the general path
    with directions the reader guessed: the same trace, the same warnings, the same refusals."""
    with tempfile.TemporaryDirectory() as d:
        jsonl = Path(d) / "s.jsonl"
        jsonl.write_text("".join(json.dumps(m) + "\n" for m in msgs))
        array = Path(d) / "s.json"
        array.write_text(json.dumps(msgs, indent=1))
        assert _trace(jsonl, "jsonrpc") == _trace(array, "inspector")


def _trace_of_session(session, out: Path) -> tuple[str, list[str]]:
    warnings: list[str] = []
    try:
        write_trace(session, out, options=ImportOptions(), warn=warnings.append)
    except McpreelError as exc:
        return "refused: " + str(exc), []
    return out.read_text(), warnings


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=st.lists(st.tuples(rpc_messages(), st.sampled_from(["in", "out", None]),
                                  st.one_of(st.none(), st.integers(0, 5))), max_size=12),
       timed=st.booleans())
def test_fast_block_and_general_loop_agree_with_times_and_directions(records, timed):
    """A reel's blocks (times and directions) take the streaming pass's hot loop; sent down the general
    loop one record at a time instead, the same session gives the same trace, warnings and refusals
    (times out of order included: both restart into the sorted pass)."""
    from mcpreel.model import Message, Session, SessionInfo
    from mcpreel.toolcalls.normalize import _Pass

    def session() -> Session:
        return Session(SessionInfo(path="s.reel.jsonl"),
                       [Message(d, m, t if timed else None, source=i + 1) for i, (m, d, t) in enumerate(records)])

    with tempfile.TemporaryDirectory() as d:
        fast = _trace_of_session(session(), Path(d) / "fast.jsonl")
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_Pass, "_fast_block", _Pass._general_block)
            general = _trace_of_session(session(), Path(d) / "general.jsonl")
    assert fast == general
