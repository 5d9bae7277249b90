"""Lists over HTTP GET with caching (transports-wg list retrieval draft), with a peer written from the
draft's wire examples (tests/drafts/list_get_peer.py): a session with a ``GET ?mcp_list=tools`` (200, ETag)
and its revalidation (304, no body) recorded through the HTTP proxy; both kept and shown; ``serve`` answers
304 when the client's validator matches the recorded one and the recorded representation otherwise;
``replay`` sends them again and judges them (a 304 is the same only when the validator still matches)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from click.testing import CliRunner
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mcpreel.cli import cli
from mcpreel.formats import open_session
from mcpreel.operations.http_lists import list_gets
from tests.record.http.helpers import ThreadServer, proxy, sdk_server

from .list_get_peer import ListGetServer, tools_result
from .test_digests import serving

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning")]

GET_HEADERS = {"Accept": "application/json", "MCP-Protocol-Version": "2026-07-28"}


def run(*args: object) -> tuple[int, str]:
    r = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return r.exit_code, r.stdout + r.stderr


def peer(version: str = "v7") -> ListGetServer:
    return ListGetServer(sdk_server().streamable_http_app(json_response=True), version)


async def client(url: str) -> list[tuple[int, dict[str, str], bytes]]:
    """A JSON-RPC session (list the tools over POST), then the tools list over GET and its revalidation."""
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            await s.list_tools()
    out = []
    async with httpx2.AsyncClient() as http:
        first = await http.get(url + "?mcp_list=tools", headers=GET_HEADERS)
        again = await http.get(url + "?mcp_list=tools", headers=GET_HEADERS | {"If-None-Match": first.headers["etag"]})
        for r in (first, again):
            out.append((r.status_code, {k.lower(): v for k, v in r.headers.items()}, r.content))
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    tmp = tmp_path_factory.mktemp("lists")
    server = peer()
    with ThreadServer(server) as srv:
        direct = anyio.run(client, srv.url("/mcp"))
        with proxy("streamable-http", srv.url("/mcp"), tmp) as rec:
            through = anyio.run(client, rec.url)
    # the client saw through the proxy what it sees directly: statuses, validators, bytes
    keep = ("etag", "cache-control", "vary", "content-type")
    assert [(s, {k: h.get(k) for k in keep}, b) for s, h, b in through] == \
        [(s, {k: h.get(k) for k in keep}, b) for s, h, b in direct]
    assert [s for s, _, _ in through] == [200, 304] and through[1][2] == b""
    assert rec.out is not None
    return rec.out, through


def test_list_gets_are_recorded_as_they_came(recorded) -> None:
    reel, _ = recorded
    session, _ = open_session(reel, "reel")
    gets = list_gets(session.messages)
    assert [(g.method, g.status, g.if_none_match, g.etag) for g in gets] == [
        ("tools/list", 200, None, '"tools-page-v7"'), ("tools/list", 304, '"tools-page-v7"', '"tools-page-v7"')]
    assert gets[0].result == tools_result("v7") and gets[1].result is None and gets[1].body is None
    assert gets[0].response_headers["vary"] == "Authorization, MCP-Protocol-Version, Accept"


def test_inspect_shows_them(recorded) -> None:
    reel, _ = recorded
    code, said = run("inspect", reel, "-v")
    assert code == 0
    assert "mcp_list=tools" in said and "304" in said


def test_serve_answers_304_when_the_validator_matches(recorded) -> None:
    reel, through = recorded

    async def ask(url: str) -> list[httpx2.Response]:
        async with httpx2.AsyncClient() as http:
            return [await http.get(url + "?mcp_list=tools", headers=GET_HEADERS),
                    await http.get(url + "?mcp_list=tools", headers=GET_HEADERS | {"If-None-Match": '"tools-page-v7"'}),
                    await http.get(url + "?mcp_list=tools", headers=GET_HEADERS | {"If-None-Match": '"tools-page-v1"'}),
                    await http.get(url + "?mcp_list=prompts", headers=GET_HEADERS)]

    with serving(reel) as url:
        fresh, matched, other, unknown = anyio.run(ask, url)
    assert fresh.status_code == 200 and json.loads(fresh.content) == tools_result("v7")
    assert fresh.headers["etag"] == '"tools-page-v7"' and fresh.headers["vary"] == through[0][1]["vary"]
    assert matched.status_code == 304 and matched.content == b"" and matched.headers["etag"] == '"tools-page-v7"'
    assert matched.headers["cache-control"] == "private, max-age=60, must-revalidate"
    assert other.status_code == 200 and json.loads(other.content) == tools_result("v7")
    assert unknown.status_code == 404 and "holds no GET ?mcp_list=prompts" in unknown.text


def _gets(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(r["original_request"].get("path", ""), r["status"]) for r in report["results"]
            if r["original_request"].get("method") == "GET"]


@pytest.mark.e2e
def test_replay_judges_them(recorded, tmp_path: Path) -> None:
    reel, _ = recorded
    same, changed = tmp_path / "same.json", tmp_path / "changed.json"
    with ThreadServer(peer("v7")) as srv:
        code, said = run("replay", reel, "--target-url", srv.url("/mcp"), "--output", same)
    assert code == 0, said
    assert _gets(json.loads(same.read_text())) == [("/mcp?mcp_list=tools", "same")] * 2
    with ThreadServer(peer("v8")) as srv:
        code, said = run("replay", reel, "--target-url", srv.url("/mcp"), "--output", changed)
    assert code == 1, said
    report = json.loads(changed.read_text())
    assert _gets(report) == [("/mcp?mcp_list=tools", "changed")] * 2
    revalidation = [r for r in report["results"] if r["original_request"].get("headers", {}).get("if-none-match")][0]
    assert revalidation["recorded_response"]["status"] == 304 and revalidation["response"]["status"] == 200
    assert "the validator no longer matches" in revalidation["error"]
    assert "$.status" in said and "GET" not in said.split("replayed:")[-1]
