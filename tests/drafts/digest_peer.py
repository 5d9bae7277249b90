"""A server that speaks the per-primitive digests draft (transports-wg proposals/XXXX-primitive-digests-
companion.md), written from the draft's own wire description since no SDK speaks it yet: the official SDK's
server, each tool advertising ``_meta["io.modelcontextprotocol/digest"]`` (``sha256:`` + the SHA-256 of the
tool's canonical JSON without ``_meta``, as the draft suggests), behind a gate that refuses a ``tools/call``
whose ``expectedDigest`` is not the tool's current digest, before anything runs: a JSON-RPC error with HTTP
409. The draft allocates no code yet; the gate sends the one it is given."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from mcp.server import MCPServer

from mcpreel import drafts

#: the code the gate refuses with by default: none is allocated; -32987 is the definition-digests draft's
#: reference implementation's
REFUSAL_CODE = -32987


def digest_of(tool: dict[str, Any]) -> str:
    """The draft's suggested digest: sha256 over the canonical JSON of the tool without its ``_meta``."""
    body = {k: v for k, v in tool.items() if k != "_meta"}
    return "sha256:" + hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def digest_server(description: str) -> tuple[Any, str]:
    """The SDK server with one tool ``echo`` described by ``description`` (a new description: a new
    definition, a new digest), and that digest."""
    tool = {"name": "echo", "description": description,
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}
    digest = digest_of(tool)
    mcp = MCPServer("digest-peer", log_level="WARNING")

    @mcp.tool(name="echo", description=description, meta={drafts.DIGEST_META: digest})
    def echo(text: str) -> str:
        return text

    return mcp, digest


class DigestGate:
    """ASGI middleware: a conditional ``tools/call`` against a digest that is not current is refused (409)."""

    def __init__(self, app: Any, digest: str, code: int = REFUSAL_CODE) -> None:
        self.app, self.digest, self.code = app, digest, code
        self.refused: list[Any] = []
        self.ran: list[Any] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            msg = await receive()
            chunks.append(msg.get("body", b""))
            if not msg.get("more_body"):
                break
        body = b"".join(chunks)
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        if isinstance(message, dict) and message.get("method") == "tools/call":
            meta = (message.get("params") or {}).get("_meta") or {}
            expected = meta.get(drafts.EXPECTED_DIGEST_META)
            if expected is not None and expected != self.digest:
                self.refused.append(message.get("id"))
                answer = {"jsonrpc": "2.0", "id": message.get("id"),
                          "error": {"code": self.code, "message": "Digest changed: refresh tools/list"}}
                await send({"type": "http.response.start", "status": drafts.DIGEST_CHANGED_HTTP_STATUS,
                            "headers": [(b"content-type", b"application/json")]})
                await send({"type": "http.response.body", "body": json.dumps(answer).encode()})
                return
            self.ran.append(message.get("id"))
        sent = False

        async def replay_body() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay_body, send)
