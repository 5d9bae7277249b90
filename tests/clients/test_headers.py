"""``--header 'Name: value'``: one parser for every verb. What it accepts an HTTP client can send as is;
what it refuses gets one line naming the header and the rule (exit 2), never a traceback."""

from __future__ import annotations

import httpx2
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpreel.cli import cli
from mcpreel.clients.headers import parse_header, parse_headers
from mcpreel.errors import UsageError


@pytest.mark.parametrize(("text", "expected"), [
    ("Authorization: Bearer abc", ("Authorization", "Bearer abc")),
    ("X-Empty:", ("X-Empty", "")),
    ("  X-Pad  :   a b  ", ("X-Pad", "a b")),
    ("X-Url: http://h:8080/p", ("X-Url", "http://h:8080/p")),  # only the first colon splits
    ("x-odd!#$%&'*+-.^_`|~: v", ("x-odd!#$%&'*+-.^_`|~", "v")),
])
def test_what_is_read(text, expected):
    assert parse_header(text) == expected


@pytest.mark.parametrize(("text", "said"), [
    ("Authorization Bearer abc", "expected 'Name: value'"),
    (": value", "the header has no name"),
    ("Bad Name: v", "'Bad Name' is not an HTTP header name"),
    ("X(y): v", "is not an HTTP header name"),
    ("Caf\u00e9: v", "is not an HTTP header name"),
    ("X-A: caf\u00e9", "the value holds text that is not ASCII ('\u00e9')"),
    ("X-A: a\r\nX-Injected: 1", "the value holds a line break or control character ('\\r')"),
    ("X-A: a\x00b", "control character ('\\x00')"),
    ("X-A: a\x7fb", "control character ('\\x7f')"),
])
def test_what_is_refused_and_why(text, said):
    with pytest.raises(UsageError) as info:
        parse_header(text)
    assert said in str(info.value)
    assert str(info.value).startswith(f"--header {text!r}: ")


def test_the_last_of_two_with_one_name_wins():
    assert parse_headers(["X-A: 1", "X-B: 2", "X-A: 3"]) == {"X-A": "3", "X-B": "2"}


@settings(max_examples=500, deadline=None)
@given(st.one_of(
    st.text(max_size=40),
    st.builds(lambda n, v: f"{n}:{v}", st.text(max_size=12), st.text(max_size=20)),
    st.builds(lambda n, v: f"{n}: {v}", st.from_regex(r"[A-Za-z0-9-]{1,10}", fullmatch=True),
              st.text(alphabet=st.characters(max_codepoint=0x80), max_size=20)),
))
def test_any_text_is_read_or_refused_in_one_line(text):
    """Never anything but a pair or a UsageError of one line; what is read an HTTP request can carry."""
    try:
        name, value = parse_header(text)
    except UsageError as exc:
        said = str(exc)
        assert said.startswith("--header ") and "\n" not in said and "\r" not in said
        assert said.isprintable()
        return
    request = httpx2.Request("GET", "http://server.test/", headers={name: value})
    assert request.headers[name] == value


_BAD = ["no colon here", "Bad Name: v", "X-A: caf\u00e9", "X-A: a\r\nB: c"]


@pytest.mark.parametrize("bad", _BAD)
@pytest.mark.parametrize("verb", [
    ["check", "http://127.0.0.1:9/mcp", "-H"],
    ["check", "http://127.0.0.1:9/mcp", "--header"],
    ["replay", "nothing.jsonl", "--target-url", "http://127.0.0.1:9/mcp", "--header"],
    ["contract", "snapshot", "--url", "http://127.0.0.1:9/mcp", "-o", "c.json", "--header"],
    ["audit", "http://127.0.0.1:9/mcp", "--header"],
])
def test_every_verb_that_takes_headers_says_one_line_and_exits_2(verb, bad, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, [*verb, bad])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: --header "), result.output
    assert "Traceback" not in result.output
