"""The session model's JSON-RPC views, the id contract and times."""

from __future__ import annotations

import pytest

from mcpreel._infra.timeutil import MAX_MS, MIN_MS, iso_from_ms, ms_from_any, ms_from_iso
from mcpreel.model import IdError, Kind, Message, Session, SessionInfo, is_server_method, jsonrpc_id


def test_message_views():
    req = Message("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call"})
    note = Message("in", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    resp = Message("out", {"jsonrpc": "2.0", "id": 1, "result": {}})
    batch = Message("in", [{"jsonrpc": "2.0", "id": 2, "method": "ping"}, 5])
    assert (req.is_request, req.method, req.id) == (True, "tools/call", 1)
    assert note.is_notification and not note.is_request
    assert resp.is_response and resp.method is None
    assert batch.is_batch and len(batch.members()) == 1
    assert Message(None, None, kind=Kind.STDERR, text="x").members() == []


def test_session_streams_again_on_each_pass():
    calls = []

    def factory():
        calls.append(1)
        yield Message("in", {"id": 1})

    s = Session.streaming(SessionInfo(), factory)
    assert len(list(s)) == 1 and len(list(s)) == 1 and len(calls) == 2
    assert len(s.messages) == 1 and not s.is_streaming


@pytest.mark.parametrize(("value", "expected"), [("x", "x"), (7, "7"), (None, None), (1.5, "1.5"), (2**80, str(2**80))])
def test_jsonrpc_id(value, expected):
    assert jsonrpc_id(value) == expected


@pytest.mark.parametrize(("value", "kind"), [(True, "a boolean"), ({}, "an object"), ([], "an array")])
def test_jsonrpc_id_refused(value, kind):
    with pytest.raises(IdError, match=f"must not be {kind}"):
        jsonrpc_id(value)


def test_server_methods():
    assert is_server_method("sampling/createMessage") and is_server_method("notifications/tools/list_changed")
    assert not is_server_method("tools/call") and not is_server_method("notifications/initialized")


@pytest.mark.parametrize(("text", "ms"), [
    ("2026-05-12T23:00:00.123Z", 1778626800123),
    ("2026-05-12T23:00:00.123456+00:00", 1778626800123),
    ("2026-05-13T01:00:00.123+02:00", 1778626800123),
    ("2026-05-12T23:00:00", 1778626800000),
])
def test_iso_times(text, ms):
    assert ms_from_iso(text) == ms


def test_iso_round_trip_and_any():
    assert iso_from_ms(1778626800123) == "2026-05-12T23:00:00.123Z"
    assert ms_from_iso(iso_from_ms(5)) == 5
    assert ms_from_any(1.5) == 1500 and ms_from_any(1778626800123) == 1778626800123
    assert ms_from_any("nope") is None and ms_from_any(True) is None


def test_iso_years_have_four_digits_and_read_back():
    # strftime("%Y") writes year 999 as "999", which no ISO-8601 reader takes back
    for ms in (MIN_MS, -30_610_224_000_000, -1, 0, MAX_MS):
        text = iso_from_ms(ms)
        assert len(text) == 24 and ms_from_iso(text) == ms
    assert iso_from_ms(MIN_MS) == "0001-01-01T00:00:00.000Z" and iso_from_ms(MAX_MS) == "9999-12-31T23:59:59.999Z"


def test_times_no_iso_string_can_name_are_refused_or_none():
    for ms in (MIN_MS - 1, MAX_MS + 1, 2**70):
        with pytest.raises(ValueError, match="outside years 1 to 9999"):
            iso_from_ms(ms)
    with pytest.raises(ValueError):
        ms_from_iso("0001-01-01T00:00:00+01:00")  # year 0 in UTC
    for value in (float("nan"), float("inf"), -float("inf"), 1e300, -1.8e305, 2**70, "inf", "nan", "1e999", MAX_MS + 1):
        assert ms_from_any(value) is None, value
    assert ms_from_any(MAX_MS) == MAX_MS and ms_from_any("1969-12-31T23:59:59.999Z") == -1


@pytest.mark.parametrize(("value", "shown"), [
    (None, "-"), (0, "0"), (0.2, "<1"), (0.6, "1"), (2.3, "2"), (3, "3"), (12.5, "13"), (1234.4, "1234"),
])
def test_every_surface_shows_a_duration_in_whole_milliseconds(value, shown):
    """Issue 29: replay's table showed ``2.3`` beside ``3``; one rule now (``duration_ms_text``)."""
    from mcpreel._infra.timeutil import duration_ms_text
    from mcpreel.render.replay import ms
    from mcpreel.report.svg import fmt_ms

    assert duration_ms_text(value) == shown == ms(value)
    if value is not None and value < 1000:  # the report says seconds from 1 s on
        assert fmt_ms(value) == f"{shown} ms"
