"""Property tests: random sessions survive every lossless round trip; every reader this issue adds turns
random or truncated input into a clean McpreelError (or a session every writer can write), never a crash."""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel._infra.timeutil import iso_from_ms
from mcpreel.errors import McpreelError
from mcpreel.formats import Source, get_reader, get_writer
from mcpreel.inspection import analyze
from mcpreel.model import Kind, Message, Session, SessionInfo

from ..conftest import needs_shared
from .support import FIXTURES, assert_same_wire, messages_only, t1, wire

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- random sessions --------------------------------------------------------------------------------

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.text(max_size=12),
                    st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f != 0 or str(f) == "0.0"))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=8)
ids = st.one_of(st.integers(0, 4), st.sampled_from(["a", "b", "0"]))
methods = st.sampled_from(["initialize", "tools/call", "tools/list", "ping", "sampling/createMessage",
                           "notifications/progress", "notifications/initialized", "resources/read"])


@st.composite
def jsonrpc(draw):
    kind = draw(st.sampled_from(["request", "notification", "result", "error"]))
    raw: dict = {"jsonrpc": "2.0"}
    if kind in ("request", "notification"):
        method = draw(methods)
        raw["method"] = method
        if kind == "request":
            raw["id"] = draw(ids)
        if method == "tools/call":
            raw["params"] = {"name": draw(st.sampled_from(["echo", "add"])), "arguments": draw(json_values)}
        elif draw(st.booleans()):
            raw["params"] = draw(st.dictionaries(st.text(max_size=5), json_values, max_size=2))
    else:
        raw["id"] = draw(ids)
        if kind == "result":
            raw["result"] = draw(st.one_of(json_values, st.fixed_dictionaries({"tools": st.just([{"name": "echo"}])})))
        else:
            raw["error"] = {"code": draw(st.integers(-32700, -32000)), "message": draw(st.text(max_size=8))}
    return raw


payloads = st.one_of(jsonrpc(), st.lists(jsonrpc(), min_size=1, max_size=3))
ctxs = st.one_of(st.none(), st.dictionaries(st.sampled_from(["status", "headers", "stream", "exchange"]), json_values,
                                            min_size=1, max_size=2))


@st.composite
def message_records(draw, t):
    d = draw(st.sampled_from(["in", "out"]))
    modified = draw(st.booleans())
    return Message(d, draw(payloads), t, ctx=draw(ctxs), modified=modified,
                   original=draw(jsonrpc()) if modified else None, dropped=draw(st.booleans()))


@st.composite
def any_records(draw, t):
    kind = draw(st.sampled_from(["message", "message", "message", "stderr", "invalid", "transport", "event"]))
    if kind == "message":
        return draw(message_records(t))
    if kind == "stderr":
        return Message(None, None, t, kind=Kind.STDERR, text=draw(st.text(max_size=20)))
    if kind == "invalid":
        return Message(draw(st.sampled_from(["in", "out"])), None, t, kind=Kind.INVALID, text=draw(st.text(max_size=20)))
    if kind == "transport":
        ctx = draw(st.dictionaries(st.sampled_from(["status", "data"]), json_values, max_size=2))
        if draw(st.booleans()):  # an SSE event's fields are an object: the readers keep no other (issue 12)
            ctx["sse"] = draw(st.dictionaries(st.sampled_from(["event", "id"]), st.text(max_size=8), max_size=2))
        return Message(draw(st.sampled_from(["in", "out"])), None, t, kind=Kind.TRANSPORT, ctx=ctx)
    line = {"t": iso_from_ms(t), "dir": "event", "kind": draw(st.sampled_from(["a.gate", "b.task"])), "raw": draw(json_values)}
    return Message("event", line, t, kind=Kind.EVENT)


@st.composite
def sessions(draw, records=any_records, transport="stdio"):
    n = draw(st.integers(0, 12))
    t = draw(st.integers(1_500_000_000_000, 1_900_000_000_000))
    out = []
    for _ in range(n):
        t += draw(st.integers(0, 5000))
        out.append(draw(records(t)))
    info = SessionInfo(id=draw(st.uuids()).hex, transport=transport, command=draw(st.lists(st.text(min_size=1, max_size=6), max_size=3)),
                       started=out[0].t if out else t, metadata=draw(st.dictionaries(st.text(max_size=4), json_values, max_size=2)))
    return Session(info, out)


def _through(session: Session, fmt: str, tmp: Path) -> Session:
    path = tmp / f"s.{fmt}"
    with open(path, "wb") as fh:
        get_writer(fmt)(session, fh)
    return get_reader(fmt)(Source(path)).materialize()


def _semantics(session: Session):
    try:
        return t1(session)
    except McpreelError as exc:  # a random session may break the import contract (duplicate call ids): same both ways
        return ("refused", str(exc).split(": ", 1)[-1].split(" at source line")[0].split(" on source line")[0])


@SETTINGS
@given(sessions())
def test_reel_round_trip_keeps_every_record(session):
    with tempfile.TemporaryDirectory() as tmp:
        back = _through(session, "reel", Path(tmp))
    assert_same_wire(wire(back), wire(session))
    assert [m.ctx for m in back if m.kind == Kind.MESSAGE] == [m.ctx for m in session if m.kind == Kind.MESSAGE]
    assert back.info.id == session.info.id and back.info.command == session.info.command
    assert back.info.metadata == session.info.metadata


