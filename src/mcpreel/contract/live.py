"""Ask a live server for its offer: handshake, then every ``*/list`` with all its pages.

The exchange is kept as a :class:`~mcpreel.model.Session` (both directions, with times), so a live
server goes through exactly the code a recording does: :func:`~mcpreel.contract.snapshot.from_session`
for the contract, :mod:`mcpreel.audit` for the lint. The handshake is the classic ``initialize`` era,
which every server still answers (SDK 2.3 servers and server-everything alike); server -> client
requests (roots, sampling) are refused with -32601, since no model or roots are behind this client.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from mcpreel._infra.timeutil import now_ms
from mcpreel._version import __version__
from mcpreel.clients import Transport, open_target
from mcpreel.contract.snapshot import KINDS
from mcpreel.errors import TransportError
from mcpreel.model import Direction, Kind, Message, Session, SessionInfo

__all__ = ["HANDSHAKE_VERSION", "live_session"]

HANDSHAKE_VERSION = "2025-11-25"
_MAX_PAGES = 1000


class _Asker:
    def __init__(self, transport: Transport, timeout: float) -> None:
        self.t = transport
        self.timeout = timeout
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
                if "method" in m and "id" in m:  # a server -> client request: nobody here to answer it
                    await self.send({"jsonrpc": "2.0", "id": m["id"],
                                     "error": {"code": -32601, "message": "not supported by mcpreel contract"}})
                elif "method" not in m and m.get("id") == rid:
                    return m


async def _ask_all(transport: Transport, timeout: float) -> list[Message]:
    asker = _Asker(transport, timeout)
    hello = await asker.request("initialize", {
        "protocolVersion": HANDSHAKE_VERSION, "capabilities": {},
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
                 headers: dict[str, str] | None = None, timeout: float = 30.0) -> Session:
    """The handshake and list exchange with a live server, as a session (raises TransportError)."""
    target = open_target(command, url, transport=transport, headers=headers, timeout=timeout)

    async def run() -> list[Message]:
        await target.start()
        try:
            return await _ask_all(target, timeout)
        finally:
            await target.close()

    started = now_ms()
    records = asyncio.run(run())
    argv = [command] if isinstance(command, str) else list(command or [])
    info = SessionInfo(transport=target.name, command=argv, url=url, started=started, ended=now_ms(),
                       label="contract probe")
    return Session(info, records)
