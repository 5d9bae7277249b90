"""Anything unknown is kept (issue 36): random unknown additions -- a method, members in params and in the
result, a response header, an HTTP status, a content type -- through the HTTP recorder's core (the code the
proxy records with), a reel on disk, ``convert`` (HAR) and ``serve``: recorded, shown, served and
compared as they came, never dropped or rewritten. A property test (hypothesis) over the additions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel.cli import cli
from mcpreel.compare.diff import diff_sessions
from mcpreel.formats import open_session
from mcpreel.mock.engine import Mock
from mcpreel.model import Kind, Session, SessionInfo
from mcpreel.operations.cassette import build
from mcpreel.record.http_recorder import HttpRecorder
from mcpreel.redact import is_secret_header
from tests.formats.support import write
from tests.mock.test_mock_engine import run

NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=10)
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                   st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20))
JSON = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                   st.dictionaries(NAME, inner, max_size=3)), max_leaves=8)
HEADER_VALUE = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.;=/ ", min_size=1, max_size=20).map(str.strip).filter(bool)
ADDITIONS = st.fixed_dictionaries({
    "method": NAME.map(lambda n: f"x-vendor/{n}"),
    "params": st.dictionaries(NAME.map(lambda n: f"x_{n}"), JSON, max_size=3),
    "result": st.dictionaries(NAME.map(lambda n: f"x_{n}"), JSON, min_size=1, max_size=3),
    "header": st.tuples(NAME.map(lambda n: f"x-unknown-{n}"), HEADER_VALUE).filter(lambda h: not is_secret_header(h[0])),
    "status": st.sampled_from([200, 203, 207, 226, 299]),
    "content_type": st.sampled_from(["application/json", "application/json; charset=utf-8; x-profile=1",
                                     "application/vnd.example.mcp+json", "text/x-unknown"]),
})


def recorded(add: dict[str, Any]) -> tuple[Session, dict[str, Any], dict[str, Any]]:
    """One exchange with the additions, through the recorder's core: the session it writes, and the messages."""
    request = {"jsonrpc": "2.0", "id": 7, "method": add["method"], "params": add["params"]}
    response = {"jsonrpc": "2.0", "id": 7, "result": add["result"]}
    out: list[Any] = []
    rec = HttpRecorder(out.append, clock=iter(range(1000, 2000, 5)).__next__)
    ex = rec.request("POST", "/mcp", [(b"content-type", b"application/json"), (add["header"][0].encode(), add["header"][1].encode())],
                     json.dumps(request).encode())
    rec.response_head(ex, add["status"], [(b"content-type", add["content_type"].encode()),
                                          (add["header"][0].encode(), add["header"][1].encode())], sse=False)
    rec.response_body(ex, json.dumps(response).encode())
    info = SessionInfo(transport="streamable-http", url="http://127.0.0.1:9/mcp", started=1000)
    return Session(info, out), request, response


def _messages(session: Session) -> list[Any]:
    return [m.raw for m in session.messages if m.kind == Kind.MESSAGE]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(add=ADDITIONS)
def test_unknown_additions_are_kept_as_they_came(add: dict[str, Any], tmp_path_factory: Any) -> None:
    tmp: Path = tmp_path_factory.mktemp("unknown")
    session, request, response = recorded(add)
    # recorded as it came: the messages, the header, the status, the content type
    assert _messages(session) == [request, response]
    answer = next(m for m in session.messages if m.kind == Kind.MESSAGE and m.dir == "out")
    assert answer.ctx["status"] == add["status"]
    assert answer.ctx["headers"][add["header"][0]] == add["header"][1]
    assert answer.ctx["headers"]["content-type"] == add["content_type"]
    # a reel on disk, read back: the same
    reel = write(session, tmp / "s.jsonl", "reel")
    back, _ = open_session(reel, "reel")
    assert _messages(back) == [request, response]
    again = next(m for m in back.messages if m.kind == Kind.MESSAGE and m.dir == "out")
    assert again.ctx["status"] == add["status"] and again.ctx["headers"][add["header"][0]] == add["header"][1]
    # convert to HAR: the messages, the unknown header, status and content type are carried
    har = tmp / "s.har"
    r = CliRunner().invoke(cli, ["convert", str(reel), str(har)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    entries = json.loads(har.read_text())["log"]["entries"]
    assert entries[0]["response"]["status"] == add["status"]
    assert {h["name"]: h["value"] for h in entries[0]["response"]["headers"]}[add["header"][0]] == add["header"][1]
    assert json.loads(entries[0]["request"]["postData"]["text"]) == request
    assert json.loads(entries[0]["response"]["content"]["text"]) == response
    assert entries[0]["response"]["content"]["mimeType"] == add["content_type"]
    # served as it came: the unknown method gets the recorded result, whatever it holds
    served = run(Mock(build(back)), {**request, "id": 99})
    assert served == [{**response, "id": 99}]
    # shown: inspect names the unknown method
    r = CliRunner().invoke(cli, ["inspect", str(reel), "--json"], catch_exceptions=False)
    assert r.exit_code == 0 and add["method"] in r.output
    # compared as it came: equal to itself; an unknown member changed is a difference at its path
    assert diff_sessions(back, session).difference_count == 0
    key = sorted(add["result"])[0]
    changed = {**response, "result": {**add["result"], key: ["changed", add["result"][key]]}}
    other = Session(back.info, [m if m.dir != "out" or m.kind != Kind.MESSAGE else type(m)(
        "out", changed, t=m.t, ctx=m.ctx) for m in back.messages])
    report = diff_sessions(back, other)
    assert report.difference_count > 0
