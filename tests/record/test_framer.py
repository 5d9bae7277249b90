"""The stdio framing's first-bytes decision and its raw lines, on scripted reads (no pipes)."""

from __future__ import annotations

from mcpreel.drafts import H2_PREFACE
from mcpreel.record.framing import Framer, LineCutter, framing_of

SETTINGS = b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x64"


def test_the_preface_decides_http2_even_one_byte_at_a_time():
    framer = Framer("in")
    steps = [framer.feed(H2_PREFACE[i : i + 1]) for i in range(len(H2_PREFACE))]
    assert steps[:-1] == [[]] * (len(H2_PREFACE) - 1)  # undecided: the bytes go on, nothing recorded yet
    assert steps[-1] == [(H2_PREFACE, 1)] and framer.h2  # decided: everything held is recorded raw
    assert framer.feed(SETTINGS) == [(SETTINGS, len(SETTINGS))]


def test_a_server_first_settings_frame_decides_http2_and_json_never_does():
    assert framing_of("out", SETTINGS) == "h2"
    assert framing_of("out", SETTINGS[:5]) is None
    assert framing_of("out", b'{"jsonrpc":"2.0"}') == "lines"
    assert framing_of("out", b"\x00\x00\x06\x01\x00\x00\x00\x00\x01") == "lines"  # a HEADERS frame first: not a server
    assert framing_of("in", b"PRI * HTTP/1.1") == "lines"
    assert framing_of("in", b"PR") is None


def test_json_lines_are_cut_as_the_line_cutter_cuts_them():
    data = [b'{"a":1}\n{"b"', b':2}\n', b'{"c":3}\n{"d":4}\n{"e"', b":5}\n"]
    framer, cutter = Framer("in", batch=2), LineCutter(2)
    for chunk in data:
        assert framer.feed(chunk) == cutter.feed(chunk)
    assert framer.finish() is None


def test_a_line_that_cannot_be_json_goes_raw_at_once_up_to_its_newline():
    framer = Framer("out")
    assert framer.feed(b'{"a":1}\nplain') == [([b'{"a":1}'], 8), (b"plain", 13)]
    assert framer.feed(b" text") == [(b" text", 5)]
    assert framer.feed(b' end\n{"b":2}\n') == [(b" end\n", 5), ([b'{"b":2}'], 13)]


def test_a_line_past_the_limit_goes_raw_in_the_pieces_it_came_in():
    framer = Framer("in", limit=10)
    assert framer.feed(b'{"x":"aaaa') == []  # may be JSON, under the limit: held
    assert framer.feed(b"bbbbbb") == [(b'{"x":"aaaa', 6), (b"bbbbbb", 6)]  # past it: raw, never joined
    assert framer.feed(b'"}\n{"y":1}\n') == [(b'"}\n', 3), ([b'{"y":1}'], 11)]
