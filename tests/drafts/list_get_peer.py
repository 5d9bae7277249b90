"""A server that answers lists over HTTP GET with caching, written from the transports-wg draft's own wire
examples (proposals/XXXX-http-list-retrieval-and-caching.md; no SDK speaks it): ``GET <endpoint>?mcp_list=
tools`` answers the bare list result (no JSON-RPC envelope) with ``ETag``, ``Cache-Control`` and ``Vary``;
an ``If-None-Match`` that matches gives ``304 Not Modified`` with the same validators and no body; an
unknown selector is refused (400). Every other request goes to the official SDK's server."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

from mcpreel import drafts

CACHE_CONTROL = b"private, max-age=60, must-revalidate"
VARY = b"Authorization, MCP-Protocol-Version, Accept"


def tools_result(version: str) -> dict[str, Any]:
    """The tools list of the page at ``version`` (the draft's example shape)."""
    return {"tools": [{"name": "echo", "description": f"Echo the text back ({version}).",
                       "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}],
            "ttlMs": 60000, "cacheScope": "private"}


class ListGetServer:
    """ASGI middleware: list GETs answered here (page ``version``), the rest by ``app``."""

    def __init__(self, app: Any, version: str = "v7") -> None:
        self.app, self.version = app, version
        self.seen: list[tuple[str, str | None, int]] = []  # (selector, If-None-Match, status)

    @property
    def etag(self) -> str:
        return f'"tools-page-{self.version}"'

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        query = parse_qs(scope.get("query_string", b"").decode()) if scope["type"] == "http" else {}
        if scope["type"] != "http" or scope["method"] != "GET" or drafts.LIST_QUERY_PARAMETER not in query:
            await self.app(scope, receive, send)
            return
        selector = query[drafts.LIST_QUERY_PARAMETER][0]
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        validators = [(b"etag", self.etag.encode()), (b"cache-control", CACHE_CONTROL), (b"vary", VARY)]
        if selector != "tools":
            status, head, body = 400, [(b"content-type", b"application/json")], b'{"error":"unknown mcp_list"}'
        elif headers.get("if-none-match") == self.etag:
            status, head, body = 304, validators, b""
        else:
            status, head = 200, [(b"content-type", b"application/json"), *validators]
            body = json.dumps(tools_result(self.version)).encode()
        self.seen.append((selector, headers.get("if-none-match"), status))
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": body})
