"""Writing the mcp-conformance (mcp-trace-validator) trace format (issue 25): a recording becomes the wire
trace the validator reads, and reads back with every message, direction, order, payload and HTTP status."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpreel._infra import jsonio
from mcpreel.formats._source import Source
from mcpreel.formats.mcp_conformance import read, write
from mcpreel.model import Kind, Message, Session, SessionInfo
from mcpreel.redact import MARKER

from ..conftest import needs_shared
from .support import fixture, messages_only


def _written(session: Session) -> tuple[list[dict], list[str]]:
    buf = io.BytesIO()
    lost = write(session, buf)
    return [jsonio.loads(line) for line in buf.getvalue().splitlines()], lost


def _read_back(events: list[dict], tmp_path: Path) -> Session:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(jsonio.dumps(e) + b"\n" for e in events))
    return read(Source(path)).materialize()


def _statuses(session: Session) -> list[tuple[str | None, int]]:
    return [(m.dir, m.ctx["status"]) for m in session if m.ctx and "status" in m.ctx]


@needs_shared
def test_the_validators_own_traces_round_trip(tmp_path: Path) -> None:
    for name in ("corpus__good__http-session.jsonl", "corpus__good__stdio-feature-session.jsonl",
                 "corpus__draft__captured__reference-host-2026-07-28-http.jsonl"):
        path = fixture(f"hub/mcp-conformance-tomtom215/{name}")
        original = read(Source(path)).materialize()
        events, lost = _written(original)
        assert [e["seq"] for e in events] == list(range(len(events)))
        assert {e["transport"] for e in events} == {original.info.transport}
        back = _read_back(events, tmp_path)
        assert messages_only(back) == messages_only(original), name
        assert _statuses(back) == _statuses(original), name
        # every lifecycle event the validator wrote is written again, in its place
        kinds = [(m.kind, (m.ctx or {}).get("event")) for m in back if m.kind == Kind.TRANSPORT and "event" in (m.ctx or {})]
        assert kinds == [(m.kind, (m.ctx or {}).get("event")) for m in original
                         if m.kind == Kind.TRANSPORT and "event" in (m.ctx or {})]
        assert lost == []


def test_an_http_exchange_is_an_http_event_then_its_messages_and_secrets_stay_out() -> None:
    ctx_in = {"exchange": 1, "method": "POST", "headers": {"Authorization": "Bearer sk-live-1234", "Mcp-Method": "tools/list"}}
    ctx_out = {"exchange": 1, "status": 200, "headers": {"Content-Type": "text/event-stream"}}
    session = Session(SessionInfo(transport="streamable-http"), [
        Message("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, 1_000, ctx=ctx_in),
        Message("out", {"jsonrpc": "2.0", "method": "notifications/progress"}, 1_005, ctx=ctx_out),
        Message("out", {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}, 1_010, ctx=ctx_out),
        Message("in", {"jsonrpc": "2.0", "method": "notifications/initialized"}, 1_020, ctx={"exchange": 2, "headers": {}}),
        Message("out", None, 1_021, kind=Kind.TRANSPORT, ctx={"exchange": 2, "status": 202, "headers": {}}),
        Message("out", "server said hi", 1_022, kind=Kind.STDERR),
    ])
    events, lost = _written(session)
    assert [(e["direction"][:6], e["kind"]) for e in events] == [
        ("client", "http"), ("client", "message"), ("server", "http"), ("server", "message"), ("server", "message"),
        ("client", "http"), ("client", "message"), ("server", "http")]
    assert events[0]["headers"] == {"authorization": MARKER, "mcp-method": "tools/list"}
    assert "sk-live" not in jsonio.dumps_str(events)
    assert events[2]["status"] == 200 and events[-1]["status"] == 202
    assert events[0]["ts"] == "1970-01-01T00:00:01.000Z"
    assert lost == []  # the stderr line is counted by convert, not by the writer


def test_dropped_messages_never_crossed_the_wire_and_are_not_written() -> None:
    session = Session(SessionInfo(transport="stdio"), [
        Message("in", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, None),
        Message("in", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, None, dropped=True),
        Message("out", {"jsonrpc": "2.0", "id": 1, "result": {}}, None),
    ])
    events, _ = _written(session)
    assert [e["payload"]["id"] for e in events] == [1, 1]
    assert all("ts" not in e for e in events)


def test_an_empty_session_is_an_empty_trace_that_reads_back_empty(tmp_path: Path) -> None:
    events, _ = _written(Session(SessionInfo(), []))
    assert events == []
    back = _read_back([], tmp_path)
    assert list(back) == [] and back.info.notes == ["the trace holds no events"]


_ids = st.one_of(st.integers(-5, 5), st.text(max_size=3))
_payload = st.one_of(
    st.builds(lambda i, m: {"jsonrpc": "2.0", "id": i, "method": m}, _ids, st.sampled_from(["tools/list", "ping", "x/y"])),
    st.builds(lambda i, r: {"jsonrpc": "2.0", "id": i, "result": r}, _ids,
              st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=5), max_size=3)),
    st.builds(lambda m: {"jsonrpc": "2.0", "method": m}, st.text(min_size=1, max_size=8)),
)
_records = st.lists(st.tuples(st.sampled_from(["in", "out"]), _payload, st.one_of(st.none(), st.integers(0, 10**13)),
                              st.one_of(st.none(), st.integers(1, 4)), st.sampled_from([None, 200, 400, 404])),
                    max_size=12)


@settings(max_examples=150, deadline=None)
@given(_records, st.sampled_from(["stdio", "streamable-http"]))
def test_write_then_read_keeps_every_message_direction_and_order(records, transport) -> None:
    msgs = []
    for d, payload, t, exchange, status in records:
        ctx = None
        if transport == "streamable-http" and exchange is not None:
            ctx = {"exchange": exchange, "headers": {"x": "y"}, **({"status": status} if status and d == "out" else {})}
        msgs.append(Message(d, payload, t, ctx=ctx))
    buf = io.BytesIO()
    write(Session(SessionInfo(transport=transport), msgs), buf)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        path.write_bytes(buf.getvalue())
        back = read(Source(path)).materialize()
    assert [(m.dir, m.raw) for m in back if m.kind == Kind.MESSAGE] == [(m.dir, m.raw) for m in msgs]
