"""The official Python SDK client as the conformance suite's client under test.

    python tests/peers/conformance_client.py [--resource-from-target] URL

The suite (``conformance client --command CMD --scenario NAME``) starts its own test server, then runs CMD
with that server's URL appended, the scenario in ``MCP_CONFORMANCE_SCENARIO`` and, for ``auth/*``, what the
client was given (a client id, ...) in ``MCP_CONFORMANCE_CONTEXT``. What each scenario asks of a client:

- ``initialize``: connect (the handshake), list the tools;
- ``tools_call``: that, then call ``add_numbers`` with 5 and 3;
- ``sse-retry``: that, then call ``test_reconnection`` (the server closes its SSE stream mid-call; the
  client must reconnect after the ``retry`` it was told, with ``Last-Event-ID``);
- ``elicitation-sep1034-client-defaults``: call ``test_client_elicitation_defaults``, accepting the
  elicitation with its schema's defaults;
- ``request-metadata`` (2026-07-28): discover, list the tools, call the first one;
- ``auth/*``: the authorization-code flow with the SDK's ``OAuthClientProvider``, the authorization
  redirect followed without a person (the suite's authorization server redirects at once), then list the
  tools and call the first one.

``--resource-from-target``: for ``auth/*`` through ``mcpreel record`` (tests/peers/through_record.py), the
client's OAuth resource is the recorded server's URL (``MCPREEL_TARGET_URL``), not the proxy's it connects
to: the protected resource metadata names the real server, and the SDK rightly refuses a token for a
resource other than the one it was configured with (RFC 8707/9728), so a client that knows only the proxy
cannot authorize through it.

With ``MCP_CONFORMANCE_PROTOCOL_VERSION`` 2026-07-28 (the suite sets it) the client is ``mcp.Client`` in its
default mode, which speaks that era; otherwise the handshake-era ``ClientSession``.

Exits non-zero when the flow fails; the suite judges the wire, not the exit code alone.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp import Client, ClientSession
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.types import ElicitResult
from pydantic import AnyUrl

REDIRECT = "http://localhost:3000/callback"  # never listened on: the code is read off the redirect itself


class Memory(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Browser:
    """Stands in for the person at the browser: fetches the authorization URL and keeps the code the
    authorization server redirects back with."""

    def __init__(self) -> None:
        self.result: AuthorizationCodeResult | None = None

    async def redirect(self, url: str) -> None:
        async with httpx2.AsyncClient() as http:
            r = await http.get(url, follow_redirects=False)
        query = parse_qs(urlparse(r.headers.get("location", "")).query)
        if "code" not in query:
            raise RuntimeError(f"no authorization code in the redirect from {url} ({r.status_code})")
        self.result = AuthorizationCodeResult(code=query["code"][0], state=(query.get("state") or [None])[0],
                                              iss=(query.get("iss") or [None])[0])

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None, "the redirect never came"
        return self.result


async def _defaults(ctx, params) -> ElicitResult:
    """Accept an elicitation with the defaults its schema gives (SEP-1034), as a person who changes nothing."""
    schema = getattr(params, "requested_schema", None) or {}
    fields = schema.get("properties", {}) if isinstance(schema, dict) else {}
    return ElicitResult(action="accept", content={k: v["default"] for k, v in fields.items() if "default" in v})


async def _session(url: str, http: httpx2.AsyncClient | None, calls: list[tuple[str | None, dict]]) -> None:
    if os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "") >= "2026-07-28":
        # the 2026 era: mcp.Client in its default mode (server/discover, per-request _meta)
        async with Client(streamable_http_client(url, http_client=http)) as client:
            tools = (await client.list_tools()).tools
            for name, arguments in calls:
                name = name or (tools[0].name if tools else None)
                if name is not None:
                    await client.call_tool(name, arguments)
        return
    async with streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write, elicitation_callback=_defaults) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            for name, arguments in calls:
                if name is None:  # the first tool the server lists
                    if not tools:
                        continue
                    name = tools[0].name
                await session.call_tool(name, arguments)


async def main(url: str) -> None:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    if scenario.startswith("auth/"):
        storage, browser = Memory(), Browser()
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
        if context.get("client_id"):  # a pre-registered client
            secret = context.get("client_secret")
            await storage.set_client_info(OAuthClientInformationFull(
                client_id=context["client_id"], client_secret=secret, redirect_uris=[AnyUrl(REDIRECT)],
                token_endpoint_auth_method="client_secret_basic" if secret else "none"))
        resource = os.environ["MCPREEL_TARGET_URL"] if "--resource-from-target" in sys.argv else url
        auth = OAuthClientProvider(
            server_url=resource, storage=storage, redirect_handler=browser.redirect, callback_handler=browser.callback,
            client_metadata=OAuthClientMetadata(client_name="mcpreel-conformance-client",
                                                redirect_uris=[AnyUrl(REDIRECT)],
                                                grant_types=["authorization_code", "refresh_token"],
                                                response_types=["code"]),
            client_metadata_url="https://conformance-test.local/client-metadata.json")
        async with httpx2.AsyncClient(auth=auth, timeout=30) as http:
            await _session(url, http, [(None, {})])
        return
    calls = {"initialize": [], "tools_call": [("add_numbers", {"a": 5, "b": 3})],
             "sse-retry": [("test_reconnection", {})], "request-metadata": [(None, {})],
             "elicitation-sep1034-client-defaults": [("test_client_elicitation_defaults", {})]}
    if scenario not in calls:
        raise SystemExit(f"conformance_client: scenario {scenario!r} is not one this client plays")
    await _session(url, None, calls[scenario])


if __name__ == "__main__":
    asyncio.run(main(sys.argv[-1]))
