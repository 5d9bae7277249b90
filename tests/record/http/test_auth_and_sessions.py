"""A 401 challenge from the official SDK's bearer-auth server (K2-A on import), and a 404 on an ended
session; both compared with the same requests made directly."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings

from mcpreel._infra import jsonio
from mcpreel.model import Kind
from mcpreel.redact import MARKER

from .helpers import ThreadServer, projection, proxy, sdk_server, transports

pytestmark = [pytest.mark.anyio, pytest.mark.e2e,
              pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.filterwarnings("ignore::UserWarning")]

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = jsonio.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})


class Verifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        return AccessToken(token=token, client_id="c", scopes=["mcp:tools"]) if token == "good" else None


def auth_app() -> object:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        settings = AuthSettings(issuer_url="http://127.0.0.1:9/", resource_server_url="http://127.0.0.1:9/mcp",
                                required_scopes=["mcp:tools"], validate_token_resource=False)
    return sdk_server(auth=settings, token_verifier=Verifier()).streamable_http_app(json_response=True)


async def test_401_challenge_passes_through_and_reaches_k2a(tmp_path: Path) -> None:
    with ThreadServer(auth_app()) as srv:
        async with httpx2.AsyncClient() as http:
            direct = await http.post(srv.url("/mcp"), content=INIT, headers=HEADERS)
            with proxy("streamable-http", srv.url("/mcp"), tmp_path) as run:
                proxied = await http.post(run.url, content=INIT, headers=HEADERS)
                # then the client comes back with a token: the session works through the proxy
                async with httpx2.AsyncClient(headers={"Authorization": "Bearer good"}) as authed:
                    async with streamable_http_client(run.url, http_client=authed) as (read, write):
                        async with ClientSession(read, write) as session:
                            await session.initialize()
                            echoed = await session.call_tool("echo", {"text": "in"})
    assert direct.status_code == 401 and proxied.status_code == 401
    assert proxied.headers["www-authenticate"] == direct.headers["www-authenticate"]
    assert "resource_metadata=" in proxied.headers["www-authenticate"]
    assert proxied.content == direct.content
    assert echoed.content[0].text == "in"
    records = run.records()
    challenge = [c for c in transports(records) if c.get("status") == 401]
    assert len(challenge) == 1
    assert challenge[0]["data"] == direct.json()  # the OAuth error body, kept as JSON
    assert challenge[0]["headers"]["www-authenticate"] == direct.headers["www-authenticate"]
    sent = [m for m in records if m.kind == Kind.MESSAGE and m.dir == "in"]
    assert all(m.ctx["headers"].get("authorization") in (None, MARKER) for m in sent)
    assert any(m.ctx["headers"].get("authorization") == MARKER for m in sent)
    # importing the recording (and the envelope written from it) shows the K2-A summary
    expected = {"visible": True, "source_kind": "www_authenticate", "resource_metadata_visible": True,
                "authorization_servers_visible": False, "scope_challenge_visible": False}
    assert projection(run.out, tmp_path)["auth"] == expected
    assert projection(tmp_path / "s.envelope.json", tmp_path)["auth"] == expected


async def test_ended_session_gives_404_through_the_proxy(tmp_path: Path) -> None:
    async def sequence(url: str) -> list[tuple[int, object]]:
        out: list[tuple[int, object]] = []
        async with httpx2.AsyncClient() as http:
            r = await http.post(url, content=INIT, headers=HEADERS)
            out.append((r.status_code, "mcp-session-id" in r.headers))
            h = HEADERS | {"Mcp-Session-Id": r.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
            r = await http.delete(url, headers=h)
            out.append((r.status_code, None))
            r = await http.post(url, content=b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}', headers=h)
            out.append((r.status_code, r.json().get("error", {}).get("message")))
        return out

    with ThreadServer(sdk_server().streamable_http_app(json_response=True)) as srv:
        direct = await sequence(srv.url("/mcp"))
        with proxy("streamable-http", srv.url("/mcp"), tmp_path) as run:
            proxied = await sequence(run.url)
    assert proxied == direct
    assert [s for s, _ in direct] == [200, 200, 404]
    records = run.records()
    deletes = [m.ctx for m in records if m.kind == Kind.TRANSPORT and (m.ctx or {}).get("method") == "DELETE"]
    assert [d.get("status") for d in deletes] == [None, 200]  # the request, then its answer
    gone = [m for m in records if m.kind == Kind.MESSAGE and m.dir == "out" and m.ctx.get("status") == 404]
    assert len(gone) == 1 and "error" in gone[0].raw
