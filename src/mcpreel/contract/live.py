"""Ask a live server for its offer: handshake, then every ``*/list`` with all its pages.

The exchange is kept as a :class:`~mcpreel.model.Session` (both directions, with times), so a live
server goes through exactly the code a recording does: :func:`~mcpreel.contract.snapshot.from_session`
for the contract, :mod:`mcpreel.audit` for the lint. The handshake is the classic ``initialize`` era,
which every server still answers (SDK 2.3 servers and server-everything alike).

The client declares the capabilities a usual client does (:data:`DEFAULT_CAPABILITIES`: sampling,
elicitation, roots, in the wire forms the official SDK's client sends when given its callbacks), because a
server may offer some tools only to a client that can serve them (server-everything lists 4 of its 17 tools
only then: a contract taken without them missed those). ``--capabilities`` chooses others. The server's
requests back are answered as a client with nothing behind it would: no roots, an elicitation declined, a
sampling request refused (no model here).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from mcpreel._infra.timeutil import now_ms
from mcpreel._version import __version__
from mcpreel.clients import Transport, open_target
from mcpreel.contract.snapshot import KINDS
from mcpreel.errors import TransportError, UsageError
from mcpreel.model import Direction, Kind, Message, Session, SessionInfo

__all__ = ["CAPABILITY_NAMES", "DEFAULT_CAPABILITIES", "HANDSHAKE_VERSION", "capability_names", "live_session",
           "parse_capabilities"]

HANDSHAKE_VERSION = "2025-11-25"
#: a capability named in ``--capabilities a,b`` -> what the client declares for it (the SDK client's wire forms)
CAPABILITY_NAMES: dict[str, dict[str, Any]] = {
    "sampling": {},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": True},
}
#: what a live snapshot declares unless told otherwise: what a usual, capable client declares
DEFAULT_CAPABILITIES: dict[str, Any] = {name: dict(value) for name, value in CAPABILITY_NAMES.items()}


def parse_capabilities(text: str | None) -> dict[str, Any]:
    """``--capabilities``: None for the defaults; ``none`` (or empty) for none; a JSON object as it is; else
    a comma list of the names in :data:`CAPABILITY_NAMES` (raises UsageError naming what is wrong)."""
    import json

    if text is None:
        return json.loads(json.dumps(DEFAULT_CAPABILITIES))
    text = text.strip()
    if text in ("", "none"):
        return {}
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError as e:
            raise UsageError(f"--capabilities: not a JSON object ({e})") from None
        if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
            raise UsageError("--capabilities: a JSON object of objects, e.g. '{\"sampling\": {}}'")
        return value
    out: dict[str, Any] = {}
    for name in (part.strip() for part in text.split(",")):
        if name not in CAPABILITY_NAMES:
            raise UsageError(f"--capabilities: unknown capability {name!r} (known: {', '.join(CAPABILITY_NAMES)}, "
                             "none, or a JSON object)")
        out[name] = json.loads(json.dumps(CAPABILITY_NAMES[name]))
    return out


def capability_names(capabilities: dict[str, Any]) -> str:
    """The declared capabilities for a person: ``sampling, elicitation, roots`` or ``none``."""
    return ", ".join(capabilities) if capabilities else "none"


def _answer(method: str, capabilities: dict[str, Any]) -> dict[str, Any]:
    """What this client answers a server's request with: nothing is behind it (no roots, no person, no model)."""
    if method == "roots/list" and "roots" in capabilities:
        return {"result": {"roots": []}}
    if method == "elicitation/create" and "elicitation" in capabilities:
        return {"result": {"action": "decline"}}
    if method == "ping":
        return {"result": {}}
    return {"error": {"code": -32601, "message": "not supported by mcpreel contract"}}
_MAX_PAGES = 1000


class _Asker:
    def __init__(self, transport: Transport, timeout: float, capabilities: dict[str, Any]) -> None:
        self.t = transport
        self.timeout = timeout
        self.capabilities = capabilities
        self.records: list[Message] = []
        self.next_id = 0

    async def send(self, raw: dict[str, Any]) -> None:
        self.records.append(Message(Direction.IN, raw, now_ms()))
        await self.t.send(raw)

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        rid = self.next_id
        raw: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params:
            raw["params"] = params
        await self.send(raw)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        while True:
            left = deadline - loop.time()
            if left <= 0:
                raise TransportError(f"the server did not answer {method} within {self.timeout:g} s")
            try:
                msg = await asyncio.wait_for(self.t.receive(), left)
            except TimeoutError:
                continue
            if msg is None:
                why = self.t.ended or "closed"
                tail = getattr(self.t, "stderr_tail", None)
                last = f" (last stderr: {tail[-1].strip()})" if tail else ""
                raise TransportError(f"the server went away before answering {method}: {why}{last}")
            self.records.append(msg)
            if msg.kind != Kind.MESSAGE:
                continue
            for m in msg.members():
                if "method" in m and "id" in m:  # a server -> client request: nothing behind this client
                    await self.send({"jsonrpc": "2.0", "id": m["id"],
                                     **_answer(str(m["method"]), self.capabilities)})
                elif "method" not in m and m.get("id") == rid:
                    return m


async def _ask_all(transport: Transport, timeout: float, capabilities: dict[str, Any]) -> list[Message]:
    asker = _Asker(transport, timeout, capabilities)
    hello = await asker.request("initialize", {
        "protocolVersion": HANDSHAKE_VERSION, "capabilities": capabilities,
        "clientInfo": {"name": "mcpreel-contract", "version": __version__}})
    if "error" in hello:
        raise TransportError(f"initialize failed: {hello['error'].get('message', hello['error'])}")
    await asker.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    caps = hello.get("result", {}).get("capabilities", {}) if isinstance(hello.get("result"), dict) else {}
    offered = {"tools": "tools" in caps, "prompts": "prompts" in caps,
               "resources": "resources" in caps, "resourceTemplates": "resources" in caps}
    for kind, (method, _, _) in KINDS.items():
        if not offered[kind]:
            continue
        cursor = None
        for _ in range(_MAX_PAGES):
            answer = await asker.request(method, {"cursor": cursor} if cursor else None)
            result = answer.get("result")
            if not isinstance(result, dict):
                break
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                break
    return asker.records


def live_session(command: str | Sequence[str] | None = None, url: str | None = None, *, transport: str = "auto",
                 headers: dict[str, str] | None = None, timeout: float = 30.0,
                 capabilities: dict[str, Any] | None = None) -> Session:
    """The handshake and list exchange with a live server, as a session (raises TransportError).

    ``capabilities``: what the client declares (None: :data:`DEFAULT_CAPABILITIES`, what a usual client does,
    so the server offers what such a client sees)."""
    target = open_target(command, url, transport=transport, headers=headers, timeout=timeout)
    declared = parse_capabilities(None) if capabilities is None else capabilities

    async def run() -> list[Message]:
        await target.start()
        try:
            return await _ask_all(target, timeout, declared)
        finally:
            await target.close()

    started = now_ms()
    records = asyncio.run(run())
    argv = [command] if isinstance(command, str) else list(command or [])
    info = SessionInfo(transport=target.name, command=argv, url=url, started=started, ended=now_ms(),
                       label="contract probe")
    return Session(info, records)