@SETTINGS
@given(sessions())
def test_reel_to_qai_to_reel_keeps_every_message(session):
    with tempfile.TemporaryDirectory() as tmp:
        qai = _through(session, "qai", Path(tmp))
        back = _through(qai, "reel", Path(tmp))
    assert_same_wire(messages_only(back), messages_only(session))
    assert [m.ctx for m in back if m.kind == Kind.MESSAGE] == [m.ctx for m in session if m.kind == Kind.MESSAGE]
    assert _semantics(back) == _semantics(session)
    assert back.info.command == session.info.command and back.info.id == session.info.id


@SETTINGS
@given(sessions())
def test_writing_is_idempotent(session):
    for fmt in ("reel", "qai"):
        with tempfile.TemporaryDirectory() as tmp:
            once = _through(session, fmt, Path(tmp))
            first = (Path(tmp) / f"s.{fmt}").read_bytes()
            _through(once, fmt, Path(tmp))
            assert (Path(tmp) / f"s.{fmt}").read_bytes() == first


@st.composite
def http_records(draw, t):
    choice = draw(st.sampled_from(["request", "json", "sse", "sse", "endpoint"]))
    if choice == "request":
        ctx = draw(st.one_of(st.just({"slot": "request"}), st.just({"slot": "request", "headers": {"Mcp-Session-Id": "s1"}})))
        return Message("in", draw(payloads), t, ctx=ctx)
    if choice == "json":
        return Message("out", draw(payloads), t, ctx={"slot": "response", "status": 200})
    if choice == "sse":
        sse = {"event": "message", "id": draw(st.text(min_size=1, max_size=4))}
        if draw(st.booleans()):
            sse["encoded"] = True
        return Message("out", draw(payloads), t, ctx={"slot": "sse", "sse": sse})
    return Message("out", None, t, kind=Kind.TRANSPORT,
                   ctx={"slot": "sse", "sse": {"event": "endpoint"}, "data": "/messages?session=" + draw(st.text(max_size=4))})


@SETTINGS
@given(sessions(records=http_records, transport="streamable-http"), st.sampled_from(["streamable-http", "http-sse"]))
def test_http_session_through_the_envelope_keeps_every_message(session, label):
    session.info.transport = "streamable-http" if label == "streamable-http" else "sse"
    with tempfile.TemporaryDirectory() as tmp:
        back = _through(session, label, Path(tmp))
        again = _through(back, "reel", Path(tmp))
    for got in (back, again):
        assert wire(got) == wire(session)
        assert [m.ctx for m in got] == [m.ctx for m in session]
        assert _semantics(got) == _semantics(session)


# -- readers: random and truncated input --------------------------------------------------------------

def _read_everything(fmt: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in"
        path.write_bytes(data)
        try:
            session = get_reader(fmt)(Source(path)).materialize()
        except McpreelError as exc:
            assert str(exc) and "\n" not in str(exc)
            return
        # whatever a reader accepts, analysis and the lossless writers handle
        analyze(session, payloads=True)
        for out in ("reel", "qai", "har"):
            get_writer(out)(session, io.BytesIO())


READERS = ["qai", "langchain", "mcp-recorder"]
SAMPLES = {
    "qai": FIXTURES / "qai/qai_session_fastmcp.json",
    "langchain": None,
    "mcp-recorder": FIXTURES / "mcp-recorder/mcp-recorder_mock_session.json",
}
#: the readers again, those whose sample is a spec fixture marked ``needs_shared``
SAMPLED = [fmt if SAMPLES[fmt] is None else pytest.param(fmt, marks=needs_shared) for fmt in READERS]
LANGCHAIN_SAMPLE = json.dumps({"runs": [
    {"id": "r1", "name": "Tool", "inputs": {"tool": "get_customer", "tool_input": {"id": "c1"}},
     "outputs": {"output": {"name": "Alice"}}},
    {"id": "r2", "run_type": "tool", "name": "search", "inputs": {"input": "{\"q\": 1}"}, "error": "boom",
     "start_time": "2024-01-01T00:00:00.5", "end_time": "2024-01-01T00:00:01"},
]}).encode()


def _sample(fmt: str) -> bytes:
    path = SAMPLES[fmt]
    return LANGCHAIN_SAMPLE if path is None else path.read_bytes()


@pytest.mark.parametrize("fmt", READERS)
@settings(max_examples=40, deadline=None)
@given(data=st.binary(max_size=200))
def test_random_bytes_never_crash_a_reader(fmt, data):
    _read_everything(fmt, data)


@pytest.mark.parametrize("fmt", SAMPLED)
@settings(max_examples=40, deadline=None)
@given(cut=st.floats(0, 1))
def test_truncated_files_never_crash_a_reader(fmt, cut):
    data = _sample(fmt)
    _read_everything(fmt, data[: int(len(data) * cut)])


def _mutations(doc, draw_value):
    """Every member of a document replaced, one at a time, by a random JSON value."""
    if isinstance(doc, dict):
        for k in list(doc):
            yield {**doc, k: draw_value()}
            for sub in _mutations(doc[k], draw_value):
                yield {**doc, k: sub}
    elif isinstance(doc, list):
        for i in range(len(doc)):
            for sub in _mutations(doc[i], draw_value):
                yield [*doc[:i], sub, *doc[i + 1:]]


@pytest.mark.parametrize("fmt", SAMPLED)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_documents_with_wrong_types_fail_cleanly(fmt, data):
    doc = json.loads(_sample(fmt))
    # keep the document small: the first two messages / runs / interactions
    for key in ("messages", "runs", "interactions"):
        if isinstance(doc, dict) and isinstance(doc.get(key), list):
            doc[key] = doc[key][:2]
    variants = list(_mutations(doc, lambda: data.draw(json_values)))
    pick = data.draw(st.sampled_from(variants))
    _read_everything(fmt, json.dumps(pick).encode())
