"""Edges between recordings and the envelope/reel files: what must survive a conversion."""

from __future__ import annotations

import io
import json

from mcpreel.formats import get_reader, get_writer
from mcpreel.formats._source import Source
from mcpreel.model import Kind, Message, Session, SessionInfo
from mcpreel.toolcalls.importer import ImportOptions, import_session

CHALLENGE = 'Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="files:read"'


def _http_session(body) -> Session:
    ctx = {"method": "POST", "path": "/mcp", "status": 401, "headers": {"WWW-Authenticate": CHALLENGE}, "exchange": 1}
    if body is not None:
        ctx["data"] = body
    return Session(SessionInfo(transport="streamable-http"), [
        Message("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {}}}, 1000,
                ctx={"method": "POST", "path": "/mcp", "headers": {}, "exchange": 1}),
        Message("out", None, 1001, kind=Kind.TRANSPORT, ctx=ctx),
    ])


def test_a_bodiless_401_keeps_its_challenge_in_the_envelope(tmp_path):
    for body in (None, "Unauthorized", {"error": "invalid_token"}):
        buf = io.BytesIO()
        get_writer("streamable-http")(_http_session(body), buf)
        path = tmp_path / "e.json"
        path.write_bytes(buf.getvalue())
        report, _, _ = import_session(path, tmp_path / "t.jsonl", options=ImportOptions(episode_id="e"))
        summary = report.authorization_discovery
        assert summary["visible"] and summary["resource_metadata_visible"] and summary["scope_challenge_visible"], body
        assert report.tool_calls == 1 and report.unanswered == 1  # the 401 answered nothing at the JSON-RPC layer


def test_a_bodiless_202_still_has_no_entry():
    s = Session(SessionInfo(transport="streamable-http"), [
        Message("out", None, 5, kind=Kind.TRANSPORT, ctx={"method": "POST", "path": "/mcp", "status": 202, "headers": {}})])
    buf = io.BytesIO()
    get_writer("streamable-http")(s, buf)
    assert json.loads(buf.getvalue())["entries"] == []


def test_invalid_lines_keep_their_http_context_in_a_reel(tmp_path):
    ctx = {"method": "POST", "path": "/mcp", "headers": {"content-type": "application/json"}, "exchange": 3}
    s = Session(SessionInfo(transport="streamable-http"), [Message("in", None, 7, kind=Kind.INVALID, text="{oops", ctx=ctx)])
    path = tmp_path / "r.jsonl"
    with open(path, "wb") as fh:
        get_writer("reel")(s, fh)
    back = list(get_reader("reel")(Source(path)))
    assert back[0].kind == Kind.INVALID and back[0].text == "{oops" and back[0].ctx == ctx
